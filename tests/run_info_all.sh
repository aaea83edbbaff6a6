#!/usr/bin/env bash
# Every config in configs/ must load and print, as text and as JSON with the
# documented keys, and print the same bytes twice (determinism).
# usage: run_info_all.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
fails=0 n=0
fail() { fails=$((fails + 1)); echo "FAIL $*"; }
command -v jq >/dev/null || { echo "FAIL jq is not installed (README set-up installs it)"; exit 1; }
while IFS= read -r cfg; do
	n=$((n + 1))
	a=$("$sim" info "$cfg" 2>&1) || { fail "$cfg: sim info exited $?: $a"; continue; }
	b=$("$sim" info "$cfg" 2>&1)
	[ "$a" = "$b" ] || fail "$cfg: two runs differ"
	j=$("$sim" info "$cfg" --json 2>&1) || { fail "$cfg: --json exited $?"; continue; }
	printf '%s' "$j" | jq -e '
		(.name | type == "string") and (.vendor | type == "string") and
		(.peak_tflops.matrix | has("fp16") and has("bf16") and has("tf32") and has("fp8") and has("int8")) and
		(.peak_tflops.vector | has("fp64") and has("fp32") and has("fp16")) and
		(.memory.capacity_bytes > 0) and (.memory.bandwidth_Bps > 0) and (.schema_version == 1)' >/dev/null ||
		fail "$cfg: --json lacks documented keys or is not JSON"
done < <(find configs -name '*.cfg' | LC_ALL=C sort)
[ "$n" -gt 0 ] || fail "no configs found"
echo "$((n - fails)) passed, $fails failed"
[ "$fails" = 0 ]
