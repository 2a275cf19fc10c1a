#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image: the
# grader needs make, Python 3 (standard library only) and bubblewrap (its
# sandbox), and the CUDA toolkit, which the image must already have, with the
# GPU's driver.
#
# Gradescope's hosted autograders have no GPU and no CUDA toolkit: there this
# stops with one line (exit 3). Grade on a GPU machine instead and import
# grades-import.csv (exercises/README.md, "Gradescope").
set -eu
if ! command -v nvcc >/dev/null; then
    echo "setup.sh: cannot run here: no nvcc (the CUDA toolkit) in this image; Gradescope's hosted autograders have no GPU: grade on a GPU machine and import grades-import.csv (exercises/README.md, Gradescope)"
    exit 3
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make g++ python3 \
    bubblewrap
make -s -C /autograder/source build/libstreamlab.a build/tests/gpu_probe
