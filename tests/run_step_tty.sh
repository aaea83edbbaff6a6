#!/usr/bin/env bash
# sim step --interactive on a terminal (issue 21): through libedit, with the
# banner saying so, and an empty line repeating the last command as gdb does.
# The terminal is a pseudo-terminal made by script(1) (util-linux).
# usage: run_step_tty.sh SIM REPO_ROOT
set -u
sim=$1 root=$2
cd "$root" || exit 1
command -v script >/dev/null || {
	echo "FAIL script(1) is missing"
	exit 1
}
out=$(printf 'step 2\n\nquit\n' |
	script -qec "'$sim' step configs/a100.cfg --kernel 'gemm m=4096 n=4096 k=4096 dtype=fp16' --interactive; echo exit=\$?" /dev/null |
	tr -d '\r')
fails=0
check() {
	if ! grep -qE "$1" <<<"$out"; then
		echo "FAIL $2"
		fails=$((fails + 1))
	fi
}
check 'arrows edit and recall' "the banner does not say the terminal's line editing is on"
check '^\(step 0\) step 2' "no prompt before the first command"
check '^ +3  s0 ' "the empty line did not repeat 'step 2' (no cycle 3)"
check '^\(step 4\) quit' "the empty line did not step to cycle 4"
check '^exit=0$' "sim step did not exit 0"
[ "$fails" = 0 ] || printf '%s\n' "$out" | tail -n 20
[ "$fails" = 0 ] && echo "ok step_tty"
[ "$fails" = 0 ]
