#!/usr/bin/env bash
# fuzz.sh runs every Fuzz target in the module for a short time (default 3s each), one at a time,
# so CI exercises each decoder and parser of outside input with generated inputs.
#
# Go 1.26's fuzz coordinator can end a run with a bare "context deadline exceeded" when a worker
# is mid-input at -fuzztime's deadline (golang/go#75804, fixed in Go 1.27): no input failed and
# none is written. A real finding always writes its input under testdata/fuzz/<target>/, so a
# failure counts only when it did, or when the output is anything other than that bare message;
# the bare one is retried once and reported.
set -euo pipefail
fuzztime="${1:-3s}"
cd "$(dirname "$0")/.."
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0

# run fuzzes one target; it returns 0 on a clean run, 2 on the coordinator's bare deadline
# error with no input written, and 1 on a finding.
run() {
	local dir="$1" target="$2" corpus="$1/testdata/fuzz/$2" before after
	before="$(ls "$corpus" 2>/dev/null | wc -l)"
	if go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$dir" >"$log" 2>&1; then
		return 0
	fi
	after="$(ls "$corpus" 2>/dev/null | wc -l)"
	if [ "$after" = "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'panic:|Failing input written|testdata/fuzz/' "$log"; then
		return 2
	fi
	return 1
}

while IFS= read -r file; do
	dir="./$(dirname "$file")"
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
		echo "fuzz: $dir $target ($fuzztime)"
		rc=0
		run "$dir" "$target" || rc=$?
		if [ "$rc" = 2 ]; then
			echo "fuzz: $target: the fuzz coordinator's deadline race (golang/go#75804), no input failed; running it again"
			rc=0
			run "$dir" "$target" || rc=$?
			[ "$rc" = 2 ] && echo "fuzz: $target: the deadline race again, no input failed" && rc=0
		fi
		if [ "$rc" != 0 ]; then
			cat "$log"
			status=1
		fi
	done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' internal cmd 2>/dev/null | sort)
exit $status
