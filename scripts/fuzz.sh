#!/usr/bin/env bash
# fuzz.sh runs every Fuzz target in the module for a short time (default 3s each), one at a time,
# so CI exercises each decoder and parser of outside input with generated inputs.
set -euo pipefail
fuzztime="${1:-3s}"
cd "$(dirname "$0")/.."
status=0
while IFS= read -r file; do
	dir="./$(dirname "$file")"
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
		echo "fuzz: $dir $target ($fuzztime)"
		if ! go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" "$dir" >/tmp/bursar-fuzz.log 2>&1; then
			cat /tmp/bursar-fuzz.log
			status=1
		fi
	done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' internal cmd 2>/dev/null | sort)
exit $status
