#!/usr/bin/env bats
# lab12 on a real GPU: stream launches of tiny kernels follow the host's
# launch rate and a graph replay the GPU's per-node cost; four branches in
# four streams are host-bound and their graph is not; an update changes the
# graph's arguments for less than a new graph, its replay verified; every
# refusal of a capture is the documented error and leaves the context
# usable; ex12 as given (no concept point) and solved (full marks).
# Verdicts are asserted on one run each: where another process spoils a
# comparison, the lab measures it again itself (--retries) and says why.

load test_helper

setup() { require_gpu; }

verdicts="stream_follows_launch_model graph_follows_node_model graph_beats_stream_launches \
graph_frees_host four_streams_follow_model graph_lifts_host_bound update_cheaper_than_instantiate \
capture_refusals_as_documented"

checks="words_verified branches_in_order context_usable_after_refusals graph_updates_accepted"

@test "lab12 --quick observes every verdict, its results verified" {
    json_run ./lab12 --quick
    for v in $verdicts; do
        observed "$f" "$v"
    done
    for c in $checks; do
        ok "$(from_json "$f" "[c['passed'] for c in d['checks'] if c['name'] == '$c'] == [True]")" \
            "$c failed or is missing: $(from_json "$f" "d['checks']")"
    done
    for what in "stream launches vs graph replay" "four streams vs one graph" "updating vs instantiating"; do
        attempts_told "$f" "$what"
    done
}

@test "lab12 --quick does its work in under two seconds" {
    within_budget 2.0 ./lab12 --quick
}

# near_model FILE VARIANT: its time within 0.8x to 1.25x of the time the lab
# predicted, the tolerance of the verdicts that compare these models
# (lab12.cu, forkjoin.cu). Part 2's verdicts judge only the speedups; this
# holds each of the three times to its own model.
near_model() {
    local p
    p=$(from_json "$1" "[p['value'] for p in d['predictions'] if p['variant'] == '$2' and p['metric'] == 'time'][0]") ||
        fail "no prediction for $2"
    within "$1" "$2" time "0.8 * $p" "1.25 * $p"
}

# No number of one machine here: the host's launch cost moved from 3.17 to
# 4.13 us between two default runs on one H100 (2026-11-23), and four
# streams with it, from 3.42 to 4.40 ms (the issue's probe: 4.4). What the
# lesson needs is the models' shape: launches that cost the host more than
# a kernel costs the GPU, a round trip per kernel dearer than a launch, and
# kernels that cannot run faster than they spin (K x t per branch).
@test "lab12 (default): launches host-bound, a sync each dearer still, part 2's three times within 0.8x-1.25x of their models" {
    json_run ./lab12
    for v in $verdicts; do
        observed "$f" "$v"
    done
    local launch gpu sync K t
    launch=$(report value "$f" "stream launches" per_kernel)
    gpu=$(report value "$f" "stream, GPU only" per_kernel)
    sync=$(report value "$f" "launch + sync each" per_kernel)
    ok "$launch > $gpu" "stream launches $launch us a kernel, the GPU $gpu us: not host-bound"
    ok "$sync > $launch" "launch + sync each $sync us a kernel, no dearer than a launch ($launch us)"
    K=$(report get "$f" parameters.branch_kernels.value)
    t=$(report get "$f" parameters.kernel_us.value)
    local way floor v
    while IFS='|' read -r way floor; do
        v=$(report value "$f" "$way" time)
        ok "$v >= $floor" "$way took $v ms, less than the kernels' own spin ($floor ms)"
        near_model "$f" "$way"
    done <<ROWS
one stream|4 * $K * $t * 1e-3
four streams|$K * $t * 1e-3
graph of four branches|$K * $t * 1e-3
ROWS
}

@test "lab12 --skip-setters replays a graph that kept its old increments: its words are wrong, and it exits 1" {
    run -1 bash -c './lab12 --quick --skip-setters --retries 0 --json >"$0"' "$BATS_TEST_TMPDIR/r.json"
    failed=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(c["name"] for c in d["checks"] if not c["passed"])))' "$BATS_TEST_TMPDIR/r.json")
    assert_equal "$failed" "words_verified"
}

@test "lab12's refusals return the documented codes: 900 cudaErrorStreamCaptureUnsupported, 906 ...Implicit, 0 in relaxed mode" {
    json_run ./lab12 --quick
    local call want
    while IFS='|' read -r call want; do
        ok "$(report value "$f" "$call" error_code) == $want" "$call: not error $want"
    done <<'ROWS'
cudaMalloc in a global-mode capture|900
cudaMalloc in a relaxed-mode capture|0
cudaStreamSynchronize of the capturing stream|900
legacy-stream kernel while a blocking stream captures|906
ROWS
}

@test "ex12 as given is right, earns no concept point, and exits 4" {
    run ./ex12 --quick
    assert_failure 4
    assert_output --partial "[ok]   results_verified"
    assert_output --partial "What the grader would give"
    assert_output --regexp "\[FAIL\] faster_per_step +0/4"
    assert_output --regexp "\[FAIL\] host_free +0/3"
    assert_output --partial "[ok]   level2_results_verified"
    assert_output --regexp "\[FAIL\] level2_faster_per_step +0/2"
    assert_output --regexp "\[FAIL\] level2_host_free +0/2"
    assert_output --partial "total: 5 of 16 points for this run"
}

@test "sol12 replays its graph faster with the host free, both levels, and earns full marks" {
    run ./sol12
    assert_success
    assert_output --partial "total: 16 of 16 points for this run"
    assert_output --regexp "your prediction +host_per_step +11(\.0+)? us"
    run ./sol12 --quick
    [ "$status" -ne 1 ] || fail "sol12 --quick exited 1: $output"
    assert_output --partial "[ok]   results_verified"
}

@test "sol12 --check runs the small sizes with every correctness check passing" {
    run ./sol12 --check
    [ "$status" -ne 1 ] || fail "sol12 --check exited 1: $output"
    assert_output --partial "[ok]   results_verified"
    assert_output --partial "[ok]   level2_results_verified"
}
