# tests/lib.sh -- what the shell tests share, sourced after `sim=$1 root=$2`
# (set -u is theirs): enters the repository root, makes $tmp (removed on
# exit) and fail MESSAGE, which prints the failure and counts it in $fails;
# finish NAME prints "ok NAME" when nothing failed and returns the status.
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
