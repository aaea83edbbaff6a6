#!/usr/bin/env bash
# Outputs take nothing that is not theirs (sim/base/outfile.c), in a temporary
# directory:
#  - an output that is an input (the trace as --timeline, the config as a
#    roofline plot, sweep or compare CSV) exits 73 with one stderr line and
#    leaves the input byte-identical; so do two outputs that are one file;
#  - an output through a symlink writes the link's target, the link stays;
#  - a FIFO and /dev/null as outputs are written through and stay what they are;
#  - SIGINT / SIGTERM mid-run exit 130 / 143 with one stderr line, leave a
#    file already at the output path byte-identical;
#  - no temporary file is left behind after a success, a failure or a signal.
# usage: run_outputs.sh SIM ROOT
set -u
set -m # background jobs get SIGINT delivered (job control), as from a terminal
sim=$(realpath "$1") root=$(realpath "$2")
dir=$(realpath "$(mktemp -d)")
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail=0
bad() {
	echo "FAIL $*"
	fail=1
}
# no temporary files of sim's (.NAME.XXXXXX, NAME.tmpPID) anywhere below .
no_temps() {
	local left
	left=$(find . -name '.*.??????' -o -name '*.tmp[0-9]*')
	[ -z "$left" ] || bad "$1: temporary files left: $left"
}
# expect CODE LINE-PATTERN WHAT: the last command's exit code and its stderr
# (err), less ASan's note about SimGrid's context switches (sanitizer builds
# only; google/sanitizers#189), which is not sim's output
expect() {
	local rc=$1 want=$2 pat=$3 what=$4 e
	e=$(grep -Ev '^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return|^False positive error reports may follow$|^For details see https://github.com/google/sanitizers/issues/189$' err)
	[ "$rc" = "$want" ] || bad "$what: exit $rc, expected $want"
	[ "$(printf '%s\n' "$e" | wc -l)" = 1 ] || bad "$what: expected one stderr line, got: $e"
	grep -q -- "$pat" <<<"$e" || bad "$what: stderr does not match '$pat': $e"
}

cp "$root/configs/h100.cfg" A.cfg
cp "$root/traces/allreduce_8.trace" T.trace
cp A.cfg A.save
cp T.trace T.save
refuse='is an input of this command'

# 1. an output that is one of the inputs
"$sim" run A.cfg T.trace --timeline T.trace >out 2>err
expect $? 73 "sim run: T.trace: $refuse (T.trace); refusing to overwrite it" "run --timeline TRACE"
cmp -s T.trace T.save || bad "run --timeline TRACE: the trace changed"
[ -s out ] && bad "run --timeline TRACE: wrote a report"
"$sim" run A.cfg T.trace --timeline ./A.cfg >/dev/null 2>err
expect $? 73 "$refuse (A.cfg)" "run --timeline CONFIG"
ln -s T.trace T.link
mkdir csvdir && ln -s ../A.cfg csvdir/ops.csv
"$sim" run A.cfg T.trace --csv csvdir >/dev/null 2>err
expect $? 73 "csvdir/ops.csv: $refuse (A.cfg)" "run --csv DIR holding a link to the config"
"$sim" roofline A.cfg -o A.cfg >/dev/null 2>err
expect $? 73 "sim roofline: A.cfg: $refuse (A.cfg)" "roofline -o CONFIG"
"$sim" compare A.cfg T.trace --csv T.link >/dev/null 2>err
expect $? 73 "sim compare: T.link: $refuse (T.trace)" "compare --csv (a link to) TRACE"
"$sim" sweep A.cfg --op 'gemm m=64 n=64 k=64 dtype=bf16' --set compute.sm.count=66 -o A.cfg >/dev/null 2>err
expect $? 73 "sim sweep: A.cfg: $refuse (A.cfg)" "sweep -o CONFIG"
"$sim" sweep A.cfg T.trace --set compute.sm.count=66 --plot T.trace >/dev/null 2>err
expect $? 73 "sim sweep: T.trace: $refuse (T.trace)" "sweep --plot TRACE"
cmp -s A.cfg A.save || bad "the config changed"
cmp -s T.trace T.save || bad "the trace changed"
# two outputs that are one file: refused before either is written
"$sim" sweep A.cfg --op 'gemm m=64 n=64 k=64 dtype=bf16' --set compute.sm.count=66 -o x.csv --plot ./x.csv \
	>/dev/null 2>err
expect $? 73 "sim sweep: ./x.csv: is also the output x.csv; refusing to write one over the other" "sweep -o X --plot X"
[ -e x.csv ] && bad "sweep -o X --plot X: wrote X"
mkdir d
"$sim" run A.cfg T.trace --timeline d/ops.csv --csv d >/dev/null 2>err
expect $? 73 "sim run: d/ops.csv: is also the output d/ops.csv" "run --timeline DIR/ops.csv --csv DIR"
[ -e d/ops.csv ] && bad "run --timeline DIR/ops.csv --csv DIR: wrote DIR/ops.csv"
rm -r d
cp A.save A.cfg # the rest checks other things, even after a failure here
cp T.save T.trace
rm -r csvdir T.link
no_temps "refused outputs"

# 2. a symlink output: written through, the link stays
mkdir sub
ln -s sub/tl.json tl.json
"$sim" run A.cfg T.trace --timeline tl.json >/dev/null 2>err || bad "run --timeline LINK: exit $?: $(cat err)"
[ -L tl.json ] || bad "run --timeline LINK: the link is gone"
grep -q '"traceEvents"' sub/tl.json || bad "run --timeline LINK: the target does not hold the timeline"
"$sim" roofline A.cfg -o tl.json >/dev/null 2>err || bad "roofline -o LINK: exit $?: $(cat err)"
[ -L tl.json ] && grep -q '<svg' sub/tl.json || bad "roofline -o LINK: link gone or target not the plot"
no_temps "symlink outputs"

# 3. a FIFO and /dev/null: written through
mkfifo fifo
timeout 20 cat fifo >fifo.out & # the timeout: a sim that never opens it
reader=$!
"$sim" run A.cfg T.trace --timeline fifo >/dev/null 2>err || bad "run --timeline FIFO: exit $?: $(cat err)"
wait $reader
[ -p fifo ] || bad "run --timeline FIFO: no longer a FIFO"
grep -q '"traceEvents"' fifo.out || bad "run --timeline FIFO: the reader did not get the timeline"
# A device: as root, a null device of our own (a sim that renamed over the
# device would otherwise replace the machine's /dev/null); without root,
# /dev/null itself (a rename into /dev fails, so a regression exits 73).
null=/dev/null
if [ "$(id -u)" = 0 ]; then
	null=$dir/null
	mknod "$null" c 1 3 2>/dev/null || null=
fi
if [ -n "$null" ] && [ -c "$null" ]; then
	"$sim" run A.cfg T.trace --timeline "$null" >/dev/null 2>err || bad "run --timeline $null: exit $?: $(cat err)"
	"$sim" gen gpt --layers 2 --hidden 256 --heads 4 --vocab 1000 --seq 128 -o "$null" 2>err ||
		bad "gen -o $null: exit $?: $(cat err)"
	[ -c "$null" ] || bad "$null is no longer a character device"
fi
no_temps "FIFO and device outputs"

# 4. a failure leaves no temporary file, and the old output as it was
echo old >keep.json
cp keep.json keep.save
"$sim" run A.cfg "$root/tests/bad/coll_never_joined.trace" --timeline keep.json >/dev/null 2>err
expect $? 65 "deadlock" "run of a bad trace"
cmp -s keep.json keep.save || bad "a failed run changed its output"
full=/dev/full # as root, one of our own (as the null device above)
if [ "$(id -u)" = 0 ]; then
	full=$dir/full
	mknod "$full" c 1 7 2>/dev/null || full=
fi
if [ -n "$full" ] && [ -c "$full" ]; then
	"$sim" run A.cfg T.trace --timeline "$full" >/dev/null 2>err
	expect $? 73 "sim run: cannot write the timeline $full: No space left on device" "run --timeline a full device"
	[ -c "$full" ] || bad "$full is no longer a character device"
fi
"$sim" roofline A.cfg -o sub >/dev/null 2>err
expect $? 73 "sim roofline: cannot write sub: Is a directory" "roofline -o DIR"
no_temps "failures"

# 5. signals mid-run: a replay of about half a second, and a sweep of two
# replays (its output is open as a temporary file meanwhile), signalled once
# the process catches the signal
# catching PID SIG: PID is sim (not the shell still forking it) and catches SIG
# (Linux: the SigCgt mask of /proc/PID/status); elsewhere, true
catching() {
	[ -d /proc/self ] || return 0
	local mask num
	num=$(kill -l "$2")
	[ "$(readlink -f "/proc/$1/exe" 2>/dev/null)" = "$(readlink -f "$sim")" ] || return 1
	mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null)
	[ -n "$mask" ] && (((16#$mask >> (num - 1)) & 1))
}
signal() { # signal NAME CODE LINE WHAT COMMAND...
	local sig=$1 code=$2 line=$3 what=$4 i
	shift 4
	"$@" >/dev/null 2>err &
	local pid=$!
	# mid-run: once sim catches the signal (a loaded machine, or a sanitizer
	# build, can take longer than a fixed delay to get there), then 0.1 s on
	for i in $(seq 200); do
		catching $pid "$sig" && break
		sleep 0.02
	done
	sleep 0.1
	kill -"$sig" $pid
	wait $pid
	expect $? "$code" "^$line\$" "$what"
	cmp -s keep.json keep.save || bad "$what: the output already there changed"
	no_temps "$what"
	# no sim left running here (a sweep's points end with it; Linux /proc),
	# 0.05 s on, well before a point of about 0.5 s would end by itself
	local p left=
	sleep 0.05
	if [ -d /proc/self ]; then
		for p in $(find /proc -mindepth 2 -maxdepth 2 -name exe -lname "$sim" 2>/dev/null); do
			[ "$(readlink "${p%/exe}/cwd")" = "$dir" ] && left="$left ${p//[^0-9]/}"
		done
	fi
	[ -z "${left:-}" ] || bad "$what: sim processes still running:$left"
}
gpt=$root/traces/gpt3.trace
signal INT 130 'sim: interrupted' "run, SIGINT" "$sim" run A.cfg "$gpt" --timeline keep.json
signal TERM 143 'sim: terminated' "run, SIGTERM" "$sim" run A.cfg "$gpt" --timeline keep.json
signal INT 130 'sim: interrupted' "sweep, SIGINT" \
	"$sim" sweep A.cfg "$gpt" --set compute.sm.count=100,132 --jobs 1 -o keep.json
signal TERM 143 'sim: terminated' "sweep, SIGTERM" \
	"$sim" sweep A.cfg "$gpt" --set compute.sm.count=100,132 --jobs 1 -o keep.json

# and a success leaves only its output
"$sim" sweep A.cfg --op 'gemm m=64 n=64 k=64 dtype=bf16' --set compute.sm.count=66,132 -o keep.json 2>err ||
	bad "sweep -o: exit $?: $(cat err)"
[ "$(wc -l <keep.json)" = 3 ] || bad "sweep -o: expected 3 CSV lines"
no_temps "success"
exit $fail
