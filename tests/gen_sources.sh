#!/usr/bin/env bash
# Writes docs/sources.md on stdout: every source key of the form [R-...] that a
# config (configs/, tests/peaks/) cites, with its entry in the References of the
# project's reference notes (shared/reference/chips.md, outside the repository:
# run this again when those notes change). Keys of other forms are defined in
# the header of the config that cites them. tests/run_sources.sh checks that
# every cited key resolves.
# usage: tests/gen_sources.sh CHIPS_MD > docs/sources.md
set -eu
chips=$1
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
keys=$(grep -ohE '\[R-[A-Za-z0-9.-]+(, *[A-Z][A-Za-z0-9.-]+)*\]' configs/*.cfg configs/*/*.cfg tests/peaks/*.tsv |
	tr -d '[]' | tr ',' '\n' | sed 's/^ *//' | grep '^R-' | sort -u)
cat <<'EOF'
# Sources of the configs

Every figure in `configs/` carries its source in a comment: a seed table, a named document, or a key in brackets.
A key of the form `[R-...]` is resolved below; any other key (`[GH200-DS]`, `[CRN-MI325X]` ...) is defined in
the header of the config that cites it. This page is generated from the project's reference notes by
`tests/gen_sources.sh`; `tests/run_sources.sh` (ctest `sources`) fails when a config cites a key that resolves
nowhere. Vendor documents are marked (vendor), mirrors of them (vendor, mirror); everything else is a third-party
source, and spec databases and news reports are secondary. Where a config's comment mentions `chips.md` it means
those reference notes (their checks and their doubts), whose citations this page reproduces.

EOF
for k in $keys; do
	# the entry: from "- **[KEY]**" to the line before the next entry, heading or blank line
	awk -v k="$k" '
		index($0, "- **[" k "]**") == 1 { on = 1; print; next }
		on && (/^- \*\*\[/ || /^#/ || /^$/) { exit }
		on { print }' "$chips"
done
