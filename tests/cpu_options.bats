#!/usr/bin/env bats
# Options of every program: --help, and a table of usage errors. None of
# these needs a GPU: a program checks its command line before touching one.

load test_helper

@test "every program's --help lists the common options and exits 0" {
    for p in $(programs); do
        run "./$p" --help
        [ "$status" -eq 0 ] || fail "$p --help exited $status"
        for opt in --help --device --quick --reps --csv --json; do
            [[ "$output" == *"$opt"* ]] || fail "$p --help does not mention $opt"
        done
        [[ "$output" == *"exit codes"* ]] || fail "$p --help does not list the exit codes"
    done
}

# bad ARGS... NAMED: each program exits 2 with one stderr line naming NAMED.
bad() {
    local named=${!#} p
    local args=("${@:1:$#-1}")
    for p in $(programs); do
        run --separate-stderr "./$p" "${args[@]}"
        [ "$status" -eq 2 ] || fail "$p ${args[*]}: exit $status, expected 2"
        [ -z "$output" ] || fail "$p ${args[*]}: printed to stdout: $output"
        [[ "$stderr" == *"$named"* ]] || fail "$p ${args[*]}: message does not name $named: $stderr"
        [ "$(printf '%s\n' "$stderr" | wc -l)" -eq 1 ] || fail "$p ${args[*]}: more than one line: $stderr"
    done
}

@test "an unknown option is a usage error naming it" { bad --frobnicate "--frobnicate"; }
@test "an unknown option with a value is a usage error naming it" { bad --frob=3 "--frob"; }
@test "a positional argument is a usage error" { bad extra "extra"; }
@test "a missing value is a usage error naming the option" { bad --reps "--reps"; }
@test "a value swallowed by the next option is a usage error" { bad --reps --csv "--reps"; }
@test "zero repetitions is a usage error giving the range" { bad --reps 0 "1 to 10000"; }
@test "negative repetitions is a usage error" { bad --reps -3 "--reps"; }
@test "a huge number is a usage error" { bad --reps 99999999999999999999999 "--reps"; }
@test "a non-number is a usage error" { bad --reps twelve "--reps"; }
@test "a number with trailing junk is a usage error" { bad --reps 5x "--reps"; }
@test "an empty value is a usage error" { bad --reps= "--reps"; }
@test "a negative device is a usage error" { bad --device -1 "--device"; }
@test "a flag given a value is a usage error" { bad --quick=yes "--quick"; }
@test "--csv and --json together are a usage error" { bad --csv --json "--csv and --json"; }

@test "--trace to a folder that does not exist is a usage error" { bad --trace /nonexistent/t.json "--trace"; }
@test "--trace to a file of unknown type is a usage error" { bad --trace t.txt ".json"; }

@test "--help wins over a mistake beside it" {
    run ./lab00 --reps 0 --help
    assert_success
    assert_output --partial "usage: lab00"
}

@test "a program's own numbers are range-checked too" {
    run --separate-stderr ./lab00 --size-mib 0
    assert_failure 2
    assert_equal "$stderr" "lab00: --size-mib must be an integer from 1 to 4096 (got '0')"
    run --separate-stderr ./lab00 --spin-ms nan
    assert_failure 2
    assert_equal "$stderr" "lab00: --spin-ms must be a number from 0.1 to 1000 (got 'nan')"
    run --separate-stderr ./lab00 --spin-ms=1e999
    assert_failure 2
}
