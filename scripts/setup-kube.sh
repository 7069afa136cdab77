#!/usr/bin/env bash
# setup-kube.sh builds the Kubernetes control plane the end-to-end tests run against
# (internal/kubeenv): kube-apiserver and kube-scheduler from k8s.io/kubernetes, and etcd from
# go.etcd.io/etcd/server/v3, at the versions pinned in tools/kube/go.mod and go.sum. It installs
# them into a cache outside the repository, as setup-chdb.sh does libchdb.so:
#   ${BURSAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bursar}/kube/<version>/
# and prints that directory on the last line of stdout. Running it again when the binaries are
# in place (built from the same go.mod and go.sum) does nothing.
#
# The build is long (kube-apiserver is a large program): it runs under `nice -n 19` so that it
# yields to everything else on the machine.
set -euo pipefail

# Keep KUBE_VERSION in step with tools/kube/go.mod and kubeenv.Version (a test checks both).
KUBE_VERSION=v1.37.2

repo="$(cd "$(dirname "$0")/.." && pwd)"
module="$repo/tools/kube"
cache_root="${BURSAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bursar}"
dest="$cache_root/kube/$KUBE_VERSION"
binaries=(etcd kube-apiserver kube-scheduler)

[[ -f "$module/go.mod" && -f "$module/go.sum" ]] || {
	echo "setup-kube: $module/go.mod or go.sum is missing; run this from a Bursar checkout." >&2
	exit 1
}
grep -q "k8s.io/kubernetes $KUBE_VERSION" "$module/go.mod" || {
	echo "setup-kube: $module/go.mod does not require k8s.io/kubernetes $KUBE_VERSION;" >&2
	echo "setup-kube: change KUBE_VERSION here and the module together." >&2
	exit 1
}

# The stamp names what the binaries were built from: a changed go.mod or go.sum rebuilds them.
stamp="$(cat "$module/go.mod" "$module/go.sum" "$module/cmd/etcd/main.go" | sha256sum | cut -d' ' -f1)"
installed=1
for b in "${binaries[@]}"; do
	[[ -x "$dest/$b" ]] || installed=0
done
if [[ $installed == 1 && -f "$dest/.stamp" && "$(cat "$dest/.stamp")" == "$stamp" ]]; then
	echo "setup-kube: kubernetes $KUBE_VERSION already built" >&2
	echo "$dest"
	exit 0
fi

command -v go >/dev/null || {
	echo "setup-kube: Go is needed to build the control plane (tools/kube); install Go 1.26." >&2
	exit 1
}
mkdir -p "$dest"
work="$(mktemp -d "$dest/.build.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# The version the binaries report (kubectl version, /version) is the release's, as the release
# build stamps it; without it they say v0.0.0-master.
pkg=k8s.io/component-base/version
minor="${KUBE_VERSION#v1.}"
minor="${minor%%.*}"
ldflags="-s -w -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
ldflags+=" -X $pkg.gitTreeState=clean"

echo "setup-kube: building etcd, kube-apiserver and kube-scheduler $KUBE_VERSION (several minutes)" >&2
start=$SECONDS
if ! (cd "$module" && CGO_ENABLED=0 GOFLAGS=-mod=readonly nice -n 19 go build -trimpath \
	-ldflags "$ldflags" -o "$work/" \
	./cmd/etcd k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler); then
	echo "setup-kube: building $module failed (see above); nothing was installed." >&2
	exit 1
fi
echo "setup-kube: built in $((SECONDS - start))s" >&2

# Install each binary by rename, so a reader never sees a half-written one; the stamp goes
# last, so an interrupted install is rebuilt next time.
for b in "${binaries[@]}"; do
	mv -f "$work/$b" "$dest/$b"
done
echo "$stamp" >"$work/.stamp"
mv -f "$work/.stamp" "$dest/.stamp"

echo "setup-kube: installed kubernetes $KUBE_VERSION" >&2
echo "$dest"
