#!/usr/bin/env bash
# Installs the Debian bookworm packages Tollgate builds and tests with, skipping what is there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git ccache
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  librocksdb-dev libabsl-dev libyaml-cpp-dev libjemalloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-yaml
  libcurl4-openssl-dev nlohmann-json3-dev python3-kubernetes
  libcpp-httplib-dev prometheus chromium chromium-driver python3-selenium
  gnuplot-nox
  libssl-dev openssl libjwt-dev python3-grpcio python3-protobuf help2man dpkg-dev
  etcd-server etcd-client golang-etcd-server-dev golang-github-gogo-protobuf-dev
  golang-github-grpc-ecosystem-grpc-gateway-dev
)
# No kubernetes-client: images that ship their own kubectl package (owning /usr/bin/kubectl)
# cannot install it (dpkg file conflict). deploy.manifest_check uses whatever kubectl is on
# PATH and is skipped (77) when there is none.

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]} > 0)); then
  echo "==> installing: ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "==> build dependencies already installed"
fi
