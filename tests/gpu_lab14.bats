#!/usr/bin/env bats
# lab14 on a real GPU: a green context's kernels run on exactly its SMs, in
# the waves its size predicts; an urgent kernel in its own partition waits
# about nothing where the greatest priority waits about a background block;
# the background on the rest of the SMs takes as long as its waves predict,
# and its event-timed duration (events recorded in the rest's green
# context) agrees with its blocks' own %globaltimer log.
# Verdicts are asserted on one run each: where another process spoils a
# comparison, the lab measures it again itself (--retries) and says why.

load test_helper

setup() { require_gpu; }

verdicts="kernels_on_partition_sms partition_runs_in_waves partition_latency_near_alone \
partition_beats_priority urgent_stays_in_partition background_cost_as_modelled"

checks="block_records whole_events_match_log rest_events_match_log"

all_observed() {
    for v in $verdicts "$@"; do
        observed "$f" "$v"
    done
    for c in $checks; do
        ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == '$c'] == [True]")" \
            "$c failed or is missing: $(from_json "$f" "d['checks']")"
    done
    attempts_told "$f" "urgent three ways"
}

@test "lab14 --quick observes every verdict, its records verified and its events matching the logs" {
    json_run ./lab14 --quick
    all_observed sweep_cost_as_modelled
}

@test "lab14 --quick does its work in under two seconds" {
    within_budget 2.0 ./lab14 --quick
}

# The split's rule from cuda.h: at least minSmPartitionSize SMs, in steps of
# smCoscheduledAlignment; the rest is every other SM. Each kernel ran on
# exactly its partition's SMs (the verdict), none shared.
@test "lab14 (default): the split follows the device's granularity, and every verdict holds" {
    json_run ./lab14
    all_observed sweep_cost_as_modelled
    local sms part rest min align
    sms=$(report value "$f" device sm_count)
    part=$(report value "$f" device partition_sms)
    rest=$(report value "$f" device rest_sms)
    min=$(report value "$f" device min_partition)
    align=$(report value "$f" device alignment)
    ok "$part >= 16 and $part >= $min and $part % $align == 0" "partition of $part SMs (min $min, step $align)"
    ok "$part + $rest <= $sms" "partition $part + rest $rest > $sms SMs"
    within "$f" "partition and rest" sms_shared 0 0
}

@test "lab14 --partition-sms larger than the GPU exits 3 with one line naming the refused size" {
    run --separate-stderr ./lab14 --quick --partition-sms 1024
    assert_failure 3
    [[ "$stderr" == "lab14: cannot run here: "*"1024 SMs"* ]] || fail "$stderr"
    [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "not one line: $stderr"
}
