# Loaded by the grader's suites (cpu_grade, cpu_class, cpu_slurm): the
# grader, and the rows of the grades.csv a test wrote.

grade() { python3 "$ROOT/grader/grade.py" "$@"; }

# row STUDENT EXERCISE [CSV]: that row of grades.csv (default
# $BATS_TEST_TMPDIR/out/grades.csv) as points/max,status,reason.
row() {
    python3 - "${3:-$BATS_TEST_TMPDIR/out/grades.csv}" "$1" "$2" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1], encoding="utf-8")):
    if (r["student"], r["exercise"]) == (sys.argv[2], sys.argv[3]):
        print(f"{r['points']}/{r['max_points']},{r['status']},{r['reason']}")
PY
}

# ex01's metrics of a finished exercise (10/10), and the stand-in harness
# (tests/fixtures/grading/fake-harness.sh) that prints them.
METRICS_EX01='"launches_wrong": 0, "speedup_vs_blocking": 1.95, "level2_launches_wrong": 0, "level2_speedup_vs_per_thread": 1.95'
STAND_IN_EX01="tests/fixtures/grading/fake-harness.sh '$METRICS_EX01'"
