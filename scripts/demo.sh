#!/usr/bin/env bash
# Tollgate's main job on its embedded default: install what is missing, build, start tollgated
# on a local RocksDB with the EvalHub example queues, submit evaluation jobs for two teams and
# show the queues and workloads tables.
#
# usage: scripts/demo.sh [--keep]
#   --keep  leave tollgated running afterwards (its address and how to stop it are printed), to
#           explore with `tollgate` or the Python client.
set -euo pipefail
keep=false
for arg in "$@"; do
  case "$arg" in
    --keep) keep=true ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument $arg (try --help)" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
scripts/build.sh tollgated tollgate

data_dir="${TOLLGATE_DEMO_DATA:-./demo-data}"
rm -rf "$data_dir"
mkdir -p "$data_dir"
port_file="$data_dir/port"

echo "==> starting tollgated (RocksDB in $data_dir)"
build/cmd/tollgated/tollgated --listen=127.0.0.1:0 --data-dir="$data_dir/db" \
  --port-file="$port_file" \
  --metrics-listen=127.0.0.1:0 --metrics-port-file="$data_dir/metrics_port" \
  --manifests=deploy/evalhub/queues.yaml,deploy/evalhub/priorities.yaml \
  2>"$data_dir/tollgated.log" &
server_pid=$!
stop_server() { kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null || true; }
trap stop_server EXIT

# Wait for the port file (written once the server listens), bounded.
for _ in $(seq 1 300); do
  [[ -s "$port_file" ]] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$data_dir/tollgated.log"; exit 1; }
  sleep 0.1
done
[[ -s "$port_file" ]] || { echo "tollgated did not start"; cat "$data_dir/tollgated.log"; exit 1; }
export TOLLGATE_SERVER="127.0.0.1:$(cat "$port_file")"
tg=build/cmd/tollgate/tollgate

echo "==> submitting EvalHub jobs for team-a and team-b"
$tg submit -f deploy/evalhub/workloads.yaml

echo
echo "==> ClusterQueues"
$tg get clusterqueues
echo
echo "==> LocalQueues"
$tg get localqueues -A
echo
echo "==> Workloads"
$tg get workloads -A
echo
pending=$($tg get workloads -A | awk '$4 == "Pending" {print $1" "$2; exit}')
if [[ -n "$pending" ]]; then
  read -r ns name <<<"$pending"
  echo "==> why is $ns/$name waiting?"
  $tg describe workload "$name" -n "$ns"
fi
echo
if $keep; then
  trap - EXIT
  echo "tollgated (pid $server_pid) keeps serving on $TOLLGATE_SERVER; its log is in"
  echo "$data_dir/tollgated.log. Explore it with:"
  echo "  export TOLLGATE_SERVER=$TOLLGATE_SERVER"
  echo "  $tg get workloads -A -w"
  echo "Stop it with: kill $server_pid"
else
  echo "tollgated served on $TOLLGATE_SERVER; its log is in $data_dir/tollgated.log"
  echo "(scripts/demo.sh --keep leaves it running)"
fi
metrics_port=$(cat "$data_dir/metrics_port" 2>/dev/null || true)
if [[ -n "$metrics_port" ]]; then
  echo "dashboard: http://127.0.0.1:$metrics_port/   Prometheus metrics: http://127.0.0.1:$metrics_port/metrics"
fi
