#!/usr/bin/env bash
# Configures and builds Tollgate into build/ (RelWithDebInfo unless BUILD_TYPE says otherwise;
# DEBUG_INFO=off keeps -O2 but drops -g, which CI uses: a quarter less compile and link time).
# Arguments name targets to build (default: everything).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# ccache, when installed (install-deps installs it), makes rebuilds and CI runs after the first
# cheap; without it the build is the same, only slower. It caches the files compiled with a
# precompiled header (the larger test targets use one) only when told to ignore the header's
# timestamps and macro values.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_SLOPPINESS="${CCACHE_SLOPPINESS:-pch_defines,time_macros}"
fi
flags=()
if [ "${DEBUG_INFO:-on}" = off ]; then flags=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g0 -DNDEBUG"); fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${launcher[@]}" \
  "${flags[@]}" >/dev/null
echo "==> building (this takes a few minutes on 2 cores)"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build -j "$(nproc)" "${targets[@]}"
