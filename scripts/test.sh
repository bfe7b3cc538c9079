#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: unit, scenario and end-to-end.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "==> layering (CONTRIBUTING.md)"
scripts/check-layering.py
scripts/build.sh
echo "==> running the test suite"
cd build
ctest --output-on-failure -j "$(nproc)" --timeout 600
