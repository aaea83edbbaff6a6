#!/usr/bin/env bash
# Every `sim ...` command shown in README.md and docs/*.md (a line that starts
# with "sim " or "$ sim " in a ```sh code block; synopses go in plain ``` or
# ```text blocks) is run from the repository
# root and must exit 0. Set-up lines (apt-get, cmake, ctest) are run by
# .ci/run itself. docs/config-reference.md must be what `sim help config
# --markdown` prints (regenerate it with that command).
# With --no-plan (the sanitizer build) the `sim plan` lines are skipped (and
# the lines after one in its block, which may read what it wrote): each
# replays tens to hundreds of whole steps, which the normal build runs (ctest
# plan runs the planner under the sanitizers too). With I/N, only the code
# blocks whose number (in the order of the files) is I modulo N, and the
# config reference in shard 0: ctest runs three shards, so that none runs a
# minute without a word. A block's commands run in one shard, in order: a
# later one may read what an earlier one wrote (sim import ... -o F, then
# sim run ... F).
# usage: run_doc_commands.sh SIM REPO_ROOT [I/N] [--no-plan]
set -u
sim=$1 root=$2
shard=0/1 noplan=
for a in "${@:3}"; do
	case $a in
	--no-plan) noplan=$a ;;
	*/*) shard=$a ;;
	*) echo "usage: run_doc_commands.sh SIM REPO_ROOT [I/N] [--no-plan]" >&2 && exit 2 ;;
	esac
done
cd "$root" || exit 1
fails=0 n=0 blocks=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for doc in README.md docs/*.md; do
	# "BLOCK<tab>command": blocks numbered on from the previous files'
	awk -v b="$blocks" '/^```/{if (f) f=0; else { f=($0 ~ /^```(sh|bash|console)$/); if (f) b++ } next}
		f && /^(\$ )?sim /{sub(/^\$ /,""); print b "\t" $0} END { print b "\t" }' "$doc" >"$tmp/cmds"
	blocks=$(tail -n 1 "$tmp/cmds" | cut -f 1)
	while IFS=$'\t' read -r block line; do
		[ -n "$line" ] || continue
		# a skipped plan skips the rest of its block (sim merge of its shards)
		[ "$noplan" = --no-plan ] && [ "${line#sim plan }" != "$line" ] && skipped=$block
		[ "${skipped:-}" = "$block" ] && continue
		[ $(((block - 1) % ${shard#*/})) = "${shard%/*}" ] || continue
		n=$((n + 1))
		# output redirections in docs write into a scratch directory
		line=${line//> docs\//> $tmp\/}
		eval "set -- ${line#sim }"
		if ! (cd "$root" && "$sim" "$@") >"$tmp/out" 2>"$tmp/err" </dev/null; then
			fails=$((fails + 1))
			echo "FAIL $doc: $line"
			head -n 5 "$tmp/err"
		fi
	done <"$tmp/cmds"
done
if [ "${shard%/*}" = 0 ]; then
	n=$((n + 1))
	if ! "$sim" help config --markdown | diff -q - docs/config-reference.md >/dev/null; then
		fails=$((fails + 1))
		echo "FAIL docs/config-reference.md is stale: sim help config --markdown > docs/config-reference.md"
	fi
fi
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
