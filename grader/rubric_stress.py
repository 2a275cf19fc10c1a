#!/usr/bin/env python3
"""How often the reference solutions meet each rubric criterion on this
machine: the false-negative rate of every threshold in grader/rubrics/, and
how an instructor checks a course machine's rubric before grading on it.

    rubric_stress.py run [--runs N] [--only ex03,ex05] [--bindir DIR] [--out DIR]
    rubric_stress.py summary DIR [DIR ...] [--strict]

run: N rounds; each round runs every built solNN once with --grade, one
solution after another (round 1 of every solution, then round 2 ...), so
that a slow minute of the machine is spread over all of them, as make
stress does with the labs. Each run gets a fresh nonce on its stdin, as the
grader's measure pass does, and its result line is kept only with that nonce.
Every run is a line of DIR/runs.jsonl: program, round, exit code, seconds and
the metrics. DIR is results/rubric-stress-<gpu>-<date>/ unless --out says.
The programs run on this machine directly, not in the grader's sandbox:
they are the course's own reference solutions.

summary (and the end of run): scores each run with its exercise's rubric by
grader/rubric.py, the grader's own rules, and prints per criterion how many
runs met it at once (met), how many once graded (graded: after grade.py's
own measure_again, which runs the measure pass again when a criterion fell
just short and lets the median of the new runs decide; here the runs made
again are the ones that follow, a round or more later, where the grader's
follow within seconds), the value's min / median / max and the bound. A
criterion relative to the reference solution takes as the reference the
next run of the same solution (the last run takes the first): in a grading
run the reference is measured in its own process beside the student's, as
here; for such a criterion the spread shown is of that ratio, the run's
value over its reference's, which is what the bound holds. With no miss
once graded in n runs, the miss rate is below 3/n with 95% confidence, the
column after the bound; the last column is how far the runs lay inside
the bound in their spread toward it, and the share of single runs past it
were that spread normal (grader/margins.py says what that extrapolation is
worth). It reads the bound a run must meet, not the criterion's
model_limit, past which a run is flagged rather than awarded. The table
goes to DIR/summary.txt too. Several DIRs (one per machine) pool into one
table, each run paired within its own folder; it is then printed only.

Exit status: 0; 1 when a run did not end with a result line (a crash, a
timeout, exit 1), or with --strict when a criterion was missed once graded;
2 for a usage error; 3 when nothing could run (no solution built, or every
run exited 3: ex13 needs two GPUs and waives itself on one). Standard
library only.
"""
import argparse
import datetime
import itertools
import json
import os
import secrets
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import grade   # noqa: E402  (grader/grade.py: its measure_again)
import margins   # noqa: E402  (grader/margins.py: the runs' distance from a bound)
import rubric as rubrics   # noqa: E402  (grader/rubric.py, beside this file)
from runner import parse_result   # noqa: E402

ROOT = os.path.dirname(HERE)
RUBRICS = os.path.join(ROOT, "grader", "rubrics")


def usage(message):
    print(f"rubric_stress: {message}", file=sys.stderr)
    sys.exit(2)


def exercises_built(bindir, only):
    """The exercises (ex03, ...) whose solution is built in bindir and whose
    rubric exists, in order; with `only`, those named (each must be)."""
    names = sorted(f[:-4] for f in os.listdir(RUBRICS) if f.startswith("ex") and f.endswith(".ini"))
    if only:
        wanted = [w.strip() for w in only.split(",") if w.strip()]
        for w in wanted:
            if w not in names:
                usage(f"--only: no rubric grader/rubrics/{w}.ini "
                      f"(the exercises: {', '.join(names)})")
        names = wanted
    return [ex for ex in names if os.access(os.path.join(bindir, "sol" + ex[2:]), os.X_OK)]


def gpu_name():
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout
        return out.splitlines()[0].strip() if out.strip() else "no-gpu"
    except (OSError, subprocess.SubprocessError):
        return "no-gpu"


def new_folder():
    base = os.path.join("results", "rubric-stress-%s-%s" % (
        "-".join(gpu_name().split()), datetime.date.today().isoformat()))
    path, n = base, 1
    while os.path.exists(path):
        n += 1
        path = f"{base}-{n}"
    return path


def run_one(bindir, exercise, limit):
    """One measure pass of the solution: (exit code, seconds, metrics or None)."""
    nonce = secrets.token_hex(16)
    start = time.monotonic()
    try:
        done = subprocess.run([os.path.join(bindir, "sol" + exercise[2:]), "--grade"],
                              input=f"{nonce}\n", capture_output=True, text=True,
                              timeout=limit)
        code, out = done.returncode, done.stdout
    except subprocess.TimeoutExpired:
        code, out = 124, ""
    metrics = parse_result(out, exercise, "measure", nonce) if code == 0 else None
    return code, round(time.monotonic() - start, 2), metrics


def run(args):
    exercises = exercises_built(args.bindir, args.only)
    if not exercises:
        print("rubric_stress: no solution is built (make solutions, or --bindir)", file=sys.stderr)
        return 3
    folder = args.out or new_folder()
    os.makedirs(folder, exist_ok=True)
    limits = {ex: rubrics.load(os.path.join(RUBRICS, ex + ".ini"), ex)["time_limit_s"]
              for ex in exercises}
    with open(os.path.join(folder, "runs.jsonl"), "a", encoding="utf-8") as log:
        for r in range(1, args.runs + 1):
            for ex in exercises:
                code, seconds, metrics = run_one(args.bindir, ex, limits[ex])
                log.write(json.dumps({"program": "sol" + ex[2:], "exercise": ex, "round": r,
                                      "exit_code": code, "seconds": seconds,
                                      "metrics": metrics}) + "\n")
                log.flush()
            print(f"rubric_stress: round {r} of {args.runs} done", file=sys.stderr)
    return summary([folder], args.strict)


def number(value):
    return "-" if value is None else rubrics.fmt(value)


def outcome_of(rubric, metrics):
    """A measure pass that ran and printed `metrics`, as grade.py records it."""
    return {"exercise": rubric["exercise"], "source": "solution", "build": {"ok": True},
            "measure": {"status": "ok", "metrics": metrics}}


def judge_runs(rubric, runs):
    """Per criterion: {criterion, passed, graded, values} over `runs` (each a
    dict of metrics), each scored against the next one as its reference; a
    value relative to the solution is kept as its ratio to that reference's.
    passed counts the runs that met it at once; graded those that met it
    after grade.py's own measure_again, the runs it makes again being the
    ones that follow in `runs` (the reference's before the student's, as the
    grader orders them)."""
    rows = {c["name"]: {"criterion": c, "passed": 0, "graded": 0, "values": []}
            for c in rubric["criteria"]}
    n = len(runs)
    for i, metrics in enumerate(runs):
        reference = runs[(i + 1) % n] if n > 1 else None
        outcome = outcome_of(rubric, metrics)
        first = rubrics.score(rubric, outcome, reference)
        following = (outcome_of(rubric, runs[(i + j) % n]) for j in itertools.count(1))
        ref_outcome = None if reference is None else outcome_of(rubric, reference)
        grade.measure_again(rubric, outcome, ref_outcome,
                            lambda: next(following), lambda: next(following))
        graded = rubrics.score(rubric, outcome, reference) if "pairs" in outcome else first
        for result, after in zip(first["criteria"], graded["criteria"]):
            row = rows[result["name"]]
            c = row["criterion"]
            row["passed"] += bool(result["passed"])
            row["graded"] += bool(after["passed"])
            value = rubrics.metric_value(metrics, c["metric"])
            if value is not None and c["relative"] is not None:
                ref = rubrics.metric_value(reference, c["metric"])
                value = value / ref if ref else None
            if value is not None:
                row["values"].append(value)
    return list(rows.values())


def read_runs(folder):
    path = os.path.join(folder, "runs.jsonl")
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError) as e:
        usage(f"{path}: {e}")


def summary(folders, strict=False):
    """Scores the runs kept in each folder, pools them, prints the table."""
    pooled, failed, waived, total = {}, [], 0, 0
    for folder in folders:
        by_exercise = {}
        for rec in read_runs(folder):
            total += 1
            if rec["exit_code"] == 3:
                waived += 1
            elif rec["metrics"] is None:
                failed.append(rec)
            else:
                by_exercise.setdefault((rec["program"], rec["exercise"]), []).append(rec["metrics"])
        for (program, ex), runs in by_exercise.items():
            rubric = rubrics.load(os.path.join(RUBRICS, ex + ".ini"), ex)
            for row in judge_runs(rubric, runs):
                key = (program, row["criterion"]["name"])
                into = pooled.setdefault(key, {"criterion": row["criterion"], "passed": 0,
                                               "graded": 0, "runs": 0, "values": []})
                into["passed"] += row["passed"]
                into["graded"] += row["graded"]
                into["runs"] += len(runs)
                into["values"] += row["values"]
    lines = ["program  criterion                        level  met        graded          min"
             "     median        max  bound           95% bound on misses  sds to bound"]
    missed = 0
    # by program, each program's criteria in its rubric's order (a stable sort)
    for key in sorted(pooled, key=lambda key: key[0]):
        row, program = pooled[key], key[0]
        c, n, values = row["criterion"], row["runs"], row["values"]
        missed += n - row["graded"]
        if c["max"] is not None:
            bound = f"<= {number(c['max'])}"
        elif c["relative"] is not None:
            bound = f">= {number(c['relative'])} x ref"
        else:
            bound = f">= {number(c['min'])}"
        low = c["relative"] if c["relative"] is not None else c["min"]
        tail = margins.words(*margins.normal_tail(values, low, c["max"]))
        bound3 = min(100.0, 300.0 / n)   # no miss in n: below 3/n, 95% confidence
        rate = (f"{bound3:.1f}%" if bound3 < 10 else f"{bound3:.0f}%") \
            if row["graded"] == n else f"{n - row['graded']} seen"
        lines.append(f"{program:8} {c['name']:32} {c['level']:5}  "
                     f"{row['passed']:>3} of {n:<3} {row['graded']:>3} of {n:<3} "
                     f"{number(min(values)) if values else '-':>8} "
                     f"{number(statistics.median(values)) if values else '-':>10} "
                     f"{number(max(values)) if values else '-':>10}  {bound:15} {rate:20} {tail}")
    for rec in failed:
        lines.append(f"failed: {rec['program']} round {rec['round']} exit {rec['exit_code']} "
                     "without a result line")
    lines.append(f"rubric_stress: {total} runs, {waived} waived (exit 3), "
                 f"{len(failed)} failed; {missed} criteria missed once graded")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if len(folders) == 1:
        with open(os.path.join(folders[0], "summary.txt"), "w", encoding="utf-8") as f:
            f.write(text)
    if failed or (strict and missed):
        return 1
    return 3 if not pooled else 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    r = sub.add_parser("run", help="run the solutions N times, then summarise")
    r.add_argument("--runs", type=int, default=1)
    r.add_argument("--only", default="")
    r.add_argument("--bindir", default=".")
    r.add_argument("--out", default="")
    r.add_argument("--strict", action="store_true")
    s = sub.add_parser("summary", help="score the runs kept in DIR")
    s.add_argument("folders", nargs="+", metavar="DIR")
    s.add_argument("--strict", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "summary":
        return summary(args.folders, args.strict)
    if not 1 <= args.runs <= 1000:
        usage(f"--runs must be from 1 to 1000 (got {args.runs})")
    return run(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
