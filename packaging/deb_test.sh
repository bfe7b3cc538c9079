#!/usr/bin/env bash
# Builds the Debian package with CPack, unpacks it into a fresh directory (dpkg -x: no root,
# nothing touches the system) and checks what a fresh machine would get: the three binaries
# answering `version`, the systemd unit, the man pages, completion, the Python client.
set -euo pipefail
build_dir=$1
cpack=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

(cd "$build_dir" && "$cpack" -G DEB -B "$work/out" >"$work/cpack.log" 2>&1) || {
  cat "$work/cpack.log"; exit 1; }
deb=$(ls "$work"/out/*.deb)
echo "built $(basename "$deb")"

fail() { echo "FAIL: $*"; exit 1; }
dpkg-deb --field "$deb" Package | grep -qx tollgate || fail "package name"
depends=$(dpkg-deb --field "$deb" Depends)
echo "Depends: $depends"
# RocksDB is linked statically from librocksdb-dev (its compression libraries show instead).
for lib in libgrpc++ libprotobuf libyaml-cpp libabsl; do
  grep -q "$lib" <<<"$depends" || fail "Depends lacks $lib"
done

root="$work/root"
dpkg -x "$deb" "$root"
for binary in tollgated tollgate tollgate-kube; do
  [[ -x "$root/usr/bin/$binary" ]] || fail "/usr/bin/$binary missing"
  [[ -s "$root/usr/share/man/man1/$binary.1" ]] || fail "man page of $binary missing"
  grep -q '^\.SH' "$root/usr/share/man/man1/$binary.1" || fail "man page of $binary is empty"
done
"$root/usr/bin/tollgated" version | grep -Eq '^tollgated [^ ]+ \(.*gRPC [0-9.]+' ||
  fail "tollgated version: $("$root/usr/bin/tollgated" version)"
"$root/usr/bin/tollgate-kube" version | grep -Eq '^tollgate-kube [^ ]+ \(.*RocksDB' ||
  fail "tollgate-kube version: $("$root/usr/bin/tollgate-kube" version)"
"$root/usr/bin/tollgate" version --client | grep -Eq '^Client Version: [^ ]+ \(' ||
  fail "tollgate version: $("$root/usr/bin/tollgate" version --client)"
# The server half of `tollgate version`: the unpacked tollgated on a loopback port.
"$root/usr/bin/tollgated" --listen=127.0.0.1:0 --data-dir="$work/data" \
  --port-file="$work/port" 2>"$work/tollgated.log" &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 1 600); do
  [[ -s "$work/port" ]] && break
  kill -0 $server 2>/dev/null || { cat "$work/tollgated.log"; fail "tollgated exited"; }
  sleep 0.05
done
[[ -s "$work/port" ]] || fail "tollgated did not start"
"$root/usr/bin/tollgate" --server="127.0.0.1:$(cat "$work/port")" version |
  grep -Eq '^Server Version: [^ ]+ \(' || fail "tollgate version shows no server"
# Installed under the package prefix (/usr/lib/systemd/system; bookworm's /lib is /usr/lib).
grep -q '^ExecStart=/usr/bin/tollgated ' "$root/usr/lib/systemd/system/tollgated.service" ||
  fail "systemd unit"
grep -q 'complete -o default -F _tollgate tollgate' \
  "$root/usr/share/bash-completion/completions/tollgate" || fail "bash completion"
[[ -f "$root/usr/share/zsh/vendor-completions/_tollgate" ]] || fail "zsh completion"
if [[ -d "$root/usr/lib/python3/dist-packages/tollgate_client" ]]; then
  PYTHONPATH="$root/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
    'import tollgate_client, tollgate.v1.service_pb2_grpc' || fail "python client does not import"
fi
echo "ok: the .deb installs into a fresh root and its binaries answer version"
