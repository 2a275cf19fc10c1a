#!/usr/bin/env bats
# Options of every program: --help, and bad input. Every option that takes a
# number is tried with each row of a table of bad values (missing, empty,
# words, negative, zero, out of range, overflowing, absurdly large, not a plain
# decimal); the other options with their own mistakes. Each must be a usage
# error: exit 2, nothing on stdout, one line on stderr naming the option and,
# for a bad value, the range it accepts. Never a crash, a hang or a CUDA error:
# a program reads its command line before it touches a GPU, so none is needed.
# (The GPU's side of bad input, sizes past its free memory and --device past
# its last GPU, is in tests/gpu_badinput.bats.)

load test_helper
load check_sizes

# Every option that takes a number: "PROGRAM NAME KIND MIN MAX" a line.
setup_file() {
    local p
    cd "$BATS_TEST_DIRNAME/.." || return 1
    for p in $(make -s --no-print-directory list); do
        tests/tools/numeric_options.sh "./$p" | sed "s|^|$p |"
    done >"$BATS_FILE_TMPDIR/numeric-options"
}

@test "every program's --help lists the common options and exits 0" {
    for p in $(programs); do
        run "./$p" --help
        [ "$status" -eq 0 ] || fail "$p --help exited $status"
        for opt in --help --device --quick --reps --csv --json --trace --timeline; do
            [[ "$output" == *"$opt"* ]] || fail "$p --help does not mention $opt"
        done
        [[ "$output" == *"exit codes"* ]] || fail "$p --help does not list the exit codes"
    done
}

@test "-h prints what --help prints, for every program, and --help lists it" {
    for p in $(programs); do
        run "./$p" --help
        help=$output
        [[ "$help" == *"-h, --help"* ]] || fail "$p --help does not list -h"
        run "./$p" -h
        [ "$status" -eq 0 ] || fail "$p -h exited $status"
        [ "$output" = "$help" ] || fail "$p -h printed something other than --help"
    done
    run ./lab00 --reps 0 -h
    assert_success
}

@test "the table covers every option that takes a number, with its kind and range" {
    n=$(wc -l <"$BATS_FILE_TMPDIR/numeric-options")
    [ "$n" -ge $((3 * $(programs | wc -l))) ] || fail "only $n options found"
    for p in $(programs); do
        grep -q "^$p --device integer 0 63$" "$BATS_FILE_TMPDIR/numeric-options" || fail "$p: no --device"
        grep -q "^$p --reps integer 1 10000$" "$BATS_FILE_TMPDIR/numeric-options" || fail "$p: no --reps"
    done
    grep -q "^lab00 --size-mib integer 1 4096$" "$BATS_FILE_TMPDIR/numeric-options"
    grep -q "^lab00 --spin-ms number 0.1 1000$" "$BATS_FILE_TMPDIR/numeric-options"
}

# try ARGS...: runs the program ARGS name with the rest; sets status, output
# and stderr as `run --separate-stderr` would (this is faster, over a thousand
# runs), and why: what makes it not a usage error naming NAMED (the caller's
# variable), or nothing.
try() {
    status=0
    output=$("$@" 2>"$BATS_TEST_TMPDIR/stderr" </dev/null) || status=$?
    stderr=$(<"$BATS_TEST_TMPDIR/stderr")
    why=""
    [ "$status" -eq 2 ] || why="exit $status, expected 2"
    [ -z "$output" ] || why+=" printed to stdout: $output"
    [[ "$stderr" == *"$named"* ]] || why+=" the message does not name $named: $stderr"
    [[ "$stderr" != *$'\n'* ]] || why+=" more than one line: $stderr"
}

# every_option ROW: runs every numeric option of every program with the bad
# value that row of the table gives (bad_value), collects every case that is
# not a usage error naming the option (and, for a value, its range), and
# fails listing them all.
every_option() {
    local row=$1 p named kind min max value why failures="" tried=0
    while read -r p named kind min max; do
        value=$(bad_value "$row" "$kind" "$min" "$max") || continue
        case $row in
        missing) args=("$named") ;;
        swallowed) args=("$named" --csv) ;;
        empty) args=("$named=") ;;
        *) args=("$named" "$value") ;;
        esac
        try "./$p" "${args[@]}"
        case $row in
        missing | swallowed) [[ "$stderr" == *"needs a value"* ]] || why+=" does not say a value is needed" ;;
        *) [[ "$stderr" == *"from $min to $max"* ]] || why+=" does not give the range $min to $max" ;;
        esac
        [ -z "$why" ] || failures+=$'\n'"$p ${args[*]}: $why"
        tried=$((tried + 1))
    done <"$BATS_FILE_TMPDIR/numeric-options"
    [ "$tried" -gt 0 ] || fail "no option had a case for '$row'"
    [ -z "$failures" ] || fail "not usage errors:$failures"
}

# bad_value ROW KIND MIN MAX: the value to try, or status 1 where the row does
# not apply to that option (zero, for instance, where zero is allowed).
bad_value() {
    local row=$1 kind=$2 min=$3 max=$4
    case $row in
    missing | swallowed | empty) echo "" ;;
    words) echo twelve ;;
    junk) echo 5x ;;
    space) echo " 5" ;;
    hex) echo 0x10 ;;
    negative) [[ $min != -* ]] && echo -1 ;;
    zero) [[ $min != -* && $min != 0 ]] && echo 0 ;;
    below) # just under the least value, where that is not zero or negative already
        if [ "$kind" = integer ]; then
            [ "$min" -gt 1 ] && echo $((min - 1))
        else
            [[ $min != -* && $min != 0 ]] && awk -v m="$min" 'BEGIN { print m / 2 }'
        fi
        ;;
    above) [ "$kind" = integer ] && echo $((max + 1)) || awk -v m="$max" 'BEGIN { print m * 2 }' ;;
    fraction) [ "$kind" = integer ] && echo 1.5 ;;
    overflow) echo 99999999999999999999999 ;;
    negative-overflow) echo -99999999999999999999999 ;;
    absurd) echo 1e999 ;;
    underflow) [ "$kind" = number ] && echo 1e-999 ;;
    nan) echo nan ;;
    inf) echo inf ;;
    *) return 1 ;;
    esac
}

@test "table: a missing value is a usage error for every option that takes a number" { every_option missing; }
@test "table: a value swallowed by the next option is a usage error" { every_option swallowed; }
@test "table: an empty value (--name=) is a usage error" { every_option empty; }
@test "table: words are a usage error" { every_option words; }
@test "table: a number with trailing junk is a usage error" { every_option junk; }
@test "table: a number after a space is a usage error" { every_option space; }
@test "table: a hexadecimal number is a usage error" { every_option hex; }
@test "table: a negative number is a usage error" { every_option negative; }
@test "table: zero is a usage error where the least value is above it" { every_option zero; }
@test "table: just under the least value is a usage error" { every_option below; }
@test "table: just over the greatest value is a usage error" { every_option above; }
@test "table: a fraction is a usage error for a whole-number option" { every_option fraction; }
@test "table: a number too large for any integer is a usage error" { every_option overflow; }
@test "table: a number too negative for any integer is a usage error" { every_option negative-overflow; }
@test "table: an absurdly large number (1e999) is a usage error" { every_option absurd; }
@test "table: a number too small for a double (1e-999) is a usage error" { every_option underflow; }
@test "table: nan is a usage error" { every_option nan; }
@test "table: inf is a usage error" { every_option inf; }

# bad ARGS... NAMED: each program exits 2 with one stderr line naming NAMED.
bad() {
    local named=${!#} p why failures=""
    local args=("${@:1:$#-1}")
    for p in $(programs); do
        try "./$p" "${args[@]}"
        [ -z "$why" ] || failures+=$'\n'"$p ${args[*]}: $why"
    done
    [ -z "$failures" ] || fail "not usage errors:$failures"
}

@test "an unknown option is a usage error naming it" { bad --frobnicate "--frobnicate"; }
@test "an unknown option with a value is a usage error naming it" { bad --frob=3 "--frob"; }
@test "an abbreviated option is a usage error naming it" { bad --rep 3 "--rep"; }
@test "a single-dash option is a usage error" { bad -reps 3 "-reps"; }
@test "a positional argument is a usage error" { bad extra "extra"; }
@test "a lone -- is a usage error" { bad -- "--"; }
@test "a flag given a value is a usage error" { bad --quick=yes "--quick"; }
@test "--csv and --json together are a usage error" { bad --csv --json "--csv and --json"; }

# ---- --quick and --dry-run -----------------------------------------------------

# Every option with a --quick value, from --help: "NAME MIN MAX DEFAULT QUICK" a line.
quick_options() {
    "./$1" --help | sed -nE 's/^  (--[a-z0-9-]+) [A-Z]+ .*\(([-0-9.e+]+) to ([-0-9.e+]+); default ([-0-9.e+]+), --quick ([-0-9.e+]+)\)$/\1 \2 \3 \4 \5/p'
}

@test "--quick changes only what the user did not type, for every program, as --dry-run shows" {
    local p name min max default quick typed failures="" tried=0
    for p in $(programs); do
        [ -n "$(quick_options "$p")" ] || failures+=$'\n'"$p: --help shows no --quick value"
        while read -r name min max default quick; do
            grep -qx "  $name $default" <<<"$("./$p" --dry-run)" ||
                failures+=$'\n'"$p --dry-run: $name is not its default $default"
            grep -qx "  $name $quick" <<<"$("./$p" --quick --dry-run)" ||
                failures+=$'\n'"$p --quick --dry-run: $name is not its --quick value $quick"
            # both ends of the range: a rule between options must not cut a typed value either
            for typed in "$min" "$max"; do
                [ "$typed" != "$quick" ] || continue
                grep -qx "  $name $typed" <<<"$("./$p" "$name" "$typed" --quick --dry-run)" ||
                    failures+=$'\n'"$p $name $typed --quick: the typed value did not survive"
                grep -qx "  $name $typed" <<<"$("./$p" --quick "$name=$typed" --dry-run)" ||
                    failures+=$'\n'"$p --quick $name=$typed: the typed value did not survive"
            done
            tried=$((tried + 1))
        done < <(quick_options "$p")
    done
    [ "$tried" -ge "$(programs | wc -l)" ] || failures+=$'\n'"only $tried options tried"
    [ -z "$failures" ] || fail "--quick and typed values:$failures"
}

@test "--dry-run prints every setting and touches no GPU" {
    for p in $(programs); do
        run --separate-stderr "./$p" --dry-run --reps 7 --csv
        assert_success
        assert_line "$p would run with:"
        assert_line "  --reps 7"
        assert_line "  --csv on"
        assert_line "  --quick off"
        [ -z "$stderr" ] || fail "$p --dry-run wrote to stderr: $stderr"
    done
}

@test "every exercise's --check --dry-run shows the check pass's sizes, which its opening comment states" {
    local ex words settings part p args out failures="" n=0
    while IFS='|' read -r ex words settings; do
        [ -n "$ex" ] || continue
        n=$((n + 1))
        comment=$(opening_comment "exercises/given/$ex.cu")
        while read -r part; do
            [[ "$comment" == *"$part"* ]] ||
                failures+=$'\n'"exercises/given/$ex.cu's opening comment does not say \"$part\""
        done < <(sed 's/ \.\.\. /\n/g' <<<"$words")
        for p in "$ex" "sol${ex#ex}"; do
            [ -x "./$p" ] || continue # solutions/ withheld
            # typed values and --quick's give way to the check pass's, as they do in the run
            for args in "--check" "--quick --check --reps 9"; do
                out=$("./$p" $args --dry-run) || failures+=$'\n'"$p $args --dry-run failed"
                grep -qx "  --check on" <<<"$out" || failures+=$'\n'"$p $args: --check is not on"
                set -- $settings
                while [ $# -ge 2 ]; do
                    grep -qx "  $1 $2" <<<"$out" ||
                        failures+=$'\n'"$p $args --dry-run: $1 is not $2: $(grep -- "^  $1 " <<<"$out")"
                    shift 2
                done
            done
        done
    done <<<"$CHECK_SIZES"
    [ "$n" -eq "$(ls exercises/given/ex[0-9]*.cu | wc -l)" ] ||
        failures+=$'\n'"tests/check_sizes.bash lists $n exercises, not every one"
    [ -z "$failures" ] || fail "the check pass's sizes:$failures"
}

@test "no given program changes an option's value outside its check_pass_sizes()" {
    run python3 tests/tools/check_overrides.py exercises/given/ex[0-9]*.cu
    assert_success
    refute_output
}

@test "a check-pass size set in main() again, or a count chosen there, is caught with the file and the line" {
    local tree="$BATS_TEST_TMPDIR"
    sed 's/^    level1(&lab, lab.opt.reps);$/    if (grading_check())\n        chunks = 4;\n&/' \
        exercises/given/ex02.cu >"$tree/ex02.cu"
    sed 's/^    int check = grading_check(), runs = lab.opt.reps;$/    int check = grading_check(), runs = check ? 3 : lab.opt.reps;/' \
        exercises/given/ex06.cu >"$tree/ex06.cu"
    sed 's/^    int pairs = l2_pairs, refused = 0;/    int pairs = check ? 1 : l2_pairs, refused = 0;/' \
        exercises/given/ex10.cu >"$tree/ex10.cu"
    sed 's/check_pass_sizes(common_options \*opt)$/check_sizes(common_options *opt)/' \
        exercises/given/ex12.cu >"$tree/ex12.cu"
    run python3 tests/tools/check_overrides.py "$tree"/ex02.cu "$tree"/ex06.cu "$tree"/ex10.cu "$tree"/ex12.cu
    assert_failure 1
    assert_line "$tree/ex02.cu: chunks changed: if (grading_check()) chunks = 4"
    assert_line "$tree/ex06.cu: --reps chosen outside check_pass_sizes(): int check = grading_check(), runs = check ? 3 : lab.opt.reps"
    assert_line "$tree/ex10.cu: l2_pairs changed: int pairs = check ? 1 : l2_pairs, refused = 0"
    assert_line "$tree/ex12.cu: no function check_pass_sizes(common_options *opt)"
    # under another name, what the hook sets is set outside it
    assert_line "$tree/ex12.cu: batches changed: batches = 3"
    assert_line "$tree/ex12.cu: --reps chosen outside check_pass_sizes(): opt->reps = 1"
    [ "${#lines[@]}" -eq 7 ] || fail "not the seven expected: $output"
}

@test "--help wins over a mistake beside it" {
    run ./lab00 --reps 0 --help
    assert_success
    assert_output --partial "usage: lab00"
}

@test "a program's own numbers are range-checked, in the option's own words" {
    run --separate-stderr ./lab00 --size-mib 0
    assert_failure 2
    assert_equal "$stderr" "lab00: --size-mib must be an integer from 1 to 4096 (got '0')"
    run --separate-stderr ./lab00 --spin-ms nan
    assert_failure 2
    assert_equal "$stderr" "lab00: --spin-ms must be a number from 0.1 to 1000 (got 'nan')"
}

@test "sizes whose product is absurd are a usage error before any GPU is touched" {
    for p in $(programs | grep -xE 'ex04|sol04'); do
        run --separate-stderr "./$p" --batches 1024 --batch-mib 1024
        assert_failure 2
        [[ "$stderr" == *"--batches 1024 x --batch-mib 1024"* ]] || fail "$p: $stderr"
    done
}

# ---- --trace FILE ---------------------------------------------------------------

# bad_trace PATH WHAT: every program refuses --trace PATH with a usage error
# naming --trace, and leaves neither PATH nor PATH.partial behind.
bad_trace() {
    bad --trace "$1" "$2"
    [ ! -e "$1.partial" ] || fail "left $1.partial behind"
    [ -d "$1" ] || [ ! -e "$1" ] || fail "left $1 behind"
}

@test "--trace to a folder that does not exist is a usage error" { bad_trace /nonexistent/t.json "--trace"; }
@test "--trace to a file of unknown type is a usage error" { bad_trace "$BATS_TEST_TMPDIR/t.txt" ".json"; }
@test "--trace with an empty name is a usage error" { bad_trace "" "--trace"; }
@test "--trace to an unwritable place is a usage error, even for root" { bad_trace /proc/t.json "--trace /proc/t.json cannot be written"; }
@test "--trace below a file that is not a folder is a usage error" {
    touch "$BATS_TEST_TMPDIR/file"
    bad_trace "$BATS_TEST_TMPDIR/file/t.json" "cannot be written"
}
@test "--trace to a folder is a usage error" {
    mkdir "$BATS_TEST_TMPDIR/t.json"
    bad_trace "$BATS_TEST_TMPDIR/t.json" "is a folder"
}

@test "a usage error leaves an existing trace file as it was" {
    echo "an earlier trace" >"$BATS_TEST_TMPDIR/t.json"
    run ./lab04 --trace "$BATS_TEST_TMPDIR/t.json" --reps 0
    assert_failure 2
    assert_equal "$(cat "$BATS_TEST_TMPDIR/t.json")" "an earlier trace"
    [ ! -e "$BATS_TEST_TMPDIR/t.json.partial" ]
}

@test "a run that stops early (no GPU here) writes no trace and leaves no partial file" {
    require_no_gpu # on a GPU the run goes on to the end: tests/gpu_badinput.bats interrupts it
    for p in $(programs); do
        run "./$p" --quick --trace "$BATS_TEST_TMPDIR/t.json"
        assert_failure 3
    done
    assert_equal "$(ls -A "$BATS_TEST_TMPDIR")" ""
}
