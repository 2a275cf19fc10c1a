# Loaded by the GPU suites that need another process on the GPU (load gpu_load):
# starts build/tests/gpu_load in the background and stops it again.

# start_load ARGS...: starts gpu_load with ARGS and waits (20 s at most) for
# its "ready" line; LOAD_PID is its process id.
start_load() {
    "$TOOLS/gpu_load" "$@" >"$BATS_TEST_TMPDIR/load.out" 2>&1 &
    LOAD_PID=$!
    for _ in $(seq 200); do
        grep -q '^ready' "$BATS_TEST_TMPDIR/load.out" && return 0
        kill -0 "$LOAD_PID" 2>/dev/null || fail "gpu_load stopped: $(cat "$BATS_TEST_TMPDIR/load.out")"
        sleep 0.1
    done
    fail "gpu_load did not get ready in 20 s: $(cat "$BATS_TEST_TMPDIR/load.out")"
}

# stop_load: stops the gpu_load start_load started, if it still runs (teardown).
stop_load() {
    if [ -n "${LOAD_PID:-}" ]; then
        kill "$LOAD_PID" 2>/dev/null
        wait "$LOAD_PID" 2>/dev/null
        LOAD_PID=
    fi
    return 0
}
