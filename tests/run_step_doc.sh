#!/usr/bin/env bash
# docs/tutorial-warp-schedule.md shows outputs of golden tests: each block
# after "<!-- golden: NAME -->" is `sim` + tests/golden/NAME.cmd in a ```sh
# block, then NAME.out (without its "exit 0" line) in a ```text block; after
# "<!-- golden-pipe: NAME -->" a ```text block equal to NAME.txt (a session
# piped into `sim step --interactive`). The page never drifts from them.
# usage: run_step_doc.sh REPO_ROOT
set -u
cd "$1" || exit 1
doc=docs/tutorial-warp-schedule.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# split the page: one file per marked block (cmd, text)
awk -v d="$tmp" '
	/^<!-- golden(-pipe)?: [A-Za-z0-9_]+ -->$/ { name = $3; kind = ($2 == "golden-pipe:") ? "pipe" : "golden"; n = 0; print kind, name >> (d "/list"); next }
	name != "" && /^```/ { if (inblk) { inblk = 0; n++; if ((kind == "golden" && n == 2) || (kind == "pipe" && n == 1)) name = ""; next } inblk = 1; next }
	name != "" && inblk { f = (kind == "golden" && n == 0) ? "cmd" : "out"; print > (d "/" name "." f) }
' "$doc"
fails=0 count=0
while read -r kind name; do
	count=$((count + 1))
	if [ "$kind" = golden ]; then
		printf 'sim %s\n' "$(cat "tests/golden/$name.cmd")" | cmp -s - "$tmp/$name.cmd" || { echo "FAIL $doc: the command of $name differs from tests/golden/$name.cmd"; fails=$((fails + 1)); }
		sed '$d' "tests/golden/$name.out" | cmp -s - "$tmp/$name.out" || { echo "FAIL $doc: the output of $name differs from tests/golden/$name.out"; fails=$((fails + 1)); }
	else
		cmp -s "tests/golden/$name.txt" "$tmp/$name.out" || { echo "FAIL $doc: the session $name differs from tests/golden/$name.txt"; fails=$((fails + 1)); }
	fi
done <"$tmp/list"
echo "$((count - fails)) of $count blocks match their golden files"
[ "$fails" = 0 ] && [ "$count" -gt 0 ]
