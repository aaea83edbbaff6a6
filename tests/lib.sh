# tests/lib.sh -- what the shell tests share, sourced after `sim=$1 root=$2`
# (set -u is theirs): enters the repository root, makes $tmp (removed on
# exit) and fail MESSAGE, which prints the failure and counts it in $fails;
# finish NAME prints "ok NAME" when nothing failed and returns the status;
# sim_err FILE prints a stderr file without the warnings AddressSanitizer
# prints when SimGrid switches stacks (the sanitizer build's, not sim's).
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
