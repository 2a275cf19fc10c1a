#!/usr/bin/env bash
# Grades a class on a Slurm cluster: N shards as a job array, each on its
# own GPU, then the merge as a job that waits for them all.
#
#   grader/slurm/submit.sh CLASS OUT N [grade.py options, e.g. --only ex04]
#
# CLASS holds one folder per student; OUT gets shard-1 ... shard-N, logs/
# and, when the merge has run, grades.csv, grades-import.csv, junit.xml and
# report.txt. Settings, from the environment:
#   GPUS_PER_SHARD  GPUs per shard (default 1; one grading worker each; 2 to grade
#                   ex13, which needs two in one process), 0 for none
#   CPUS_PER_SHARD  CPUs per shard, for the builds (default 8)
#   TIME_PER_SHARD  sbatch --time of a shard (default 2:00:00)
#   WAIT=1          wait for the merge, and exit with its status
# Partition, account, QOS and the like: sbatch's own variables
# (SBATCH_PARTITION, SBATCH_ACCOUNT, SBATCH_QOS, SBATCH_EXCLUSIVE, ...).
set -eu
if [ $# -lt 3 ]; then
    sed -n '2,18s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
class=$(realpath "$1") out=$(realpath -m "$2") count=$3
shift 3
[ -d "$class" ] || { echo "submit.sh: $1: no such folder" >&2; exit 2; }
[[ "$count" =~ ^[1-9][0-9]*$ ]] || { echo "submit.sh: N=$count: give the number of shards, 1 or more" >&2; exit 2; }
command -v sbatch >/dev/null || { echo "submit.sh: no sbatch here: run it on the cluster's login node" >&2; exit 3; }
cd "$(dirname "$0")/../.."
mkdir -p "$out/logs"

gres=()
[ "${GPUS_PER_SHARD:-1}" = 0 ] || gres=(--gres="gpu:${GPUS_PER_SHARD:-1}")
array=$(sbatch --parsable --array="1-$count" --chdir="$PWD" "${gres[@]}" \
    --cpus-per-task="${CPUS_PER_SHARD:-8}" --time="${TIME_PER_SHARD:-2:00:00}" \
    --output="$out/logs/shard-%a.log" grader/slurm/grade-array.sbatch "$count" "$class" "$out" "$@")
array=${array%%;*} # "id;cluster" on a federation
echo "submit.sh: shards: job array $array (logs: $out/logs/shard-I.log)"
merge=(sbatch --parsable --dependency="afterany:$array" --chdir="$PWD" --cpus-per-task=1
    --output="$out/logs/merge.log" grader/slurm/merge.sbatch "$count" "$out" "$@")
if [ -n "${WAIT:-}" ]; then
    status=0
    "${merge[0]}" --wait "${merge[@]:1}" >/dev/null || status=$?
    echo "submit.sh: merged into $out (log: $out/logs/merge.log), exit $status"
    exit "$status"
fi
echo "submit.sh: merge: job $("${merge[@]}") after the array (log: $out/logs/merge.log); squeue -u ${USER:-$(id -un)} shows both"
