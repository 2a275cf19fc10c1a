#!/usr/bin/env bats
# A GPU that another process is using: every lab ends with exit 4 and names
# that as the likely reason, never with "effect observed". A probe kernel at
# the start and at the end of each run sees the GPU taking turns with the
# other process (common/device.h); tests/tools/gpu_load is that process:
# kernels on every SM and copies both ways, back to back.

load test_helper
load gpu_load

setup() { require_gpu; }
teardown() { stop_load; }

@test "on an idle GPU the probe finds nothing: lab01 --quick sees its effect (exit 0)" {
    run ./lab01 --quick
    assert_success
    refute_output --partial "gpu_not_shared"
}

@test "every lab run while another process loads the GPU exits 4 with that reason, never 'observed'" {
    start_load --seconds 120
    local one_gpu=$(($(gpus) < 2)) args
    for p in $(programs | grep '^lab'); do
        args=(--quick)
        # On one GPU lab13 can show nothing (exit 3 naming the two GPUs it
        # needs, loaded or not), and lab14's part 3 likewise: its parts 1-2
        # alone (--no-comm) are what a loaded GPU must spoil.
        if ((one_gpu)) && [ "$p" = lab13 ]; then
            run "./$p" --quick
            echo "# $p: exit $status (one GPU)"
            [ "$status" -eq 3 ] || fail "lab13 --quick on one GPU exited $status: $output"
            assert_output --partial "needs 2 GPUs"
            continue
        fi
        ((one_gpu)) && [ "$p" = lab14 ] && args+=(--no-comm)
        run "./$p" "${args[@]}"
        echo "# $p: exit $status"
        [ "$status" -eq 4 ] || fail "$p --quick exited $status on a loaded GPU: $output"
        assert_output --partial "observed: NO  gpu_not_shared: the GPU ran other work"
        assert_output --partial "likely reason for gpu_not_shared: another process was using this GPU"
        refute_output --partial "effect observed (exit 0)"
    done
}

@test "the JSON report of a lab on a loaded GPU carries the verdict and the reason" {
    start_load --seconds 60
    ./lab04 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    f="$BATS_TEST_TMPDIR/r.json"
    run report get "$f" exit_code
    assert_output "4"
    run python3 -c "import json, sys; d = json.load(open(sys.argv[1]))
v = [i for i in d['verdict']['items'] if i['name'] == 'gpu_not_shared']
print(v[0]['observed'], d['verdict']['observed'], 'another process' in d['verdict']['hint'])" "$f"
    assert_output "False False True"
}

@test "a load that starts while a lab is running is caught too" {
    ./lab02 >"$BATS_TEST_TMPDIR/out.txt" 2>&1 & # a few seconds
    lab=$!
    sleep 0.5 # past the probe at its start
    start_load --seconds 60
    status=0
    wait "$lab" || status=$?
    [ "$status" -eq 4 ] || fail "lab02 exited $status: $(cat "$BATS_TEST_TMPDIR/out.txt")"
    grep -q "likely reason for gpu_not_shared: another process was using this GPU" "$BATS_TEST_TMPDIR/out.txt"
}

@test "the machine probe sees another process on the GPU, and nothing on an idle one" {
    run "$TOOLS/machine_probe" --probes 2 --against-first
    assert_success
    assert_line --index 1 "  interference: 0"
    start_load --seconds 30
    run "$TOOLS/machine_probe" --probes 1
    assert_success
    # the load's own probe: time-sliced, and launches wait for the other's slice
    [[ $output =~ lost\ ([0-9.]+)\ of\ ([0-9.]+)\ ms ]] || fail "no probe line: $output"
    ok "${BASH_REMATCH[1]} >= 0.25 * ${BASH_REMATCH[2]}" "the probe lost ${BASH_REMATCH[1]} of ${BASH_REMATCH[2]} ms beside gpu_load"
}

@test "a lab whose comparison fails beside another process re-measures, names it, and never exits 1" {
    start_load --seconds 120
    run ./lab04 --quick --csv
    echo "# lab04 --quick beside gpu_load: exit $status"
    [ "$status" -eq 4 ] || fail "lab04 exited $status beside gpu_load: $output"
    attempts=$(grep -c ',attempts,' <<<"$output" || true)
    [ "$attempts" -ge 1 ] || fail "no attempts row: $output"
    # Every comparison that was measured more than once did so because of
    # interference (retries happen only then), at most 1 + --retries times.
    while IFS=, read -r _ what _ n _; do
        [ "$n" -le 3 ] || fail "$what measured $n times, more than 1 + --retries 2"
    done < <(grep ',attempts,' <<<"$output")
    run ./lab04 --quick
    [ "$status" -eq 4 ]
    if grep -q 'measured [23] times' <<<"$output"; then
        assert_output --partial "the GPU ran another process's work"
    fi
    assert_output --partial "likely reason for gpu_not_shared: another process was using this GPU"
}

@test "--retries 0 measures each comparison once, even beside another process" {
    start_load --seconds 60
    run ./lab04 --quick --csv --retries 0
    [ "$status" -eq 4 ] || fail "lab04 exited $status: $output"
    run grep ',attempts,' <<<"$output"
    refute_output --regexp ',attempts,([2-9]|1[0-9]),'
}

# lab02's pinned copies slower than the same copies timed as the link a
# moment before: the attempt itself saw another process (lab_attempt_saw),
# with its samples narrow and the probe quiet again. tests/tools/attempt_test
# stands in for the comparison, so each path is taken for certain. (The
# probe's own findings, if this machine has any, come after the made-up one.)
@test "an attempt that saw interference itself is measured again and named; failing still, the run exits 4" {
    run "$TOOLS/attempt_test" --fail 1 --saw 1
    assert_success
    assert_output --partial "made up: measured 2 times; attempt 1: made-up: the same thing timed twice, 41 GB/s and 55; made-up: D2H too"
    assert_output --partial "the last attempt showed the effect"
    # Still failing after --retries: exit 4, every attempt named, the last too.
    run "$TOOLS/attempt_test" --fail 5 --saw 5
    assert_failure 4
    assert_output --partial "made up: measured 3 times"
    assert_output --partial "attempt 3: made-up"
    assert_output --partial "none showed the effect"
    assert_output --partial "likely reason for made up: the machine, not the lesson: attempt 1: made-up"
    run "$TOOLS/attempt_test" --fail 1 --saw 1 --retries 0
    assert_failure 4
    assert_output --partial "made up: measured 1 time; attempt 1: made-up"
    # What an attempt saw is its own: the next one, seeing nothing, is not
    # measured again for it.
    run "$TOOLS/attempt_test" --fail 5 --saw 1
    assert_failure 4
    refute_output --partial "attempt 2: made-up"
    if [[ "$output" != *"made up: measured 3 times"* ]]; then
        assert_output --partial "made up: measured 2 times"
    fi
    # Without it a failed attempt is the answer, unless this machine's
    # probe saw something of its own (then it is named, never made-up).
    run "$TOOLS/attempt_test" --fail 1
    if [[ "$output" == *"measured 2 times"* ]]; then
        refute_output --partial "made-up"
        echo "# the probe saw interference here: $(grep -m1 'measured 2 times' <<<"$output")"
    else
        assert_failure 4
        refute_output --partial "made up: measured"
    fi
}
