#!/usr/bin/env bats
# The timeline's writers on recorded runs: a real H100 run of lab00
# (tests/fixtures/h100-lab00.tsv) and small traces made by hand whose
# overlaps and waits are worked out in their comments. No GPU needed.

load test_helper

H100="$ROOT/tests/fixtures/h100-lab00.tsv"
HAND="$ROOT/tests/fixtures/two-kernels.tsv"
WAIT="$ROOT/tests/fixtures/event-wait.tsv"

trace_check() { python3 "$ROOT/tests/tools/trace_check.py" "$@"; }

@test "the Chrome trace of a real H100 run follows the Trace Event Format" {
    "$TOOLS/trace_test" chrome "$H100" >"$BATS_TEST_TMPDIR/t.json"
    run trace_check validate "$BATS_TEST_TMPDIR/t.json"
    assert_success
    run trace_check spans "$BATS_TEST_TMPDIR/t.json"
    assert_output $'link\nkernels'
}

@test "the Chrome trace has one named track per stream and copies carry direction and size" {
    "$TOOLS/trace_test" chrome "$H100" >"$BATS_TEST_TMPDIR/t.json"
    run python3 - "$BATS_TEST_TMPDIR/t.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
tracks = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
assert {"variants", "copies", "kernels", "host waits"} <= tracks, tracks
copies = [e for e in events if e.get("cat") in ("h2d", "d2h")]
assert copies and all(e["args"]["bytes"] > 0 for e in copies)
assert {e["args"]["direction"] for e in copies} == {"H2D", "D2H"}
assert any(e["args"]["detail"] == "pinned -> device" for e in copies)
PY
    assert_success
}

@test "overlap is the share of busy time with two operations in flight, as worked out by hand" {
    run "$TOOLS/trace_test" overlap "$HAND"
    # together: busy 0..100, both kernels in flight 40..60 -> 20%
    # apart: the copies touch at 150 but never overlap -> 0%; host waits do not count
    assert_output $'together\t20.0\napart\t0.0'
}

@test "the Chrome trace's own numbers give the same overlap, computed independently" {
    "$TOOLS/trace_test" chrome "$HAND" >"$BATS_TEST_TMPDIR/t.json"
    # kernel_a ran 60 ns, 20 of them beside kernel_b on another stream
    run trace_check overlap "$BATS_TEST_TMPDIR/t.json" together kernel kernel
    assert_output "0.3333"
    run trace_check overlap "$BATS_TEST_TMPDIR/t.json" apart h2d d2h
    assert_output "0.0000"
}

@test "the H100 run of lab00 has no overlap: one stream at a time" {
    run "$TOOLS/trace_test" overlap "$H100"
    assert_output $'link\t0.0\nkernels\t0.0'
}

@test "the text timeline draws one row per stream and engine, a legend and the overlap" {
    run "$TOOLS/trace_test" text "$H100" 100
    assert_success
    assert_output --partial "legend: H host-to-device copy, K kernel or memset, D device-to-host copy"
    assert_line --regexp '^variants +\|link +\|kernels'
    assert_line --regexp '^copies H2D +H+ *$'
    assert_line --regexp '^copies D2H +D+ *$'
    assert_line --regexp '^kernels kernel +K+ +K+ *$'
    assert_line --regexp '^host waits +S'
    assert_output --partial "overlap (share of GPU-busy time with 2+ operations in flight): link 0%, kernels 0%"
}

@test "the text timeline fits the width it is given" {
    for width in 60 100 200; do
        run "$TOOLS/trace_test" text "$H100" "$width"
        while IFS= read -r line; do
            [[ "$line" == timeline:* || "$line" == legend:* || "$line" == overlap* ]] && continue
            [ "${#line}" -le "$width" ] || fail "width $width: line of ${#line}: $line"
        done <<<"$output"
    done
}

@test "two kernels side by side are drawn in the same columns" {
    run "$TOOLS/trace_test" text "$HAND" 132
    # 132 columns less 32 of labels: 200 ns over 100 columns; kernel_a covers columns 0-29, kernel_b 20-49
    assert_line --regexp '^stream A kernel +K{30} {70}$'
    assert_line --regexp '^stream B kernel +( ){20}K{30} {50}$'
}

@test "a malformed record file is refused with its line number" {
    printf 'record\tkernel\t1\t50\t10\t0\tbackwards\tend before start\n' >"$BATS_TEST_TMPDIR/bad.tsv"
    run "$TOOLS/trace_test" text "$BATS_TEST_TMPDIR/bad.tsv"
    assert_failure 1
    assert_output --partial "bad.tsv:1: not a trace record"
}

@test "the recorded H100 trace of lab01 shows the barrier: blocking kernels alone, non-blocking together" {
    run "$TOOLS/trace_test" overlap "$ROOT/tests/fixtures/h100-lab01.tsv"
    assert_line $'a blocking+legacy\t0.0'
    assert_line $'d blocking+stream0\t0.0'
    "$TOOLS/trace_test" chrome "$ROOT/tests/fixtures/h100-lab01.tsv" >"$BATS_TEST_TMPDIR/t.json"
    b=$(trace_check overlap "$BATS_TEST_TMPDIR/t.json" "b nonblocking+legacy" kernel kernel)
    python3 -c "import sys; sys.exit(not $b > 0.9)" || fail "non-blocking kernels shared only $b"
}

@test "the recorded H100 trace of lab04 shows the serial comb and the pipeline's overlap" {
    run "$TOOLS/trace_test" overlap "$ROOT/tests/fixtures/h100-lab04.tsv"
    assert_line $'serial\t0.0'
    assert_line $'pageable\t0.0'
    "$TOOLS/trace_test" chrome "$ROOT/tests/fixtures/h100-lab04.tsv" >"$BATS_TEST_TMPDIR/t.json"
    run trace_check validate "$BATS_TEST_TMPDIR/t.json"
    assert_success
    piped=$(trace_check overlap "$BATS_TEST_TMPDIR/t.json" "4 streams depth" kernel h2d)
    python3 -c "import sys; sys.exit(not $piped > 0.78)" || fail "kernel time beside an upload: $piped"
    run "$TOOLS/trace_test" text "$ROOT/tests/fixtures/h100-lab04.tsv" 150
    assert_line --regexp '^stream 3 H2D +.*H'
}

@test "copies and memsets are named by their size in sensible units, in the event and its args" {
    "$TOOLS/trace_test" chrome "$WAIT" >"$BATS_TEST_TMPDIR/t.json"
    run python3 - "$BATS_TEST_TMPDIR/t.json" <<'PY'
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
for e in events:
    if e.get("cat") in ("h2d", "d2h", "copy", "memset"):
        print(e["args"]["bytes"], e["name"], "|", e["args"]["size"])
PY
    # 288 B stays bytes; below 100 of a unit, three significant digits; never an exponent
    assert_output "288 memset 288 B | 288 B
1728 memset 1.69 KiB | 1.69 KiB
4096 H2D 4 KiB | 4 KiB
1024000 D2H 1000 KiB | 1000 KiB
268435456 H2D 256 MiB | 256 MiB
2147483648 copy 2 GiB | 2 GiB"
    refute_output --partial "e+"
}

@test "the legacy default stream is named on its track and in the text timeline" {
    "$TOOLS/trace_test" chrome "$WAIT" >"$BATS_TEST_TMPDIR/t.json"
    run python3 -c 'import json, sys; print(sorted(e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"] if e["name"] == "thread_name"))' "$BATS_TEST_TMPDIR/t.json"
    assert_output "['consumer', 'host waits', 'legacy default stream', 'producer', 'variants']"
    run "$TOOLS/trace_test" text "$WAIT" 100
    assert_line --regexp '^legacy default stream kernel +K+ *$'
    assert_line --regexp '^legacy default stream H2D +H+ *$'
}

@test "a GPU wait is a flow arrow from the producer's last operation to the consumer's next, inside both" {
    "$TOOLS/trace_test" chrome "$WAIT" >"$BATS_TEST_TMPDIR/t.json"
    run trace_check validate "$BATS_TEST_TMPDIR/t.json"
    assert_success
    # from 49 ns to 61 ns: 0.012 us
    run trace_check flows "$BATS_TEST_TMPDIR/t.json"
    assert_output $'producer -> consumer\t0.012'
    run "$TOOLS/trace_test" text "$WAIT" 100
    assert_line "GPU waits: 1 time a stream waited on the GPU for another's event (cudaStreamWaitEvent); a --trace .json draws each as an arrow"
    # nothing on the host's track: the host did not wait
    run grep -c '"tid":2147483647,"name":"cudaStreamWaitEvent' "$BATS_TEST_TMPDIR/t.json"
    assert_output "0"
}

@test "the checker refuses a flow arrow that binds to no operation" {
    "$TOOLS/trace_test" chrome "$WAIT" | sed 's/"ph":"s","id":1,"pid":1,"tid":2,"ts":0.049/"ph":"s","id":1,"pid":1,"tid":2,"ts":0.055/' \
        >"$BATS_TEST_TMPDIR/t.json"
    run trace_check validate "$BATS_TEST_TMPDIR/t.json"
    assert_failure 1
    assert_output --partial "a flow event inside no operation of its track"
}

@test "flows and stream names survive the raw records, written and read again" {
    run "$TOOLS/trace_test" records "$WAIT"
    assert_success
    assert_equal "$(grep -v '^#' <<<"$output")" "$(grep -v '^#' "$WAIT")"
}
