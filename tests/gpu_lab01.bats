#!/usr/bin/env bats
# lab01 on a real GPU: a call on the legacy stream serialises two blocking
# streams; non-blocking streams and the per-thread stream do not; what stream 0
# means follows the build; events on the legacy stream mislead without the barrier.

load test_helper
load repeat

setup() { require_gpu; }

# ratio FILE VARIANT1 VARIANT2: time of VARIANT1 / time of VARIANT2.
ratio() {
    local a b
    a=$(report value "$1" "$2" time) || fail "no $2 / time in $1"
    b=$(report value "$1" "$3" time) || fail "no $3 / time in $1"
    python3 -c "print($a / $b)"
}

@test "lab01 --quick runs, verifies every launch and observes every verdict" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./lab01 --quick
        assert_success
        assert_output --partial "[ok]   every_launch_logged"
        assert_output --partial "observed: yes legacy_call_serialises"
        assert_output --partial "observed: yes per_thread_call_overlaps"
        assert_output --partial "observed: yes stream0_follows_build"
        assert_output --partial "observed: yes legacy_events_mislead"
        assert_output --partial "observed: yes legacy_events_right_under_barrier"
        assert_output --partial "result: results correct, effect observed (exit 0)"
    done
}

@test "lab01 and lab01_ptds --quick each finish in under one second" {
    for p in lab01 lab01_ptds; do
        start=$(date +%s.%N)
        "./$p" --quick >/dev/null
        end=$(date +%s.%N)
        python3 -c "import sys; sys.exit(not $end - $start < 1.0)" ||
            fail "$p --quick took $(python3 -c "print(round($end - $start, 2))") s"
    done
}

@test "lab01 serialises two blocking streams when a legacy-stream call sits between them" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab01 --json >"$BATS_TEST_TMPDIR/r.json"
        run report json "$BATS_TEST_TMPDIR/r.json"
        assert_output "0"
        f="$BATS_TEST_TMPDIR/r.json"
        # the model: serialised = 20 + 20 ms; overlapped = 20 ms; within 15%
        within "$f" "a blocking+legacy" time 40 "1.15 * 40"
        run python3 -c "import sys; sys.exit(not $(ratio "$f" "a blocking+legacy" "b nonblocking+legacy") >= 1.8)"
        assert_success
        # on the GPU's own clock the kernels did not run at once
        within "$f" "a blocking+legacy" overlap_on_gpu 0 0.1
    done
}

@test "lab01 overlaps non-blocking streams and a per-thread-stream call, within 15% of the longest kernel" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab01 --json >"$BATS_TEST_TMPDIR/r.json"
        f="$BATS_TEST_TMPDIR/r.json"
        within "$f" "b nonblocking+legacy" time 20 "1.15 * 20"
        within "$f" "c blocking+perthread" time 20 "1.15 * 20"
        within "$f" "b nonblocking+legacy" overlap_on_gpu "0.85 * 20" "1.01 * 20"
        within "$f" "c blocking+perthread" overlap_on_gpu "0.85 * 20" "1.01 * 20"
    done
}

@test "stream 0 is the legacy stream in lab01 and the per-thread stream in lab01_ptds" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab01 --quick --csv >"$BATS_TEST_TMPDIR/legacy.csv"
        ./lab01_ptds --quick --csv >"$BATS_TEST_TMPDIR/ptds.csv"
        run report value "$BATS_TEST_TMPDIR/legacy.csv" device per_thread_build
        assert_output "0"
        run report value "$BATS_TEST_TMPDIR/ptds.csv" device per_thread_build
        assert_output "1"
        # --quick: two 5 ms kernels; (d) takes the sum in one build, the longest in the other
        within "$BATS_TEST_TMPDIR/legacy.csv" "d blocking+stream0" time 10 "1.15 * 10"
        within "$BATS_TEST_TMPDIR/ptds.csv" "d blocking+stream0" time 5 "1.15 * 5"
        # cudaStreamLegacy is the legacy stream in both builds
        within "$BATS_TEST_TMPDIR/ptds.csv" "a blocking+legacy" time 10 "1.15 * 10"
        run report value "$BATS_TEST_TMPDIR/ptds.csv" result exit_code
        assert_output "0"
    done
}

@test "lab01_ptds reports under its own name and says which stream 0 it has" {
    ./lab01_ptds --quick --json >"$BATS_TEST_TMPDIR/r.json"
    run report get "$BATS_TEST_TMPDIR/r.json" lab
    assert_output "lab01_ptds"
    run ./lab01_ptds --quick
    assert_success
    assert_output --partial "lab01_ptds: the legacy default stream"
    assert_output --partial "stream 0 is this thread's own stream"
}

@test "events on the legacy stream read the serialised run right and the overlapped one near zero" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab01 --quick --json >"$BATS_TEST_TMPDIR/r.json"
        f="$BATS_TEST_TMPDIR/r.json"
        host_a=$(report value "$f" "a blocking+legacy" time)
        host_b=$(report value "$f" "b nonblocking+legacy" time)
        within "$f" "a events on legacy" time "0.9 * $host_a" "1.1 * $host_a"
        within "$f" "b events on legacy" time 0 "0.5 * $host_b"
        # while the kernels did run at once
        within "$f" "b events on legacy" overlap_on_gpu "0.85 * 5" "1.01 * 5"
    done
}

@test "unequal kernels: the sum and the longest move with --first-ms and --second-ms" {
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        ./lab01 --quick --first-ms 8 --second-ms 2 --csv >"$BATS_TEST_TMPDIR/r.csv"
        f="$BATS_TEST_TMPDIR/r.csv"
        run report value "$f" "a blocking+legacy" predicted_time
        assert_output "10"
        run report value "$f" "b nonblocking+legacy" predicted_time
        assert_output "8"
        within "$f" "a blocking+legacy" time 10 "1.15 * 10"
        within "$f" "b nonblocking+legacy" time 8 "1.15 * 8"
    done
}

@test "lab01 cannot show the barrier with CUDA_LAUNCH_BLOCKING=1 and exits 3 saying why" {
    run --separate-stderr env CUDA_LAUNCH_BLOCKING=1 ./lab01 --quick
    assert_failure 3
    [ -z "$output" ] || fail "printed a report: $output"
    [[ "$stderr" == *"lab01: cannot run here: CUDA_LAUNCH_BLOCKING=1"* ]] || fail "$stderr"
}

@test "ex01 as given serialises its streams and exits 4 naming the TODO" {
    run ./ex01 --quick
    assert_failure 4
    assert_output --partial "[ok]   every_launch_logged"
    assert_output --partial "observed: NO  your_streams_overlap"
    assert_output --partial "TODO(student) in create_work_streams()"
    ./ex01 --quick --json >"$BATS_TEST_TMPDIR/r.json" || true
    run report json "$BATS_TEST_TMPDIR/r.json"
    assert_output "4"
}

@test "the reference solution overlaps its streams at least 1.8x, the legacy call still there" {
    [ -x ./sol01 ] || skip "solutions/ is not here"
    for run_no in $(runs); do
        echo "# run $run_no of $REPEATS"
        run ./sol01 --quick
        assert_success
        assert_output --partial "[ok]   every_launch_logged"
        assert_output --partial "observed: yes your_streams_overlap"
        ./sol01 --json >"$BATS_TEST_TMPDIR/r.json"
        f="$BATS_TEST_TMPDIR/r.json"
        within "$f" "your streams" time 20 "1.15 * 20"
        run python3 -c "import sys; sys.exit(not $(ratio "$f" "given blocking" "your streams") >= 1.8)"
        assert_success
    done
}
