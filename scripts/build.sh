#!/usr/bin/env bash
# Configures and builds Tollgate into build/ (RelWithDebInfo unless BUILD_TYPE says otherwise).
# Arguments name targets to build (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# ccache, when installed (install-deps installs it), makes rebuilds and CI runs after the first
# cheap; without it the build is the same, only slower.
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${launcher[@]}" >/dev/null
echo "==> building (this takes a few minutes on 2 cores)"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
