#!/usr/bin/env bats
# lab10 on a real GPU: a pooled allocate/free pair an order of magnitude
# cheaper than cudaMalloc + cudaFree; cudaFree in a loop stopping it running
# beside another stream, the stream-ordered loop not; the release threshold
# deciding what the pool keeps; a buffer freed under its reader read wrong,
# the two fixes right; compute-sanitizer naming the unsafe free and finding
# nothing in the safe ones; and the exercise as given (a race: exit 1) and
# solved (full marks). Verdicts are asserted on one run each: where another
# process spoils a comparison, the lab measures it again itself (--retries).

load test_helper

setup() { require_gpu; }

verdicts="pool_pair_cheaper cudafree_waits_for_device stream_ordered_keeps_overlap \
stream_ordered_costs_nothing zero_threshold_remaps threshold_decides_what_is_held \
unsafe_free_reads_reused_memory"

sanitizer() {
    local s
    s=$(command -v compute-sanitizer) || s=${CUDA_HOME:-/usr/local/cuda}/bin/compute-sanitizer
    [ -x "$s" ] || skip "compute-sanitizer is not installed (it comes with the CUDA toolkit)"
    echo "$s"
}

@test "lab10 --quick observes every verdict, the fixes' words all right" {
    json_run ./lab10 --quick
    for v in $verdicts; do
        observed "$f" "$v"
    done
    for what in "cudaMalloc vs the pool" "allocation loops beside B" \
        "release threshold 0 vs unlimited" "who frees"; do
        attempts_told "$f" "$what"
    done
}

@test "lab10 (default) reproduces the probe: 1 of 100 kernels beside B with cudaFree, 100 stream-ordered, every word wrong without the wait" {
    json_run ./lab10
    for v in $verdicts; do
        observed "$f" "$v"
    done
    # 10 x 2 ms beside 100 x 0.1 ms: max(10, 20) = 20 ms (probe 20.0), all 100 beside B
    within "$f" "stream-ordered" time "20 * 0.85" "20 * 1.15"
    within "$f" "stream-ordered" a_kernels_beside_b 90 100
    within "$f" "cudaMalloc/cudaFree" a_kernels_beside_b 0 10
    # 16 MiB: 4,194,304 words a run, 7 runs: the model's every word
    within "$f" "freed in A, no wait" wrong_words "0.5 * 7 * 4194304" "7 * 4194304"
    within "$f" "A waits for B's event, then frees" wrong_words 0 0
    within "$f" "freed in B, its last user" wrong_words 0 0
}

@test "lab10 --free unsafe: the words B read are wrong, and it exits 1" {
    run -1 bash -c './lab10 --quick --free unsafe --retries 0 --json >"$0"' "$BATS_TEST_TMPDIR/r.json"
    failed=$(python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
print(" ".join(sorted(c["name"] for c in d["checks"] if not c["passed"])))' "$BATS_TEST_TMPDIR/r.json")
    assert_equal "$failed" "unsafe_free_words_right"
}

@test "compute-sanitizer memcheck --track-stream-ordered-races all names lab10's unsafe free" {
    s=$(sanitizer)
    run "$s" --tool memcheck --track-stream-ordered-races all --print-limit 5 \
        ./lab10 --quick --reps 1 --retries 0 --free unsafe
    echo "$output"
    assert_output --regexp "========= .*[Ff]ree"
    refute_output --partial "ERROR SUMMARY: 0 errors"
}

@test "compute-sanitizer memcheck --track-stream-ordered-races all finds nothing in lab10's safe frees" {
    s=$(sanitizer)
    run "$s" --tool memcheck --track-stream-ordered-races all --leak-check full \
        ./lab10 --quick --reps 1 --retries 0 --free safe
    echo "$output"
    assert_output --partial "ERROR SUMMARY: 0 errors"
    [ "$status" -eq 0 ] || [ "$status" -eq 4 ] || fail "exit $status"
}

@test "ex10 as given races: the user reads wrong words, no concept point, exit 1" {
    run ./ex10 --quick
    assert_failure 1
    assert_output --partial "[FAIL] wait_words_right"
    assert_output --partial "[FAIL] last_user_words_right"
    assert_output --partial "What the grader would give"
    assert_output --partial "total: 1 of 10 points for this run"
}

@test "sol10 frees in stream order with the host free, and earns full marks" {
    run ./sol10
    assert_success
    assert_output --partial "total: 10 of 10 points for this run"
    run ./sol10 --quick
    assert_success
}

@test "sol10 --check is clean under compute-sanitizer memcheck --track-stream-ordered-races all; ex10's is not" {
    s=$(sanitizer)
    run "$s" --tool memcheck --track-stream-ordered-races all ./sol10 --check
    assert_output --partial "ERROR SUMMARY: 0 errors"
    run "$s" --tool memcheck --track-stream-ordered-races all ./ex10 --check
    refute_output --partial "ERROR SUMMARY: 0 errors"
}
