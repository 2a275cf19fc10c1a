#!/usr/bin/env bats
# make results and make plots without a GPU: the figures drawn from the
# committed H100 results (docs/results/h100), bad input refused with a clear
# message, and the runner (plots/results.sh) driven by stand-in labs that
# print those same H100 reports and exit as each test tells them.

load test_helper

H100="$ROOT/docs/results/h100"
# lab07's, lab08's and lab11's traces: runs of real H100 traces, from builds
# older than these labs' spans, with the spans added (tests/tools/trace_fixture.py)
TRACES="lab07-trace.json lab08-trace.json lab11-trace.json"
FIGURES="1-speedups.png 2-lab02-bandwidth.png 3-lab04-sweep.png 4-lab04-timeline.png 5-lab05-latency.png 6-lab07-queues.png 7-lab08-pipeline.png 8-lab11-loaders.png"
# lab13 needs two GPUs: its figure (9) is drawn from a results folder of its
# own, lab13's default run in `make results` on two H200s
H200X2="$ROOT/tests/fixtures/h200x2-lab13"

setup_file() {
    PYTHON=$("$BATS_TEST_DIRNAME/../plots/python.sh") || return 1
    export PYTHON
}

plot() { "$PYTHON" "$ROOT/plots/plot.py" "$@"; }

# A copy of the H100 results and the lab07, lab08 and lab11 traces (with
# lab11's traced report), to spoil, in $BATS_TEST_TMPDIR/res.
copy_h100() {
    cp -r "$H100" "$BATS_TEST_TMPDIR/res"
    for t in $TRACES lab11-trace.txt; do cp "$ROOT/tests/fixtures/h100-$t" "$BATS_TEST_TMPDIR/res/$t"; done
    # the reference set predates lab11: its meta file learns of the fixture's run
    printf 'lab11-trace: ok\ncommand lab11-trace: ./lab11 --quick --trace lab11-trace.json\n' \
        >>"$BATS_TEST_TMPDIR/res/meta"
}

# png_size FILE: "WIDTH HEIGHT" from a PNG's header; fails if it is not a PNG.
png_size() {
    "$PYTHON" - "$1" <<'PY'
import struct, sys
head = open(sys.argv[1], "rb").read(24)
assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", "not a PNG"
print(*struct.unpack(">II", head[16:24]))
PY
}

@test "every figure is drawn from the committed H100 results, as a PNG of sensible size" {
    copy_h100
    run plot all "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR/out"
    assert_success
    # the line every figure's title carries: GPU, driver, CUDA, date (the meta file)
    assert_output --partial "plots of $BATS_TEST_TMPDIR/res (NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA driver API 13.0, toolkit 13.0, 2026-11-22)"
    # the reference set predates lab13 (figure 9: its own test below)
    assert_output --partial "skipped figure 9: lab13 speedup vs bucket size, and what decides the overlap: lab13: not run by the make results that wrote this folder"
    for f in $FIGURES; do
        run png_size "$BATS_TEST_TMPDIR/out/$f"
        assert_success
        read -r width height <<<"$output"
        ((width >= 1000 && width <= 3000 && height >= 600 && height <= 2000)) ||
            fail "$f is $width x $height pixels"
        bytes=$(stat -c %s "$BATS_TEST_TMPDIR/out/$f")
        ((bytes > 30000 && bytes < 2000000)) || fail "$f is $bytes bytes"
    done
    # the eight figures and the results page
    [ -s "$BATS_TEST_TMPDIR/out/index.html" ] || fail "no index.html"
    [ "$(ls "$BATS_TEST_TMPDIR/out" | wc -l)" -eq 9 ] || fail "not nine files: $(ls "$BATS_TEST_TMPDIR/out")"
}

@test "figures without a meta file say that the driver and date are unknown" {
    copy_h100
    rm "$BATS_TEST_TMPDIR/res/meta"
    run plot speedups "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --partial "(NVIDIA H100 80GB HBM3; no meta file in $BATS_TEST_TMPDIR/res: driver and date unknown)"
}

@test "figure 1 compares speedups only: lab06's host times are apart, each beside its model" {
    # lab06's two fixes differ by its --spin-ms (10 ms) over an issue time:
    # no speedup, so not a bar of the speedup panel (issue 18)
    run "$PYTHON" - "$H100" <<'PY'
import sys
sys.path.insert(0, "plots")
from data import Results
from keys import evaluate, host_time
results = Results(sys.argv[1])
bars, _ = evaluate(results)
assert "lab06" not in [b["lab"] for b in bars], bars
for b in bars:  # every measured bar has its one-run spread, p5 <= median <= p95
    assert b["p5_p95"][0] <= b["measured"] <= b["p5_p95"][1], b
sync, event = host_time(results)
print(f"{sync['variant']} {sync['measured']:.2f} ms, model {sync['predicted']:g} ms; "
      f"{event['variant']} {event['measured']:.3f} ms, model {event['predicted']}")
PY
    assert_success
    assert_output "host_sync 10.06 ms, model 10 ms; event_wait 0.048 ms, model None"
}

@test "make plots RESULTS=dir draws into that folder with a Python that has matplotlib" {
    copy_h100
    run make -s plots RESULTS="$BATS_TEST_TMPDIR/res"
    assert_success
    for f in $FIGURES; do [ -s "$BATS_TEST_TMPDIR/res/$f" ] || fail "$f not drawn"; done
}

@test "make plots names what to install when the Python it is given has no matplotlib" {
    run make -s plots PYTHON=/nonexistent/python3 RESULTS="$H100"
    assert_failure
    assert_output --partial "no Python 3 with matplotlib found"
    assert_output --partial "apt-get install python3-matplotlib"
    assert_output --partial "pip install -r plots/requirements.txt"
}

@test "the timeline draws the serial run above the fastest pipelined one, read from the trace" {
    run plot timeline "$H100" --out "$BATS_TEST_TMPDIR"
    assert_success
    # the fastest of the recorded trace's pipelined variants, by its last run
    # (which one it is depends on the run: 3 or 4 streams, either order)
    assert_output --regexp "\(serial above [34] streams (depth|breadth)\)"
    run plot timeline "$H100" --out "$BATS_TEST_TMPDIR" --variant "double buffered"
    assert_output --partial "(serial above double buffered)"
    run plot timeline "$H100" --out "$BATS_TEST_TMPDIR" --variant "5 streams"
    assert_failure 1
    assert_output --partial "no variant '5 streams' (variants: serial, double buffered"
}

# drawn FIGURE NOTE: draws FIGURE from the copy in res; its line says NOTE.
drawn() {
    run plot "$1" "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR"
    assert_success
    assert_output --partial "$2"
}

@test "lab07's figure: depth-first above breadth-first, a row per stream, the late A kernels counted" {
    copy_h100
    # 16 streams, 8 hardware queues: A8..A15 wait one T depth-first, no A breadth-first
    drawn queues "6-lab07-queues.png (16 and 16 streams; 8 A kernels late depth-first, 0 breadth-first)"
    [ -s "$BATS_TEST_TMPDIR/6-lab07-queues.png" ] || fail "not drawn"
    # the two ways' spans swapped: the counts follow the kernels, not the names
    sed -i 's/"depth-first"/"x"/; s/"breadth-first"/"depth-first"/; s/"x"/"breadth-first"/' \
        "$BATS_TEST_TMPDIR/res/lab07-trace.json"
    drawn queues "0 A kernels late depth-first, 8 breadth-first"
}

@test "lab08's figure: host-chained above event-chained, a row per stage stream and the host's" {
    copy_h100
    drawn pipeline "7-lab08-pipeline.png (host-chained above event-chained, 3 and 3 stage streams)"
    [ -s "$BATS_TEST_TMPDIR/7-lab08-pipeline.png" ] || fail "not drawn"
}

@test "lab11's figure: the serial loader's GPU idles between steps, 4 producers keep it stepping; the model's busy share from its report" {
    copy_h100
    # lab11's H100 report of the traced run: model 29.9% serial, 81.8% with 4 producers
    drawn loaders "8-lab11-loaders.png (serial above 4 producers; serial model 29.9%, 4 producers model 81.8%)"
    [ -s "$BATS_TEST_TMPDIR/8-lab11-loaders.png" ] || fail "not drawn"
    # without the report the figure is still drawn, and says it has no model
    rm "$BATS_TEST_TMPDIR/res/lab11-trace.txt"
    drawn loaders "serial no model: no lab11-trace.txt"
}

@test "lab13's figure: the bucket sweep's U and part 4 beside their model, from the two-H200 run" {
    run plot all "$H200X2" --out "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --partial "plots of $H200X2 (NVIDIA H200, driver 580.159.04, CUDA driver API 13.0, toolkit 13.0, 2026-11-23)"
    # the run's numbers (the handout's table): the best bucket in the middle of
    # the sweep, one bucket 1x; every SM loses the overlap, NCCL's greatest
    # priority does not bring it back, a block per SM brings some, the slow
    # link keeps it; 0.5 to 256 MiB and one bucket of 1024
    assert_output --partial "9-lab13-buckets.png (7 bucket sizes, best 64 MiB 1.58x (model 1.63x); half the SMs 1.44x, one block 1.15x, every SM 0.97x, every SM, NCCL greatest 0.97x, maxCTAs 1 1.43x, full link 1.03x)"
    run png_size "$BATS_TEST_TMPDIR/out/9-lab13-buckets.png"
    assert_success
    read -r width height <<<"$output"
    ((width >= 1000 && width <= 3000 && height >= 600 && height <= 2000)) ||
        fail "9-lab13-buckets.png is $width x $height pixels"
    grep -q 'src="9-lab13-buckets.png"' "$BATS_TEST_TMPDIR/out/index.html" ||
        fail "the results page does not show figure 9 in lab13's section"
    # the sweep read from the rows, not from a list: without the 64 MiB bucket
    # the best is 256 MiB
    mkdir "$BATS_TEST_TMPDIR/res" && cp "$H200X2/meta" "$BATS_TEST_TMPDIR/res/"
    grep -v ',bucket 64 MiB,' "$H200X2/lab13.csv" >"$BATS_TEST_TMPDIR/res/lab13.csv"
    drawn buckets "(6 bucket sizes, best 256 MiB 1.45x (model 1.48x);"
    # a report from before part 4 measured a block per SM and NCCL's priority:
    # those two bars left out, the rest drawn
    grep -vE ',"?(one block on every SM|every SM held, NCCL greatest)"?,' "$H200X2/lab13.csv" \
        >"$BATS_TEST_TMPDIR/res/lab13.csv"
    drawn buckets "half the SMs 1.44x, every SM 0.97x, maxCTAs 1 1.43x, full link 1.03x)"
}

# lab14's figure (10): from its own results folder, lab14's default --csv run
# on an H100
H100_LAB14="$ROOT/tests/fixtures/h100-lab14"

@test "lab14's figure: the urgent kernel three ways beside their models, and the trade over k, from the H100 run" {
    cp -r "$H100_LAB14" "$BATS_TEST_TMPDIR/res"
    run plot all "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --partial "10-lab14-partitions.png (same 2538 us, greatest 83.6 us, partition 27.3 us; k 8-64: cost 1.08x-1.96x)"
    run png_size "$BATS_TEST_TMPDIR/out/10-lab14-partitions.png"
    assert_success
    read -r width height <<<"$output"
    ((width >= 1000 && width <= 3000 && height >= 600 && height <= 2000)) ||
        fail "10-lab14-partitions.png is $width x $height pixels"
    grep -q 'src="10-lab14-partitions.png"' "$BATS_TEST_TMPDIR/out/index.html" ||
        fail "the results page does not show figure 10 in lab14's section"
    # without the sweep (--no-sweep) the figure says why it cannot be drawn
    grep -v ',k=[0-9]*,' "$H100_LAB14/lab14.csv" >"$BATS_TEST_TMPDIR/res/lab14.csv"
    run --separate-stderr plot partitions "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 10: lab14 urgent latency three ways, and the trade over k: $BATS_TEST_TMPDIR/res/lab14.csv: fewer than two 'k=N' urgent_latency rows: lab14 ran with --no-sweep, or this is not lab14's report"
}

@test "lab13's figure drawn alone: an error saying why where lab13 was waived, or where its report has no sweep" {
    # (make plots, drawing all, skips it with that line: the make results test below)
    mkdir "$BATS_TEST_TMPDIR/res"
    sed 's/^lab13: ok$/lab13: waived (exit 3): lab13: cannot run here: cannot show the overlap here: needs 2 GPUs (this machine shows 1; every sum and event wait was checked on one rank)/' \
        "$H200X2/meta" >"$BATS_TEST_TMPDIR/res/meta"
    run --separate-stderr plot buckets "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 9: lab13 speedup vs bucket size, and what decides the overlap: $BATS_TEST_TMPDIR/res/lab13.csv: missing: lab13 was waived (exit 3): lab13: cannot run here: cannot show the overlap here: needs 2 GPUs (this machine shows 1; every sum and event wait was checked on one rank)"
    cp "$H200X2/meta" "$BATS_TEST_TMPDIR/res/meta"
    grep -v ',bucket [0-9.]* MiB,' "$H200X2/lab13.csv" >"$BATS_TEST_TMPDIR/res/lab13.csv"
    run --separate-stderr plot buckets "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 9: lab13 speedup vs bucket size, and what decides the overlap: $BATS_TEST_TMPDIR/res/lab13.csv: fewer than two 'bucket N MiB' speedup rows: not lab13's two-GPU report"
}

@test "a missing lab07 or lab08 trace says what to run, and is skipped when the lab was waived" {
    copy_h100
    rm "$BATS_TEST_TMPDIR/res/lab07-trace.json"
    run --separate-stderr plot queues "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 6: lab07 kernel pairs depth-first above breadth-first: $BATS_TEST_TMPDIR/res/lab07-trace.json: missing (make results traces it: lab07 --quick --trace)"
    echo '{"traceEvents": [{"ph": "X", "tid": 1, "name": "k", "cat": "kernel", "ts": 0, "dur": 1}]}' \
        >"$BATS_TEST_TMPDIR/res/lab08-trace.json"
    run --separate-stderr plot pipeline "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_regex "$stderr" "lab08-trace.json: no variants or no GPU operations in the trace"
    echo "lab07-trace: waived (exit 3): lab07: cannot run here: no CUPTI" >>"$BATS_TEST_TMPDIR/res/meta"
    cp "$ROOT/tests/fixtures/h100-lab08-trace.json" "$BATS_TEST_TMPDIR/res/lab08-trace.json"
    run plot all "$BATS_TEST_TMPDIR/res"
    assert_success
    assert_output --partial "skipped figure 6: lab07 kernel pairs depth-first above breadth-first: lab07-trace: waived (exit 3)"
    assert_output --partial "7-lab08-pipeline.png"
}

@test "lab05's figure is a histogram when the report has samples, percentiles when not" {
    # the recorded H100 report has every latency sample (report_samples)
    run plot latency "$H100" --out "$BATS_TEST_TMPDIR"
    assert_success
    assert_output --partial "5-lab05-latency.png (100 + 100 samples)"
    # a report without them (an older lab05) gets its percentiles drawn
    copy_h100
    grep -v ',latency_sample,' "$H100/lab05.csv" >"$BATS_TEST_TMPDIR/res/lab05.csv"
    run plot latency "$BATS_TEST_TMPDIR/res"
    assert_success
    assert_output --partial "(no samples in lab05.csv: percentiles instead)"
}

@test "a missing CSV is an error naming the file, unless the meta file says the lab was waived" {
    copy_h100
    rm "$BATS_TEST_TMPDIR/res/lab02.csv"
    run --separate-stderr plot bandwidth "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 2: lab02 bandwidth by copy size: $BATS_TEST_TMPDIR/res/lab02.csv: missing (is $BATS_TEST_TMPDIR/res a folder that \`make results\` wrote?)"
    # all: the other figures are still drawn, and the run fails
    run --separate-stderr plot all "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_output --partial "5-lab05-latency.png"
    # waived: figure 2 is skipped and figure 1 leaves lab02 out, with the reason
    sed -i 's/^lab02: ok$/lab02: waived (exit 3): lab02: cannot run here: no pinning/' "$BATS_TEST_TMPDIR/res/meta"
    run plot all "$BATS_TEST_TMPDIR/res"
    assert_success
    assert_output --partial "1-speedups.png (left out: lab02: waived (exit 3): lab02: cannot run here: no pinning)"
    assert_output --partial "skipped figure 2: lab02 bandwidth by copy size: lab02: waived (exit 3)"
}

@test "a malformed CSV is an error naming the file and line, never a traceback" {
    copy_h100
    csv="$BATS_TEST_TMPDIR/res/lab04-ratio-2.csv"
    sed -i '5s/.*/lab04,parameter,quick/' "$csv"
    run --separate-stderr plot sweep "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 3: lab04 speedup vs compute/copy ratio: $csv line 5: expected 5 fields (lab,variant,metric,value,unit), found 3"
    cp "$H100/lab04-ratio-2.csv" "$csv"
    sed -i 's/^\(lab04,4 streams depth,speedup\),[^,]*,/\1,fast,/' "$csv"
    run --separate-stderr plot sweep "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 3: lab04 speedup vs compute/copy ratio: $csv line $(grep -n ',fast,' "$csv" | cut -d: -f1): value 'fast' of 4 streams depth,speedup is not a number"
    rm "$BATS_TEST_TMPDIR"/res/lab04-ratio-*.csv
    run --separate-stderr plot sweep "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_regex "$stderr" "fewer than two lab04-ratio-R.csv reports"
    sed -i '1s/.*/lab;variant;metric;value;unit/' "$BATS_TEST_TMPDIR/res/lab05.csv"
    run --separate-stderr plot latency "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_regex "$stderr" "lab05.csv line 1: expected the header lab,variant,metric,value,unit"
    echo '{"traceEvents": [{"ph": "X"}]}' >"$BATS_TEST_TMPDIR/res/lab04-trace.json"
    run --separate-stderr plot timeline "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_regex "$stderr" "lab04-trace.json: event 0 is malformed"
    for out in "$output" "$stderr"; do refute_regex "$out" "Traceback"; done
}

@test "plot.py refuses a folder that is not there and an unknown figure" {
    run --separate-stderr plot all "$BATS_TEST_TMPDIR/nowhere"
    assert_failure 1
    assert_regex "$stderr" "nowhere: no such folder \(run \`make results\` first"
    run --separate-stderr plot pie "$H100"
    assert_failure 2
    assert_regex "$stderr" "invalid choice: 'pie'"
}

# ---- the runner, with stand-in labs --------------------------------------------------

# fake_labs: in $BATS_TEST_TMPDIR/bin, a program per lab that prints the H100
# report of its name (none for lab11, which has none recorded; lab04 also,
# at --kernel-ratio R, the recorded lab04-ratio-R report), writes the
# recorded trace at --trace (lab04, lab07, lab08, lab11), and exits with
# $EXIT_<name> (default 0), saying why on stderr when that is 3.
fake_labs() {
    copy_h100
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    for p in lab00 lab01 lab01_ptds lab02 lab03 lab04 lab05 lab06 lab07 lab08 lab11; do
        cat >"$BATS_TEST_TMPDIR/bin/$p" <<EOF
#!/usr/bin/env bash
case " \$* " in
    *" --kernel-ratio "*) cat "$H100/lab04-ratio-\$2.csv" ;;
    *" --trace "*) cp "$BATS_TEST_TMPDIR/res/$p-trace.json" "\${@: -1}" && echo "$p traced" ;;
    *) cat "$H100/$p.csv" 2>/dev/null ;;
esac
code=\${EXIT_$p:-0}
[ "\$code" = 3 ] && echo "$p: cannot run here: pretend" >&2
exit "\$code"
EOF
        chmod +x "$BATS_TEST_TMPDIR/bin/$p"
    done
}

results() {
    RESULTS_ROOT="$BATS_TEST_TMPDIR/results" BINDIR="$BATS_TEST_TMPDIR/bin" PYTHON="$PYTHON" \
        "$ROOT/plots/results.sh" lab00 lab01 lab01_ptds lab02 lab03 lab04 lab05 lab06
}

@test "make results names its folder after the GPU and the date, with a progress line per run" {
    fake_labs
    run results
    assert_success
    folder="$BATS_TEST_TMPDIR/results/nvidia-h100-80gb-hbm3-$(date +%F)"
    assert_output --partial "[ 1/16] lab00"
    assert_output --partial "[15/16] lab04-ratio-8"
    assert_output --partial "[16/16] lab04-trace"
    assert_output --partial "written to $folder/"
    for f in lab00.csv lab02.csv lab04-ratio-0.125.csv lab04-ratio-8.csv lab04-trace.json \
        lab04-trace.txt meta; do
        [ -s "$folder/$f" ] || fail "$f missing"
    done
    run grep -E '^(gpu|date|command|command lab04-trace): ' "$folder/meta"
    assert_output "gpu: NVIDIA H100 80GB HBM3
date: $(date +%F)
command: make results RUNS=1
command lab04-trace: $BATS_TEST_TMPDIR/bin/lab04 --quick --trace lab04-trace.json"
    # a second run the same day keeps the first
    run results
    assert_output --partial "written to $folder-2/"
}

@test "make results traces lab04, lab07, lab08 and lab11 when it runs them, and make plots draws each" {
    fake_labs
    run env RESULTS_ROOT="$BATS_TEST_TMPDIR/results" BINDIR="$BATS_TEST_TMPDIR/bin" \
        "$ROOT/plots/results.sh" lab04 lab07 lab08 lab11
    assert_success
    assert_output --partial "[15/15] lab11-trace"
    folder=$(echo "$BATS_TEST_TMPDIR"/results/*/)
    for p in lab04 lab07 lab08 lab11; do
        cmp "$folder/$p-trace.json" "$BATS_TEST_TMPDIR/res/$p-trace.json" || fail "$p's trace"
        run grep "^command $p-trace: " "$folder/meta"
        assert_output "command $p-trace: $BATS_TEST_TMPDIR/bin/$p --quick --trace $p-trace.json"
    done
    for figure in timeline queues pipeline loaders; do
        run plot "$figure" "$folder"
        assert_success
    done
}

@test "make results records exit 3 as waived, keeps exit 4, and fails at the end on exit 1" {
    fake_labs
    EXIT_lab05=3 EXIT_lab02=4 run results
    assert_success
    assert_output --partial "lab05: cannot run here: pretend"
    folder=$(echo "$BATS_TEST_TMPDIR"/results/*/)
    [ ! -e "$folder/lab05.csv" ] || fail "a waived lab left a report"
    [ -s "$folder/lab02.csv" ] || fail "exit 4 lost the report"
    run grep -E '^lab0[25]: ' "$folder/meta"
    assert_output "lab02: effect not observed (exit 4): results kept
lab05: waived (exit 3): lab05: cannot run here: pretend"
    rm -r "$BATS_TEST_TMPDIR/results"
    EXIT_lab01=1 run results
    assert_failure 1
    assert_output --partial "[16/16] lab04-trace"  # the rest still ran
    assert_output --partial "1 run(s) FAILED"
}

@test "make results and lab13: NVLink multicast off; one GPU waived and figure 9 skipped with its line, two GPUs drawn" {
    fake_labs
    # a stand-in lab13: the two-H200 report with GPUS=2, else the one-GPU exit 3;
    # exit 1 if make results left NVLink multicast on
    cat >"$BATS_TEST_TMPDIR/bin/lab13" <<EOF
#!/bin/sh
[ "\$NCCL_NVLS_ENABLE" = 0 ] || { echo "lab13: NCCL_NVLS_ENABLE=\$NCCL_NVLS_ENABLE" >&2; exit 1; }
[ "\${GPUS:-1}" = 2 ] && exec cat "$H200X2/lab13.csv"
echo "lab13: cannot run here: cannot show the overlap here: needs 2 GPUs (this machine shows 1)" >&2
exit 3
EOF
    chmod +x "$BATS_TEST_TMPDIR/bin/lab13"
    lab02_and_lab13() {
        RESULTS_ROOT="$BATS_TEST_TMPDIR/results" BINDIR="$BATS_TEST_TMPDIR/bin" NCCL_NVLS_ENABLE=1 \
            "$ROOT/plots/results.sh" lab02 lab13
    }
    run lab02_and_lab13
    assert_success
    assert_output --partial "waived (exit 3): lab13: cannot run here: cannot show the overlap here: needs 2 GPUs"
    folder=$(echo "$BATS_TEST_TMPDIR"/results/*/)
    run plot all "$folder"
    assert_success
    assert_output --partial "skipped figure 9: lab13 speedup vs bucket size, and what decides the overlap: lab13: waived (exit 3): lab13: cannot run here: cannot show the overlap here: needs 2 GPUs"
    rm -r "$BATS_TEST_TMPDIR/results"
    GPUS=2 run lab02_and_lab13
    assert_success
    run plot all "$(echo "$BATS_TEST_TMPDIR"/results/*/)"
    assert_success
    assert_output --partial "9-lab13-buckets.png (7 bucket sizes, best 64 MiB 1.58x"
}

@test "make results RUNS=2 keeps every run and writes the spread of each lab's key number" {
    fake_labs
    RUNS=2 run results
    assert_success
    folder=$(echo "$BATS_TEST_TMPDIR"/results/*/)
    [ -s "$folder/lab01.run2.csv" ] || fail "no second run"
    # both runs print the same recorded report: min, median and max agree
    assert_output --regexp "lab01 +non-blocking streams, vs legacy-stream barrier +2 +([0-9.]+x) +\1 +\1 +2.00x"
    run "$PYTHON" "$ROOT/tests/tools/report_check.py" csv "$folder/lab01.run2.csv"
    assert_success
    run head -n 2 "$folder/spread.csv"
    assert_line --index 0 'lab,comparison,runs,min,median,max,predicted,unit'
    assert_line --index 1 --regexp '^lab01,"non-blocking streams, vs legacy-stream barrier",2,([0-9.]+),\1,\1,2.0,x$'
    RUNS=0 run results
    assert_failure 1
    assert_output "make results: RUNS must be a whole number from 1 to 99 (got '0')"
}

@test "make results without a GPU says so in one line, exits 3 (cannot run here) and leaves no folder behind" {
    require_no_gpu
    run env RESULTS_ROOT="$BATS_TEST_TMPDIR/results" GPU_PROBE="$TOOLS/gpu_probe" \
        "$ROOT/plots/results.sh" lab00 lab01
    assert_failure 3
    [ "${#lines[@]}" -eq 1 ] || fail "more than one line: $output"
    assert_output --regexp '^make results: cannot run here: no CUDA.*; nothing was run or recorded$'
    [ -z "$(ls -A "$BATS_TEST_TMPDIR/results")" ] || fail "left: $(ls -A "$BATS_TEST_TMPDIR/results")"
    # without the probe every lab runs, is waived, and the end is exit 3 too
    run env RESULTS_ROOT="$BATS_TEST_TMPDIR/results" "$ROOT/plots/results.sh" lab00 lab01
    assert_failure 3
    assert_output --partial "waived (exit 3): lab00: cannot run here"
    assert_output --partial "cannot run here: no lab could run, so nothing was recorded"
    [ -z "$(ls -A "$BATS_TEST_TMPDIR/results")" ] || fail "left: $(ls -A "$BATS_TEST_TMPDIR/results")"
}

@test "make results asks the GPU probe once: its exit 3 is one line and exit 3, anything else runs the labs" {
    fake_labs
    probe="$BATS_TEST_TMPDIR/probe"
    printf '#!/bin/sh\necho "gpu_probe: cannot run here: no CUDA-capable GPU is visible (cudaGetDeviceCount)" >&2\nexit ${PROBE_EXIT:-3}\n' >"$probe"
    chmod +x "$probe"
    GPU_PROBE="$probe" run results
    assert_failure 3
    assert_output "make results: cannot run here: no CUDA-capable GPU is visible (cudaGetDeviceCount); nothing was run or recorded"
    [ ! -e "$BATS_TEST_TMPDIR/results" ] || [ -z "$(ls -A "$BATS_TEST_TMPDIR/results")" ] || fail "left a folder"
    for code in 0 1; do
        PROBE_EXIT=$code GPU_PROBE="$probe" run results
        assert_success
        assert_output --partial "[16/16] lab04-trace"
    done
}

# ---- figures 11-14: the solved exercises' schedules -----------------------------------
# tests/fixtures/schedule: the reference solutions traced by make results on
# an H100 (2026-11-23; its meta file), as docs/results/h100-schedule has them
SCHEDULE="$ROOT/tests/fixtures/schedule"

@test "the critical chain of a hand-made schedule: the latest end before each start, by stream, event or engine" {
    run "$PYTHON" - <<'PY'
import sys
sys.path.insert(0, "plots")
from fig_schedule import critical_chain

def op(name, track, start, end, cat="kernel"):
    return {"name": name, "track": track, "start": start, "end": end, "cat": cat}

def names(chain):
    return " ".join(o["name"] for o in chain)

# stream 1: a then b; stream 2: c, then d, which waits for b by an event
a, b, c, d = op("a", 1, 0, 10), op("b", 1, 10, 20), op("c", 2, 0, 5), op("d", 2, 20, 30)
print("event:", names(critical_chain([a, b, c, d], flows=[(1, 19.999, 2, 20.001)])))
print("no event:", names(critical_chain([a, b, c, d])))
# ex04's shape: two streams, an upload, a kernel and a download each; the
# kernels share the SMs, so k2 waits for k1 as much as for its upload
ops = [op("h1", 1, 0, 1, "h2d"), op("k1", 1, 1, 3), op("d1", 1, 3, 4, "d2h"),
       op("h2", 2, 1, 2, "h2d"), op("k2", 2, 3, 5), op("d2", 2, 5, 6, "d2h")]
print("engines:", names(critical_chain(ops, engines=("h2d", "kernel", "d2h"))))
print("streams only:", names(critical_chain(ops)))
# an end a tick past the start still counts; two microseconds past does not
print("tick:", names(critical_chain([op("x", 1, 0, 10.5), op("y", 1, 10, 20)])))
print("overlap:", names(critical_chain([op("x", 1, 0, 12), op("y", 1, 10, 20)])))
print("empty:", critical_chain([]))
PY
    assert_success
    assert_output "event: a b d
no event: c d
engines: h1 k1 k2 d2
streams only: h2 k2 d2
tick: x y
overlap: y
empty: []"
}

# bound_of CSV VARIANT METRIC: the report's number, to the hundredth, as the
# figure's note prints it
bound_of() {
    "$PYTHON" -c "import sys; sys.path.insert(0, 'plots'); from data import Report
print(f'{Report(sys.argv[1]).value(sys.argv[2], sys.argv[3]):.2f}')" "$@"
}

@test "figures 11-14: each solved exercise's last run, its chain and the model's bound from the run's report" {
    require_recorded schedule
    cp -r "$SCHEDULE" "$BATS_TEST_TMPDIR/res"
    for pair in "01:your streams:your worker streams:predicted_time" \
                "04:your pipeline:your level-2 pipeline:predicted_time" \
                "06:pipeline:ring:last_run_predicted_time" \
                "08:your pipeline:your level-2 pipeline:last_run_predicted_time"; do
        IFS=: read -r n one two metric <<<"$pair"
        run plot "schedule$n" "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR/out"
        assert_success
        csv="$BATS_TEST_TMPDIR/res/sol$n-trace.csv"
        # each level: a chain of one activity or more, the bound its report's row
        assert_output --regexp "level 1: [1-9][0-9]* on the chain, [0-9]+ stream switches, [0-9]+% of the run; [0-9.]+ ms, bound $(bound_of "$csv" "$one" "$metric") ms; level 2: [1-9][0-9]* on the chain, .* bound $(bound_of "$csv" "$two" "$metric") ms\)"
        png=$(ls "$BATS_TEST_TMPDIR/out/"*"-ex$n-schedule.png")
        run png_size "$png"
        assert_success
        read -r width height <<<"$output"
        ((width >= 1000 && width <= 3000 && height >= 600 && height <= 2000)) ||
            fail "$png is $width x $height pixels"
    done
    # the bound is read, not assumed: a changed row changes the figure's
    sed -i 's/^sol04,your pipeline,predicted_time,[^,]*,/sol04,your pipeline,predicted_time,9.5,/' \
        "$BATS_TEST_TMPDIR/res/sol04-trace.csv"
    run plot schedule04 "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR/out"
    assert_output --partial "bound 9.50 ms; level 2"
}

@test "figure 13 follows the ring's slower stage: after item 0's producer, the consumer's steps; or the producer's, then item 5's consumer" {
    require_recorded schedule
    # the model (ex06's ring_model_ms): the slower step paces every item, so
    # the chain holds item 0's stage 1 (3 activities) and every stage 2 (2
    # each) when the consumer is slower, every stage 1 and item 5's stage 2
    # when the producer is; one switch of stream either way
    csv="$SCHEDULE/sol06-trace.csv"
    p=$(bound_of "$csv" ring last_run_producer_step)
    c=$(bound_of "$csv" ring last_run_consumer_step)
    if awk -v p="$p" -v c="$c" 'BEGIN { exit !(c > p) }'; then chain=15
    elif awk -v p="$p" -v c="$c" 'BEGIN { exit !(p > c) }'; then chain=20
    else skip "the run's producer and consumer steps were equal ($p ms)"; fi
    run plot schedule06 "$SCHEDULE" --out "$BATS_TEST_TMPDIR"
    assert_success
    assert_output --partial "level 2: $chain on the chain, 1 stream switches"
}

@test "a schedule figure without its trace says what to run, is skipped when waived, and a missing bound names the row" {
    require_recorded schedule
    cp -r "$SCHEDULE" "$BATS_TEST_TMPDIR/res"
    rm "$BATS_TEST_TMPDIR/res/sol08-trace.json"
    run --separate-stderr plot schedule08 "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_equal "$stderr" "plot.py: figure 14: ex08 solved, its critical chain and the model's bound: $BATS_TEST_TMPDIR/res/sol08-trace.json: missing (make results traces it: sol08 --quick --csv --trace)"
    sed -i 's/^sol08-trace: ok$/sol08-trace: waived (exit 3): sol08: cannot run here: no CUPTI/' \
        "$BATS_TEST_TMPDIR/res/meta"
    run plot all "$BATS_TEST_TMPDIR/res" --out "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --partial "skipped figure 14: ex08 solved, its critical chain and the model's bound: sol08-trace: waived (exit 3)"
    grep -v ',last_run_predicted_time,' "$SCHEDULE/sol06-trace.csv" >"$BATS_TEST_TMPDIR/res/sol06-trace.csv"
    run --separate-stderr plot schedule06 "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_regex "$stderr" "sol06-trace.csv: no row pipeline,last_run_predicted_time"
    # a trace without the solution's streams: the level's span names its pattern
    sed -i 's/"your stream /"my stream /g' "$BATS_TEST_TMPDIR/res/sol01-trace.json"
    run --separate-stderr plot schedule01 "$BATS_TEST_TMPDIR/res"
    assert_failure 1
    assert_regex "$stderr" "no run of 'given blocking, your streams, in turns' on the solution's streams alone"
}

@test "make results runs sol01, sol04, sol06 and sol08 once each, traced with their report, and make plots draws figures 11-14" {
    require_recorded schedule
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    for n in 01 04 06 08; do
        cat >"$BATS_TEST_TMPDIR/bin/sol$n" <<EOF
#!/usr/bin/env bash
[ "\$1 \$2" = "--quick --csv" ] && [ "\$3" = --trace ] || { echo "sol$n: args \$*" >&2; exit 2; }
cp "$SCHEDULE/sol$n-trace.json" "\$4" && cat "$SCHEDULE/sol$n-trace.csv"
EOF
        chmod +x "$BATS_TEST_TMPDIR/bin/sol$n"
    done
    run env RESULTS_ROOT="$BATS_TEST_TMPDIR/results" BINDIR="$BATS_TEST_TMPDIR/bin" \
        "$ROOT/plots/results.sh" sol01 sol04 sol06 sol08
    assert_success
    assert_output --partial "make results: 4 runs (0 programs x RUNS=1, lab04's sweep and the traces)"
    assert_output --partial "[ 4/4] sol08-trace"
    folder=$(echo "$BATS_TEST_TMPDIR"/results/*/)
    for n in 01 04 06 08; do
        cmp "$folder/sol$n-trace.csv" "$SCHEDULE/sol$n-trace.csv" || fail "sol$n's report"
        run grep "^command sol$n-trace: " "$folder/meta"
        assert_output "command sol$n-trace: $BATS_TEST_TMPDIR/bin/sol$n --quick --csv --trace sol$n-trace.json"
    done
    run plot all "$folder"
    assert_success
    for f in 11-ex01 12-ex04 13-ex06 14-ex08; do [ -s "$folder/$f-schedule.png" ] || fail "$f not drawn"; done
    grep -q 'src="12-ex04-schedule.png"' "$folder/index.html" || fail "the page does not show figure 12"
}
