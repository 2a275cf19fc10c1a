# Loaded by the GPU suites (load repeat): a test that asserts an effect runs
# its lab REPEATS times and needs the verdict every time. One lucky run proves
# nothing, and a verdict that holds two runs in three is not one a student
# can trust. GPU_REPEATS=N sets it (default 3; 1 for a quick pass). How much
# the key numbers spread across runs is make results' business (RUNS=N).
REPEATS=${GPU_REPEATS:-3}
if ! [[ $REPEATS =~ ^[1-9][0-9]?$ ]]; then
    echo "GPU_REPEATS must be a whole number from 1 to 99, not '$REPEATS'" >&2
    exit 1
fi

# runs: the numbers of the runs, 1 to REPEATS, for `for run_no in $(runs)`.
runs() { seq "$REPEATS"; }
