#!/usr/bin/env bash
# Builds the reference client-go controller (main.go beside this script) for
# `npm run bench:convergence -- --kubeconfig … --clientgo <binary>`, offline, against the client-go
# v0.20 staged in the real control plane's kubernetes 1.20.2 source tree (docs/real-cluster.md), with
# the plane's private Go. Outside CI, like the plane itself.
#
#   REALK8S=$HOME/realk8s bash bench/clientgo-reference/build.sh    # → $REALK8S/bin/clientgo-bench
#
# kubernetes 1.20 builds in GOPATH mode (GO111MODULE=off, GOPATH=$SRC/_output/local/go, whose
# src/k8s.io/kubernetes links to the tree), so a package under k8s.io/kubernetes/ resolves client-go to
# the tree's vendor/ link to staging/: exactly the client-go the plane runs, no network. The program is
# therefore copied into the tree ($SRC/cmd/clientgo-bench/); with the plane's GOPATH, cache and flags,
# only it is compiled (seconds).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REALK8S=${REALK8S:?set REALK8S to the control plane folder}
SRC=$REALK8S/src/kubernetes
OUT=$REALK8S/bin/clientgo-bench
export GOROOT=$REALK8S/root/usr/lib/go-1.19
[ -x "$GOROOT/bin/go" ] || { echo "no Go at $GOROOT/bin/go: build the plane first (docs/real-cluster.md)" >&2; exit 1; }
[ -d "$SRC/staging/src/k8s.io/client-go" ] || { echo "no kubernetes source tree at $SRC" >&2; exit 1; }
export PATH=$GOROOT/bin:$PATH
unset GOBIN GOFLAGS GOTOOLCHAIN
export CGO_ENABLED=0 GOPROXY=off GOSUMDB=off GO111MODULE=off GOPATH=$SRC/_output/local/go GOCACHE=$SRC/_output/local/go/cache
[ -L "$GOPATH/src/k8s.io/kubernetes" ] || { echo "$GOPATH/src/k8s.io/kubernetes is missing: the plane's build did not run here" >&2; exit 1; }

mkdir -p "$SRC/cmd/clientgo-bench"
install -m 0644 "$HERE/main.go" "$SRC/cmd/clientgo-bench/main.go"
cd "$GOPATH/src/k8s.io/kubernetes"
nice -n 19 go build -installsuffix static -tags selinux,notest \
  -gcflags "-trimpath=$SRC" -asmflags "-trimpath=$SRC" -ldflags "-s -w" \
  -o "$OUT" k8s.io/kubernetes/cmd/clientgo-bench
echo "built $OUT"
