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

# predicted FILE VARIANT METRIC: the model's value printed beside the measurement.
predicted() {
    from_json "$1" "[p['value'] for p in d['predictions'] if p['variant'] == '$2' and p['metric'] == '$3'][0]"
}

# graph_efficiency (issues #13, #20): the program's stream run behind a gate,
# timed on the GPU, over the student's step, both in the same round at the
# same stage times, so that neither the draws nor the host's pace move it
# as they move speedup. The rubric's faster_per_step and
# level2_faster_per_step score it (grader/rubrics/ex12.ini): at least 1.1,
# level two's at least 1.0, flagged past its model_limit, 2.0. The model
# (exercises/given/ex12.cu, STREAM_KERNEL_US, from lab12's H100 costs) puts
# sol12's median at 1.19-1.25 in default runs and 1.16-1.23 in --quick ones
# (p1-p99, simulated). On an H100 (2026-11-23, a fresh machine, three runs
# of each size): --quick 1.34, 1.34, 1.32 (the model 1.17-1.20), default
# 1.44, 1.48, 1.37 (the model 1.20-1.21), level two 1.23-1.43; the bound
# 1.05-1.24x its model; no gate ended early; speedup 1.54-2.91. The model
# under-predicts the efficiency by 10-23%, and the criterion is in force
# with it as it is. The band is the rubric's: 1.1 to 2.0, level two's 1.0
# to 2.0, each run against it, every gate outlasting the host's queuing.
# The bound is held between two models, not within a tolerance of one.
# Its model charges a kernel's 2.21 us in a stream (lab12) to the B + 2
# kernels of the step's longest chain only, and misses what the other
# streams' kernels cost the GPU meanwhile: the bound read 1.05-1.24x it on
# an H100 on 2026-11-23, 1.18-1.26x and 1.13-1.20x on two fresh ones on
# 2026-11-24, where the graph's own step stayed within about 7% of its
# model (estimated from the printed medians), 1.14-1.19x on another on
# 2026-11-25: 5.3-6.4 us a step over it at B = 4 and 10.8-12.5 at B = 8,
# 1.3-1.6 us a batch at both sizes. Not a cost per event wait: a probe of
# the primitives behind a gate (written for this, not kept; another fresh
# H100 the same day, medians of 9) read a kernel behind an already-complete
# wait at 1.94 us against 1.87 without. It is the third stream: 200 empty
# kernels in each of one, two and three independent streams took 1.87, 1.99
# and 4.07 us a row, and ex12's shape with empty kernels 3.9 us a batch, not
# 2.21. With spinning stages the step read 1.03-1.07x the model where one
# stage dominates (2, 5, 2 us) and 1.18-1.30x where they tie (2, 2, 2 to 10,
# 10, 10): how many streams' kernels fall ready at once, which no cost per
# kernel holds. So at least 0.8x that model
# (lab12's tolerance below a model), and at most the chain's kernels' own
# time plus all 3B kernels' 2.21 us one after another, as if the GPU took
# the three streams' launches one at a time (the two machines of
# 2026-11-24: 0.77-0.89 of it). Each fault has its own check: a bound at the host's pace (82-137
# us a step at default sizes, ex12.cu) ends gates early, counted below; a
# GPU that ran the three streams one after another goes past the ceiling
# by (B-1)(sum(t) - max(t)), the two shorter stages B - 1 times: 28-70 us
# at default sizes (stages of 2-5 us). The runs
# of one size are not held within a spread of each other any more: that
# bar (1.08x, the draws alone 1.05x in 99 of 100) read 1.085x in the
# default runs, since the model holds the draws' jitter and not the GPU's
# own between processes; the grade reads one run against the bar, so the
# lowest run is what matters, and each run is asserted against the band.
@test "sol12's graph efficiency, the gated streams' step over its own, stays within the rubric's band in three runs of each size" {
    [ -x ./sol12 ] || skip "solutions/ is not in this tree"
    local size run_no eff eff2 bound pred args b ceiling per_kernel stages
    per_kernel=$(sed -n 's/.*STREAM_KERNEL_US = \([0-9.]*\),.*/\1/p' exercises/given/ex12.cu)
    stages=$(sed -n 's/.*EX12_STAGES = \([0-9]*\).*/\1/p' exercises/given/ex12.h)
    [ -n "$per_kernel" ] && [ -n "$stages" ] || fail "STREAM_KERNEL_US or EX12_STAGES not found"
    f="$BATS_TEST_TMPDIR/s.json"
    for size in quick default; do
        args=()
        [ "$size" = default ] || args=(--quick)
        for run_no in 1 2 3; do
            run --separate-stderr ./sol12 "${args[@]}" --json
            [ "$status" -ne 1 ] || fail "sol12 ($size) exited 1: $stderr"
            printf '%s\n' "$output" >"$f"
            eff=$(report value "$f" "your graph" graph_efficiency)
            eff2=$(report value "$f" "your level-2 steps" graph_efficiency)
            bound=$(report value "$f" "gated streams" gpu_bound_step)
            pred=$(predicted "$f" "gated streams" gpu_bound_step)
            echo "# sol12 ($size) run $run_no: graph_efficiency $eff" \
                "(model $(predicted "$f" "your graph" graph_efficiency)), level 2 $eff2;" \
                "the bound $bound us a step (model $pred);" \
                "speedup $(report value "$f" "your graph" speedup)" >&3
            ok "1.1 <= $eff <= 2.0" "sol12 ($size) run $run_no: graph_efficiency $eff, outside 1.1-2.0"
            ok "1.0 <= $eff2 <= 2.0" "sol12 ($size) run $run_no: level-2 graph_efficiency $eff2, outside 1.0-2.0"
            # the model charges B + 2 kernels 2.21 us each; the ceiling all 3B of them
            b=$(from_json "$f" "d['parameters']['batches']['value']")
            ceiling=$(python3 -c "print($pred + ($stages * $b - $b - 2) * $per_kernel)")
            ok "0.8 * $pred <= $bound <= $ceiling" \
                "sol12 ($size) run $run_no: the bound $bound us a step, its model $pred us, all launches in turn $ceiling us"
            for gated in "gated streams" "gated streams, level 2"; do
                run report value "$f" "$gated" gates_ended_early
                assert_output "0"
            done
        done
    done
    # as handed out, the streams' own calls: host-bound, under the rubric's
    # bar (H100s read 0.64 and 0.91 on two machines: how fast the host
    # issues sets it, so the test holds it to the bar, not to a margin)
    run --separate-stderr ./ex12 --quick --json
    printf '%s\n' "$output" >"$f"
    eff=$(report value "$f" "your graph" graph_efficiency)
    bar=$(sed -n '/^\[faster_per_step\]/,/^\[level2/s/^min = //p' grader/rubrics/ex12.ini)
    echo "# ex12 as given (quick): graph_efficiency $eff (the rubric's bar $bar)" >&3
    ok "$eff < $bar" "ex12 as given: graph_efficiency $eff, at or above the rubric's bar $bar"
}

@test "sol12 --check runs the small sizes with every correctness check passing" {
    run ./sol12 --check
    [ "$status" -ne 1 ] || fail "sol12 --check exited 1: $output"
    assert_output --partial "[ok]   results_verified"
    assert_output --partial "[ok]   level2_results_verified"
}
