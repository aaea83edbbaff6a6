# tests/lib.sh -- what the shell tests share, sourced after `sim=$1 root=$2`
# (set -u is theirs): enters the repository root, makes $tmp (removed on
# exit) and fail MESSAGE, which prints the failure and counts it in $fails;
# finish NAME prints "ok NAME" when nothing failed and returns the status;
# sim_err FILE prints a stderr file without the warnings AddressSanitizer
# prints when SimGrid switches stacks (the sanitizer build's, not sim's);
# coverage_adds_up NAME FILE checks the coverage table of an imported job
# (sim import): per family modelled + carried = measured, the families sum
# to the total, at least one kernel.
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() {
	echo "FAIL $*"
	fails=$((fails + 1))
}
finish() {
	[ "$fails" = 0 ] && echo "ok $1"
	[ "$fails" = 0 ]
}
sim_err() {
	grep -Ev '^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$' "$1"
}
coverage_adds_up() {
	awk -v t="$1" '
	/^# (gemm|attention|elementwise|memcpy|nccl|other) / {
		# "# FAMILY kernels modelled measured_ms modelled_ms carried_ms modelled%"
		e = $5 - $6 - $7; if (e < 0) e = -e
		if ($4 > $3 || $6 > $5 + 0.0015 || e > 0.0015) bad = bad " " $2
		n += $3; m += $4; ms += $5; mod += $6; c += $7; rows++ }
	/^# total / { tn = $3; tm = $4; tms = $5; tmod = $6; tc = $7 }
	END {
		d = ms - tms; if (d < 0) d = -d
		if (rows != 6 || bad != "" || n != tn || m != tm || d > 0.006 || tms <= 0) {
			print "FAIL " t ": coverage table does not add up (" rows " rows," bad ", " n "/" tn " kernels, " ms "/" tms " ms)"; exit 1 }
	}' "$2"
}
