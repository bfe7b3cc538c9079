#!/usr/bin/env bash
# Configures and builds Tollgate into build/ (RelWithDebInfo unless BUILD_TYPE says otherwise).
# Arguments name targets to build (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" >/dev/null
echo "==> building (this takes a few minutes on 2 cores)"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
