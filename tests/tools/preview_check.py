#!/usr/bin/env python3
"""Holds the exercises' points preview (exercises/given/rubric.c, through
build/tests/preview_test) to the grader's scoring (grader/rubric.py).

    preview_check.py PREVIEW_TEST RECORDED_DIR [RUBRICS_DIR]

For every recorded run in RECORDED_DIR (*/outcomes/exNN.json) whose measure
pass measured, scores its metrics with both against RUBRICS_DIR/exNN.ini
(default grader/rubrics; each level's subtotal too, where a rubric has a
second level), as one run without a reference
solution: as recorded, then with each criterion's metric set exactly on its
bound (and on and past its model_limit), and with it missing; a criterion
with judged_by, with that metric 0 and missing: the same points, and the
same criteria flagged. Prints how many it compared; exits 1 naming the
first run and metrics on which the two differ.
"""
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "grader"))
import rubric  # noqa: E402


def variants(rb, metrics):
    """The metrics as recorded, then each criterion's on its bound, then without it."""
    yield metrics
    for c in rb["criteria"]:
        bound = c["max"] if c["max"] is not None else c["min"]
        yield dict(metrics, **{c["metric"]: bound})
        if c["limit"] is not None:   # on the model's limit, and just past it
            past = c["limit"] * (1.01 if c["max"] is None else 0.99) - (c["limit"] == 0)
            yield dict(metrics, **{c["metric"]: c["limit"]})
            yield dict(metrics, **{c["metric"]: past})
        yield {k: v for k, v in metrics.items() if k != c["metric"]}
        if c["judged_by"]:   # a run whose premise did not hold, and one without the metric
            yield dict(metrics, **{c["judged_by"]: 0})
            yield {k: v for k, v in metrics.items() if k != c["judged_by"]}


def main(tool, recorded, rubrics=ROOT / "grader" / "rubrics"):
    compared = 0
    for path in sorted(Path(recorded).glob("*/outcomes/ex*.json")):
        outcome = json.loads(path.read_text(encoding="utf-8"))
        measure = outcome.get("measure") or {}
        if measure.get("status") != "ok":
            continue
        ex = outcome["exercise"]
        ini = Path(rubrics) / f"{ex}.ini"
        rb = rubric.load(ini, ex)
        numbers = {k: v for k, v in measure["metrics"].items()
                   if isinstance(v, (int, float)) and not isinstance(v, bool)}
        for metrics in variants(rb, numbers):
            one_run = dict(outcome, measure=dict(measure, metrics=metrics), check=None)
            py = rubric.score(rb, one_run, None)
            want = [f"{c['name']} {rubric.fmt(c['points'])}" + (" flagged" if c.get("flag") else "")
                    for c in py["criteria"]]
            want += [f"level-{x['level']} {rubric.fmt(x['points'])}" for x in py.get("levels", [])]
            want.append(f"total {rubric.fmt(py['points'])}")
            out = subprocess.run([tool, str(ini)] + [f"{k}={v!r}" for k, v in metrics.items()],
                                 capture_output=True, text=True, check=True).stdout
            got = [" ".join(w[:2] + ["flagged"] * (w[2:3] == ["flagged:"]))
                   for w in (line.split() for line in out.splitlines())]
            if got != want:
                sys.exit(f"{path} with {metrics}: the preview gives {got}, the grader {want}")
            compared += 1
    print(f"{compared} sets of metrics: the same points")


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    main(*sys.argv[1:])
