#!/usr/bin/env python3
"""Makes tests/fixtures/h100-lab14/lab14.csv from a real lab14 report in JSON:
the rows figure 10 reads, as `./lab14 --csv` prints them.

  tests/tools/lab14_csv_fixture.py IN.json > OUT.csv

Where the numbers come from: tests/fixtures/h100-lab14.json is `./lab14
--json` (default settings) on an H100, 2026-11-24, as recorded, unchanged.
No GPU had run `./lab14 --csv` yet; figure 10 reads the CSV, so this writes
it from that run. Each measurement's rows are what common/report.c's CSV
writer prints for the same call: values with %.10g, fields quoted as RFC
4180 quotes them, a report_compare() as its predicted_, model_, median,
_p5 and _p95 rows, a report_stats() as the last three, in the order of the
JSON's measurements. Unlike tests/tools/lab13_csv_fixture.py, it does not
place the checks and verdicts between them (the JSON keeps them apart): they
follow the measurements here, and the exit code ends the file. The figure
reads neither. A real `./lab14 --csv` (the GPU script's) replaces this file.
"""
import json
import sys


def field(text):
    """common/report.c's csv_field(): quoted only when it must be."""
    text = str(text)
    if not any(c in text for c in ',"\n'):
        return text
    return '"' + text.replace('"', '""') + '"'


def number(v):
    if v is None:
        raise SystemExit("lab14_csv_fixture: a null value: the CSV's text for it is unknown")
    return "%.10g" % v


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    with open(argv[1]) as f:
        doc = json.load(f)
    if doc.get("lab") != "lab14":
        raise SystemExit(f"lab14_csv_fixture: {argv[1]} is not a lab14 report")
    out = ["lab,variant,metric,value,unit"]

    def row(variant, metric, value, unit):
        out.append(",".join(field(x) for x in ("lab14", variant, metric, value, unit)))

    device = doc["device"]
    row("device", "name", device["name"], "text")
    row("device", "compute_capability", device["compute_capability"], "text")
    row("device", "sm_count", number(device["sm_count"]), "count")
    for name, p in doc["parameters"].items():
        row("parameter", name, number(p["value"]), p["unit"])
    predictions = list(doc["predictions"])
    for m in doc["measurements"]:
        variant, metric, unit = m["variant"], m["metric"], m["unit"]
        if "stats" not in m:
            row(variant, metric, number(m["value"]), unit)
            continue
        if predictions and (predictions[0]["variant"], predictions[0]["metric"]) == (variant, metric):
            p = predictions.pop(0)
            row(variant, "predicted_" + metric, number(p["value"]), unit)
            row(variant, "model_" + metric, p["model"], "text")
        s = m["stats"]
        row(variant, metric, number(s["median"]), unit)
        row(variant, metric + "_p5", number(s["p5"]), unit)
        row(variant, metric + "_p95", number(s["p95"]), unit)
    if predictions:
        raise SystemExit(f"lab14_csv_fixture: {len(predictions)} predictions without their "
                         "measurement: not a lab14 report as lab14.cu writes it")
    for c in doc["checks"]:
        row("check", c["name"], int(c["passed"]), "pass")
    for v in doc["verdict"]["items"]:
        row("verdict", v["name"], int(v["observed"]), "observed")
        row("verdict", v["name"] + "_value", number(v["value"]), v["unit"])
    row("result", "exit_code", number(doc["exit_code"]), "code")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
