# The check pass's sizes (./exNN --check), loaded by tests/cpu_options.bats
# (--check --dry-run) and tests/gpu_grade.bats (the settings line of a run).
#
# One exercise a line: EXERCISE|WORDS|SETTINGS. WORDS are what the given
# program's opening comment says of its check pass ("--check: 4 chunks of
# 1 MiB, one run"), parts joined by " ... ", each found in that comment;
# SETTINGS are the options those words set, as "--name value" pairs, in the
# words --dry-run prints them. An option the check pass leaves alone is not
# listed. A change to the check pass changes the comment, this table and the
# program's check_pass_sizes() together.
CHECK_SIZES='
ex01|--check: 1 ms kernels, one pair|--kernel-ms 1 --reps 1
ex02|--check: 4 chunks of 1 MiB, one run|--chunks 4 --chunk-mib 1 --reps 1
ex03|--check: 0.5 and 1 ms, 3 samples|--reps 3
ex04|--check: 4 batches of 1 MiB, one round|--batches 4 --batch-mib 1 --reps 1
ex05|--check: no background for level one, 3 rounds|--reps 3
ex06|--check: 1 MiB, 0.5 ms, 3 runs|--size-mib 1 --spin-ms 0.5 --reps 3
ex07|--check: two requests of 1 ms, one pair|--request-ms 1 --reps 1
ex08|--check: 3 batches, one round|--batches 3 --reps 1
ex09|--check: 3 steps of 0.1 ms|--steps 3 --step-ms 0.1
ex10|--check: 3 runs of each, 1 MiB ... level two one pair of rounds|--runs 3 --size-mib 1 --level2-pairs 1
ex11|--check: 12 batches of 1 ms and 0.5 ms, one round|--batches 12 --reps 1
ex12|--check: 3 batches, 3 steps, one round|--batches 3 --steps 3 --reps 1
ex13|--check: 4 layers, 16 MiB of gradients in 2 MiB buckets, one round|--layers 4 --grad-mib 16 --bucket-mib 2 --reps 1
ex14|--check: 5 waves, 3 samples of each|--waves 5 --reps 3
'

# opening_comment FILE: the file's first comment on one line, its " * "
# margins taken out, runs of spaces made one.
opening_comment() {
    sed -n '1,/\*\//p' "$1" | sed -E 's|^ */?\*+/? ?||; s| *\*/$||' | tr '\n' ' ' | tr -s ' '
}
