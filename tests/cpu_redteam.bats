#!/usr/bin/env bats
# The red-team fixtures (tests/fixtures/redteam/, whose README says what each
# tries and what a fair grader gives it), everything of them that needs no
# GPU: the attacks on the build are refused by the grader, with the reason;
# the attacks at run time, built around a stand-in for ex01's program
# (tests/tools/redteam_driver.cu) and run through the grader's sandbox and
# reports (tests/tools/redteam_grade.py), see nothing hidden, write nothing
# outside their scratch folder, leave nothing running and reach the reports
# as one printable line; and a value past a rubric's model_limit (outside
# physics) is flagged, not rewarded. gpu_redteam.bats grades them on a GPU.

load test_helper
load grade_helper

REDTEAM=tests/fixtures/redteam
DRIVERS="$BATS_FILE_TMPDIR/drivers"

setup_file() {
    [ -d "$REDTEAM" ] || return 0 # each test skips, saying so
    # the library once, for one GPU architecture: only the host code runs here
    # (a copy of one_arch's, which the suites that grade share, where it built;
    # one_arch in a subshell: ARCH stays out of the tests' make in build/)
    local flags="$BATS_FILE_TMPDIR/flags" prebuilt
    prebuilt=$(one_arch && echo "${STREAMLAB_GRADE_PREBUILT:-}")
    [ -z "$prebuilt" ] || cp -a "$prebuilt" "$BATS_FILE_TMPDIR/build"
    make -s --no-print-directory ARCH=sm_90 BUILD="$BATS_FILE_TMPDIR/build" grade-flags \
        >"$flags" 2>&1 || return 0 # each test that needs it fails, naming the build
    local nvcc lib ldlibs cflags f given
    nvcc=$(sed -n 's/^NVCC=//p' "$flags")
    cflags=$(sed -n 's/^EX_NVCCFLAGS=//p' "$flags")
    lib=$(sed -n 's/^LIB=//p' "$flags")
    ldlibs=$(sed -n 's/^LDLIBS=//p' "$flags")
    given=$(sed -n 's/^GRADING_OBJ=//p' "$flags")
    # the given programs' grading_value() called twice with one name, as
    # give-metric-twice's code and then its program would
    printf '#include "grading.h"\nint main(void)\n{\n    grading_value("speedup", 1);\n    %s\n}\n' \
        'grading_value("speedup", 2);' >"$BATS_FILE_TMPDIR/twice.cu"
    mkdir -p "$DRIVERS"
    # shellcheck disable=SC2086 # flags are words
    "$nvcc" $cflags -o "$DRIVERS/twice" "$BATS_FILE_TMPDIR/twice.cu" $given "$lib" $ldlibs \
        >"$DRIVERS/twice.log" 2>&1 || true # its test fails, naming the build
    for f in read-environment files-read-hidden files-write-outside process-daemon process-fork-bomb \
        report-hostile-text; do
        mkdir -p "$DRIVERS/$f"
        # shellcheck disable=SC2086 # flags are words
        "$nvcc" $cflags -o "$DRIVERS/$f/driver" tests/tools/redteam_driver.cu \
            "$REDTEAM/$f/ex01_default_stream.cu" "$lib" $ldlibs >"$DRIVERS/$f.log" 2>&1
    done
}

setup() {
    [ -d "$REDTEAM" ] || skip "tests/fixtures/redteam/ withheld (it holds solved level-one code: exercises/README.md, \"Handing out the exercises\")"
    OUT="$BATS_TEST_TMPDIR/out"
}

# attack FIXTURE [HIDDEN...]: its driver's measure pass, graded in the sandbox
# into $OUT; what it printed is in $OUT/work/ex01/measure.stdout.
attack() {
    local fixture=$1
    shift
    [ -x "$DRIVERS/$fixture/driver" ] || fail "no driver for $fixture: $(tail -3 "$DRIVERS/$fixture.log")"
    python3 tests/tools/redteam_grade.py "$DRIVERS/$fixture/driver" "$OUT" "$fixture" ex01 "$@"
}
said() { cat "$OUT/work/ex01/measure.stdout"; }

@test "every red-team fixture is in the README's table, in the exercise layout: one student's file, no main" {
    for d in "$REDTEAM"/*/; do
        name=$(basename "$d")
        grep -q "^| \`$name\` |" "$REDTEAM/README.md" || fail "$name is not in $REDTEAM/README.md"
        files=("$d"ex0[1-6]_*.cu)
        [ "${#files[@]}" = 1 ] && [ -f "${files[0]}" ] || fail "$name: not one exNN_*.cu file"
        ! grep -q 'int main' "${files[0]}" || fail "$name has a main()"
    done
}

@test "the attacks on the build are refused before anything runs, each naming what it used" {
    require_sandbox
    one_arch
    class="$BATS_TEST_TMPDIR/class"
    mkdir -p "$class"
    for d in "$REDTEAM"/rewrite-*/; do
        [ "$(basename "$d")" = rewrite-atexit ] || ln -s "$ROOT/$d" "$class/$(basename "$d")"
    done
    run grade --submissions "$class" --only ex01,ex03 --no-reference --no-memcheck \
        --out "$BATS_TEST_TMPDIR/out" --fake-gpu-probe true
    assert_success
    while IFS='|' read -r student ex expected; do
        run row "$student" "$ex"
        # ex01's and ex03's rubrics have a second level: their 16 points
        [[ "$output" == "0/16,build_error,build failed: $expected"* ]] ||
            fail "$student: $output"
    done <<'EOF2'
rewrite-weak-symbol|ex01|ex01_default_stream.cu defines fresh_seed, which kernels/verify.c defines
rewrite-asm-label|ex01|ex01_default_stream.cu defines grading_value, which exercises/given/grading.c defines
rewrite-cuda-runtime|ex03|ex03_event_timing.cu defines cudaEventElapsedTime, which libcudart_static.a defines
rewrite-constructor-priority|ex01|ex01_default_stream.cu has a constructor with a priority, which runs before main()
rewrite-destructor|ex01|ex01_default_stream.cu has a destructor, which runs after main()
rewrite-global-object|ex01|ex01_default_stream.cu has code that runs before main()
EOF2
    # solutions/ is not in the sandbox: the include is never found, so never compiled
    run row rewrite-macro-include ex01
    assert_output --regexp "^0/16,build_error,build failed: ex01_default_stream.cu(:[0-9]+:[0-9]+: fatal error: .*No such file| includes solutions/)"
    ! grep -q "SOLUTION" "$BATS_TEST_TMPDIR/out/grades.csv" "$BATS_TEST_TMPDIR/out/report.txt" ||
        fail "the solution's text reached a report"
}

@test "make refuses the same files, naming the solution a computed #include reached" {
    run make -s ARCH=sm_90 BUILD="$BATS_FILE_TMPDIR/build" BINDIR="$BATS_TEST_TMPDIR" ex01 \
        EX_SRCS="$REDTEAM/rewrite-macro-include/ex01_default_stream.cu"
    assert_failure
    assert_output --partial "ex01_default_stream.cu includes solutions/ex01_default_stream.cu, outside its own folder"
    [ ! -e "$BATS_TEST_TMPDIR/ex01" ] || fail "it was linked"
}

@test "a metric given twice (the student's code calling the program's grading_value) ends the run as wrong, naming it" {
    [ -x "$DRIVERS/twice" ] || fail "the test program did not build: $(tail -3 "$DRIVERS/twice.log")"
    run "$DRIVERS/twice"
    assert_failure 1
    assert_output --partial "the metric speedup was given twice"
}

@test "a submission looking for the token finds it in no environment, no other process and no stdin" {
    require_sandbox
    REDTEAM_CANARY=the-graders-own run attack read-environment
    assert_success
    # the environment is the sandbox's own: these names (PWD the stand-in's
    # shell sets), none of the grader's
    run bash -c "sed -n 's/^seen \([A-Z_]*\)=.*/\1/p' '$OUT/work/ex01/measure.stdout' |
        grep -vxE 'GRADER_EXERCISE|GRADER_PASS|HOME|LANG|PATH|PWD|TMPDIR|CUDA_VISIBLE_DEVICES|LD_LIBRARY_PATH'"
    assert_output ""
    run grep -c '^seen PATH=' "$OUT/work/ex01/measure.stdout"
    assert_output 1
    run grep -r the-graders-own "$OUT/work/ex01/measure.stdout"
    assert_failure
    # no process but its own sandbox's; the grader's pipe holds nothing for it
    run said
    refute_line --regexp "^open /proc/[0-9]+/fd/0: yes \([1-9]"
    refute_line --regexp "^open /dev/stdin: yes \([1-9]"
    run bash -c "grep -c '^open /proc/[0-9]*/environ' '$OUT/work/ex01/measure.stdout'"
    [ "$output" -le 4 ] || fail "it saw $output processes: the grader's among them?"
}

@test "a submission reads none of the solutions, rubrics, grader, tests, .git, reports or the files above its scratch folder" {
    require_sandbox
    run attack files-read-hidden
    assert_success
    run said
    assert_line "read solutions/ex01_default_stream.cu: no"
    assert_line "read grader/rubrics/ex01.ini: no"
    assert_line "read grader/grade.py: no"
    assert_line "read .git/HEAD: no"
    refute_line --partial ": yes"
}

@test "a submission writes only in its scratch folder, /tmp and /dev/shm, and nothing of those is there for the next run" {
    require_sandbox
    cp "$ROOT/exercises/given/ex01.h" "$BATS_TEST_TMPDIR/ex01.h.before"
    for run_no in 1 2; do
        rm -rf "$BATS_TEST_TMPDIR/out"
        run attack files-write-outside
        assert_success
        run said
        refute_line --partial "left from before"
        for p in exercises/given/ex01.h exercises/ex01_default_stream.cu grader/rubrics/ex01.ini \
            common/streamlab.h "$DRIVERS/files-write-outside/driver" \
            "$DRIVERS/files-write-outside/libstreamlab.a" "$DRIVERS/files-write-outside/../libstreamlab.a"; do
            assert_line "write $p: no"
        done
        assert_line "write /tmp/redteam-marker: yes"
        assert_line --regexp "^write /.*/redteam-marker: yes$"
    done
    cmp "$ROOT/exercises/given/ex01.h" "$BATS_TEST_TMPDIR/ex01.h.before"
    [ ! -e "$DRIVERS/libstreamlab.a" ] && [ ! -e /tmp/redteam-marker ] && [ ! -e /dev/shm/redteam-marker ] ||
        fail "a write got out"
}

@test "a daemon that holds the pipes and ignores SIGTERM neither outlives the run nor holds the grader" {
    require_sandbox
    rm -f /tmp/redteam-daemon
    SECONDS=0
    run attack process-daemon
    assert_success
    took=$SECONDS
    [ "$took" -lt 8 ] || fail "the grader waited $took s: its pipes were held"
    refute_output --partial '"status": "error"' # processes still there after it ended
    run said
    assert_line --regexp "^daemon pid [0-9]+$"
    refute_line "the daemon is still here"
    sleep 4 # past the daemon's 3 s: nothing writes or prints later
    [ ! -e /tmp/redteam-daemon ] || fail "the daemon wrote /tmp/redteam-daemon"
    run pgrep -f "$DRIVERS/process-daemon/driver"
    assert_failure
}

@test "a fork bomb is stopped at the sandbox's process limit, and none of its processes is left" {
    require_sandbox
    run attack process-fork-bomb
    assert_success
    run row process-fork-bomb ex01 "$OUT/grades.csv"
    assert_output "0/16,over_limit,stopped: it started more than 256 processes and threads (the sandbox's limit)"
    sleep 1
    run pgrep -f "$DRIVERS/process-fork-bomb/driver"
    assert_failure
}

@test "escapes, bidi overrides, invalid UTF-8, XML and 32 MiB of output reach the reports as one short printable line" {
    require_recorded grading/solutions/outcomes
    require_sandbox
    run attack report-hostile-text
    assert_success
    run row report-hostile-text ex01 "$OUT/grades.csv"
    assert_output --regexp "^0/16,error,stopped with exit 1: .*CUDA error .*cudaErrorFake"
    run python3 - "$OUT" <<'PY'
import csv, sys, unicodedata, xml.etree.ElementTree as ET
out = sys.argv[1]
ET.parse(f"{out}/junit.xml")                       # valid XML
rows = list(csv.DictReader(open(f"{out}/grades.csv", encoding="utf-8")))
assert len(rows) == 1, rows
for path in ("grades.csv", "report.txt", "junit.xml"):
    text = open(f"{out}/{path}", encoding="utf-8").read()   # valid UTF-8
    bad = [c for c in text if c not in "\n" and (unicodedata.category(c) == "Cc"
                                                 or c in "\u202e\u202c")]
    assert not bad, (path, bad[:5])
    assert "60/60" not in text and "cudaErrorFake\x1b" not in text, path
print("clean")
PY
    assert_output "clean"
    size=$(stat -c %s "$OUT/work/ex01/measure.stdout")
    # the sandbox's 256 KiB tail, its few invalid bytes written as U+FFFD (3 bytes each)
    [ "$size" -le $((256 * 1024 + 64)) ] || fail "the grader kept $size bytes of its output"
}

# ---- outside physics (rubric.py's outside_physics, rubrics' model_limit) ----

# recorded CLASS: a class of recorded outcomes, the solutions' with a metric changed.
recorded() {
    local student=$1 ex=$2 metric=$3 value=$4
    mkdir -p "$BATS_TEST_TMPDIR/rec/$student/outcomes"
    python3 - "$RECORDED/solutions/outcomes/$ex.json" "$BATS_TEST_TMPDIR/rec/$student/outcomes/$ex.json" \
        "$student" "$metric" "$value" <<'PY'
import json, sys
src, dst, student, metric, value = sys.argv[1:]
o = json.load(open(src))
o["student"] = student
o["measure"]["metrics"][metric] = float(value)
json.dump(o, open(dst, "w"))
PY
}
RECORDED="$ROOT/tests/fixtures/grading"

@test "a result beyond the model's bound by more than its tolerance is flagged in every report, and its criterion not awarded" {
    require_recorded grading/solutions/outcomes
    recorded too-fast ex01 speedup_vs_blocking 2.9
    recorded too-efficient ex04 efficiency 1.4
    recorded within ex01 speedup_vs_blocking 2.15
    recorded within ex04 efficiency 1.12
    run grade --rescore "$BATS_TEST_TMPDIR/rec" --format gradescope
    assert_success
    csv="$BATS_TEST_TMPDIR/rec/grades.csv"
    run row too-fast ex01 "$csv"
    assert_output "4/16,flagged,kernels_overlap: speedup_vs_blocking 2.9 is beyond what the model allows (<= 2.2, its tolerance included): flagged for the instructor, not awarded"
    run row too-efficient ex04 "$csv"
    # 5 of 16: level one's correctness 3 and level two's 2, no timing trusted at either level
    assert_output --regexp "^5/16,flagged,efficient: efficiency 1.4 is beyond what the model allows \(<= 1.15"
    # and no other timing of that run is trusted: overlaps is not awarded either
    run python3 -c "import json; r = json.load(open('$BATS_TEST_TMPDIR/rec/too-efficient/results.json'))
print([t['output'] for t in r['tests'] if 'overlaps' in t['name']][0])"
    assert_output "not scored: efficient lies beyond what the model allows, so no timing of this run is trusted"
    # inside the tolerance: an honest run's spread, scored as usual
    run row within ex01 "$csv"
    assert_output --regexp "^16/16,passed,"
    run row within ex04 "$csv"
    assert_output --regexp "^16/16,passed,"
    run grep -c "flagged for the instructor" "$BATS_TEST_TMPDIR/rec/report.txt"
    assert_output 2
    grep -q "flagged for the instructor" "$BATS_TEST_TMPDIR/rec/junit.xml" || fail "not in junit.xml"
    grep -q "flagged for the instructor" "$BATS_TEST_TMPDIR/rec/too-fast/results.json" ||
        fail "not in the student's results.json"
}

@test "the points preview flags the same value, and a model_limit inside the criterion's bound is a rubric error" {
    require_recorded grading/solutions/outcomes
    make -s build/tests/preview_test
    run build/tests/preview_test grader/rubrics/ex01.ini launches_wrong=0 speedup_vs_blocking=2.9
    assert_success
    assert_line --partial "kernels_overlap 0 flagged: speedup_vs_blocking 2.9 is beyond what the model allows"
    sed 's/^model_limit = 2.2$/model_limit = 1.5/' grader/rubrics/ex01.ini >"$BATS_TEST_TMPDIR/ex01.ini"
    run --separate-stderr build/tests/preview_test "$BATS_TEST_TMPDIR/ex01.ini"
    assert_failure 1
    [[ "$stderr" == *"[kernels_overlap] model_limit = 1.5: must lie past the criterion's bound (1.8)"* ]] ||
        fail "stderr: $stderr"
    mkdir -p "$BATS_TEST_TMPDIR/rubrics"
    cp grader/rubrics/*.ini "$BATS_TEST_TMPDIR/rubrics/"
    cp "$BATS_TEST_TMPDIR/ex01.ini" "$BATS_TEST_TMPDIR/rubrics/ex01.ini"
    run --separate-stderr grade --rescore "$RECORDED" --out "$BATS_TEST_TMPDIR/o" --rubrics "$BATS_TEST_TMPDIR/rubrics"
    assert_failure 2
    [[ "$stderr" == *"ex01.ini [kernels_overlap] model_limit = 1.5: must lie past"* ]] || fail "stderr: $stderr"
}

@test "hostile text already in a recorded outcome is made printable by the reports themselves" {
    require_recorded grading/solutions/outcomes
    mkdir -p "$BATS_TEST_TMPDIR/rec/x/outcomes"
    python3 - "$RECORDED/solutions/outcomes/ex01.json" "$BATS_TEST_TMPDIR/rec/x/outcomes/ex01.json" <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
hostile = "\x1b[2J\u202eboom\u202c </failure><![CDATA[\x00\x07\ud800 \"a\",b\r\nnext"
o["student"] = "eve" + hostile
o["measure"] = {"status": "error", "detail": "stopped with exit 1: " + hostile * 40,
                "seconds": 1, "metrics": {"device": "GPU" + hostile}}
o["check"] = None
json.dump(o, open(sys.argv[2], "w"))
PY
    run grade --rescore "$BATS_TEST_TMPDIR/rec" --format gradescope
    assert_success
    run python3 - "$BATS_TEST_TMPDIR/rec" <<'PY'
import csv, json, sys, unicodedata, xml.etree.ElementTree as ET
out = sys.argv[1]
ET.parse(f"{out}/junit.xml")
rows = list(csv.DictReader(open(f"{out}/grades.csv", encoding="utf-8")))
assert len(rows) == 1 and len(rows[0]["reason"]) <= 1200, rows
for path in ("grades.csv", "report.txt", "junit.xml", "results.json"):
    text = open(f"{out}/{path}", encoding="utf-8").read()
    if path == "results.json":
        text = json.dumps(json.loads(text), ensure_ascii=False)
    bad = [c for c in text if c != "\n" and (unicodedata.category(c) in ("Cc", "Cs")
                                             or c in "\u202e\u202c")]
    assert not bad, (path, bad[:5])
print(rows[0]["status"], rows[0]["points"])
PY
    assert_success
    assert_output "error 0"
}

@test "a result line printed twice with this run's token is flagged for the instructor, not scored" {
    require_sandbox
    twice='read -r n; for i in 1 2; do printf "{\"exercise\": \"ex01\", \"pass\": \"%s\", \"nonce\": \"%s\", \"launches_wrong\": 0, \"speedup_vs_blocking\": 1.95}\n" "$GRADER_PASS" "$n"; done'
    run grade --submission exercises --only ex01 --no-reference --no-memcheck --out "$OUT" \
        --fake-harness "$twice"
    assert_success
    run row exercises ex01 "$OUT/grades.csv"
    assert_output "0/16,flagged,the grader's token appeared 2 times in the output, where the program prints it once: the student's code printed a result line of its own; flagged for the instructor, not scored"
}
