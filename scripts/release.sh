#!/usr/bin/env bash
# release.sh VERSION [DIST]: build the three programs for each platform and pack them into
# DIST (default dist/): bursar_VERSION_OS_ARCH.tar.gz with LICENSE, README.md and CHANGELOG.md,
# an SPDX SBOM per archive (scripts/sbom, from the binaries' own module information) and
# SHA256SUMS over everything. linux/amd64 is built here with cgo and the nvml tag (GPU
# telemetry); the others are cross-compiled without cgo, so their collector has no NVML.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/release.sh VERSION [DIST], e.g. scripts/release.sh v0.1.0}
dist=${2:-dist}
go=${GO:-go}
platforms=${PLATFORMS:-linux/amd64 linux/arm64 darwin/arm64}
# The archives' times and the SBOMs' creation time are the commit's, so a rebuild of the same
# commit gives the same archives.
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w -X github.com/bursar-dev/bursar/internal/cli.Version=$version"

rm -rf "$dist"
mkdir -p "$dist"
for p in $platforms; do
	os=${p%/*} arch=${p#*/}
	name="bursar_${version}_${os}_${arch}"
	dir="$dist/$name"
	mkdir -p "$dir"
	tags="" cgo=0
	if [ "$p" = "$($go env GOOS)/$($go env GOARCH)" ] && [ "$os" = linux ]; then
		tags=nvml cgo=1
	fi
	echo "release: $name (cgo=$cgo tags=${tags:-none})"
	CGO_ENABLED=$cgo GOOS=$os GOARCH=$arch $go build -trimpath -buildvcs=auto -tags "$tags" -ldflags "$ldflags" -o "$dir/" ./cmd/arbiter ./cmd/collector ./cmd/report
	cp LICENSE README.md CHANGELOG.md "$dir/"
	$go run ./scripts/sbom -name "$name" -created "$created" "$dir/arbiter" "$dir/collector" "$dir/report" >"$dist/$name.spdx.json"
	tar --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner -C "$dist" -czf "$dist/$name.tar.gz" "$name"
	rm -rf "$dir"
done
(cd "$dist" && sha256sum -- *.tar.gz *.spdx.json >SHA256SUMS)
echo "release: $dist/SHA256SUMS"
cat "$dist/SHA256SUMS"
