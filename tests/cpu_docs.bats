#!/usr/bin/env bats
# The prose against the code: the numbers the handouts, exercise comments and
# rubrics quote (run counts, thresholds, targets) are the code's constants
# (tests/tools/doc_numbers.py lists each and where it is quoted); every link
# to the streams cheat sheet leads to it.

load test_helper

# Runs doc_numbers.py on a copy of what it reads, with one file changed by
# a sed expression; fails the test if the expression changed nothing.
check_changed() {
    local file=$1 expr=$2 tree="$BATS_TEST_TMPDIR/tree"
    mkdir -p "$tree"
    cp -r exercises labs grader "$tree"/
    sed -i "$expr" "$tree/$file"
    ! cmp -s "$file" "$tree/$file" || fail "sed '$expr' changed nothing in $file"
    run python3 tests/tools/doc_numbers.py "$tree"
}

@test "every number the docs quote of a constant is that constant" {
    run python3 tests/tools/doc_numbers.py
    assert_success
    assert_output --regexp "^[0-9]+ quotes of [0-9]+ constants checked, 0 wrong$"
}

@test "a run count changed in the code and not in the docs is caught, with the file and the text" {
    check_changed exercises/given/ex06.cu 's/\.reps = 20,/.reps = 25,/'
    assert_failure
    assert_output --partial 'labs/lab06_stream_races/README.md: ex06'"'"'s runs is 25 in exercises/given/ex06.cu, but this does not say "over 26 runs (the 25 timed runs"'
}

@test "a threshold changed in a handout and not in the code is caught" {
    check_changed labs/lab04_double_buffering/README.md 's/at least 90% of$/at least 85% of/'
    assert_failure
    assert_output --partial 'does not say "at least 90% of the ideal speedup"'
}

@test "a lab's verdict threshold changed in the code and not in its handout is caught" {
    check_changed labs/lab12_cuda_graphs/lab12.cu 's/"graph_beats_stream_launches", 2.0,/"graph_beats_stream_launches", 2.5,/'
    assert_failure
    assert_output --partial 'labs/lab12_cuda_graphs/README.md: lab12'"'"'s graph speedup is 2.5 in labs/lab12_cuda_graphs/lab12.cu, but this does not say "at least 2.5x faster than the launches"'
}

@test "a rubric whose threshold left the program's is caught" {
    check_changed grader/rubrics/ex01.ini 's/^min = 1.8$/min = 1.85/'
    assert_failure
    assert_output --partial 'grader/rubrics/ex01.ini: ex01'"'"'s target is 1.8'
}

@test "a constant the check can no longer find is named, not skipped" {
    check_changed exercises/given/ex04.cu 's/static int batches = 16;/static int n_batches = 16;/'
    assert_failure
    assert_output --partial "ex04's batches no longer matches"
}

@test "README and every handout link the streams cheat sheet, which exists" {
    [ -f docs/streams-cheatsheet.md ]
    grep -q "(docs/streams-cheatsheet.md)" README.md || fail "README.md does not link it"
    for handout in labs/lab*/README.md; do
        grep -q "(../../docs/streams-cheatsheet.md)" "$handout" || fail "$handout does not link it"
    done
}

@test "the docs write cudaStreamWaitEvent with its three arguments" {
    # C has no default argument: cudaStreamWaitEvent(B, e) builds only as C++.
    # The cheat sheet names the shorthand to warn against it.
    local dirs=(README.md docs labs exercises grader common kernels)
    [ -d solutions ] && dirs+=(solutions) # withheld in the students' copy
    run grep -rnE --include=*.md --include=*.cu --include=*.c --include=*.h --include=*.ini \
        --exclude=streams-cheatsheet.md \
        'cudaStreamWaitEvent\([^,()]+,[^,()]+\)' "${dirs[@]}"
    assert_failure
    refute_output
}

@test "every figure README and the handouts show is a PNG in the repository" {
    # ![alt](path): the path from the Markdown file's folder
    run python3 - README.md labs/lab*/README.md <<'PY'
import os, re, sys
shown, bad = 0, 0
for md in sys.argv[1:]:
    for path in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", open(md).read()):
        shown += 1
        target = os.path.normpath(os.path.join(os.path.dirname(md), path))
        if not os.path.isfile(target) or open(target, "rb").read(8) != b"\x89PNG\r\n\x1a\n":
            print(f"{md}: {path} is not a PNG in the repository")
            bad += 1
print(f"{shown} figures shown")
sys.exit(1 if bad else 0)
PY
    assert_success
    assert_output --regexp "^[0-9]+ figures shown$"
}
