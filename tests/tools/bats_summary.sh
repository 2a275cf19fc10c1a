#!/usr/bin/env bash
# bats_summary.sh TAP-FILE: the last line of `make test`, read from the output
# of `bats --tap`:
#   bats: 120 passed, 0 failed, 89 skipped (86: no usable GPU here; 3: Slurm is not installed)
# A skip's reason is grouped by its first clause (up to the first ':', ';',
# ',' or ' ('), so that the 86 "no usable GPU here: <what the probe said>"
# skips count as one reason however the probe put it; most frequent first.
set -u
tap=${1:?usage: bats_summary.sh TAP-FILE}

# One line per test result: "pass", "fail" or "skip<TAB>first clause".
results=$(awk '
    /^not ok / { print "fail"; next }
    /^ok / {
        if (!match($0, / # skip( |$)/)) { print "pass"; next }
        why = substr($0, RSTART + RLENGTH)
        sub(/( \(|[:;,]).*/, "", why)
        print "skip\t" (why == "" ? "no reason given" : why)
    }' "$tap")
count() { grep -c "^$1" <<<"$results"; }
reasons=$(grep '^skip' <<<"$results" | cut -f2 | sort | uniq -c | sort -k1,1nr -k2 |
          sed -E 's/^ *([0-9]+) /\1: /' | paste -sd';' | sed 's/;/; /g')
echo "bats: $(count pass) passed, $(count fail) failed, $(count skip) skipped${reasons:+ ($reasons)}"
