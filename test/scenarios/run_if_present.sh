#!/bin/sh
# Runs the admission scenarios of a folder outside the repository when it exists; otherwise says
# why and exits 77, which ctest reports as skipped (SKIP_RETURN_CODE), so a clone of the
# repository alone passes its own test command.
# Usage: run_if_present.sh TOLLGATE_BINARY SCENARIO_DIR
set -eu
tollgate=$1
dir=$2
if [ ! -d "$dir" ]; then
  echo "SKIPPED: no scenario folder at $dir (a checkout of the shared scenarios beside the" \
    "repository, or -DTOLLGATE_SHARED_SCENARIOS_DIR=..., enables this test)"
  exit 77
fi
exec "$tollgate" scenario run "$dir"
