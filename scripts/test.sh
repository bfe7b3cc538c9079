#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: unit, scenario and end-to-end. Ends
# with the tests that skipped themselves and why they may (docs/testing.md lists each), so a
# skip that should not happen is seen.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "==> layering (CONTRIBUTING.md)"
scripts/check-layering.py
scripts/build.sh
echo "==> running the test suite"
cd build
status=0
ctest --output-on-failure -j "$(nproc)" --timeout 600 2>&1 | tee ctest.log || status=$?
skipped=$(grep -E '\(Skipped\)$' ctest.log || true)
echo "==> $(printf '%s' "$skipped" | grep -c . || true) test(s) skipped (docs/testing.md says when each may)"
[ -z "$skipped" ] || printf '%s\n' "$skipped"
exit "$status"
