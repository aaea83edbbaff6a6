#!/usr/bin/env bash
# Every source key a config cites resolves inside the repository (issue 21):
# a key [R-...] has its entry in docs/sources.md, any other key is defined in
# a config's header ("#   [KEY]  what it is: where"), so that a reader can
# check each figure's source without the project's reference notes.
# usage: run_sources.sh REPO_ROOT
set -u
cd "$1" || exit 1
fails=0 n=0
for k in $(grep -ohE '\[[A-Z][A-Za-z0-9]*(-[A-Za-z0-9.]+)+(, *[A-Z][A-Za-z0-9]*(-[A-Za-z0-9.]+)+)*\]' \
	configs/*.cfg configs/*/*.cfg tests/peaks/*.tsv | tr -d '[]' | tr ',' '\n' | sed 's/^ *//' | sort -u); do
	n=$((n + 1))
	case $k in
	R-*) grep -q "^- \*\*\[$k\]\*\*" docs/sources.md && continue ;;
	*) grep -qE "^# +\[$k\]" configs/*.cfg configs/*/*.cfg && continue ;;
	esac
	echo "FAIL [$k] is cited but resolves nowhere (docs/sources.md for [R-...] keys, else a config's header)"
	fails=$((fails + 1))
done
[ "$n" -gt 100 ] || {
	echo "FAIL only $n source keys found"
	fails=$((fails + 1))
}
[ "$fails" = 0 ] && echo "ok sources: $n keys resolve"
[ "$fails" = 0 ]
