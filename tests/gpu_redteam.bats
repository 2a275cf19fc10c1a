#!/usr/bin/env bats
# The red-team fixtures (tests/fixtures/redteam/, README.md there) graded on a
# real GPU, as one class with the reference solutions: each scores what a fair
# grader gives it, and nothing one of them does changes a file outside its
# scratch folder or survives its run. Tests named "KNOWN FAILURE" hold the
# grader to the fair score where, as the README says, it gives more today.
# One grading run (setup_file, without compute-sanitizer) serves every test.

load test_helper
load grade_helper

ALL="$BATS_FILE_TMPDIR/all"

setup_file() {
    "$TOOLS/gpu_probe" >/dev/null 2>&1 || return 0 # each test skips, with the reason
    [ -d "$ROOT/tests/fixtures/redteam" ] || return 0
    local class="$BATS_FILE_TMPDIR/class" d
    mkdir -p "$class"
    for d in "$ROOT"/tests/fixtures/redteam/*/; do
        ln -s "$d" "$class/$(basename "$d")"
    done
    rm -f /tmp/redteam-marker /tmp/redteam-daemon /dev/shm/redteam-marker
    git -C "$ROOT" status --porcelain --ignored=no >"$BATS_FILE_TMPDIR/status.before"
    python3 grader/grade.py --submissions "$class" --no-memcheck --out "$ALL" >"$ALL.txt" 2>&1
    echo $? >"$ALL.rc"
    git -C "$ROOT" status --porcelain --ignored=no >"$BATS_FILE_TMPDIR/status.after"
}

setup() {
    require_gpu
    [ -d "$ROOT/tests/fixtures/redteam" ] || skip "tests/fixtures/redteam/ withheld (it holds solved level-one code: exercises/README.md, \"Handing out the exercises\")"
    [ "$(cat "$ALL.rc")" = 0 ] || fail "grade.py exited $(cat "$ALL.rc"): $(tail -5 "$ALL.txt")"
}

# expect: lines "STUDENT EXERCISE POINTS/MAX,STATUS-REGEX" on stdin, each row held to it.
expect() {
    local student ex want
    while read -r student ex want; do
        run row "$student" "$ex" "$ALL/grades.csv"
        [[ "$output" =~ ^${want}, ]] || fail "$student $ex: $output (a fair grader: $want)"
    done
}

@test "the grading run held the reference solutions to full marks" {
    run grep -c "note: the reference solution scored" "$ALL/report.txt"
    assert_output 0
}

@test "reading what the harness knows: the environment, other processes and stdin hold nothing to use" {
    expect <<'EOF'
read-environment ex01 12/16,partial
EOF
    run grep -E '^open /proc/[0-9]+/fd/0: yes \([1-9]' "$ALL/read-environment/work/ex01/measure.stdout"
    assert_failure
}

@test "KNOWN FAILURE: a forged result line with the token read from the program's memory earns nothing" {
    expect <<'EOF'
read-nonce-memory ex01 0/16,(error|failed)
EOF
}

@test "a duration read from the given program's static data, not timed, earns only the launches" {
    expect <<'EOF'
read-static-state ex03 4/16,partial
EOF
}

@test "rewriting the harness: every build-time attack is a build error, the run-time one an error" {
    expect <<'EOF'
rewrite-macro-include ex01 0/16,build_error
rewrite-weak-symbol ex01 0/16,build_error
rewrite-asm-label ex01 0/16,build_error
rewrite-cuda-runtime ex03 0/16,build_error
rewrite-constructor-priority ex01 0/16,build_error
rewrite-destructor ex01 0/16,build_error
rewrite-global-object ex01 0/16,build_error
rewrite-atexit ex01 0/16,error
give-metric-twice ex01 0/16,error
EOF
    run row give-metric-twice ex01 "$ALL/grades.csv"
    assert_output --partial "the metric level2_speedup_vs_per_thread was given twice"
}

@test "reaching files: nothing hidden is read, nothing outside scratch written, nothing left for the next run" {
    expect <<'EOF'
files-read-hidden ex01 12/16,partial
files-write-outside ex01 4/16,partial
EOF
    run grep -h '^read .*: yes' "$ALL/files-read-hidden/work/ex01/measure.stdout"
    assert_output ""
    for pass in measure check; do
        run grep -h -e '^write' -e 'left from before' "$ALL/files-write-outside/work/ex01/$pass.stdout"
        refute_line --partial "left from before"
        refute_line --regexp "^write (exercises|grader|common|/.*_build|/.*work/ex01).*: yes"
    done
    [ ! -e /tmp/redteam-marker ] && [ ! -e /dev/shm/redteam-marker ] || fail "a marker got out"
    diff "$BATS_FILE_TMPDIR/status.before" "$BATS_FILE_TMPDIR/status.after" ||
        fail "the grading run changed the project's files"
}

@test "leaving processes behind: a daemon is gone with its run, and the work is scored" {
    expect <<'EOF'
process-daemon ex01 12/16,partial
process-fork-bomb ex01 0/16,over_limit
EOF
    [ ! -e /tmp/redteam-daemon ] || fail "the daemon wrote /tmp/redteam-daemon"
    run pgrep -f "$ALL/"
    assert_failure
    run grep -h "the daemon is still here" "$ALL/process-daemon/work/ex01/measure.stdout"
    assert_failure
}

@test "breaking reports: hostile output is one printable line in every report" {
    expect <<'EOF'
report-hostile-text ex01 0/16,error
EOF
    run python3 tests/fixtures/grading/check_outputs.py junit "$ALL/junit.xml"
    assert_success
    ! grep -q $'\x1b' "$ALL/grades.csv" "$ALL/report.txt" "$ALL/junit.xml" || fail "an escape got through"
}

@test "caching and skipping work: replayed, skipped or collapsed work earns only what it did" {
    expect <<'EOF'
cache-replay ex04 2/16,partial
skip-kernel ex04 2/16,partial
return-early ex06 1/16,partial
collapse-one-stream ex01 4/16,partial
EOF
}

@test "sabotaging the baseline: a spinner slowing the serial runs earns nothing for a serial pipeline" {
    expect <<'EOF'
baseline-spin-gpu ex04 (5/16,(partial|flagged)|0/16,(timed_out|crashed|error))
EOF
}

@test "hiding a race: correct only under the usual timing fails when the producer is slower" {
    expect <<'EOF'
race-host-sleep ex06 1/16,partial
race-gpu-delay ex06 1/16,partial
EOF
}
