#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image: the
# grader needs make, Python 3 (standard library only) and bubblewrap (its
# sandbox), and the CUDA toolkit, which the image must already have (with the
# GPU's driver).
set -eu
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends make g++ python3 \
    bubblewrap
if ! command -v nvcc >/dev/null; then
    echo "setup.sh: nvcc is not on PATH: the grader needs the CUDA toolkit in this image" >&2
    exit 1
fi
make -s -C /autograder/source build/libstreamlab.a
