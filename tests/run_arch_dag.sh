#!/bin/sh
# run_arch_dag.sh LIBSIMARCH -- the calls between the files of arch/ form a
# DAG: for every object of the library, an edge to each other object that
# defines a symbol it uses (nm: U in one, T/D/R/B in the other); tsort fails
# on a loop. Prints the edges on failure.
lib=$1
[ -f "$lib" ] || { echo "usage: $0 libsimarch.a" >&2; exit 2; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
nm "$lib" | awk -v tmp="$tmp" '
	/:$/ { obj = substr($0, 1, length($0) - 1); next }
	NF == 2 && $1 == "U" { print obj, $2 > (tmp "/used"); next }
	NF == 3 && $2 ~ /^[TDRB]$/ { print obj, $3 > (tmp "/defined") }
'
awk 'NR == FNR { def[$2] = $1; next } ($2 in def) && def[$2] != $1 { print $1, def[$2] }' \
	"$tmp/defined" "$tmp/used" | sort -u >"$tmp/edges"
if [ ! -s "$tmp/edges" ]; then
	echo "FAIL no calls between arch/ objects found in $lib" >&2
	exit 1
fi
if ! tsort "$tmp/edges" >/dev/null 2>"$tmp/err"; then
	echo "FAIL the calls between arch/ files have a loop:" >&2
	cat "$tmp/err" >&2
	awk '{ print "  " $1 " -> " $2 }' "$tmp/edges" >&2
	exit 1
fi
echo "ok arch/ call graph is a DAG ($(wc -l <"$tmp/edges") edges)"
