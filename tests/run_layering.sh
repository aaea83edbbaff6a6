#!/usr/bin/env bash
# The house keeps its shape (issue 23, sim/README.md):
#  1. no circle between source files: file A calls or reads a symbol that file
#     B defines while B (directly or through others) uses one of A's. The
#     edges come from the object files' symbol tables (nm), so they are what
#     the code really calls, not what it includes; tsort finds any loop.
#  2. no static mutable state in sim/ outside the command entry points
#     (sim/cli/): a `static` object that is not const (a pointer to const
#     is not), at file scope or in a function, in any folder of sim/. A line
#     that must keep one (a signal handler's flag) says why with `static-ok:`.
# Usage: run_layering.sh ROOT ARCHIVE.a... [OBJECT.o...]
set -u
root=$1
shift
fail=0

# Objects are named library:file (an archive's members carry no folder): two
# sources of one name in one library would merge into one node.
dups=$(for f in "$@"; do case "$f" in *.a) ar t "$f" | sort | uniq -d ;; esac; done)
if [ -n "$dups" ]; then
	echo "FAIL layering: source files that share a name (rename one; the graph cannot tell them apart): $dups"
	exit 1
fi

# symbol -> defining object; then "user definer" pairs between different files.
syms=$(mktemp) && trap 'rm -f "$syms"' EXIT
for f in "$@"; do
	nm -A -P "$f" 2>/dev/null
done | awk '{
	# POSIX format: "lib.a[obj.o]: sym TYPE ..." or "obj.o: sym TYPE ..."
	obj = $1; sub(/:$/, "", obj); lib = ""
	if (obj ~ /\]$/) { lib = obj; sub(/\[.*/, "", lib); sub(/.*\//, "", lib); lib = lib ":" }
	sub(/\]$/, "", obj); sub(/.*[\[\/]/, "", obj); obj = lib obj
	if ($3 ~ /^[TDBRC]$/) print "D", obj, $2
	else if ($3 == "U") print "U", obj, $2
}' >"$syms"
pairs=$(awk '$1 == "D" { def[$3] = $2; next } { use[NR] = $2 " " $3 }
	END { for (i in use) { split(use[i], u, " "); d = def[u[2]]; if (d != "" && d != u[1]) print u[1], d } }' "$syms" |
	sort -u)
nfiles=$(awk '{ print $2 }' "$syms" | sort -u | wc -l)
if [ "$nfiles" -lt 10 ]; then
	echo "FAIL layering: only $nfiles object files read (wrong arguments?)"
	exit 1
fi
if ! loops=$(printf '%s\n' "$pairs" | tsort 2>&1 >/dev/null) || [ -n "$loops" ]; then
	echo "FAIL layering: files that call each other in a circle (tsort):"
	printf '%s\n' "$loops" | sed 's/^/  /'
	fail=1
else
	echo "ok layering: $(printf '%s\n' "$pairs" | wc -l) calls between $nfiles files, no circle"
fi

# static mutable objects in sim/ outside sim/cli/, at file scope or in a
# function (a static buffer a function returns is state too).
# A pointer to const (`static const struct x *p;`) is mutable: only `* const` makes the pointer itself const.
statics=$(cd "$root" && grep -nE '^\s*static[^(]*(=|;|\{)' sim/*/*.c sim/*/*/*.c | grep -v '^sim/cli/' |
	grep -vE '^[^:]*:[0-9]+:\s*static[^=]*\(' | grep -v 'static-ok:' |
	grep -vE '^[^:]*:[0-9]+:\s*static ([a-z_ ]* )?const [^*=]*(=|;|\{)' |
	grep -vE '^[^:]*:[0-9]+:\s*static ([a-z_ ]* )?const [^=]*\*\s*const ')
if [ -n "$statics" ]; then
	echo "FAIL state: static mutable state in sim/ (pass a handle instead, or say why with static-ok:):"
	printf '%s\n' "$statics" | sed 's/^/  /'
	fail=1
else
	echo "ok state: no static mutable state in sim/ outside sim/cli/"
fi
exit $fail
