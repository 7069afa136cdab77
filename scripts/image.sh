#!/usr/bin/env bash
# image.sh VERSION [CHDB]: build the programs for the image (linux/amd64, cgo, the nvml tag) and
# assemble the OCI image with scripts/image: dist/image (an OCI layout) and dist/bursar-image.tar
# (podman load / docker load). CHDB=1 adds libchdb.so for an arbiter on the embedded engine.
#
# The C library and loader are copied from this machine; scripts/image records the Debian
# packages they come from in /var/lib/dpkg/status.d (as distroless does), so image scanners see
# and version them: build on Debian or Ubuntu (dpkg-query).
#
# The tag: the chart runs image.tag, default v<appVersion> of deploy/helm/bursar/Chart.yaml. A
# release sets appVersion to X.Y.Z and tags the commit vX.Y.Z, so VERSION (git describe) is the
# chart's default tag; a release tag that differs from appVersion is refused here, before a
# mismatched image is pushed. Other builds (VERSION a commit) are tagged with it: set
# image.tag to it when installing them.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/image.sh VERSION [CHDB]}
chdb=${2:-}
go=${GO:-go}
repository=${IMAGE_REPOSITORY:-ghcr.io/bursar-dev/bursar}
app=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\} *$/\1/p' deploy/helm/bursar/Chart.yaml)
if [ -z "$app" ]; then
	echo "image.sh: no appVersion in deploy/helm/bursar/Chart.yaml" >&2
	exit 1
fi
if [[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ && $version != "v$app" ]]; then
	echo "image.sh: release $version, but the chart's appVersion is $app (its default image tag v$app):" \
		"set version and appVersion in deploy/helm/bursar/Chart.yaml to ${version#v} before tagging" >&2
	exit 1
fi
bin=dist/image-bin
rm -rf "$bin"
mkdir -p "$bin"
CGO_ENABLED=1 GOOS=linux GOARCH=amd64 $go build -trimpath -buildvcs=auto -tags nvml \
	-ldflags "-s -w -X github.com/bursar-dev/bursar/internal/cli.Version=$version" -o "$bin/" ./cmd/arbiter ./cmd/collector ./cmd/report
args=()
if [ -n "$chdb" ]; then
	args+=(-chdb "$(bash scripts/setup-chdb.sh)")
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
$go run ./scripts/image -tag "$repository:$version" -version "$version" \
	-out dist/image -tar dist/bursar-image.tar "${args[@]}" "$bin/arbiter" "$bin/collector" "$bin/report"
if [ "$version" != "v$app" ]; then
	echo "image.sh: $version is not the chart's default tag (v$app): install it with --set image.tag=$version"
fi
