#!/usr/bin/env bash
# `make test`: make sure the test tools are here (installing them with apt
# where this is root on Debian or Ubuntu), build everything, run every Bats
# suite, and close with one summary line that says why tests were skipped:
# "bats: N passed, 0 failed, N skipped (N: no usable GPU here; ...)".
set -u
cd "$(dirname "$0")/.." || exit 1

export BATS_LIB_PATH=${BATS_LIB_PATH:-/usr/lib/bats:/usr/local/lib/bats}
has_library() {
    local dir
    IFS=: read -ra dirs <<<"$BATS_LIB_PATH"
    for dir in "${dirs[@]}"; do [ -f "$dir/$1/load.bash" ] && return 0; done
    return 1
}

missing=()
command -v bats >/dev/null || missing+=(bats)
has_library bats-support || missing+=(bats-support)
has_library bats-assert || missing+=(bats-assert)
command -v python3 >/dev/null || missing+=(python3)
command -v cppcheck >/dev/null || missing+=(cppcheck)     # make lint (tests/cpu_lint.bats)
command -v clang-tidy >/dev/null || missing+=(clang-tidy) # make lint
command -v bwrap >/dev/null || missing+=(bubblewrap)      # the grader's sandbox (cpu_sandbox.bats)
plots/python.sh >/dev/null 2>&1 || missing+=(python3-matplotlib)
# a real single-node Slurm for tests/cpu_slurm.bats and Chromium for
# tests/cpu_page.bats: heavy, so in CI only (elsewhere those tests skip,
# saying what to install)
if [ "${CI:-}" = true ]; then
    command -v sbatch >/dev/null || missing+=(slurm-wlm)
    command -v munged >/dev/null || missing+=(munge)
    # headless, to render the results page once (tests/cpu_page.bats)
    command -v chromium >/dev/null || missing+=(chromium)
    # GNU parallel: bats --jobs runs the suites side by side (below)
    parallel --version 2>/dev/null | grep -q 'GNU parallel' || missing+=(parallel)
fi
if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "make test: installing ${missing[*]} with apt-get"
        { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >/dev/null ||
            { echo "make test: apt-get could not install ${missing[*]}" >&2; exit 1; }
    else
        echo "make test needs ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
        exit 1
    fi
fi

echo "make test: building the programs and the test tools"
# From a clean tree this is the build tests/cpu_build.bats judges (every
# program, not a warning): it reads this log rather than build it all again.
# (build/ itself is made when make reads the Makefile: the library says)
[ -e build/libstreamlab.a ] || clean=1
mkdir -p build/tests
make -s -j"$(nproc)" all test-tools 2>&1 | tee build/tests/build.log
[ "${PIPESTATUS[0]}" = 0 ] || exit 1
if [ -n "${clean:-}" ]; then
    export STREAMLAB_CLEAN_BUILD_LOG=$PWD/build/tests/build.log
fi

# Without a usable GPU, the suites side by side, a file to each core, where
# GNU parallel is here (bats --jobs needs it; make test installs it where
# CI=true): a file's tests still run one after another, in the order they
# are written, around its setup_file. With a GPU, one file after another:
# the GPU suites measure the GPU's time, and must not share it.
jobs=()
if [ "$(nproc)" -gt 1 ] && ! build/tests/gpu_probe >/dev/null 2>&1 &&
    parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    jobs=(--jobs "$(nproc)" --no-parallelize-within-files)
fi
bats --tap "${jobs[@]}" tests/*.bats | tee build/tests/bats.tap
status=${PIPESTATUS[0]}
tests/tools/bats_summary.sh build/tests/bats.tap
exit "$status"
