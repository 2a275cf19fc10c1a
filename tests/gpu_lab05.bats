#!/usr/bin/env bats
# lab05 on a real GPU: a greatest-priority stream's kernel jumps the queue of a
# many-wave background grid; a copy gains nothing from priority; ex05 as given
# does not jump, its solution does, and ./ex05 shows the grader's points.
# lab05's verdicts are asserted on one run each: it takes its same- and
# high-priority samples in pairs, and where another process spoils them it
# measures again itself (--retries) and says why.

load test_helper
load repeat

setup() { require_gpu; }

@test "lab05 --quick verifies kernels and copies, sees the critical kernel jump the queue and accounts for its attempts" {
    run --separate-stderr ./lab05 --quick --json
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/r.json"
    assert_success
    ok "$(from_json "$BATS_TEST_TMPDIR/r.json" "{'critical_verified', 'background_counted', \
        'bytes_intact'} <= {c['name'] for c in d['checks'] if c['passed']}")" \
        "a check failed or is missing: $(from_json "$BATS_TEST_TMPDIR/r.json" "d['checks']")"
    observed "$BATS_TEST_TMPDIR/r.json" samples_mid_background
    observed "$BATS_TEST_TMPDIR/r.json" high_priority_jumps_queue
    attempts_told "$BATS_TEST_TMPDIR/r.json" "same vs high priority"
    attempts_told "$BATS_TEST_TMPDIR/r.json" "copy same vs high priority"
}

@test "lab05 --quick does its work in under one second" {
    within_budget 1.0 ./lab05 --quick
}

@test "lab05 reports the priority range the runtime gives, and clamps values outside it" {
    ./lab05 --quick --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ] # the first test judges the verdicts
    least=$(report get "$BATS_TEST_TMPDIR/r.json" device.priority_least)
    greatest=$(report get "$BATS_TEST_TMPDIR/r.json" device.priority_greatest)
    # lower is higher: the greatest priority is the smaller number
    [ "$greatest" -lt "$least" ]
    run report value "$BATS_TEST_TMPDIR/r.json" device priority_greatest
    assert_output "$greatest"
    run report value "$BATS_TEST_TMPDIR/r.json" device beyond_greatest
    assert_output "$greatest"
    run report value "$BATS_TEST_TMPDIR/r.json" device beyond_least
    assert_output "$least"
}

# The ratio the verdict reads is the median of the pairs' same / high, each
# pair launched at one moment of its own background; the medians of the two
# sides are 5x apart as well.
@test "a greatest-priority kernel's latency is 5x lower than a same-priority one's, pair by pair" {
    run --separate-stderr ./lab05 --json
    printf '%s\n' "$output" >"$BATS_TEST_TMPDIR/r.json"
    assert_success
    f="$BATS_TEST_TMPDIR/r.json"
    observed "$f" high_priority_jumps_queue
    ratio=$(report value "$f" priority latency_ratio)
    ok "$ratio >= 5" "the pairs' median ratio is ${ratio}x"
    same=$(report value "$f" "same priority" latency)
    high=$(report value "$f" "high priority" latency)
    ok "$same >= 5 * $high" "same priority $same us, high priority $high us: not 5x apart"
    attempts_told "$f" "same vs high priority"
}

@test "same priority waits for what is left of the background, high priority under one block" {
    ./lab05 --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ] # the test above judges the verdict
    f="$BATS_TEST_TMPDIR/r.json"
    alone=$(report value "$f" alone latency)
    block=$(report get "$f" parameters.block_us.value)
    same=$(report value "$f" "same priority" latency)
    predicted=$(from_json "$f" "[p['value'] for p in d['predictions']
                                  if p['variant'] == 'same priority'][0]")
    high=$(report value "$f" "high priority" latency)
    # same priority: it queues behind every background block, so the wait is
    # what was left of the background (within 25%: the waves, not noise, set it)
    ok "0.75 * $predicted <= $same <= 1.25 * $predicted" "same priority $same us, model $predicted"
    # high priority: every block slot frees within one block duration
    ok "$high <= $alone + $block" "high priority $high us > alone $alone + one block $block us"
}

@test "a small copy gains nothing from a high-priority stream" {
    ./lab05 --quick --json >"$BATS_TEST_TMPDIR/r.json" || [ $? -eq 4 ]
    f="$BATS_TEST_TMPDIR/r.json"
    queued=$(report value "$f" copies queued_behind_big_copy)
    if [ "$queued" = "1" ]; then
        observed "$f" copies_not_prioritised
    else
        # separate copy engines: no queue; priority still makes no real difference
        same=$(report value "$f" "copy same priority" latency)
        high=$(report value "$f" "copy high priority" latency)
        ok "$high >= 0.5 * $same" "high-priority copy $high us, same-priority $same us"
    fi
    attempts_told "$f" "copy same vs high priority"
}

@test "ex05 as given verifies its results but does not jump the queue, names the TODO, and shows the correctness points only" {
    run ./ex05 --quick
    assert_failure 4
    assert_output --partial "[ok]   critical_verified"
    assert_output --partial "[ok]   background_counted"
    assert_output --partial "observed: NO  high_priority_jumps_queue"
    assert_output --partial "TODO(student) in create_critical_stream()"
    assert_output --partial "What the grader would give"
    assert_output --regexp "\[pass\] outputs_verified +2/2 +outputs_wrong 0, limit <= 0"
    assert_output --regexp "\[FAIL\] jumps_queue +0/8 +latency_ratio [0-9.]+, needs >= 5"
    # level two as given: one block per slot, in the contract, so its
    # correctness points; the kernel waits for the rest of the background
    assert_output --partial "[ok]   level2_tiles_counted"
    assert_output --partial "[ok]   level2_shape_in_contract"
    assert_output --partial "observed: NO  level2_within_budget"
    assert_output --partial "TODO(student) in level2_tiles_per_block()"
    assert_output --regexp "\[pass\] level2_shape_in_contract +2/2"
    assert_output --regexp "\[FAIL\] level2_within_budget +0/4 +level2_wait_p90_us [0-9.e+]+, needs <= 200"
    assert_output --partial "level 1: 2 of 10 points"
    assert_output --partial "level 2: 2 of 6 points (a second level, graded apart)"
    assert_output --partial "total: 4 of 16 points for this run"
}

@test "ex05 as given prints its level-2 waits, but not the model's (behind the shape handed out: the prediction's answer)" {
    run ./ex05 --quick
    refute_output --regexp "as handed out +wait_model"
    # level two's row (level one's "alone + half a block" is level one's model)
    refute_output --regexp "your shape +wait +predicted .*= half a block"
    refute_output --partial "wait_p90_model"
    assert_output --partial "(the model's value appears here once you write your prediction, LEVEL2_PREDICTED_WAIT_US: predict first, then run)"
    assert_output --regexp "your shape +wait +[-0-9.e+]+ us"
    assert_output --regexp "your shape +wait_p90 +[-0-9.e+]+ us"
    ./ex05 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    withheld "$BATS_TEST_TMPDIR/r.json" measurements "as handed out"
    withheld "$BATS_TEST_TMPDIR/r.json" measurements "your shape" wait_p90_model
    withheld "$BATS_TEST_TMPDIR/r.json" predictions "your shape" wait
}

@test "ex05 --check runs the critical kernel on an idle GPU, checks its outputs and judges no timing" {
    run ./ex05 --check
    assert_success
    assert_output --partial "[ok]   critical_verified"
    refute_output --partial "high_priority_jumps_queue"
    refute_output --partial "What the grader would give"
}

@test "sol05 jumps the queue by at least 5x, pair by pair, and would get full points" {
    [ -x ./sol05 ] || skip "solutions/ is not in this tree"
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./sol05 --quick
        assert_success
        assert_output --partial "observed: yes high_priority_jumps_queue"
        assert_output --partial "observed: yes level2_within_budget"
        assert_output --partial "total: 16 of 16 points for this run"
        ./sol05 --quick --json >"$BATS_TEST_TMPDIR/s.json"
        ratio=$(report value "$BATS_TEST_TMPDIR/s.json" priority latency_ratio)
        ok "$ratio >= 5" "sol05 latency ratio $ratio"
    done
}

# Level two over a full run (100 rounds, each a fresh job): the reference's
# blocks, by the GPU's clock, as long as its model (setup + tiles x tile,
# 96-128 us by design) give or take the clock's step and the block's own
# start; 9 waits in 10 within the budget; the background still efficient.
@test "sol05's shape keeps its blocks near 100 us, 9 waits in 10 within 200 us, and the background at least 85% efficient" {
    [ -x ./sol05 ] || skip "solutions/ is not in this tree"
    ./sol05 --json >"$BATS_TEST_TMPDIR/s.json"
    f="$BATS_TEST_TMPDIR/s.json"
    run report json "$f"
    assert_output "0"
    observed "$f" level2_within_budget
    model=$(from_json "$f" "[p['value'] for p in d['predictions'] if p['variant'] == 'your shape' and p['metric'] == 'longest_block'][0]")
    block=$(report value "$f" "your shape" longest_block)
    ok "$model >= 90 and $model <= 130" "the reference's model block $model us"
    ok "$block >= $model and $block <= $model + 10" "longest block $block us against $model"
    p90=$(report value "$f" "your shape" wait_p90)
    ok "$p90 <= 200" "the reference's 9-in-10 wait $p90 us"
    # the reference has predicted: the model's waits are shown
    run report value "$f" "as handed out" wait_model
    assert_success
    eff=$(report value "$f" "your shape" efficiency)
    ok "$eff >= 85" "the background's efficiency $eff%"
}

# The obvious short block, one tile each: within the budget, but the setup
# is most of every block, which the contract refuses in every round.
@test "ex05 refuses one tile a block: its setup takes most of every block" {
    mkdir -p "$BATS_TEST_TMPDIR/one"
    sed 's/return job->tiles_per_slot;.*/return 1;/' exercises/ex05_stream_priorities.cu \
        >"$BATS_TEST_TMPDIR/one/ex05_stream_priorities.cu"
    make -s BINDIR="$BATS_TEST_TMPDIR/bin" EX_SRCS="$BATS_TEST_TMPDIR/one/ex05_stream_priorities.cu" ex05
    run "$BATS_TEST_TMPDIR/bin/ex05" --quick
    assert_output --partial "[FAIL] level2_shape_in_contract"
    assert_output --regexp "\[FAIL\] level2_shape_in_contract +0/2 +level2_runs_wrong 11, needs <= 0"
}
