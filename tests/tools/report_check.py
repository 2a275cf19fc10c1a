#!/usr/bin/env python3
"""Parse and query streamlab reports, so tests check structure, not grep.

  report_check.py csv FILE                 validate CSV; print the row count
  report_check.py json FILE                validate JSON; print the exit code
  report_check.py get FILE PATH            a JSON value by dotted path
                                           (measurements.0.value, verdict.observed)
  report_check.py value FILE VARIANT METRIC
                                           a value from a CSV or JSON report
Exits 1 with the reason when the file does not follow the report format.
"""
import csv
import json
import sys

CSV_HEADER = ["lab", "variant", "metric", "value", "unit"]
JSON_KEYS = {"lab": str, "title": str, "parameters": dict, "measurements": list,
             "predictions": list, "checks": list, "verdict": dict, "exit_code": int,
             "exit_meaning": str}


def fail(msg):
    print(f"report_check: {msg}", file=sys.stderr)
    sys.exit(1)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if not rows or rows[0] != CSV_HEADER:
        fail(f"{path}: first row is not {','.join(CSV_HEADER)}")
    for n, row in enumerate(rows[1:], start=2):
        if len(row) != 5:
            fail(f"{path}:{n}: {len(row)} fields, expected 5: {row}")
        if row[4] != "text":
            try:
                float(row[3])
            except ValueError:
                fail(f"{path}:{n}: value {row[3]!r} is not a number")
    return rows[1:]


def read_json(path):
    with open(path) as f:
        try:
            doc = json.load(f)
        except json.JSONDecodeError as e:
            fail(f"{path}: not JSON: {e}")
    for key, kind in JSON_KEYS.items():
        if not isinstance(doc.get(key), kind):
            fail(f"{path}: '{key}' missing or not a {kind.__name__}")
    for m in doc["measurements"] + doc["predictions"]:
        for key in ("variant", "metric", "value", "unit"):
            if key not in m:
                fail(f"{path}: a measurement lacks '{key}': {m}")
    if not isinstance(doc["verdict"].get("observed"), bool):
        fail(f"{path}: verdict.observed is not true or false")
    return doc


def get(doc, path):
    for part in path.split("."):
        doc = doc[int(part)] if isinstance(doc, list) else doc[part]
    return doc


def show(v):
    print(json.dumps(v) if isinstance(v, (bool, dict, list)) or v is None else v)


def main(argv):
    if len(argv) < 3 or argv[1] not in ("csv", "json", "get", "value"):
        fail(__doc__)
    cmd, path = argv[1], argv[2]
    if cmd == "csv":
        print(len(read_csv(path)))
    elif cmd == "json":
        print(read_json(path)["exit_code"])
    elif cmd == "get":
        try:
            show(get(read_json(path), argv[3]))
        except (KeyError, IndexError, ValueError):
            fail(f"{path}: no value at {argv[3]}")
    else:
        variant, metric = argv[3], argv[4]
        if path.endswith(".csv"):
            rows = [r[3] for r in read_csv(path) if r[1] == variant and r[2] == metric]
        else:
            rows = [m["value"] for m in read_json(path)["measurements"]
                    if m["variant"] == variant and m["metric"] == metric]
        if not rows:
            fail(f"{path}: no {variant} / {metric}")
        show(rows[0])


if __name__ == "__main__":
    main(sys.argv)
