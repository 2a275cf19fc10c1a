#!/usr/bin/env bats
# Bad input that needs a GPU to be bad: a --device past the last GPU, sizes
# past the free memory of a GPU that another process fills, and a run stopped
# by Ctrl-C with a trace on the way. (The rest of the bad-input table runs
# without a GPU: tests/cpu_options.bats.)

load test_helper
load gpu_load

setup() { require_gpu; }
teardown() { stop_load; }

@test "--device past the last GPU is a usage error listing the GPUs, for every program" {
    for p in $(programs); do
        run --separate-stderr "./$p" --device 63
        [ "$status" -eq 2 ] || fail "$p --device 63: exit $status"
        [ -z "$output" ] || fail "$p printed a report: $output"
        [[ "${stderr_lines[0]}" == "$p: --device 63 does not exist; this machine has "* ]] ||
            fail "$p: $stderr"
        [[ "$stderr" == *"  --device 0  "* ]] || fail "$p does not list the GPUs: $stderr"
    done
}

# Each program with a size, and sizes over half of what another process left
# free (1024 MiB, less this program's own context): in range for its options,
# too much for this GPU now.
too_big() {
    case $1 in
    lab00) echo --size-mib 1024 ;;
    lab02) echo --max-mib 1024 ;;
    lab04 | ex04 | sol04) echo --batches 2 --batch-mib 128 ;;
    lab05) echo --copy-mib 1024 ;;
    lab06) echo --size-mib 512 ;;
    ex02 | sol02) echo --chunks 8 --chunk-mib 256 ;;
    ex06 | sol06) echo --size-mib 256 ;;
    *) return 1 ;;
    esac
}

@test "sizes past the GPU's free memory are a usage error naming the limit, before anything is allocated" {
    start_load --seconds 120 --hold --leave-mib 1024
    tried=0
    for p in $(programs); do
        args=$(too_big "$p") || continue
        # shellcheck disable=SC2086 # a list of words
        run --separate-stderr "./$p" $args
        [ "$status" -eq 2 ] || fail "$p $args with 1 GiB free: exit $status: $stderr"
        [[ "$stderr" == *" MiB free now: here --"*" accepts "*" to "* ]] ||
            fail "$p $args: does not name the accepted range: $stderr"
        size=$(grep -oE -- '--[a-z-]+' <<<"$args" | tail -1) # the size, the last option
        [[ "$stderr" == *"$size"* ]] || fail "$p $args: does not name $size: $stderr"
        [[ "$stderr" != *$'\n'* ]] || fail "$p: more than one line: $stderr"
        [[ "$stderr" != *"CUDA error"* ]] || fail "$p: $stderr"
        tried=$((tried + 1))
    done
    [ "$tried" -ge 7 ] || fail "only $tried programs have a size to try"
}

# interrupt PROGRAM SIGNAL: runs PROGRAM with --trace into an empty folder,
# sends SIGNAL after half a second, and prints how it ended. The program gets
# the signal's default action even though Bats runs in the background
# (where a shell starts its children with SIGINT ignored).
interrupt() {
    python3 - "$1" "$2" "$BATS_TEST_TMPDIR/trace/t.json" <<'PY'
import signal, subprocess, sys, time
program, sig, trace = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3]
child = subprocess.Popen([program, "--trace", trace], stdout=subprocess.DEVNULL,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
time.sleep(0.5)
child.send_signal(sig)
print(child.wait(timeout=60))
PY
}

@test "a run stopped by Ctrl-C or kill leaves nothing behind: no trace, no partial file" {
    for sig in SIGINT SIGTERM; do
        rm -rf "$BATS_TEST_TMPDIR/trace" && mkdir "$BATS_TEST_TMPDIR/trace"
        run interrupt ./lab02 "$sig" # lab02 runs a few seconds
        assert_success
        code=$(python3 -c "import signal; print(-signal.$sig)")
        assert_output "$code" # ended by the signal, not finished before it
        assert_equal "$(ls -A "$BATS_TEST_TMPDIR/trace")" ""
    done
    # and the GPU is ready for the next run
    run ./lab00 --quick
    assert_success
}
