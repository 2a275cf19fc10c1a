#!/usr/bin/env bash
# numeric_options.sh PROGRAM: one line for each option of PROGRAM that takes a
# number, "NAME KIND MIN MAX" (KIND: integer or number), read from its --help,
# which common/options.c writes as
#   "  --size-mib MIB         bytes per copy (1 to 4096; default 256)";
# the kind is what the option's own error message calls it. Needs no GPU:
# every program reads its options before it looks for one.
set -u
program=$1
"$program" --help </dev/null |
    sed -nE 's/^  (--[a-z0-9-]+) [A-Z]+ .*\(([-0-9.e+]+) to ([-0-9.e+]+); default [^)]*\)$/\1 \2 \3/p' |
    while read -r name min max; do
        kind=number
        "$program" "$name" not-a-number </dev/null 2>&1 | grep -q "must be an integer" && kind=integer
        echo "$name $kind $min $max"
    done
