#!/usr/bin/env bash
# image.sh VERSION [CHDB]: build the programs for the image (linux/amd64, cgo, the nvml tag) and
# assemble the OCI image with scripts/image: dist/image (an OCI layout) and dist/bursar-image.tar
# (podman load / docker load). CHDB=1 adds libchdb.so for an arbiter on the embedded engine.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/image.sh VERSION [CHDB]}
chdb=${2:-}
go=${GO:-go}
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
$go run ./scripts/image -tag "ghcr.io/bursar-dev/bursar:$version" -version "$version" \
	-out dist/image -tar dist/bursar-image.tar "${args[@]}" "$bin/arbiter" "$bin/collector" "$bin/report"
