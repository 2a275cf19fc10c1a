#!/usr/bin/env bats
# The Slurm job array of grader/slurm/ on a real single-node Slurm cluster,
# started by this suite (tests/tools/slurm_cluster.sh: Debian's slurm-wlm
# and munge, as root), with the stand-in harness in place of a GPU: the
# merged CSV of the shards must equal an unsharded run's. tests/run.sh
# installs slurm-wlm and munge where CI=true; elsewhere this skips without them.

load test_helper
load grade_helper

setup_file() {
    command -v sbatch >/dev/null && command -v slurmctld >/dev/null && command -v munged >/dev/null ||
        return 0 # each test skips, with the reason
    [ "$(id -u)" = 0 ] || return 0
    export CLUSTER="$BATS_FILE_TMPDIR/slurm"
    local conf
    conf=$("$ROOT/tests/tools/slurm_cluster.sh" start "$CLUSTER") || return 1
    export "${conf?}"
}

teardown_file() {
    [ -z "${CLUSTER:-}" ] || "$ROOT/tests/tools/slurm_cluster.sh" stop "$CLUSTER"
}

setup() {
    command -v sbatch >/dev/null && command -v slurmctld >/dev/null && command -v munged >/dev/null ||
        skip "Slurm is not installed (apt-get install slurm-wlm munge; tests/run.sh does where CI=true)"
    [ "$(id -u)" = 0 ] || skip "starting a Slurm cluster of its own needs root (slurmd)"
    require_sandbox # the shards grade in it, as any grading does
}

@test "a Slurm job array of shards and a merge job after it give an unsharded run's CSV" {
    class="$BATS_TEST_TMPDIR/class"
    for name in ann bob "o'brien" 'm$x' zoë 'ann lee'; do
        mkdir -p "$class/$name"
        cp exercises/ex01_default_stream.cu "$class/$name/"
    done
    cp exercises/ex01_default_stream.cu "$class/bob/ex01_copy.cu"
    mkdir -p "$class/empty" "$class/nested/submission"
    cp exercises/ex01_default_stream.cu "$class/nested/submission/"
    options=(--only ex01 --no-reference --no-memcheck --fake-harness "$STAND_IN_EX01")
    grade --submissions "$class" --out "$BATS_TEST_TMPDIR/unsharded" "${options[@]}" >/dev/null 2>&1
    GPUS_PER_SHARD=0 CPUS_PER_SHARD=1 WAIT=1 run grader/slurm/submit.sh "$class" "$BATS_TEST_TMPDIR/out" 3 "${options[@]}"
    assert_success
    assert_line --regexp "^submit.sh: shards: job array [0-9]+ "
    for i in 1 2 3; do
        [ -f "$BATS_TEST_TMPDIR/out/shard-$i/run.json" ] || fail "shard $i did not finish: $(cat "$BATS_TEST_TMPDIR/out/logs/shard-$i.log")"
    done
    cmp "$BATS_TEST_TMPDIR/unsharded/grades.csv" "$BATS_TEST_TMPDIR/out/grades.csv" ||
        fail "the merged CSV differs: $(cat "$BATS_TEST_TMPDIR/out/logs/merge.log")"
    run cat "$BATS_TEST_TMPDIR/out/logs/merge.log"
    assert_line --regexp "^grade: shard 2/3: 3 submissions in .* submissions per minute$"
}

@test "by hand, the two sbatch commands: the merge names a shard that did not run, which then runs alone" {
    class="$BATS_TEST_TMPDIR/class" out="$BATS_TEST_TMPDIR/out"
    for name in ann bob carol; do
        mkdir -p "$class/$name"
        cp exercises/ex01_default_stream.cu "$class/$name/"
    done
    options=(--only ex01 --no-reference --no-memcheck --fake-harness "$STAND_IN_EX01")
    mkdir -p "$out"
    # shard 1 of 2 only, then the merge after it
    array=$(sbatch --parsable --array=1 --cpus-per-task=1 --output="$out/shard-%a.log" \
        grader/slurm/grade-array.sbatch 2 "$class" "$out" "${options[@]}")
    run sbatch --wait --dependency="afterany:$array" --output="$out/merge.log" grader/slurm/merge.sbatch 2 "$out"
    assert_failure 2
    run cat "$out/merge.log"
    assert_output "grade: --merge: $out/shard-2: no such folder (did that shard run? see its log)"
    run sbatch --wait --array=2 --cpus-per-task=1 --output="$out/shard-%a.log" \
        grader/slurm/grade-array.sbatch 2 "$class" "$out" "${options[@]}"
    assert_success
    run sbatch --wait --output="$out/merge.log" grader/slurm/merge.sbatch 2 "$out"
    assert_success
    run cut -d, -f1,5 "$out/grades.csv"
    assert_output "student,status
ann,passed
bob,passed
carol,passed"
}

@test "grade-array.sbatch run outside a job array says how to submit it" {
    run --separate-stderr bash grader/slurm/grade-array.sbatch 3 class out
    assert_failure 2
    [[ "$stderr" == *"submit it as a job array: sbatch --array=1-N"* ]] || fail "stderr: $stderr"
}
