#!/usr/bin/env bash
# Configs found by name (sim/cli/common.c, cli_config): a bare name or one
# without .cfg is looked up in $SIM_CONFIG_PATH, then beside the installed
# program (bin/../share/sim/configs), then in the source tree; an installed
# sim finds its own configs and traces from any directory.
# Usage: run_config_path.sh SIM ROOT BUILD_DIR
set -u
sim=$(readlink -f "$1")
root=$(readlink -f "$2")
build=$(readlink -f "$3")
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
fail=0
check() { # what, command's output, expected substring
	if [[ "$2" == *"$3"* ]]; then echo "ok   $1"; else echo "FAIL $1: got '$2', want '$3'"; fail=1; fi
}
cd "$tmp" || exit 1
check "a name, from another directory" "$("$sim" info h100 2>&1 | sed -n 2p)" "config     $root/configs/h100.cfg"
check "a name with a folder" "$("$sim" info systems/dgx_h100 2>&1 | sed -n 2p)" "$root/configs/systems/dgx_h100.cfg"
mkdir -p "$tmp/mine" && cp "$root/configs/a100.cfg" "$tmp/mine/h100.cfg"
check "SIM_CONFIG_PATH first" "$(SIM_CONFIG_PATH="$tmp/nothing:$tmp/mine" "$sim" info h100 2>&1 | sed -n 2p)" \
	"config     $tmp/mine/h100.cfg"
out=$("$sim" info no_such_chip 2>&1)
rc=$?
check "an unknown name: exit 66" "$rc" "66"
check "an unknown name: one line naming the search" "$(printf '%s\n' "$out" | wc -l) $out" \
	"1 no_such_chip: no such config (a path, or a name looked up in \$SIM_CONFIG_PATH"
check "a path is read as given" "$("$sim" info ./h100 2>&1)" "./h100"
# installed: the program finds the configs and traces installed beside it
if cmake --install "$build" --prefix "$tmp/inst" >/dev/null 2>&1; then
	cd / || exit 1
	check "installed: its own configs" "$("$tmp/inst/bin/sim" info h100 2>&1 | sed -n 2p)" \
		"$tmp/inst/bin/../share/sim/configs/h100.cfg"
	check "installed: the shipped traces" "$(ls "$tmp/inst/share/sim/traces/")" "gpt3.trace"
	check "installed: a run by names" \
		"$("$tmp/inst/bin/sim" run h100 "$tmp/inst/share/sim/traces/allreduce_8.trace" 2>/dev/null | sed -n 1p)" \
		"allreduce_8.trace on $tmp/inst/bin/../share/sim/configs/h100.cfg"
	# the program alone, without its engine module (sim/cluster/engine_dl.c): what never replays works, a
	# replay says in one line what is missing and exits 70 (unless the configured prefix holds an engine)
	mkdir "$tmp/lone" && cp "$tmp/inst/bin/sim" "$tmp/lone/"
	check "alone: a command that does not replay" "$("$tmp/lone/sim" info h100 2>&1 | sed -n 1p)" "H100"
	out=$("$tmp/lone/sim" run h100 "$tmp/inst/share/sim/traces/allreduce_8.trace" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "ok   alone: a replay found the engine installed in the configured prefix"
	else
		check "alone: a replay's exit code" "$rc" "70"
		check "alone: the missing engine named" "$out" \
			"sim: the cluster engine sim-engine.so is neither beside the program ($tmp/lone) nor in"
		check "alone: one line" "$(printf '%s\n' "$out" | wc -l)" "1"
	fi
	# a module beside it that is not an engine (a text file; another shared library): refused in one line, exit 70
	echo "not a module" >"$tmp/lone/sim-engine.so"
	out=$("$tmp/lone/sim" run h100 "$tmp/inst/share/sim/traces/allreduce_8.trace" 2>&1 >/dev/null)
	check "a broken module: exit 70" "$?" "70"
	check "a broken module: named" "$out" "sim: the cluster engine $tmp/lone/sim-engine.so cannot be loaded: "
	lib=$(ldd "$tmp/lone/sim" | awk '/libz\.so/ { print $3; exit }')
	if [ -n "$lib" ]; then
		cp "$lib" "$tmp/lone/sim-engine.so"
		out=$("$tmp/lone/sim" run h100 "$tmp/inst/share/sim/traces/allreduce_8.trace" 2>&1 >/dev/null)
		check "another library as the module: exit 70" "$?" "70"
		check "another library as the module: refused" "$out" \
			"sim: the cluster engine $tmp/lone/sim-engine.so is not the one this program was built with"
		check "another library as the module: one line" "$(printf '%s\n' "$out" | wc -l)" "1"
	fi
else
	echo "FAIL cmake --install into $tmp/inst"
	fail=1
fi
exit $fail
