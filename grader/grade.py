#!/usr/bin/env python3
"""Grades the streamlab exercises by measuring what the student's code does.

    grade.py --submission DIR     one student's exNN_*.cu files (make grade)
    grade.py --submissions DIR    every sub-folder of DIR, one per student (make grade-all)
    grade.py --rescore OUT        score the runs recorded in OUT again, with the
                                  rubrics as they are now: no GPU needed

For each exercise it builds the exercise's given program
(exercises/given/exNN.cu) around the student's file, as `make exNN` does:
two translation units, checked (grader/checks.py), linked with a library and
given objects built afresh for this grading run in OUT/_build. It runs the
program with a time limit (the measure pass, --grade), then again at small
sizes (the check pass, --grade --check, under compute-sanitizer memcheck where
installed), and scores the JSON line each pass printed, marked with the nonce
it was handed on stdin, against grader/rubrics/exNN.ini. The reference
solution (solutions/) runs the same program in the same run, for criteria
held relative to it. What the student's code prints is never read.

Writes into OUT (build/grade/<student>, or build/grade/all): report.txt (the
table it prints), grades.csv, junit.xml, and with --format gradescope
Gradescope's results.json per student; outcomes/exNN.json records each run.
Exit codes: 0 graded (whatever the scores), 2 usage or rubric error,
3 cannot run here (no nvcc, or no GPU: every program said so).
exercises/README.md is the instructor's guide.
"""

import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reports  # noqa: E402
import rubric as rubrics  # noqa: E402
from runner import build, find_sanitizer, last_line, run_pass  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
GIVEN_DIR = ROOT / "exercises" / "given"
HARNESS_DIR = ROOT / "grader" / "harness"   # transitional: exercises not yet in exercises/given/
RUBRIC_DIR = ROOT / "grader" / "rubrics"
REFERENCE = "_reference"   # the reference solution's folder under OUT


class Stop(Exception):
    """Ends the run with a message and an exit code."""

    def __init__(self, message, code):
        super().__init__(message)
        self.code = code


# ---- what to grade --------------------------------------------------------------------

def exercises(only, rubric_dir):
    """The exercises with both a rubric and a program, as {name: rubric}."""
    found = {}
    for path in sorted(Path(rubric_dir).glob("ex[0-9][0-9].ini")):
        if (GIVEN_DIR / f"{path.stem}.cu").exists() or (HARNESS_DIR / f"{path.stem}.cu").exists():
            found[path.stem] = path
    if not found:
        raise Stop(f"grade: no rubrics (exNN.ini) in {rubric_dir}", 2)
    wanted = (only or "").replace(",", " ").split()
    unknown = [w for w in wanted if w not in found]
    if unknown:
        raise Stop(f"grade: no exercise {unknown[0]} (there are {', '.join(found)})", 2)
    try:
        return {ex: rubrics.load(path, ex) for ex, path in found.items()
                if not wanted or ex in wanted}
    except rubrics.RubricError as e:
        raise Stop(f"grade: rubric error: {e}", 2) from None


def sources(folder, names):
    """{exercise: the student's exNN_*.cu in folder, or None}."""
    found = {}
    for ex in names:
        files = sorted(folder.glob(f"{ex}_*.cu"))
        if len(files) > 1:
            raise Stop(f"grade: {folder} holds {len(files)} files for {ex} "
                       f"({', '.join(f.name for f in files)}): keep one", 2)
        found[ex] = files[0] if files else None
    return found


def students(args):
    """[(name, folder)] to grade."""
    if args.submission is not None:
        folder = Path(args.submission)
        if not args.submission or not folder.is_dir():
            raise Stop(f"grade: SUBMISSION={args.submission}: no such folder", 2)
        return [(folder.resolve().name, folder)]
    root = Path(args.submissions)
    if not args.submissions or not root.is_dir():
        raise Stop(f"grade: SUBMISSIONS={args.submissions}: no such folder", 2)
    found = [(d.name, d) for d in sorted(root.iterdir())
             if d.is_dir() and not d.name.startswith((".", "_"))]
    if not found:
        raise Stop(f"grade: SUBMISSIONS={args.submissions} holds no student folders "
                   "(one sub-folder per student)", 2)
    return found


# ---- the compiler ----------------------------------------------------------------------

def toolchain(out, jobs):
    """Builds the library and the given programs' objects for this grading run,
    afresh, into OUT/_build (make grade-flags), and returns the compiler, the
    flags and those paths. Nothing in the shared build/, nor anything a
    submission could have left in OUT/_build last time, is linked. (An OUT
    whose path make cannot take, with spaces or quotes, gets a fresh temporary
    folder instead.)"""
    private = out.resolve() / "_build"
    if re.search(r"[^\w./+-]", str(private)):
        private = Path(tempfile.mkdtemp(prefix="streamlab-grade-"))
    shutil.rmtree(private, ignore_errors=True)
    print(f"grade: building the library and the given programs in {private}", file=sys.stderr)
    proc = subprocess.run(["make", "-s", "--no-print-directory", f"-j{jobs}", f"BUILD={private}",
                           "grade-flags"], cwd=ROOT, capture_output=True, text=True)
    if proc.returncode != 0:
        raise Stop("grade: cannot build here: " + (last_line(proc.stderr) or "make failed"), 3)
    tools = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    if not {"NVCC", "NVCCFLAGS", "EX_NVCCFLAGS", "LIB", "LDLIBS", "GRADING_OBJ",
            "DEFINERS"} <= tools.keys():
        raise Stop("grade: make grade-flags printed no NVCC, NVCCFLAGS, EX_NVCCFLAGS, LIB, "
                   "LDLIBS, GRADING_OBJ and DEFINERS", 3)
    return tools


# ---- grading -------------------------------------------------------------------------------

def grade_exercise(config, rubric, student, source, work, built, check=True):
    """What happened to one exercise, recorded as outcomes/exNN.json: the
    student, the source's name, the build, and each pass."""
    ex = rubric["exercise"]
    outcome = {"student": student, "exercise": ex, "source": source.name if source else None,
               "build": built, "measure": None, "check": None}
    if not source or not built["ok"]:
        return outcome
    limit = config["time_limit"] or rubric["time_limit_s"]
    outcome["measure"] = run_pass(config, ex, work, "measure", limit)
    if check and outcome["measure"]["status"] == "ok":
        if config["sanitizer"] and not config["time_limit"]:
            limit = rubric["memcheck_time_limit_s"]
        outcome["check"] = run_pass(config, ex, work, "check", limit)
    return outcome


def build_all(config, jobs):
    """Builds every (student, exercise) program at once, in parallel: {job: build}."""
    def one(job):
        _, _, source, work = job
        if not source:
            return None
        if config["fake_harness"]:
            work.mkdir(parents=True, exist_ok=True)
            return {"ok": True, "error": ""}
        return build(config["tools"], job[1], source, work)
    with concurrent.futures.ThreadPoolExecutor(max_workers=config["jobs"]) as pool:
        return dict(zip(jobs, pool.map(one, jobs)))


def grade_runs(args, rubric_set, out):
    """Builds, runs and records: ({student: [outcome]}, {exercise: reference outcome})."""
    config = {"fake_harness": args.fake_harness, "time_limit": args.time_limit,
              "jobs": args.jobs or os.cpu_count() or 1, "tools": None, "sanitizer": None}
    people = students(args)
    single = args.submission is not None
    solutions = None if args.no_reference else Path(args.solutions or ROOT / "solutions")

    jobs = []   # (student, exercise, source, work folder)
    for name, folder in people:
        home = out if single else out / name
        for ex, source in sources(folder, rubric_set).items():
            jobs.append((name, ex, source, home / "work" / ex))
    if solutions and solutions.is_dir():
        for ex, source in sources(solutions, rubric_set).items():
            jobs.append((REFERENCE, ex, source, out / REFERENCE / "work" / ex))
    if not args.fake_harness:   # once the folders are known to be sound: it takes a while
        config["tools"] = toolchain(out, config["jobs"])
    if not args.no_memcheck:
        config["sanitizer"] = find_sanitizer(config["tools"])
    config["memcheck_note"] = ("memcheck off" if args.no_memcheck
                               else "" if config["sanitizer"] else "memcheck not available")
    count = sum(1 for j in jobs if j[2])
    print(f"grade: building {count} program{'' if count == 1 else 's'}", file=sys.stderr)
    built = build_all(config, jobs)

    graded, reference = {}, {}
    for job in jobs:   # the reference first: its numbers are the ones criteria compare to
        name, ex, source, work = job
        if name != REFERENCE:
            continue
        print(f"grade: the reference solution, {ex}", file=sys.stderr)
        reference[ex] = grade_exercise(config, rubric_set[ex], name, source, work,
                                       built[job], check=False)
        _record(out / REFERENCE, reference[ex])
    for job in jobs:
        name, ex, source, work = job
        if name == REFERENCE:
            continue
        print(f"grade: {name}, {ex}", file=sys.stderr)
        start = time.monotonic()
        outcome = grade_exercise(config, rubric_set[ex], name, source, work, built[job])
        outcome["seconds"] = round(time.monotonic() - start, 2)
        graded.setdefault(name, []).append(outcome)
        _record(out if single else out / name, outcome)
    context = {"memcheck": config["sanitizer"] or config["memcheck_note"],
               "solutions": str(solutions) if reference else None}
    return graded, reference, context


def _record(home, outcome):
    folder = home / "outcomes"
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / f"{outcome['exercise']}.json", "w", encoding="utf-8") as f:
        json.dump(outcome, f, indent=1)
        f.write("\n")


def load_recorded(folder, rubric_set):
    """Outcomes recorded by an earlier run in `folder`, for --rescore."""
    graded, reference = {}, {}
    for path in sorted(folder.glob("outcomes/*.json")) + sorted(folder.glob("*/outcomes/*.json")):
        try:
            outcome = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise Stop(f"grade: {path}: not a recorded outcome ({e})", 2) from None
        if outcome.get("exercise") not in rubric_set:
            continue
        if path.parent.parent.name == REFERENCE:
            reference[outcome["exercise"]] = outcome
        else:
            graded.setdefault(outcome["student"], []).append(outcome)
    if not graded:
        raise Stop(f"grade: --rescore {folder}: no recorded outcomes (outcomes/exNN.json) "
                   "there", 2)
    return graded, reference, {"memcheck": "as recorded",
                               "solutions": "as recorded" if reference else None}


def reference_metrics(outcome):
    if outcome and (outcome.get("measure") or {}).get("status") == "ok":
        return outcome["measure"]["metrics"]
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(
        description="Grade streamlab exercise submissions by measuring them on this GPU.",
        epilog="exercises/README.md is the instructor's guide.")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--submission", metavar="DIR", help="one student's exNN_*.cu files")
    what.add_argument("--submissions", metavar="DIR", help="one sub-folder per student")
    what.add_argument("--rescore", metavar="OUT", help="score the runs recorded in OUT again")
    parser.add_argument("--format", choices=("text", "gradescope"), default="text",
                        help="gradescope also writes results.json per student")
    parser.add_argument("--out", metavar="DIR", help="where the reports go (default "
                        "build/grade/<student>, build/grade/all, or OUT with --rescore)")
    parser.add_argument("--only", metavar="LIST", help="exercises to grade, e.g. ex04,ex06")
    parser.add_argument("--rubrics", metavar="DIR", default=str(RUBRIC_DIR),
                        help="the rubrics (default grader/rubrics)")
    parser.add_argument("--solutions", metavar="DIR", help="the reference solutions "
                        "(default solutions/, when it is there)")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not run the reference solutions: the rubrics' model "
                        "thresholds apply")
    parser.add_argument("--no-memcheck", action="store_true",
                        help="run the check pass without compute-sanitizer")
    parser.add_argument("--time-limit", type=float, metavar="S",
                        help="seconds per pass, replacing the rubrics' limits")
    parser.add_argument("--jobs", type=int, metavar="N", help="builds at once (default: CPUs)")
    parser.add_argument("--fake-harness", metavar="CMD", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.time_limit is not None and not args.time_limit > 0:
        parser.error("--time-limit must be a positive number of seconds")
    try:
        return grade(args)
    except Stop as e:
        print(e, file=sys.stderr)
        return e.code


def grade(args):
    start = time.monotonic()
    rubric_set = exercises(args.only, args.rubrics)
    if args.rescore:
        out = Path(args.out or args.rescore)
        graded, reference, context = load_recorded(Path(args.rescore), rubric_set)
    else:
        default = (Path(args.submission).resolve().name if args.submission else "all")
        out = Path(args.out or ROOT / "build" / "grade" / default)
        out.mkdir(parents=True, exist_ok=True)
        graded, reference, context = grade_runs(args, rubric_set, out)
    out.mkdir(parents=True, exist_ok=True)

    results, notes = [], []
    for ex, outcome in sorted(reference.items()):
        ref = rubrics.score(rubric_set[ex], outcome, reference_metrics(outcome))
        if ref["points"] < ref["max_points"] and ref["status"] != "cannot_run":
            notes.append(f"note: the reference solution scored {rubrics.fmt(ref['points'])}/"
                         f"{rubrics.fmt(ref['max_points'])} on {ex} in this run ({ref['reason']}):"
                         " is the GPU busy? Its scores may not be fair.")
    for name in sorted(graded):
        outcomes = {o["exercise"]: o for o in graded[name]}
        scored = [rubrics.score(rubric_set[ex], outcomes[ex],
                                reference_metrics(reference.get(ex)))
                  for ex in rubric_set if ex in outcomes]
        results.append({"student": name, "exercises": scored,
                        "seconds": sum(o.get("seconds", 0) for o in outcomes.values())})

    devices = {str((o.get("measure") or {}).get("metrics", {}).get("device"))
               for g in graded.values() for o in g
               if ((o.get("measure") or {}).get("metrics") or {}).get("device")}
    heading = (f"streamlab grading on {', '.join(sorted(devices)) or 'no GPU'}; memcheck: "
               f"{context['memcheck']}; reference: "
               f"{context['solutions'] or 'none (the rubrics model thresholds apply)'}")
    text = reports.table(results, heading) + "\n".join(notes)
    print(text)
    (out / "report.txt").write_text(text + "\n", encoding="utf-8")
    reports.write_csv(out / "grades.csv", results)
    reports.write_junit(out / "junit.xml", results)
    written = [out / "report.txt", out / "grades.csv", out / "junit.xml"]
    if args.format == "gradescope":
        for s in results:
            home = out if len(results) == 1 and not args.submissions else out / s["student"]
            home.mkdir(parents=True, exist_ok=True)
            with open(home / "results.json", "w", encoding="utf-8") as f:
                json.dump(reports.gradescope(s), f, indent=1)
            written.append(home / "results.json")
    print(f"grade: wrote {', '.join(str(p) for p in written[:4])}"
          f"{' and more' if len(written) > 4 else ''} in {time.monotonic() - start:.0f} s",
          file=sys.stderr)

    statuses = [e["status"] for s in results for e in s["exercises"]
                if e["status"] not in ("missing", "build_error")]
    if statuses and all(s == "cannot_run" for s in statuses):
        reason = next(e["reason"] for s in results for e in s["exercises"]
                      if e["status"] == "cannot_run")
        raise Stop(f"grade: {reason} (the programs built; grade on a machine with a GPU)", 3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
