#!/usr/bin/env bats
# A second level per exercise (issue #21), without a GPU: a rubric whose
# criteria say `level = 2` scored from recorded runs (tests/fixtures/levels/,
# whose README gives each case's points), each level apart; `levels = 1`
# giving the points of a rubric that never had a second level; the level
# lines, columns and names in every report; and ./exNN's points preview
# (exercises/given/rubric.c) held to grader/rubric.py on the same rubric.

load test_helper
load grade_helper

LEVELS="$ROOT/tests/fixtures/levels"

# rescore [ARGS...]: the recorded runs of a second level, scored into $BATS_TEST_TMPDIR/out.
rescore() {
    grade --rescore "$LEVELS" --rubrics "$LEVELS/rubrics" --out "$BATS_TEST_TMPDIR/out" "$@"
}

# level2 STUDENT: the two level-2 columns of that student's row of grades.csv.
level2() {
    python3 - "$BATS_TEST_TMPDIR/out/grades.csv" "$1" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8")):
    if r["student"] == sys.argv[2]:
        print(f"{r['level2_points']}/{r['level2_max']}")
PY
}

# table STUDENT: that student's part of the table (report.txt), without its first line.
table() {
    awk -v who="$1: " 'index($0, who) == 1 { on = 1; next } on && /^$/ { exit } on' \
        "$BATS_TEST_TMPDIR/out/report.txt"
}

# rubric_copy NAME PYTHON: the fixture's rubric copied to $BATS_TEST_TMPDIR/NAME/ex04.ini,
# then changed by the Python code (text: the file's text, to change in place).
rubric_copy() {
    mkdir -p "$BATS_TEST_TMPDIR/$1"
    python3 - "$LEVELS/rubrics/ex04.ini" "$BATS_TEST_TMPDIR/$1/ex04.ini" "$2" <<'PY'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
exec(sys.argv[3])
open(sys.argv[2], "w", encoding="utf-8").write(text)
PY
}

@test "each level is scored apart, and the exercise's points stay the total of both" {
    run rescore
    assert_success
    assert_output --partial "both: 16/16 points"
    assert_output --partial "level1-only: 12/16 points"
    run row both ex04
    assert_output --regexp "^16/16,passed,"
    run level2 both
    assert_output "6/6"
    run row level1-only ex04
    assert_output "12/16,partial,level2_efficient: level2_efficiency 0.741, needs >= 0.9"
    run level2 level1-only
    assert_output "2/6"
}

@test "a wrong level-2 result costs no level-1 point, and earns no level-2 concept point" {
    rescore >/dev/null
    run row wrong2 ex04
    assert_output "10/16,partial,level2_outputs: level2_mismatches 4096, needs <= 0 [checked under compute-sanitizer memcheck]; the level-2 concept criteria were not scored (a fast wrong answer earns nothing)"
    run level2 wrong2
    assert_output "0/6"
    run table wrong2
    assert_line --index 1 "      level 1   10/10  passed"
    assert_line --index 5 "      level 2     0/6  failed"
}

@test "a wrong level-1 result leaves both levels' concept criteria unscored, not level two's correctness" {
    rescore >/dev/null
    run row wrong1 ex04
    assert_output --regexp "^2/16,partial,outputs_verified: mismatches 512, .*; the concept criteria were not scored"
    run level2 wrong1
    assert_output "2/6"
    run table wrong1
    assert_line --index 1 "      level 1    0/10  failed"
    assert_line --index 5 "      level 2     2/6  partial"
    assert_line --index 6 --partial "[ok]     2/2  level2_outputs: level2_mismatches 0"
    assert_line --index 7 "        [FAIL]   0/4  level2_efficient: not scored: a level-1 correctness criterion failed, and a fast wrong answer earns nothing"
}

@test "a level-2 value beyond the model's limit leaves no timing of the run trusted, level one's included" {
    rescore >/dev/null
    run row flagged2 ex04
    assert_output --regexp "^5/16,flagged,level2_efficient: level2_efficiency 1.62 is beyond what the model allows"
    run table flagged2
    assert_line --index 1 "      level 1    3/10  partial"
    assert_line --index 3 "        [FAIL]   0/3  overlaps: not scored: level2_efficient lies beyond what the model allows, so no timing of this run is trusted"
    assert_line --index 5 "      level 2     2/6  flagged"
}

@test "a build error stops both levels, and the table says so under each" {
    rescore >/dev/null
    run row broken ex04
    assert_output --regexp '^0/16,build_error,build failed: '
    run table broken
    assert_line --index 1 "      level 1    0/10  build_error"
    assert_line --index 2 "      level 2     0/6  build_error"
    assert_line --index 3 --partial "        build failed: "
}

@test "grades.csv keeps its six columns first, then level2_points and level2_max" {
    rescore >/dev/null
    run head -1 "$BATS_TEST_TMPDIR/out/grades.csv"
    assert_output "student,exercise,points,max_points,status,reason,level2_points,level2_max"
    run grep "^both," "$BATS_TEST_TMPDIR/out/grades.csv"
    assert_output "both,ex04,16,16,passed,full marks [checked under compute-sanitizer memcheck],6,6"
}

@test "levels = 1 gives exactly the points and reports of the rubric without its level-2 criteria" {
    rubric_copy one 'text = text.replace("memcheck_time_limit_s = 180", "memcheck_time_limit_s = 180\nlevels = 1")'
    rubric_copy none 'text = text[:text.index("[level2_outputs]")]'
    rescore --rubrics "$BATS_TEST_TMPDIR/one" --out "$BATS_TEST_TMPDIR/one-out" >/dev/null
    rescore --rubrics "$BATS_TEST_TMPDIR/none" --out "$BATS_TEST_TMPDIR/none-out" >/dev/null
    for file in grades.csv grades-import.csv report.txt; do
        cmp "$BATS_TEST_TMPDIR/one-out/$file" "$BATS_TEST_TMPDIR/none-out/$file" || fail "$file differs"
    done
    run grep "^level1-only," "$BATS_TEST_TMPDIR/one-out/grades.csv"
    assert_output "level1-only,ex04,10,10,passed,full marks [checked under compute-sanitizer memcheck],,"
    run grep -c "level [12]" "$BATS_TEST_TMPDIR/one-out/report.txt" "$BATS_TEST_TMPDIR/one-out/junit.xml"
    assert_output --regexp ":0
.*:0$"
}

@test "junit.xml stays valid, and names each criterion with its level" {
    rescore >/dev/null
    run python3 tests/fixtures/grading/check_outputs.py junit "$BATS_TEST_TMPDIR/out/junit.xml"
    assert_success
    assert_output "both: 5 tests, 0 failures
broken: 5 tests, 5 failures
flagged2: 5 tests, 3 failures
level1-only: 5 tests, 1 failures
wrong1: 5 tests, 4 failures
wrong2: 5 tests, 2 failures"
    run grep -c 'name="ex04 level 2: level2_' "$BATS_TEST_TMPDIR/out/junit.xml"
    assert_output "12"
    run grep -c 'name="ex04 level 1: ' "$BATS_TEST_TMPDIR/out/junit.xml"
    assert_output "18"
}

@test "Gradescope's results.json names each test with its level and gives the levels' points apart" {
    rescore --format gradescope >/dev/null
    run python3 tests/fixtures/grading/check_outputs.py gradescope "$BATS_TEST_TMPDIR/out/wrong2/results.json"
    assert_success
    assert_output "10/16 7"
    run python3 - "$BATS_TEST_TMPDIR/out/wrong2/results.json" <<'PY'
import json, sys
result = json.load(open(sys.argv[1], encoding="utf-8"))
print(result["output"])
for t in result["tests"]:
    print(t["name"].split(":")[0], t["tags"], f"{t['score']:g}")
PY
    assert_output "10/16 points: ex04 10/16 partial (level 1 10/10 passed, level 2 0/6 failed)
ex04 level 1 ['correctness', 'level 1'] 3
ex04 level 1 ['concept', 'level 1'] 3
ex04 level 1 ['concept', 'level 1'] 4
ex04 level 2 ['correctness', 'level 2'] 0
ex04 level 2 ['concept', 'level 2'] 0"
}

@test "the points preview of ./exNN gives the grader's points and level subtotals on a rubric with a second level" {
    make -s build/tests/preview_test
    run python3 tests/tools/preview_check.py build/tests/preview_test "$LEVELS" "$LEVELS/rubrics"
    assert_success
    assert_output --regexp "^[0-9]+ sets of metrics: the same points$"
    rubric_copy one 'text = text.replace("memcheck_time_limit_s = 180", "memcheck_time_limit_s = 180\nlevels = 1")'
    run python3 tests/tools/preview_check.py build/tests/preview_test "$LEVELS" "$BATS_TEST_TMPDIR/one"
    assert_success
    run build/tests/preview_test "$BATS_TEST_TMPDIR/one/ex04.ini" mismatches=0 speedup=1.8 efficiency=0.95
    assert_output "outputs_verified 3 passed: mismatches 0, limit <= 0
overlaps 3 passed: speedup 1.8, limit >= 1.3
efficient 4 passed: efficiency 0.95, limit >= 0.85 (the model's threshold: no reference solution in this run)
total 10"
}

@test "a level that is not 1 or 2 stops the grader and the preview, naming the file, the section and the key" {
    make -s build/tests/preview_test
    check_level() { # PYTHON EXPECTED-MESSAGE
        rubric_copy bad "$1"
        run --separate-stderr rescore --rubrics "$BATS_TEST_TMPDIR/bad"
        assert_failure 2
        [[ "$stderr" == *"bad/ex04.ini $2"* ]] || fail "grade.py: $stderr"
        run --separate-stderr build/tests/preview_test "$BATS_TEST_TMPDIR/bad/ex04.ini"
        assert_failure 1
        [[ "$stderr" == *"bad/ex04.ini $2"* ]] || fail "preview_test: $stderr"
    }
    check_level 'text = text.replace("level = 2", "level = 3", 1)' "[level2_outputs] level = '3': must be 1 or 2"
    check_level 'text = text.replace("memcheck_time_limit_s = 180", "memcheck_time_limit_s = 180\nlevels = 0")' \
        "[exercise] levels = '0': must be 1 or 2"
}

@test "a size fixed in the code meets ex10's and ex11's model-size criteria in at most 30% of the jobs their programs draw" {
    # fixed_guess.py mirrors each given program's draw, its constants read
    # from the source; narrowed to the old draws it reports 86% and 67%
    run python3 tests/tools/fixed_guess.py "$ROOT"
    assert_success
    assert_line --regexp "^ex10: the best fixed answer, a threshold of [0-9]+ MiB, passes [0-9]+% of"
    assert_line --regexp "^ex11: the best fixed answer, [0-9]+ producers and [0-9]+ slots, passes [0-9]+% of"
    sed 's/LEVEL2_K_HI = [0-9]*/LEVEL2_K_HI = 4/' exercises/given/ex11.cu > "$BATS_TEST_TMPDIR/ex11.cu"
    mkdir -p "$BATS_TEST_TMPDIR/narrow/exercises/given"
    cp exercises/given/ex10.cu "$BATS_TEST_TMPDIR/narrow/exercises/given/"
    mv "$BATS_TEST_TMPDIR/ex11.cu" "$BATS_TEST_TMPDIR/narrow/exercises/given/"
    run python3 tests/tools/fixed_guess.py "$BATS_TEST_TMPDIR/narrow"
    assert_failure 1
    assert_line --regexp "^ex11: .* passes 6[0-9]% of"
}
