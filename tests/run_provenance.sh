#!/usr/bin/env bash
# Saved outputs say what made them (issue 21): `sim run --json` and the
# timeline carry sim's version, the command, the config file, its --set
# overrides and the fingerprint of the chip they gave (equal parameters,
# equal fingerprint: a name and a path to the same file agree; an override
# changes it).
# Usage: run_provenance.sh SIM ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if [ "$2" = "$3" ]; then echo "ok   $1"; else echo "FAIL $1: got '$2', want '$3'"; fail=1; fi; }
tr=traces/allreduce_8.trace
a=$("$sim" run configs/h100.cfg $tr --json --set model.launch_overhead=3us 2>/dev/null)
b=$("$sim" run h100 $tr --json 2>/dev/null)
c=$("$sim" run configs/h100.cfg $tr --json 2>/dev/null)
version=$("$sim" --version | awk '{print $2}')
check "the version" "$(jq -r .provenance.sim_version <<<"$a")" "$version"
check "the command" "$(jq -c .provenance.command <<<"$a")" \
	'["sim","run","configs/h100.cfg","traces/allreduce_8.trace","--json","--set","model.launch_overhead=3us"]'
check "the overrides" "$(jq -c .provenance.overrides <<<"$a")" '["model.launch_overhead=3us"]'
check "a name and a path: one fingerprint" "$(jq -r .provenance.config_fingerprint <<<"$b")" \
	"$(jq -r .provenance.config_fingerprint <<<"$c")"
[ "$(jq -r .provenance.config_fingerprint <<<"$a")" != "$(jq -r .provenance.config_fingerprint <<<"$c")" ] &&
	echo "ok   an override changes the fingerprint" || { echo "FAIL an override kept the fingerprint"; fail=1; }
"$sim" run configs/h100.cfg $tr --timeline "$tmp/t.json" --set model.launch_overhead=3us >/dev/null 2>&1
check "the timeline says the same" "$(jq -c '.otherData | [.sim_version, .config_fingerprint, .overrides]' "$tmp/t.json")" \
	"$(jq -c '.provenance | [.sim_version, .config_fingerprint, .overrides]' <<<"$a")"
exit $fail
