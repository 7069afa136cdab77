#!/usr/bin/env bash
# setup-chdb_test.sh runs two setups of libchdb.so at once into a fresh cache and checks that both
# succeed and leave a readable library and its checksum (with a fixed temporary name the second
# failed: "install: cannot change permissions"). It fetches from the npm registry (or npm's cache).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="$(mktemp -d)"
trap 'rm -rf "$cache"' EXIT
BURSAR_CACHE_DIR="$cache" "$here/setup-chdb.sh" >"$cache/a.out" 2>"$cache/a.err" &
a=$!
BURSAR_CACHE_DIR="$cache" "$here/setup-chdb.sh" >"$cache/b.out" 2>"$cache/b.err" &
b=$!
fail=0
wait "$a" || { echo "FAIL: the first setup failed:"; cat "$cache/a.err"; fail=1; }
wait "$b" || { echo "FAIL: the second setup failed:"; cat "$cache/b.err"; fail=1; }
lib="$(tail -n1 "$cache/a.out" 2>/dev/null || true)"
if [[ $fail == 0 ]]; then
	[[ -r "$lib" && "$(stat -c %a "$lib")" == 755 ]] || { echo "FAIL: $lib is not there with mode 755"; fail=1; }
	[[ "$(stat -c %a "$(dirname "$lib")/.sha256")" == 644 ]] || { echo "FAIL: .sha256 is not mode 644"; fail=1; }
	left="$(find "$(dirname "$lib")" -name '.libchdb.so.*' -o -name '.sha256.*' -o -name '*.tmp')"
	[[ -z "$left" ]] || { echo "FAIL: temporary files left: $left"; fail=1; }
fi
[[ $fail == 0 ]] && echo "ok: two setups at once both installed $lib"
exit "$fail"
