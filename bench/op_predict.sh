#!/usr/bin/env bash
# Prints the device model's speed: a GEMM prediction with the full kernel
# search the first time a shape is seen, and the memoized one after.
# Targets (issue 3): at most 5 ms cold and 1 us memoized on a 2-core machine.
# usage: bench/op_predict.sh [BUILD] [CONFIG]
set -eu
build=${1:-build}
cfg=${2:-configs/h100.cfg}
"$build/op_predict" "$cfg" 2000
