#!/usr/bin/env bash
# Prints the path of a Python 3 that has matplotlib, for `make plots` and
# the tests: $PYTHON when set, else the first of python3, /usr/bin/python3
# (Debian's, which python3-matplotlib serves, when a pyenv or conda python3
# comes first on PATH) and python. Exits 1 with what to install when none has it.
set -u

has_matplotlib() {
    "$1" -c 'import sys, matplotlib; sys.exit(sys.version_info < (3, 7))' >/dev/null 2>&1
}

if [ -n "${PYTHON:-}" ]; then
    candidates=("$PYTHON")
else
    candidates=(python3 /usr/bin/python3 python)
fi
for py in "${candidates[@]}"; do
    path=$(command -v "$py" 2>/dev/null) || continue
    if has_matplotlib "$path"; then
        echo "$path"
        exit 0
    fi
done
{
    echo "no Python 3 with matplotlib found (tried: ${candidates[*]})."
    echo "  Debian or Ubuntu: sudo apt-get install python3-matplotlib"
    echo "  elsewhere:        python3 -m pip install -r plots/requirements.txt"
    echo "  or name one:      make plots PYTHON=/path/to/python3"
} >&2
exit 1
