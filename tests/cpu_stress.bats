#!/usr/bin/env bats
# make stress without a GPU: the runner (tests/stress.sh) drives stand-in labs
# that print canned reports, run by run, and exit as each test tells them; the
# table (tests/tools/stress_summary.py) is checked against numbers worked out
# by hand; and host_load, the host-memory load, is built and run.

load test_helper

setup_file() {
    # host_load built here, not in build/: other builds may be using that
    if command -v cc >/dev/null; then
        cc -O2 -std=c99 -Wall -Wextra -pthread -o "$BATS_FILE_TMPDIR/host_load" \
            "$BATS_TEST_DIRNAME/tools/host_load.c" || return 1
    fi
}

BIN() { echo "$BATS_TEST_TMPDIR/bin"; }

# fake_lab NAME [PLAN-LINE...]: a stand-in lab in $(BIN)/NAME, its rows in
# the order the labs write them. Run K in a mode (it counts its runs per mode)
# follows plan line K, "EXIT OBSERVED VALUE ATTEMPTS" (after the last line,
# the first again). It reports a verdict "always" (observed, 3 x) that no
# comparison decides; then the comparison "pipeline vs serial" measured
# ATTEMPTS times (no attempts row when ATTEMPTS is -) and the verdict it
# decides, pipeline_reaches_ideal, observed or not, VALUE in %; then the
# machine probes (link_H2D at start 50 + K GB/s, at end 40 + K) and, after
# them, gpu_not_shared (observed, 0 %); then the exit code row. OBSERVED "-"
# prints no verdict rows at all (a lab that stops before judging anything,
# as lab13 on one GPU does). It says "NAME: ..." on stderr unless EXIT is 0,
# and exits EXIT.
fake_lab() {
    local name=$1 dir
    dir=$(BIN)
    shift
    mkdir -p "$dir"
    printf '%s\n' "$@" >"$dir/$name.plan"
    rm -f "$dir/$name".*.count
    cat >"$dir/$name" <<EOF
#!/usr/bin/env bash
mode=default
[[ " \$* " == *" --quick "* ]] && mode=quick
[[ " \$* " == *" --csv "* ]] || { echo "$name: wants --csv" >&2; exit 2; }
count="$dir/$name.\$mode.count"
k=\$((\$(cat "\$count" 2>/dev/null || echo 0) + 1))
echo "\$k" >"\$count"
line=\$(((k - 1) % $# + 1))
read -r code observed value attempts < <(sed -n "\${line}p" "$dir/$name.plan")
echo "lab,variant,metric,value,unit"
echo "$name,device,name,\"Fake GPU, with a comma\",text"
if [ "\$observed" != - ]; then
echo "$name,verdict,always,1,observed"
echo "$name,verdict,always_value,3,x"
[ "\$attempts" = - ] || echo "$name,pipeline vs serial,attempts,\$attempts,count"
echo "$name,serial,time,12.5,ms"
echo "$name,verdict,pipeline_reaches_ideal,\$observed,observed"
echo "$name,verdict,pipeline_reaches_ideal_value,\$value,%"
echo "$name,verdict,pipeline_reaches_ideal_min,85,%"
echo "$name,verdict,pipeline_reaches_ideal_max,120,%"
fi
echo "$name,machine at start,link_H2D,\$((50 + k)),GB/s"
echo "$name,machine at end,link_H2D,\$((40 + k)),GB/s"
[ "\$observed" = - ] || echo "$name,verdict,gpu_not_shared,1,observed"
[ "\$observed" = - ] || echo "$name,verdict,gpu_not_shared_value,0,%"
echo "$name,result,exit_code,\$code,code"
[ "\$code" = 0 ] || echo "$name: exit \$code as planned" >&2
exit "\$code"
EOF
    chmod +x "$dir/$name"
}

# A stand-in lab that runs past any timeout, and one that crashes.
fake_hang() { mkdir -p "$(BIN)"; printf '#!/usr/bin/env bash\nexec sleep 30\n' >"$(BIN)/$1"; chmod +x "$(BIN)/$1"; }
fake_crash() { mkdir -p "$(BIN)"; printf '#!/usr/bin/env bash\nkill -SEGV $$\n' >"$(BIN)/$1"; chmod +x "$(BIN)/$1"; }

# stress [VAR=value...] PROGRAM...: tests/stress.sh into $OUT with the stand-ins.
OUT_DIR() { echo "$BATS_TEST_TMPDIR/out"; }
stress() {
    local vars=()
    while [[ ${1:-} == *=* ]]; do vars+=("$1"); shift; done
    env BINDIR="$(BIN)" STRESS_OUT="$(OUT_DIR)" "${vars[@]}" "$ROOT/tests/stress.sh" "$@"
}

@test "make stress counts each verdict per program and mode: observed, re-measured, min / median / max" {
    fake_lab lab04 "0 1 97 1" "4 0 50 3" "0 1 95 2" "0 1 96 1"
    run stress RUNS=4 lab04
    assert_success
    # by hand: observed in runs 1, 3 and 4; attempts 3 and 2 are 2 runs and
    # 2 + 1 = 3 re-measurements; values 50 95 96 97: median 95.5
    for mode in quick default; do
        assert_line "lab04 $mode (4 runs)"
        # two runs on a limit's side are too few to extrapolate from: '-'
        assert_line --regexp "^  pipeline_reaches_ideal +3 of 4 \(75%\) +2 +3 +50 +95\.5 +97 +% +- +pipeline vs serial$"
        # no comparison before it, and one after the machine probes: not
        # charged to one; no limit in the report: no distance to it
        assert_line --regexp "^  always +4 of 4 +- +- +3 +3 +3 +x +- +-$"
        assert_line --regexp "^  gpu_not_shared +4 of 4 +- +- +0 +0 +0 +% +- +-$"
        assert_line --regexp "^  link_H2D +51 - 54 +41 - 44 +GB/s$"
    done
    assert_line "  exit codes: exit 0: 3, exit 4: 1"
    assert_output --partial "stress: 8 runs; 2 verdict(s) not observed in every run (STRICT=1 fails on that); exit 0"
    printed=$output
    run cat "$(OUT_DIR)/summary.csv"
    assert_line --index 0 "program,mode,verdict,observed,runs,remeasured_runs,remeasurements,min,median,max,unit,sds_to_limit"
    assert_line "lab04,quick,pipeline_reaches_ideal,3,4,2,3,50,95.5,97,%,"
    assert_line "lab04,default,always,4,4,,,3,3,3,x,"
    assert_line "lab04,quick,machine at start: link_H2D,,4,,,51,52.5,54,GB/s,"
    # every report kept, the stderr of the run that had any, the table as a file
    for k in 1 2 3 4; do [ -s "$(OUT_DIR)/lab04.quick.run0$k.csv" ] || fail "no lab04.quick.run0$k.csv"; done
    [ -s "$(OUT_DIR)/lab04.default.run02.err" ] || fail "the stderr of exit 4 was not kept"
    [ ! -e "$(OUT_DIR)/lab04.default.run01.err" ] || fail "an empty stderr was kept"
    diff <(sed -n '/^lab04 quick/,/^stress:/p' <<<"$printed") "$(OUT_DIR)/summary.txt" ||
        fail "summary.txt is not the table printed"
}

@test "make stress interleaves the runs: run 1 of every program and mode, then run 2" {
    fake_lab lab00 "0 1 1 -" "0 1 1 -"
    fake_lab lab02 "0 1 1 -" "0 1 1 -"
    run stress RUNS=2 lab00 lab02
    assert_success
    run cut -d, -f1-3 "$(OUT_DIR)/runs.csv"
    assert_output "program,mode,run
lab00,quick,1
lab00,default,1
lab02,quick,1
lab02,default,1
lab00,quick,2
lab00,default,2
lab02,quick,2
lab02,default,2"
    run grep -E '^(runs|modes|load|programs): ' "$(OUT_DIR)/meta"
    assert_output "runs: 2
modes: quick default
load: none
programs: lab00 lab02"
}

@test "a run that exited 1 fails the stress run and is named loudly with its stderr; the rest still run" {
    fake_lab lab02 "0 1 1 -" "1 1 1 -" "0 1 1 -"
    run stress RUNS=3 MODES=quick lab02
    assert_failure 1
    assert_line --regexp "^  run +2/3 .*lab02 quick: exit 1, FAILED"
    assert_line --regexp "^  run +3/3 .*all exit 0$"
    assert_line "!!! 1 of 3 runs FAILED (results wrong, a crash or a timeout):"
    assert_line "  lab02.quick.run02.csv: exit 1, results wrong; its stderr: lab02.quick.run02.err"
    assert_line "  exit codes: exit 0: 2, exit 1: 1"
    assert_output --partial "stress: 3 runs, 1 FAILED; every verdict observed in every run; exit 1"
}

@test "make stress gives each verdict's distance from its limits in the runs' spread toward them" {
    fake_lab lab04 "0 1 90 -" "0 1 91 -" "0 1 92 -" "0 1 93 -" "0 1 94 -" \
        "0 1 95 -" "0 1 96 -" "0 1 97 -" "0 1 98 -" "0 1 99 -"
    run stress RUNS=10 MODES=quick lab04
    assert_success
    # by hand: the median 94.5, 9.5 above the lower limit 85; the five runs
    # below it 4.5 ... 0.5 under it, a spread of sqrt(41.25 / 5) = 2.87:
    # z = 3.31, and a normal side puts 1 - Phi(3.31) = 4.7e-04 of runs
    # past; the upper limit 120 lies 8.9 spreads above (3e-19 more)
    assert_line --regexp "^  pipeline_reaches_ideal +10 of 10 +- +- +90 +94\.5 +99 +% +3\.3  0\.00047 +-$"
    run grep '^lab04,quick,pipeline_reaches_ideal,' "$(OUT_DIR)/summary.csv"
    assert_output "lab04,quick,pipeline_reaches_ideal,10,10,,,90,94.5,99,%,3.31"
}

@test "a timeout and a crash are failures; a lab that cannot run here (exit 3) is waived" {
    fake_lab lab05 "3 - 0 -" "3 - 0 -"
    fake_lab lab00 "0 1 1 -" "0 1 1 -"
    fake_lab lab02 "0 1 1 -" "3 - 0 -"
    run stress RUNS=2 lab05 lab00 lab02
    assert_success
    assert_line "  every run waived (exit 3): lab05: exit 3 as planned"
    assert_line "  exit codes: exit 3: 2"
    # a waived run that judged nothing is no run of the verdicts: 1 of 1, not 1 of 2
    assert_line --regexp "^  pipeline_reaches_ideal +1 of 1 +- +- +1 +1 +1 +% +- +-$"
    assert_line "  exit codes: exit 0: 1, exit 3: 1 (the 1 waived left out of the counts above: lab02: exit 3 as planned)"
    assert_output --partial "stress: 12 runs, 6 waived; every verdict observed in every run; exit 0"
    # every run waived: nothing could run here
    rm -r "$(OUT_DIR)"
    run stress RUNS=1 lab05
    assert_failure 3
    assert_output --partial "stress: all 2 runs waived (exit 3): nothing could run here"
    rm -r "$(OUT_DIR)"
    fake_hang lab06
    fake_crash lab03
    run stress RUNS=1 MODES=quick LAB_TIMEOUT=1 lab06 lab03
    assert_failure 1
    assert_line --regexp "^  run +1/1 .*lab06 quick: TIMED OUT after 1 s, FAILED; lab03 quick: exit 139, FAILED$"
    assert_line "  lab06.quick.run01.csv: exit 124, timed out (ran past LAB_TIMEOUT)"
    assert_line "  lab03.quick.run01.csv: exit 139, killed by SIGSEGV"
    refute_output --partial "Segmentation fault" # bash's own word on it, kept out of the table
    assert_line "  no verdict rows in its reports"
}

@test "a waived run still counts the verdicts it judged: a miss cannot hide behind exit 3" {
    # lab14 on one GPU: parts 1 and 2 judged, then exit 3 for part 3. A lab's
    # exit 3 outranks its exit 4, so the miss in run 2 shows only here.
    fake_lab lab14 "3 1 97 -" "3 0 50 -"
    run stress RUNS=2 MODES=quick lab14
    assert_success
    assert_line --regexp "^  pipeline_reaches_ideal +1 of 2 \(50%\) +- +- +50 +73.5 +97 +% +- +-$"
    assert_line --regexp "^  always +2 of 2 "
    assert_line "  exit codes: exit 3: 2 (the 2 waived judged the verdicts above before stopping, and are counted: lab14: exit 3 as planned)"
    assert_output --partial "stress: 2 runs, 2 waived; 1 verdict(s) not observed in every run (STRICT=1 fails on that); exit 0"
    run python3 "$ROOT/tests/tools/stress_summary.py" --strict "$(OUT_DIR)"
    assert_failure 1
    assert_line "  lab14 quick pipeline_reaches_ideal: observed 1 of 2"
    # one waived run that judged, one that judged nothing
    rm -r "$(OUT_DIR)"
    fake_lab lab14 "3 1 97 -" "3 - 0 -"
    run stress RUNS=2 MODES=quick lab14
    assert_success
    assert_line --regexp "^  pipeline_reaches_ideal +1 of 1 "
    assert_line "  exit codes: exit 3: 2 (of the 2 waived, 1 judged verdicts and are counted above, 1 judged nothing and are left out: lab14: exit 3 as planned)"
}

@test "STRICT=1 fails when a verdict was not observed in every run, and says which" {
    fake_lab lab04 "0 1 97 1" "4 0 50 2"
    run stress RUNS=2 MODES=default lab04
    assert_success
    rm -r "$(OUT_DIR)"
    run stress RUNS=2 MODES=default STRICT=1 lab04
    assert_failure 1
    assert_line "!!! STRICT=1: 1 verdict(s) not observed in every run:"
    assert_line "  lab04 default pipeline_reaches_ideal: observed 1 of 2"
    rm -r "$(OUT_DIR)"
    fake_lab lab04 "0 1 97 1" "0 1 96 1"
    run stress RUNS=2 MODES=default STRICT=1 lab04
    assert_success
    assert_output --partial "every verdict observed in every run; exit 0"
}

@test "without attempts rows the re-measure columns say '-'; a comparison no verdict follows is listed apart" {
    fake_lab lab00 "0 1 2.5 -" "0 1 2.75 -" "0 1 2 -"
    run stress RUNS=3 MODES=quick lab00
    assert_success
    assert_line --regexp "^  pipeline_reaches_ideal +3 of 3 +- +- +2 +2\.5 +2\.75 +% +- +-$"
    run grep '^lab00,quick,pipeline_reaches_ideal,' "$(OUT_DIR)/summary.csv"
    assert_output "lab00,quick,pipeline_reaches_ideal,3,3,,,2,2.5,2.75,%,"
    # a comparison no verdict follows is counted on its own
    rm -r "$(OUT_DIR)"
    fake_lab lab04 "0 1 97 -" "0 1 96 -"
    # ($k: the stand-in's run count, expanded when it runs)
    sed -i 's/^echo "lab04,result/echo "lab04,4 streams depth vs serial,attempts,$k,count"\n&/' "$(BIN)/lab04"
    run stress RUNS=2 MODES=quick lab04
    assert_success
    assert_line "  comparison '4 streams depth vs serial', no verdict after it: re-measured in 1 of 2 runs, 1 re-measurements in all"
    run grep '^lab04,quick,4 streams' "$(OUT_DIR)/summary.csv"
    assert_output "lab04,quick,4 streams depth vs serial,,2,1,1,1,1.5,2,attempts,"
}

@test "make stress refuses bad settings with exit 2 and a clear message, before anything runs" {
    fake_lab lab00 "0 1 1 -"
    check() { # check VAR=value... -- MESSAGE
        local vars=()
        while [ "$1" != -- ]; do vars+=("$1"); shift; done
        run --separate-stderr stress "${vars[@]}" lab00
        assert_failure 2
        assert_equal "$stderr" "make stress: $2"
        [ ! -e "$(OUT_DIR)" ] || fail "${vars[*]}: left $(OUT_DIR)"
    }
    check RUNS=0 -- "RUNS must be a whole number from 1 to 1000 (got '0')"
    check RUNS=1001 -- "RUNS must be a whole number from 1 to 1000 (got '1001')"
    check RUNS=ten -- "RUNS must be a whole number from 1 to 1000 (got 'ten')"
    check MODES=fast -- "MODES takes quick and default (got 'fast' in 'fast')"
    check MODES=" " -- "MODES is empty: give quick, default or both"
    check LOAD=cpu -- "LOAD must be none, gpu, host or both (got 'cpu')"
    check STRICT=yes -- "STRICT must be 1 or 0 (got 'yes')"
    check LAB_TIMEOUT=0 -- "LAB_TIMEOUT must be a whole number of seconds from 1 to 9999 (got '0')"
    run --separate-stderr stress RUNS=1 lab00 lab99
    assert_failure 2
    assert_equal "$stderr" "make stress: $(BIN)/lab99 is not built: is 'lab99' a program make builds? (make list)"
    run --separate-stderr stress RUNS=1
    assert_failure 2
    assert_regex "$stderr" "no programs given"
    mkdir -p "$(OUT_DIR)" && touch "$(OUT_DIR)/old.csv"
    run --separate-stderr stress RUNS=1 lab00
    assert_failure 2
    assert_equal "$stderr" "make stress: STRESS_OUT=$(OUT_DIR) is not empty: give a new folder"
}

@test "make stress names its folder after the GPU and the date, and a second one of the day -2" {
    fake_lab lab00 "0 1 1 -" "0 1 1 -"
    mkdir -p "$BATS_TEST_TMPDIR/smi"
    cat >"$BATS_TEST_TMPDIR/smi/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
case "$*" in *name*) echo "NVIDIA H100 80GB HBM3" ;; *driver_version*) echo "580.65.06" ;; esac
EOF
    chmod +x "$BATS_TEST_TMPDIR/smi/nvidia-smi"
    for second in "" -2; do
        run env PATH="$BATS_TEST_TMPDIR/smi:$PATH" RESULTS_ROOT="$BATS_TEST_TMPDIR/results" \
            BINDIR="$(BIN)" RUNS=1 "$ROOT/tests/stress.sh" lab00
        assert_success
        folder="$BATS_TEST_TMPDIR/results/stress-nvidia-h100-80gb-hbm3-$(date +%F)$second"
        assert_output --partial "written to $folder/"
        [ -s "$folder/lab00.quick.run01.csv" ] || fail "no report in $folder"
    done
    run grep -E '^(gpu|driver|command): ' "$folder/meta"
    assert_output 'gpu: NVIDIA H100 80GB HBM3
driver: 580.65.06
command: make stress RUNS=1 MODES="quick default" LOAD=none STRESS_PROGRAMS="lab00"'
}

# fake_load NAME [once]: a stand-in load, $(BIN)/NAME, that writes its process
# id to $(BIN)/NAME.pid, says ready and lasts --seconds; with "once", it ends
# right after saying ready.
fake_load() {
    mkdir -p "$(BIN)"
    cat >"$(BIN)/$1" <<EOF
#!/usr/bin/env bash
echo \$\$ >"$(BIN)/$1.pid"
echo "ready: $1 \$*"
[ "${2:-}" = once ] && exit 0
exec sleep "\$2"
EOF
    chmod +x "$(BIN)/$1"
}

@test "LOAD=both runs both loads beside every run and stops them at the end; a load that stops is started again" {
    fake_load gpu_load
    fake_load host_load
    fake_lab lab00 "0 1 1 -" "0 1 1 -"
    # each run notes whether both loads are on as it runs
    sed -i "2i for l in gpu_load host_load; do kill -0 \$(cat $(BIN)/\$l.pid) 2>/dev/null && echo \"\$l on\" >>$(BIN)/seen; done" "$(BIN)/lab00"
    run stress RUNS=2 LOAD=both GPU_LOAD="$(BIN)/gpu_load" HOST_LOAD="$(BIN)/host_load" lab00
    assert_success
    assert_line "make stress: gpu load on: ready: gpu_load --seconds 600"
    assert_line "make stress: host load on: ready: host_load --seconds 600"
    [ "$(grep -c 'gpu_load on' "$(BIN)/seen")" = 4 ] || fail "the gpu load was on in $(grep -c 'gpu_load on' "$(BIN)/seen") of 4 runs"
    [ "$(grep -c 'host_load on' "$(BIN)/seen")" = 4 ] || fail "the host load was on in $(grep -c 'host_load on' "$(BIN)/seen") of 4 runs"
    for l in gpu_load host_load; do
        ! kill -0 "$(cat "$(BIN)/$l.pid")" 2>/dev/null || fail "$l still runs after the stress run"
    done
    grep -q '^load: both$' "$(OUT_DIR)/meta" || fail "meta does not say LOAD=both"
    # a load that ends early is started again before the next run, and that is said
    rm -r "$(OUT_DIR)"
    fake_load host_load once
    run stress RUNS=2 MODES=quick LOAD=host HOST_LOAD="$(BIN)/host_load" lab00
    assert_success
    assert_line "make stress: the host load had stopped; starting it again"
    [ "$(grep -c '^ready' "$(OUT_DIR)/load-host.log")" = 3 ] || fail "not started 3 times: $(cat "$(OUT_DIR)/load-host.log")"
    # a load that is not built is named
    run --separate-stderr stress RUNS=1 LOAD=gpu GPU_LOAD="$BATS_TEST_TMPDIR/nowhere/gpu_load" lab00
    assert_failure 1
    assert_equal "$stderr" "make stress: LOAD=gpu needs $BATS_TEST_TMPDIR/nowhere/gpu_load: make stress builds it"
}

@test "make stress runs the programs it is given through make, with the settings it is given" {
    fake_lab fake04 "0 1 97 1" "0 1 95 2"
    run make -s --no-print-directory stress BUILD="$BATS_TEST_TMPDIR/build" BINDIR="$(BIN)" \
        STRESS_PROGRAMS=fake04 RUNS=2 MODES=quick STRESS_OUT="$(OUT_DIR)"
    assert_success
    assert_line --regexp "^  pipeline_reaches_ideal +2 of 2 +1 +1 +95 +96 +97 +% +- +pipeline vs serial$"
    run make -s --no-print-directory help BUILD="$BATS_TEST_TMPDIR/build"
    assert_output --regexp "make stress +run every lab RUNS=N times"
}

@test "make stress LOAD=host builds host_load and runs it beside the labs" {
    command -v cc >/dev/null || skip "no C compiler"
    fake_lab fake00 "0 1 1 -"
    run make -s --no-print-directory stress BUILD="$BATS_TEST_TMPDIR/build" BINDIR="$(BIN)" \
        STRESS_PROGRAMS=fake00 RUNS=1 MODES=quick LOAD=host STRESS_OUT="$(OUT_DIR)"
    assert_success
    assert_line --regexp "^make stress: host load on: ready: 4 threads copying 128 MiB back and forth for 600 s$"
    [ -x "$BATS_TEST_TMPDIR/build/tests/host_load" ] || fail "host_load not built"
}

@test "the summary reads a report a crash cut short, and says when a folder has no runs.csv" {
    mkdir -p "$(OUT_DIR)"
    printf 'program,mode,run,exit_code,seconds,report\nlab04,quick,1,139,0.5,lab04.quick.run01.csv\n' >"$(OUT_DIR)/runs.csv"
    printf 'lab,variant,metric,value,unit\nlab04,verdict,pipeline_reaches_ideal,1,observed\nlab04,verdict,pipel' \
        >"$(OUT_DIR)/lab04.quick.run01.csv"
    run python3 "$ROOT/tests/tools/stress_summary.py" "$(OUT_DIR)"
    assert_failure 1
    assert_line --regexp "^  pipeline_reaches_ideal +1 of 1 +- +- +- +- +- +- +-$"
    assert_line "  lab04.quick.run01.csv: exit 139, killed by SIGSEGV"
    refute_output --partial Traceback
    run --separate-stderr python3 "$ROOT/tests/tools/stress_summary.py" "$BATS_TEST_TMPDIR"
    assert_failure 1
    assert_regex "$stderr" "runs.csv: No such file or directory \(is .* a folder that \`make stress\` wrote\?\)"
}

# ---- host_load ------------------------------------------------------------------

@test "host_load copies with 2 threads for 0.3 s: says ready, exits 0 within a few seconds" {
    [ -x "$BATS_FILE_TMPDIR/host_load" ] || skip "no C compiler (cc) to build host_load"
    start=$(date +%s.%N)
    run --separate-stderr "$BATS_FILE_TMPDIR/host_load" --seconds 0.3 --threads 2 --mib 8
    took=$(python3 -c "print($(date +%s.%N) - $start)")
    assert_success
    assert_output "ready: 2 threads copying 8 MiB back and forth for 0.3 s"
    ok "0.3 <= $took < 5" "host_load --seconds 0.3 took $took s"
}

@test "host_load refuses bad options with exit 2, naming the option and its range" {
    [ -x "$BATS_FILE_TMPDIR/host_load" ] || skip "no C compiler (cc) to build host_load"
    hl() { run --separate-stderr "$BATS_FILE_TMPDIR/host_load" "$@"; }
    hl
    assert_failure 2
    assert_regex "$stderr" "^host_load: --seconds is required"
    hl --seconds 0
    assert_failure 2
    assert_regex "$stderr" "^host_load: --seconds wants a number from 0.001 to 86400 \(got '0'\)"
    hl --seconds 1 --threads 0
    assert_failure 2
    assert_regex "$stderr" "^host_load: --threads wants a number from 1 to 256 \(got '0'\)"
    hl --seconds 1 --mib 8x
    assert_failure 2
    assert_regex "$stderr" "^host_load: --mib wants a number from 1 to 4096 \(got '8x'\)"
    hl --seconds 1 --threads 1.5
    assert_failure 2
    assert_regex "$stderr" "^host_load: --threads and --mib want whole numbers"
    hl --seconds 1 --fast
    assert_failure 2
    assert_regex "$stderr" "^host_load: unknown option '--fast'"
    hl --seconds
    assert_failure 2
    assert_regex "$stderr" "got 'nothing'"
    hl --help
    assert_success
    assert_line "usage: host_load --seconds S [--threads N] [--mib M]"
}

@test "stress_pool.py pools machines' summaries: runs and misses add up, ranges widen, a machine of two files counts once" {
    local a="$BATS_TEST_TMPDIR/a.csv" b="$BATS_TEST_TMPDIR/b.csv" c="$BATS_TEST_TMPDIR/c.csv"
    local header="program,mode,verdict,observed,runs,remeasured_runs,remeasurements,min,median,max,unit"
    printf '%s\n%s\n%s\n' "$header" "lab07,quick,v,50,50,1,1,0.9,1,1.1,x" \
        "lab07,quick,machine at start: link_H2D,,50,,,40,50,55,GB/s" >"$a"
    printf '%s\n%s\n' "$header" "lab07,default,v,10,10,-,-,0.95,1,1.2,x" >"$b"
    printf '%s\n%s\n' "$header" "lab07,quick,v,39,40,0,0,0.7,1,1.05,x" >"$c"
    run python3 tests/tools/stress_pool.py one="$a" one="$b" two="$c"
    assert_success
    # 100 runs, 1 miss: (1 + 3) / 100; two machines; the probe row is no verdict
    assert_line "| lab07 | v | 100 | 99 | 1 | 0.7 to 1.2 x | 2 | 4.0% |"
    refute_output --partial link_H2D
    run python3 tests/tools/stress_pool.py --programs lab08 "$a"
    assert_failure
    assert_output --partial "no verdict rows"
}

# ---- make grade-stress: the rubric's criteria over repeated reference runs ----

RS_FIXTURE=tests/fixtures/rubric-stress/runs.jsonl

@test "rubric_stress.py summary: eight recorded sol03 runs meet every ex03 criterion, with the values' spread and 3/n" {
    mkdir -p "$BATS_TEST_TMPDIR/rs"
    cp "$RS_FIXTURE" "$BATS_TEST_TMPDIR/rs/runs.jsonl"
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs" --strict
    assert_success
    # the eight medians' errors, sorted: 0.0877 0.103 0.110 0.117 0.134 0.152 0.164
    # 0.172 (%): the median (0.117 + 0.134) / 2; no miss in 8 runs: below 3/8;
    # four runs on the bound's side are too few for its spread: '-'
    assert_line --regexp "^sol03 +median_accurate +1 +8 of 8 +8 of 8 +0\.0877 +0\.126 +0\.172 +<= 2 +38% +-$"
    assert_output --regexp "sol03 +warm_up +1 +8 of 8 +8 of 8 +2 +2 +2 +>= 1 "
    assert_output --partial "rubric_stress: 8 runs, 0 waived (exit 3), 0 failed; 0 criteria missed once graded"
    assert [ -s "$BATS_TEST_TMPDIR/rs/summary.txt" ]
}

@test "rubric_stress.py summary: how far each criterion's runs lay inside its bound, in their spread toward it" {
    mkdir -p "$BATS_TEST_TMPDIR/rs"
    # the eight runs twice (rounds 9-16 the same values): the median is
    # still 0.1255, and the eight above it lie 0.0085, 0.0265, 0.0385 and
    # 0.0465 above it, twice each: a spread of 0.0332 toward the bound 2,
    # (2 - 0.1255) / 0.0332 = 56.4 spreads
    python3 - "$RS_FIXTURE" >"$BATS_TEST_TMPDIR/rs/runs.jsonl" <<'PY'
import json, sys
runs = [json.loads(line) for line in open(sys.argv[1])]
for rec in runs + [dict(r, round=r["round"] + len(runs)) for r in runs]:
    print(json.dumps(rec))
PY
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs"
    assert_success
    assert_line --regexp "^sol03 +median_accurate +1 +16 of 16 +16 of 16 +0\.0877 +0\.126 +0\.172 +<= 2 +19% +56\.[45]  <1e-9$"
    assert_line --regexp "^sol03 +warm_up .* no spread$"
    # run 3 (0.117) at 1.9, under the bound 2: the median moves to 0.1338,
    # and the seven runs above it (1.9, and 0.152, 0.164, 0.172 twice) are
    # a spread of 0.668 toward the bound: z = 1.866 / 0.668 = 2.79, and
    # 1 - Phi(2.79) = 0.0026 of runs past it, over the aim: flagged
    sed -i '3s/"median_error_pct": [0-9.e-]*/"median_error_pct": 1.9/' "$BATS_TEST_TMPDIR/rs/runs.jsonl"
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs"
    assert_line --regexp "^sol03 +median_accurate +1 +16 of 16 +16 of 16 .* 1\.9 +<= 2 +19% +2\.8  0\.0026  over 1/1000$"
}

# plant ERROR [ROUND...]: the fixture with those rounds' median error set to ERROR (%)
plant() {
    python3 - "$RS_FIXTURE" "$@" >"$BATS_TEST_TMPDIR/rs/runs.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    rec = json.loads(line)
    if str(rec["round"]) in sys.argv[3:]:
        rec["metrics"]["median_error_pct"] = float(sys.argv[2])
    print(json.dumps(rec))
PY
}

@test "rubric_stress.py summary: a miss is counted, then graded as grade.py would: the next runs measured again, their median deciding; --strict fails on a miss once graded" {
    mkdir -p "$BATS_TEST_TMPDIR/rs"
    # run 3 reads 2.2% (ex03's bound 2%, within 15% of it): the grader would
    # run it again three times, here runs 4, 5 and 6, which meet it
    plant 2.2 3
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs" --strict
    assert_success
    assert_output --regexp "sol03 +median_accurate +1 +7 of 8 +8 of 8 .* 2\.2 +<= 2 +38%"
    # far past it (5%): another design, not a busy moment; not measured again
    plant 5 3
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs"
    assert_success
    assert_output --regexp "sol03 +median_accurate +1 +7 of 8 +7 of 8 .* 5 +<= 2 +1 seen"
    # a slow stretch, runs 3 to 6: run 3's runs again (4, 5, 6) all miss and
    # run 4's (5, 6, 7) by their median; runs 5 and 6 are rescued
    plant 2.2 3 4 5 6
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs"
    assert_success
    assert_output --regexp "sol03 +median_accurate +1 +4 of 8 +6 of 8 .* <= 2 +2 seen"
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs" --strict
    assert_failure 1
}

@test "rubric_stress.py summary: a criterion relative to the solution takes the next run as its reference" {
    mkdir -p "$BATS_TEST_TMPDIR/rs"
    # ex04's efficient: >= 0.9 x the reference's efficiency. Run 2 (0.85)
    # against run 3 (0.98) misses (0.85 < 0.882); run 3 against run 1 and run 1
    # against run 2 meet it. The spread shown is of the ratios: 0.85 / 0.98 =
    # 0.867, 0.98 / 0.97 = 1.01, 0.97 / 0.85 = 1.14. Graded, run 2's miss is
    # measured again in three pairs of the runs that follow (reference
    # first): 0.97 / 0.98, 0.98 / 0.85, 0.85 / 0.97: the median pair 0.99 x.
    for e in "1 0.97" "2 0.85" "3 0.98"; do
        set -- $e
        printf '{"program": "sol04", "exercise": "ex04", "round": %s, "exit_code": 0, "seconds": 1, "metrics": {"mismatches": 0, "speedup": 1.6, "efficiency": %s, "level2_mismatches": 0, "level2_efficiency": 0.99}}\n' "$1" "$2"
    done >"$BATS_TEST_TMPDIR/rs/runs.jsonl"
    run python3 grader/rubric_stress.py summary "$BATS_TEST_TMPDIR/rs"
    assert_success
    assert_output --regexp "sol04 +efficient +1 +2 of 3 +3 of 3 +0\.867 +1\.01 +1\.14 +>= 0\.9 x ref"
    assert_output --regexp "sol04 +overlaps +1 +3 of 3 +3 of 3 +1\.6 +1\.6 +1\.6 +>= 1\.3 +100%"
}

# fake_sol NAME EXIT: a stand-in solution that reads the nonce from its stdin
# and prints ex03's result line with it (EXIT 0), or says it cannot run here.
fake_sol() {
    mkdir -p "$(BIN)"
    cat >"$(BIN)/$1" <<SOL
#!/usr/bin/env bash
[ "\$1" = --grade ] || exit 2
read -r nonce
[ $2 = 0 ] || { echo "$1: cannot run here: needs 2 GPUs" >&2; exit $2; }
echo "preview: 16/16"
echo "{\"exercise\": \"ex03\", \"pass\": \"measure\", \"nonce\": \"\$nonce\", \"median_error_pct\": 0.2, \"warmup_launches\": 2, \"launches_wrong\": 0, \"level2_median_error_pct\": 0.01, \"level2_launches_wrong\": 0}"
SOL
    chmod +x "$(BIN)/$1"
}

@test "rubric_stress.py run: each run's own nonce on stdin, a line per run in runs.jsonl, then the table" {
    fake_sol sol03 0
    run python3 grader/rubric_stress.py run --runs 3 --only ex03 --bindir "$(BIN)" \
        --out "$BATS_TEST_TMPDIR/out"
    assert_success
    assert_output --regexp "sol03 +median_accurate +1 +3 of 3 +3 of 3 "
    run wc -l <"$BATS_TEST_TMPDIR/out/runs.jsonl"
    assert_output "3"
    # a program that prints a fixed token instead of the one on its stdin has no result line
    sed -i 's/\$nonce/0123/' "$(BIN)/sol03"
    run python3 grader/rubric_stress.py run --runs 1 --only ex03 --bindir "$(BIN)" \
        --out "$BATS_TEST_TMPDIR/out2"
    assert_failure 1
    assert_output --partial "failed: sol03 round 1 exit 0 without a result line"
}

@test "rubric_stress.py run: a solution that cannot run here is waived (exit 3); a bad --only or --runs is a usage error" {
    fake_sol sol03 3
    run python3 grader/rubric_stress.py run --runs 2 --only ex03 --bindir "$(BIN)" \
        --out "$BATS_TEST_TMPDIR/out"
    assert_failure 3
    assert_output --partial "2 runs, 2 waived (exit 3), 0 failed"
    run python3 grader/rubric_stress.py run --only ex99 --bindir "$(BIN)"
    assert_failure 2
    assert_output --partial "no rubric grader/rubrics/ex99.ini"
    run python3 grader/rubric_stress.py run --runs 0 --bindir "$(BIN)"
    assert_failure 2
    assert_output --partial "--runs must be from 1 to 1000"
    mkdir -p "$BATS_TEST_TMPDIR/empty"
    run python3 grader/rubric_stress.py run --bindir "$BATS_TEST_TMPDIR/empty"
    assert_failure 3
    assert_output --partial "no solution is built"
}

@test "margins.normal_tail: the nearer limit in the spread toward it, both tails' shares summed" {
    run python3 -c '
import sys; sys.path.insert(0, "grader")
import margins
runs = [0.9] * 5 + [1.0] + [1.1] * 5
z, rate = margins.normal_tail(runs, 0.5, 1.2)
print(f"{z:.3f} {rate:.5f}")
print(margins.words(*margins.normal_tail(runs + [float("nan")], 0.5, 1.2)))
print(margins.normal_tail([1.0] * 6, 0.5, None), margins.normal_tail(runs[4:8], 0.5))
print(margins.words(*margins.normal_tail(runs, None, 1.0)))
print(margins.words(*margins.normal_tail([0.4] * 3 + [0.9, 1.0], 0.5)))'
    assert_success
    # the median 1.0: 0.5 above the lower limit in a spread of 0.1 below it
    # (z 5), 0.2 under the upper in 0.1 above it (z 2): 1 - Phi(2) = 0.02275,
    # and Phi(-5), 3e-7, beside it
    assert_line --index 0 "2.000 0.02275"
    # a run that is not a number is a miss: 1/12 + 11/12 x 0.02275 = 0.104
    assert_line --index 1 "2.0  0.1  over 1/1000"
    # no spread inside the limits; too few runs (4, 1 of them below the median) to say
    assert_line --index 2 "(inf, 0.0) (None, None)"
    # the median on the upper limit: z 0, half of a normal side past it
    assert_line --index 3 "0.0  0.5  over 1/1000"
    # the median past the limit, no run further out: not "all past" (2 of 5 pass)
    assert_line --index 4 "median past"
}
