#!/usr/bin/env python3
"""Grades one pass of PROGRAM as the grader grades a student's measure pass,
without a GPU: in the grader's sandbox (hiding what grade.py hides), through
runner.run_pass (its output kept, its last words made printable), scored by
the rubric and written by the grader's own reports.

    redteam_grade.py PROGRAM OUT STUDENT EXERCISE [HIDDEN...]

PROGRAM is shown to the sandbox read-only (its folder); OUT gets the
reports (grades.csv, junit.xml, report.txt) and work/measure.stdout, as
grade.py writes them; HIDDEN are more paths no command may see (a class
folder, say). Prints the pass's record as JSON on stdout.
tests/cpu_redteam.bats runs the red-team fixtures through it.
"""
import contextlib
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "grader"))
import grade  # noqa: E402
import rubric  # noqa: E402
import runner  # noqa: E402
import sandbox  # noqa: E402


def main(program, out, student, exercise, *hidden):
    program, out = Path(program).resolve(), Path(out).resolve()
    work = out / "work" / exercise
    work.mkdir(parents=True, exist_ok=True)
    box = sandbox.Sandbox(readonly=[program.parent],
                          hidden=[out, ROOT / "solutions", ROOT / "grader" / "rubrics",
                                  *map(Path, hidden)])
    with tempfile.TemporaryDirectory(prefix="redteam-") as private:
        config = {"fake_harness": str(program), "sandbox": box, "sanitizer": None,
                  "scratch": Path(private), "memcheck_note": "memcheck off"}
        measured = runner.run_pass(config, exercise, work, "measure", 20)
    outcome = {"student": student, "exercise": exercise, "source": f"{exercise}_x.cu",
               "problem": None, "sandbox": box.describe(), "build": {"ok": True, "error": ""},
               "measure": measured, "check": None}
    rb = rubric.load(ROOT / "grader" / "rubrics" / f"{exercise}.ini", exercise)
    scored = [{"student": student, "exercises": [rubric.score(rb, outcome)], "seconds": 0}]
    with contextlib.redirect_stdout(sys.stderr):   # the table it prints: stdout is ours
        grade.write_reports(out, scored, "red-team", [], False, True)
    print(json.dumps(measured))


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
