#!/usr/bin/env bats
# Grading a class without a GPU: broken student folders and odd names
# (each its own small class), shards and their merge, one worker per GPU,
# the throughput record, the gradebook's import file and Gradescope's
# scripts on a runner without a GPU. The stand-in harness
# (tests/fixtures/grading/fake-harness.sh) takes the GPU's place; it runs in
# the grader's sandbox, and the tests that grade skip where none can be made.

load test_helper
load grade_helper

CLASS="$BATS_TEST_TMPDIR/class"

# student NAME [FILE...]: a folder for NAME in the class holding each FILE
# (a path inside it), each a copy of ex01's exercise; by default one file
# with the name as handed out.
student() {
    local dir="$CLASS/$1" file
    shift
    mkdir -p "$dir"
    for file in "${@:-ex01_default_stream.cu}"; do
        mkdir -p "$(dirname "$dir/$file")"
        cp exercises/ex01_default_stream.cu "$dir/$file"
    done
}

# grade_class [ARGS...]: grade-all of the class, ex01 only, with the stand-in,
# into $BATS_TEST_TMPDIR/out (ARGS after the defaults, so --out can change).
grade_class() {
    grade --submissions "$CLASS" --only ex01 --no-reference --no-memcheck \
        --out "$BATS_TEST_TMPDIR/out" --fake-harness "$STAND_IN_EX01" "$@"
}

# a class of seven, broken and odd folders included, for shards and merges
seven() {
    student ann
    student bob ex01_default_stream.cu ex01_copy.cu
    student carol submission/ex01_default_stream.cu
    mkdir -p "$CLASS/dan"
    student "o'brien"
    student 'm$x'
    student zoë
}

# seven_in_shards: the class of seven graded whole into $BATS_TEST_TMPDIR/out,
# and as three shards into $BATS_TEST_TMPDIR/shard-1 ... shard-3
seven_in_shards() {
    seven
    grade_class >/dev/null 2>&1
    for i in 1 2 3; do
        grade_class --shard "$i/3" --out "$BATS_TEST_TMPDIR/shard-$i" >/dev/null 2>&1
    done
}

@test "two files for one exercise are that student's row, and the class goes on" {
    require_sandbox
    student ann
    student bob ex01_default_stream.cu ex01_copy.cu
    run grade_class
    assert_success
    run row bob ex01
    assert_output "0/16,duplicate_files,two files for ex01: ex01_copy.cu, ex01_default_stream.cu; keep one"
    run row ann ex01
    assert_output "16/16,passed,full marks [memcheck off]"
}

@test "files one level down, as a course site's zip unpacks, are graded where they are" {
    require_sandbox
    student carol submission/ex01_default_stream.cu
    mkdir -p "$CLASS/carol/__MACOSX/submission"
    student dave hw1/submission/ex01_default_stream.cu
    grade_class >/dev/null
    run row carol ex01
    assert_output "16/16,passed,full marks [memcheck off]"
    run row dave ex01
    assert_output "16/16,passed,full marks [memcheck off]"
    run cat "$BATS_TEST_TMPDIR/out/carol/outcomes/ex01.json"
    assert_output --partial '"source": "submission/ex01_default_stream.cu"'
}

@test "an empty folder is that student's row: nothing was submitted" {
    require_sandbox
    student ann
    mkdir -p "$CLASS/bob"
    grade_class >/dev/null
    run row bob ex01
    assert_output "0/16,empty_folder,the folder is empty: nothing was submitted"
}

@test "a folder with no exercise file says what it holds" {
    require_sandbox
    student ann
    mkdir -p "$CLASS/bob"
    touch "$CLASS/bob/homework.zip" "$CLASS/bob/main.cu"
    grade_class >/dev/null
    run row bob ex01
    assert_output "0/16,no_exercise_files,no exercise file (exNN_*.cu) in the folder; it holds homework.zip, main.cu"
}

@test "a link in place of a file, a file that cannot be read or a name that is not UTF-8 is that exercise's row" {
    require_sandbox
    mkdir -p "$CLASS/eve" "$CLASS/fay"
    ln -s /etc/passwd "$CLASS/eve/ex01_default_stream.cu"
    mkdir "$CLASS/fay/ex01_default_stream.cu"
    grade_class >/dev/null
    run row eve ex01
    assert_output "0/16,unreadable,ex01_default_stream.cu is a symbolic link: submit the file itself"
    run row fay ex01
    assert_output "0/16,unreadable,ex01_default_stream.cu is not a file"
    student hal "ex01_$(printf '\377').cu"
    grade_class >/dev/null
    run row hal ex01
    assert_output "0/16,unreadable,ex01_$(printf '\357\277\275').cu: the file's name is not UTF-8; rename it"
    if [ "$(id -u)" != 0 ]; then # root reads whatever the mode says
        student gil
        chmod 000 "$CLASS/gil/ex01_default_stream.cu"
        grade_class >/dev/null
        run row gil ex01
        assert_output "0/16,unreadable,cannot read ex01_default_stream.cu: Permission denied"
    fi
}

@test "names with quotes, \$, spaces, non-ASCII or control characters are graded, and escaped in every report" {
    require_sandbox
    for name in "o'brien" 'm$x' 'ann lee' 'say "hi"' zoë 'a,b' "$(printf 'ctl\001x')"; do
        student "$name"
    done
    run grade_class --format gradescope
    assert_success
    for name in "o'brien" 'm$x' 'ann lee' 'say "hi"' zoë 'a,b' 'ctl\x01x'; do
        run row "$name" ex01
        assert_output "16/16,passed,full marks [memcheck off]"
    done
    run python3 tests/fixtures/grading/check_outputs.py junit "$BATS_TEST_TMPDIR/out/junit.xml"
    assert_success
    assert_line 'say "hi": 4 tests, 0 failures'
    assert_line 'ctl\x01x: 4 tests, 0 failures'
    # the outputs' folders hold no student text a shell or nvcc could misread
    run ls "$BATS_TEST_TMPDIR/out"
    refute_output --regexp "['\"\$\`\\\\]"
    for results in "$BATS_TEST_TMPDIR"/out/*/results.json; do
        python3 tests/fixtures/grading/check_outputs.py gradescope "$results" >/dev/null ||
            fail "$results is not Gradescope's results.json"
    done
}

@test "students with quotes and \$ in their names build with nvcc, in a class folder with a quote and spaces" {
    require_sandbox
    command -v nvcc >/dev/null || skip "no nvcc here"
    one_arch
    export BUILD="$BATS_TEST_TMPDIR/build" # ARCH must not reach make's stamps in build/
    CLASS="$BATS_TEST_TMPDIR/it's our class"
    student "o'brien"
    student 'm$x'
    run --separate-stderr make -s grade-all SUBMISSIONS="$CLASS" ONLY=ex01 MEMCHECK=no \
        GRADE_OUT="$BATS_TEST_TMPDIR/out"
    if ! "$TOOLS/gpu_probe" >/dev/null 2>&1; then # no GPU: builds only, and says so
        assert_failure # make's 2, for grade.py's 3
        [[ "$stderr" == *"grade: no GPU is usable here"* ]] || fail "stderr: $stderr"
        assert_line "o'brien ex01: builds: yes"
        assert_line 'm$x ex01: builds: yes'
        return
    fi
    for name in "o'brien" 'm$x'; do
        run row "$name" ex01
        refute_output --partial "build_error"
        assert_output --regexp "^[0-9]+/10,"
    done
}

@test "a file name with a quote or a backslash builds, and the compiler's messages keep the name" {
    require_sandbox
    command -v nvcc >/dev/null || skip "no nvcc here"
    one_arch
    student ann 'ex01_a"b\c.cu'
    echo 'static int broken = not_declared;' >>"$CLASS/ann/ex01_a\"b\\c.cu"
    run --separate-stderr grade --submissions "$CLASS" --only ex01 --no-reference --no-memcheck \
        --out "$BATS_TEST_TMPDIR/out" \
        --fake-gpu-probe 'echo "gpu_probe: cannot run here: no GPU in this test" >&2; exit 3'
    assert_failure 3
    assert_output --regexp '^ann ex01: builds: no \(ex01_a"b\\c\.cu\([0-9]+\): error: identifier "not_declared" is undefined\)$'
}

@test "--shard I/N grades every N-th student from the I-th, the same slices wherever it runs" {
    require_sandbox
    seven_in_shards
    run from_json "$BATS_TEST_TMPDIR/shard-1/run.json" "d['students'], d['shard']"
    assert_output "['ann', 'dan', 'zoë'] {'index': 1, 'count': 3}"
    run from_json "$BATS_TEST_TMPDIR/shard-2/run.json" "d['students']"
    assert_output "['bob', 'm\$x']"
    run from_json "$BATS_TEST_TMPDIR/shard-3/run.json" "d['students']"
    assert_output "['carol', \"o'brien\"]"
    # more shards than students: the last ones grade no one, and say so
    run grade_class --shard 9/9 --out "$BATS_TEST_TMPDIR/shard-9"
    assert_success
    run from_json "$BATS_TEST_TMPDIR/shard-9/run.json" "d['students'], len(d['class']['students'])"
    assert_output "[] 7"
}

@test "the merged reports of N shards equal an unsharded run's" {
    require_sandbox
    seven_in_shards
    run grade --merge "$BATS_TEST_TMPDIR"/shard-{3,1,2} --out "$BATS_TEST_TMPDIR/merged"
    assert_success
    for file in grades.csv grades-import.csv; do
        cmp "$BATS_TEST_TMPDIR/out/$file" "$BATS_TEST_TMPDIR/merged/$file" || fail "$file differs"
    done
    diff <(python3 tests/fixtures/grading/check_outputs.py junit "$BATS_TEST_TMPDIR/out/junit.xml") \
        <(python3 tests/fixtures/grading/check_outputs.py junit "$BATS_TEST_TMPDIR/merged/junit.xml") ||
        fail "junit.xml differs"
    run make -s grade-merge SHARDS="$(echo "$BATS_TEST_TMPDIR"/shard-{1,2,3})" GRADE_OUT="$BATS_TEST_TMPDIR/made"
    assert_success
    cmp "$BATS_TEST_TMPDIR/out/grades.csv" "$BATS_TEST_TMPDIR/made/grades.csv"
}

@test "a merge refuses shards that are missing, given twice or of another run, naming them" {
    require_sandbox
    seven_in_shards
    merged() { run --separate-stderr grade --merge "$@" --out "$BATS_TEST_TMPDIR/merged"; }
    merged "$BATS_TEST_TMPDIR"/shard-{1,2}
    assert_failure 2
    assert_equal "$stderr" "grade: --merge: shard 3/3 not given; 2 students not graded: carol, o'brien"
    merged "$BATS_TEST_TMPDIR"/shard-{1,2,2}
    assert_failure 2
    assert_equal "$stderr" "grade: --merge: $BATS_TEST_TMPDIR/shard-2 and $BATS_TEST_TMPDIR/shard-2 are both shard 2/3"
    merged "$BATS_TEST_TMPDIR"/shard-{1,2,3} "$BATS_TEST_TMPDIR/out"
    assert_failure 2
    assert_equal "$stderr" "grade: --merge: $BATS_TEST_TMPDIR/out is shard 1/1 of a class of 7, $BATS_TEST_TMPDIR/shard-1 shard 1/3 of a class of 7: not one grading run's shards"
    rm "$BATS_TEST_TMPDIR/shard-3/run.json"
    merged "$BATS_TEST_TMPDIR"/shard-{1,2,3}
    assert_failure 2
    assert_equal "$stderr" "grade: --merge: $BATS_TEST_TMPDIR/shard-3: no run.json, so that grade-all did not finish (see its log), or this is not a grade-all output folder"
    [ ! -e "$BATS_TEST_TMPDIR/merged/grades.csv" ] || fail "a refused merge wrote grades.csv"
}

@test "with --gpus 2 each worker's passes see its own CUDA_VISIBLE_DEVICES, one at a time on each GPU" {
    require_sandbox
    for name in ann bob carol dan eve fay; do student "$name"; done
    # the stand-in prints when each pass starts and ends, on which GPU (the
    # grader keeps each pass's stdout in work/ex01/PASS.stdout; the sandbox
    # lets it write nowhere else that lasts)
    run grade_class --gpus 2 --fake-harness "echo \"\$CUDA_VISIBLE_DEVICES \$(date +%s.%N) start\"; sleep 0.2
echo \"\$CUDA_VISIBLE_DEVICES \$(date +%s.%N) end\"
tests/fixtures/grading/fake-harness.sh '$METRICS_EX01, \"visible\": \"'\$CUDA_VISIBLE_DEVICES'\"'"
    assert_success
    assert_output --partial "on 2 GPUs (0, 1)"
    python3 - "$BATS_TEST_TMPDIR/out" <<'PY' || fail "the workers' passes did not keep to their GPUs"
import json, pathlib, sys
events = [line.split() for path in pathlib.Path(sys.argv[1]).glob("*/work/ex01/*.stdout")
          for line in path.read_text().splitlines() if line.endswith(("start", "end"))]
for gpu in ("0", "1"):   # on each GPU, every pass ends before the next starts
    kinds = [kind for g, _, kind in sorted((e for e in events if e[0] == gpu), key=lambda e: float(e[1]))]
    assert kinds and kinds == ["start", "end"] * (len(kinds) // 2), (gpu, kinds)
used = set()
for path in pathlib.Path(sys.argv[1]).glob("*/outcomes/ex01.json"):
    outcome = json.loads(path.read_text())
    for name in ("measure", "check"):
        if outcome[name]:   # the pass ran with the worker's GPU, and the outcome says which
            assert outcome[name]["metrics"]["visible"] == outcome["gpu"], outcome
    used.add(outcome["gpu"])
assert used == {"0", "1"}, used
PY
}

@test "the reference solution is measured on each worker's GPU, and each student held to the one on its own" {
    require_sandbox
    for name in ann bob carol dan; do student "$name" ex04_double_buffering.cu; done
    mkdir -p "$BATS_TEST_TMPDIR/solutions"
    cp exercises/ex04_double_buffering.cu "$BATS_TEST_TMPDIR/solutions/"
    # GPU 1 is half as efficient as GPU 0: only its own reference passes its students
    run grade --submissions "$CLASS" --only ex04 --no-memcheck --gpus 2 --out "$BATS_TEST_TMPDIR/out" \
        --solutions "$BATS_TEST_TMPDIR/solutions" --fake-harness 'sleep 0.1
[ "$CUDA_VISIBLE_DEVICES" = 0 ] && e=0.95 || e=0.5
tests/fixtures/grading/fake-harness.sh "\"mismatches\": 0, \"speedup\": 1.9, \"efficiency\": $e, \"level2_mismatches\": 0, \"level2_efficiency\": 0.95"'
    assert_success
    for k in 0 1; do
        run from_json "$BATS_TEST_TMPDIR/out/_reference/w$k/outcomes/ex04.json" "d['gpu'], d['measure']['metrics']['efficiency']"
        assert_output "$k $([ $k = 0 ] && echo 0.95 || echo 0.5)"
    done
    for name in ann bob carol dan; do   # both levels (level two's numbers the same on both GPUs)
        run row "$name" ex04
        assert_output --regexp "^16/16,passed,"
    done
    run grade --rescore "$BATS_TEST_TMPDIR/out" --out "$BATS_TEST_TMPDIR/again"
    run cut -d, -f1-5 "$BATS_TEST_TMPDIR/again/grades.csv"
    refute_output --partial ",partial"
}

# grade_two [ARGS...]: grade-all of the class, ex01 and ex13 (which needs two
# GPUs in one process), against the reference solutions in
# $BATS_TEST_TMPDIR/solutions, with a stand-in that prints each exercise's
# full-marks metrics and the CUDA_VISIBLE_DEVICES it ran with.
grade_two() {
    local harness
    harness=$(cat <<EOF
m='$METRICS_EX01'
[ "\$GRADER_EXERCISE" = ex13 ] && m='"mismatches": 0, "calls_wrong": 0, "speedup": 1.4, "level2_wrong": 0, "level2_of_best": 1.0, "level2_model_off": 0'
tests/fixtures/grading/fake-harness.sh "\$m, \"visible\": \"\$CUDA_VISIBLE_DEVICES\""
EOF
    )
    mkdir -p "$BATS_TEST_TMPDIR/solutions"
    cp exercises/ex01_default_stream.cu exercises/ex13_gradient_overlap.cu "$BATS_TEST_TMPDIR/solutions/"
    grade --submissions "$CLASS" --only ex01,ex13 --no-memcheck --out "$BATS_TEST_TMPDIR/out" \
        --solutions "$BATS_TEST_TMPDIR/solutions" --fake-harness "$harness" "$@"
}

@test "on two GPUs grade-all grades ex13 on a worker holding both, after ex01 on one-GPU workers; on one, ex13 is waived" {
    require_sandbox
    for name in ann bob carol; do student "$name" ex01_default_stream.cu ex13_gradient_overlap.cu; done
    CUDA_VISIBLE_DEVICES=0,1 run grade_two
    assert_success
    assert_output --partial "grade: ex13 on 1 worker of 2 GPUs: 0,1"
    # one phase after the other: no GPU is in two workers at once
    last=$(grep -n ', ex01$' <<<"$output" | tail -1 | cut -d: -f1)
    first=$(grep -n ', ex13$' <<<"$output" | head -1 | cut -d: -f1)
    ((last < first)) || fail "ex13 began (line $first) before ex01 ended (line $last)"
    assert_output --partial "on 2 GPUs (0, 1)"
    for name in ann bob carol; do
        run row "$name" ex01
        assert_output "16/16,passed,full marks [memcheck off]"
        run row "$name" ex13
        assert_output "16/16,passed,full marks [memcheck off]"
    done
    # ex01 on workers 0 and 1, a GPU each; ex13 on worker 2, holding both; the
    # reference solution measured by each worker on its own GPUs, for its
    # exercises only; each pass ran with its worker's GPUs, as the table says
    python3 - "$BATS_TEST_TMPDIR/out" <<'PY' || fail "ex13 did not run on a worker of both GPUs"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
seen = set()
for path in out.glob("*/outcomes/*.json"):
    o = json.loads(path.read_text())
    for name in ("measure", "check"):
        assert o[name]["metrics"]["visible"] == o["gpu"], o
    seen.add((o["exercise"], o["worker"], o["gpu"]))
assert {(ex, w, g) for ex, w, g in seen if ex == "ex13"} == {("ex13", 2, "0,1")}, seen
assert {g for ex, _, g in seen if ex == "ex01"} <= {"0", "1"}, seen
reference = {w.name: sorted((json.loads(p.read_text())["exercise"], json.loads(p.read_text())["gpu"])
                            for p in w.glob("outcomes/*.json"))
             for w in (out / "_reference").iterdir()}
assert reference == {"w0": [("ex01", "0")], "w1": [("ex01", "1")], "w2": [("ex13", "0,1")]}, reference
run = json.loads((out / "run.json").read_text())
assert (run["gpus"], run["workers"]) == (["0", "1"], ["0", "1", "0,1"]), run
PY
    run grep -c "  ex13  .*  passed  \[worker 2, GPUs 0,1\]$" "$BATS_TEST_TMPDIR/out/report.txt"
    assert_output "3"
    run grep -c "  ex01  .*  passed  \[worker [01], GPU [01]\]$" "$BATS_TEST_TMPDIR/out/report.txt"
    assert_output "3"
    # one GPU: ex13 waived for everyone, in no total; ex01 graded as before
    CUDA_VISIBLE_DEVICES=0 run grade_two --out "$BATS_TEST_TMPDIR/one"
    assert_success
    refute_output --partial "of 2 GPUs:"
    for name in ann bob carol; do
        run row "$name" ex13 "$BATS_TEST_TMPDIR/one/grades.csv"
        assert_output --regexp "^0/0,waived,needs 2 GPUs in one process, and this worker has 1:"
        run row "$name" ex01 "$BATS_TEST_TMPDIR/one/grades.csv"
        assert_output "16/16,passed,full marks [memcheck off]"
    done
    [ -z "$(ls "$BATS_TEST_TMPDIR"/one/*/work/ex13/*.stdout 2>/dev/null)" ] || fail "the waived ex13 ran"
}

@test "on two GPUs, shards of a class with ex13 merge into the unsharded run's grades" {
    require_sandbox
    for name in ann bob carol; do student "$name" ex01_default_stream.cu ex13_gradient_overlap.cu; done
    export CUDA_VISIBLE_DEVICES=0,1
    grade_two >/dev/null 2>&1
    # shard 1/2 holds two students (ex13 on a worker of both GPUs), shard 2/2
    # one (its one worker holds both GPUs, for every exercise)
    for i in 1 2; do
        grade_two --shard "$i/2" --out "$BATS_TEST_TMPDIR/shard-$i" >/dev/null 2>&1
    done
    run from_json "$BATS_TEST_TMPDIR/shard-2/run.json" "d['students'], d['workers']"
    assert_output "['bob'] ['0,1']"
    run grade --merge "$BATS_TEST_TMPDIR"/shard-{1,2} --out "$BATS_TEST_TMPDIR/merged"
    assert_success
    cmp "$BATS_TEST_TMPDIR/out/grades.csv" "$BATS_TEST_TMPDIR/merged/grades.csv" || fail "grades.csv differs"
    run grep -c ",ex13,16,16,passed," "$BATS_TEST_TMPDIR/merged/grades.csv"
    assert_output "3"
    run grep -c "  ex13  .*\[worker [0-9] (shard [12]/2), GPUs 0,1\]$" "$BATS_TEST_TMPDIR/merged/report.txt"
    assert_output "3"
}

@test "--gpus counts the GPUs nvidia-smi lists or CUDA_VISIBLE_DEVICES names, and asks for no more" {
    require_sandbox
    student ann
    student bob
    mkdir -p "$BATS_TEST_TMPDIR/bin"
    printf '#!/bin/sh\necho "GPU 0: NVIDIA H200 (UUID: GPU-a)"\necho "GPU 1: NVIDIA H200 (UUID: GPU-b)"\n' \
        >"$BATS_TEST_TMPDIR/bin/nvidia-smi"
    chmod +x "$BATS_TEST_TMPDIR/bin/nvidia-smi"
    unset CUDA_VISIBLE_DEVICES
    export PATH="$BATS_TEST_TMPDIR/bin:$PATH"
    run grade_class
    assert_output --partial "on 2 GPUs (0, 1)"
    run --separate-stderr grade_class --gpus 3
    assert_failure 2
    assert_equal "$stderr" "grade: --gpus 3: this machine shows 2 GPUs (0, 1), and two workers on one GPU would disturb each other's timings"
    CUDA_VISIBLE_DEVICES=5,GPU-c run grade_class
    assert_output --partial "on 2 GPUs (5, GPU-c)"
}

@test "grade-all records its throughput in submissions per minute, and prints it" {
    require_sandbox
    for name in ann bob carol; do student "$name"; done
    run grade_class
    assert_output --regexp "grade: 3 submissions in [0-9.]+ min \(builds [0-9.]+ min\) on 1 worker \(no GPU listed\) of .*: [0-9.]+ submissions per minute"
    run from_json "$BATS_TEST_TMPDIR/out/run.json" "d['submissions'], d['submissions_per_minute'] > 0, d['seconds'] >= d['build_seconds']"
    assert_output "3 True True"
}

@test "grades-import.csv holds each student's total and the most they could score, for a gradebook" {
    require_sandbox
    student ann
    mkdir -p "$CLASS/bob"
    student 'lee, "jo"'
    grade_class --only ex01,ex02 >/dev/null
    run cat "$BATS_TEST_TMPDIR/out/grades-import.csv"
    assert_output 'student,total,max
ann,16,32
bob,0,32
"lee, ""jo""",16,32'
}

@test "Gradescope's scripts stop with one line and exit 3 on a runner without a GPU, and write no results" {
    require_no_gpu
    run --separate-stderr grader/gradescope/run_autograder
    assert_failure 3
    assert_equal "${#lines[@]}" 1
    assert_output --partial "no NVIDIA GPU (Gradescope's hosted autograders have none)"
    mkdir -p "$BATS_TEST_TMPDIR/empty"
    run --separate-stderr env PATH="$BATS_TEST_TMPDIR/empty" /bin/bash grader/gradescope/setup.sh
    assert_failure 3
    assert_equal "${#lines[@]}" 1
    assert_output --partial "no nvcc (the CUDA toolkit) in this image"
}
