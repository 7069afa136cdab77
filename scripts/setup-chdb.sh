#!/usr/bin/env bash
# setup-chdb.sh fetches libchdb.so, the embedded ClickHouse engine, from the npm package
# @chdb/lib-linux-x64-gnu at a pinned version, checks the tarball against a pinned sha256 and
# installs the library into a cache outside the repository. It prints the library's path on the
# last line of stdout. Running it again when the library is in place does nothing.
#
# The Go code finds the library at the same place (internal/store/chdb.LibraryPath):
#   $BURSAR_CHDB_LIB, else ${XDG_CACHE_HOME:-$HOME/.cache}/bursar/chdb/<version>/libchdb.so
# Override the cache root with BURSAR_CACHE_DIR.
set -euo pipefail

# Keep CHDB_VERSION in step with chdb.Version in internal/store/chdb/library.go (a test checks).
CHDB_VERSION=26.5.3
CHDB_SHA256=b874e449710950da3abd7e20376f7bb3387d9e03adcc7082f022be18dfdf316a
PACKAGE=@chdb/lib-linux-x64-gnu

case "$(uname -s)-$(uname -m)" in
Linux-x86_64) ;;
*)
	echo "setup-chdb: $PACKAGE is built for Linux x86_64; this machine is $(uname -s)-$(uname -m)." >&2
	echo "setup-chdb: point BURSAR_CHDB_LIB at a libchdb.so for your platform, or use --clickhouse." >&2
	exit 1
	;;
esac

cache_root="${BURSAR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/bursar}"
dest="$cache_root/chdb/$CHDB_VERSION"
lib="$dest/libchdb.so"

if [[ -f "$lib" && -f "$dest/.sha256" && "$(cat "$dest/.sha256")" == "$CHDB_SHA256" ]]; then
	echo "setup-chdb: libchdb.so $CHDB_VERSION already installed" >&2
	echo "$lib"
	exit 0
fi

command -v npm >/dev/null || {
	echo "setup-chdb: npm is needed to fetch $PACKAGE@$CHDB_VERSION; install Node.js and npm." >&2
	exit 1
}

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

echo "setup-chdb: fetching $PACKAGE@$CHDB_VERSION" >&2
(cd "$work" && npm pack --silent "$PACKAGE@$CHDB_VERSION" >/dev/null)
tarball="$(ls "$work"/*.tgz)"

got="$(sha256sum "$tarball" | cut -d' ' -f1)"
if [[ "$got" != "$CHDB_SHA256" ]]; then
	echo "setup-chdb: checksum mismatch for $PACKAGE@$CHDB_VERSION: got $got, want $CHDB_SHA256." >&2
	echo "setup-chdb: refusing to install; if the pin was changed on purpose, update CHDB_SHA256." >&2
	exit 1
fi

tar -xzf "$tarball" -C "$work" package/libchdb.so
mkdir -p "$dest"
# Install atomically under a name of this run's own: a reader never sees a half-written library,
# and two setups at once each write their own file and rename it into place (the last rename
# wins; both are the same checked library). mktemp makes the file 0600: make it readable.
tmp_lib="$(mktemp "$dest/.libchdb.so.XXXXXX")"
tmp_sum="$(mktemp "$dest/.sha256.XXXXXX")"
trap 'rm -rf "$work"; rm -f "$tmp_lib" "$tmp_sum"' EXIT
cp "$work/package/libchdb.so" "$tmp_lib"
chmod 0755 "$tmp_lib"
echo "$CHDB_SHA256" >"$tmp_sum"
chmod 0644 "$tmp_sum"
mv -f "$tmp_lib" "$lib"
mv -f "$tmp_sum" "$dest/.sha256"

echo "setup-chdb: installed libchdb.so $CHDB_VERSION" >&2
echo "$lib"
