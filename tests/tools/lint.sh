#!/usr/bin/env bash
# make lint: static checks for what the compiler's warnings miss (the build
# itself must be free of -Wall -Wextra warnings: tests/cpu_build.bats).
#
#   cppcheck    every source. The host C as C99, for bugs, portability,
#               performance and style. The CUDA files as C++, for bugs and
#               portability only: they are C written in .cu files, and
#               cppcheck's C++ advice (casts, references) does not fit them.
#               cppcheck does not know CUDA's kernel launch, so it reads a
#               copy of each file in which `<<<...>>>` is a plain call `(...)`;
#               line numbers are unchanged.
#   clang-tidy  the host C only (common/, kernels/*.c, tests/tools/*.c), with
#               the short list of checks in .clang-tidy. Reading .cu files
#               needs clang's CUDA mode with this toolkit's headers, a pairing
#               that breaks with each release of either; nvcc's -Wall -Wextra
#               covers their host code, and cppcheck reads them.
#
# Findings that are not bugs are listed, each with its reason, in
# tests/tools/cppcheck-suppressions.txt and .clang-tidy.
# Environment (make lint sets them): LINT_C, LINT_CU (the files), LINT_CFLAGS
# (clang-tidy's compiler flags). Exit 0 when clean, 1 on a finding, 3 when a
# tool is missing.
set -u
cd "$(dirname "$0")/../.." || exit 3

missing=()
command -v cppcheck >/dev/null || missing+=(cppcheck)
command -v clang-tidy >/dev/null || missing+=(clang-tidy)
if ((${#missing[@]})); then
    echo "make lint needs ${missing[*]}: sudo apt-get install ${missing[*]}" >&2
    exit 3
fi

read -ra c_files <<<"${LINT_C:?set LINT_C: make lint does}"
read -ra cu_files <<<"${LINT_CU:?set LINT_CU: make lint does}"
read -ra cflags <<<"${LINT_CFLAGS:?set LINT_CFLAGS: make lint does}"
template='{file}:{line}: {severity}: {message} [{id}]'
suppressions=tests/tools/cppcheck-suppressions.txt
status=0

# say TOOL WHAT OK: the one line each step ends with; a finding fails the run.
say() {
    echo "lint: $1, $2: $([ "$3" = 0 ] && echo clean || echo 'findings above')"
    [ "$3" = 0 ] || status=1
}

# -j: a file a core (cppcheck then skips its unusedFunction check, which
# this run does not enable)
jobs=$(nproc)
cppcheck --quiet -j "$jobs" --error-exitcode=1 --inline-suppr --suppressions-list="$suppressions" \
    --template="$template" --language=c --std=c99 \
    --enable=warning,style,performance,portability -Icommon -Ikernels "${c_files[@]}" 2>&1
say cppcheck "${#c_files[@]} C files" $?

copy=$(mktemp -d)
trap 'rm -rf "$copy"' EXIT
for f in "${cu_files[@]}"; do
    mkdir -p "$copy/$(dirname "$f")"
    sed -e 's/<<<\(.*\)>>>/(\1)/' "$f" >"$copy/$f"
done
(cd "$copy" && cppcheck --quiet -j "$jobs" --error-exitcode=1 --inline-suppr \
    --suppressions-list="$OLDPWD/$suppressions" --template="$template" --language=c++ --std=c++17 \
    --enable=warning,portability -D__CUDACC__ -D__global__= -D__device__= -D__host__= \
    -I"$OLDPWD/common" -I"$OLDPWD/kernels" "${cu_files[@]}" 2>&1)
say cppcheck "${#cu_files[@]} CUDA files" $?

# shellcheck disable=SC2016 # $0 and $@ are the inner shell's
failed=$(printf '%s\n' "${c_files[@]}" |
    xargs -P "$jobs" -I{} sh -c 'clang-tidy --quiet "$0" -- "$@" >/dev/null 2>&1 || echo "$0"' {} "${cflags[@]}")
for f in $failed; do # again, one at a time, to show what it found
    clang-tidy --quiet "$f" -- "${cflags[@]}" 2>&1 | grep -v 'warnings\? generated\|^Suppressed\|^Use -header-filter'
done
say clang-tidy "${#c_files[@]} C files" "$([ -z "$failed" ] && echo 0 || echo 1)"
exit $status
