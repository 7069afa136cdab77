#!/usr/bin/env bash
# fuzz.sh runs every Fuzz target in the module for a short time (default 3s each), so CI exercises
# each decoder and parser of outside input with generated inputs.
#
# Each package's test binary is built once, instrumented for fuzzing (go test -c -fuzz), and its
# targets run one after another from the package's directory, as `go test -fuzz` runs them: a
# finding writes its input under that package's testdata/fuzz/<target>/, and the generated corpus
# is kept where `go test -fuzz` keeps it ($GOCACHE/fuzz/<import path>). Building once per package
# instead of once per target saves a link of the test binary for every target after a package's
# first. Packages run side by side, FUZZJOBS at a time (default 2, the largest packages first),
# and each target gets its share of the CPUs as fuzz workers, so the machine is as busy as with
# one target at a time while the builds, the starts and the baseline runs overlap.
#
# Go 1.26's fuzz coordinator can end a run with a bare "context deadline exceeded" when a worker
# is mid-input at -fuzztime's deadline (golang/go#75804, fixed in Go 1.27): no input failed and
# none is written. A real finding always writes its input under testdata/fuzz/<target>/, so a
# failure counts only when it did, or when the output is anything other than that bare message;
# the bare one is retried once and reported.
set -euo pipefail
fuzztime="${1:-3s}"
lanes="${FUZZJOBS:-2}"
cd "$(dirname "$0")/.."
root="$PWD"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cache="$(go env GOCACHE)/fuzz"
cpus="$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)"
workers=$((cpus / lanes))
[ "$workers" -ge 1 ] || workers=1

# run fuzzes one target with the package's test binary, from the package's directory, logging to
# log; it returns 0 on a clean run, 2 on the coordinator's bare deadline error with no input
# written, and 1 on a finding (or anything else that failed).
run() {
	local bin="$1" dir="$2" pkg="$3" target="$4" log="$5" corpus="$2/testdata/fuzz/$4" before after
	before="$(ls "$corpus" 2>/dev/null | wc -l)"
	if (cd "$dir" && "$bin" -test.paniconexit0 -test.run='^$' -test.fuzz="^${target}\$" -test.fuzztime="$fuzztime" \
		-test.parallel="$workers" -test.fuzzcachedir="$cache/$pkg") >"$log" 2>&1; then
		if grep -q 'no fuzz tests to fuzz' "$log"; then
			echo "fuzz: $target is not in the test binary of $pkg (a build tag?)" >>"$log"
			return 1
		fi
		return 0
	fi
	after="$(ls "$corpus" 2>/dev/null | wc -l)"
	if [ "$after" = "$before" ] && grep -q '^    context deadline exceeded$' "$log" &&
		! grep -qE 'panic:|Failing input written|testdata/fuzz/' "$log"; then
		return 2
	fi
	return 1
}

# fuzzpkg builds the test binary of the package in dir once and fuzzes each of its targets; a
# failure's output is kept in $work/failed/ for the end.
fuzzpkg() {
	local dir="$1" pkg name bin log rc start status=0
	shift
	name="${dir//\//_}"
	bin="$work/$name.test"
	if ! pkg="$(go list -f '{{.ImportPath}}' "./$dir" 2>"$work/$name.build")" ||
		! go test -c -fuzz=. -o "$bin" "./$dir" >>"$work/$name.build" 2>&1; then
		echo "fuzz: ./$dir: its test binary did not build"
		cp "$work/$name.build" "$work/failed/$name.build"
		return 1
	fi
	for target; do
		log="$work/$name.$target.log"
		start=$SECONDS
		rc=0
		run "$bin" "$root/$dir" "$pkg" "$target" "$log" || rc=$?
		if [ "$rc" = 2 ]; then
			echo "fuzz: $target: the fuzz coordinator's deadline race (golang/go#75804), no input failed; running it again"
			rc=0
			run "$bin" "$root/$dir" "$pkg" "$target" "$log" || rc=$?
			[ "$rc" = 2 ] && echo "fuzz: $target: the deadline race again, no input failed" && rc=0
		fi
		if [ "$rc" = 0 ]; then
			echo "fuzz: ./$dir $target ($fuzztime): ok in $((SECONDS - start))s"
		else
			echo "fuzz: ./$dir $target ($fuzztime): FAILED (output below)"
			cp "$log" "$work/failed/$name.$target.log"
			status=1
		fi
	done
	return $status
}

# Every package with a Fuzz target, with its targets, the packages with the most targets first.
mkdir "$work/failed"
declare -A targets=()
while IFS= read -r file; do
	dir="$(dirname "$file")"
	for target in $(grep -oE '^func (Fuzz[A-Za-z0-9_]+)\(' "$file" | sed -E 's/^func (Fuzz[A-Za-z0-9_]+)\(/\1/'); do
		targets[$dir]="${targets[$dir]:-} $target"
	done
done < <(grep -rlE '^func Fuzz' --include='*_test.go' internal cmd 2>/dev/null | sort)
mapfile -t order < <(for dir in "${!targets[@]}"; do
	n=$(wc -w <<<"${targets[$dir]}")
	echo "$n $dir"
done | sort -k1,1nr -k2,2 | cut -d' ' -f2)

total=0
for dir in "${order[@]}"; do total=$((total + $(wc -w <<<"${targets[$dir]}"))); done
echo "fuzz: $total targets in ${#order[@]} packages, $fuzztime each, $lanes packages at a time, $workers fuzz workers each"
running=0
for dir in "${order[@]}"; do
	if [ "$running" -ge "$lanes" ]; then
		wait -n || true
		running=$((running - 1))
	fi
	# shellcheck disable=SC2086 # the targets are words
	fuzzpkg "$dir" ${targets[$dir]} &
	running=$((running + 1))
done
wait
status=0
for f in "$work"/failed/*; do
	[ -e "$f" ] || continue
	echo "---- $(basename "$f")"
	cat "$f"
	status=1
done
echo "fuzz: done in ${SECONDS}s"
exit $status
