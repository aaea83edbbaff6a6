#!/usr/bin/env bash
# The shipped traces are what `sim gen` writes: regenerates every file listed
# in tests/gen_traces.tsv (file<TAB>arguments) and diffs it against the
# repository's copy. With --update, rewrites the copies instead.
# usage: run_gen_traces.sh SIM REPO_ROOT [--update]
set -u
sim=$1 root=$2 update=${3:-}
cd "$root" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 n=0
while IFS=$'\t' read -r file args; do
	case "$file" in ''|'#'*) continue ;; esac
	n=$((n + 1))
	eval "set -- $args"
	if ! "$sim" gen "$@" -o "$tmp/out" 2>"$tmp/err"; then
		fails=$((fails + 1))
		echo "FAIL sim gen $args: $(cat "$tmp/err")"
		continue
	fi
	if [ "$update" = --update ]; then
		cp "$tmp/out" "$file"
	elif ! diff -u "$file" "$tmp/out" >"$tmp/diff"; then
		fails=$((fails + 1))
		echo "FAIL $file differs from sim gen $args (tests/run_gen_traces.sh SIM . --update rewrites it):"
		head -n 40 "$tmp/diff"
	fi
done <tests/gen_traces.tsv
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
