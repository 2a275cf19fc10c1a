#!/usr/bin/env python3
"""Pools `make stress` summaries of several machines into one table per
verdict: how many runs, how often observed, how often re-measured, the
widest range seen, on how many machines, and the 95% bound on its miss rate.

    stress_pool.py [--programs lab07,lab08] [MACHINE=]SUMMARY.csv ...

Each SUMMARY.csv is one `make stress` folder's summary.csv (tests/stress.sh);
MACHINE names the machine it ran on (two summaries of one machine share
it; default: each file a machine of its own). Its verdict rows are those with an `observed` count (the
probe rows have none). Quick and default runs pool together: a verdict's
miss rate is what a student meets whichever they run. The bound: with m
misses in n runs, a miss rate above (m + 3) / n would have shown more misses
with 95% confidence (the rule of three, and its shift by m for a few misses:
rough, but on the safe side). Prints a Markdown table. Standard library only.
"""
import argparse
import csv
import sys
from collections import OrderedDict


def pool(paths, programs=None):
    """{(program, verdict): dict of the pooled numbers}, in first-seen order."""
    rows = OrderedDict()
    for arg in paths:
        machine, _, path = arg.rpartition("=")
        machine = machine or path
        with open(path, newline="") as f:
            for r in csv.DictReader(f):
                if not r["observed"] or (programs and r["program"] not in programs):
                    continue
                p = rows.setdefault((r["program"], r["verdict"]), {
                    "runs": 0, "observed": 0, "remeasured": 0, "min": float("inf"),
                    "max": float("-inf"), "unit": r["unit"], "machines": set()})
                p["runs"] += int(r["runs"])
                p["observed"] += int(r["observed"])
                if r["remeasured_runs"] not in ("", "-"):
                    p["remeasured"] += int(r["remeasured_runs"])
                p["min"] = min(p["min"], float(r["min"]))
                p["max"] = max(p["max"], float(r["max"]))
                p["machines"].add(machine)
    return rows


def table(rows):
    lines = ["| program | verdict | runs | observed | re-measured runs | range seen | machines "
             "| 95% bound on misses |", "|---|---|---|---|---|---|---|---|"]
    for (program, verdict), p in rows.items():
        misses = p["runs"] - p["observed"]
        bound = (misses + 3) / p["runs"]
        lines.append(f"| {program} | {verdict} | {p['runs']} | {p['observed']} | "
                     f"{p['remeasured']} | {p['min']:.4g} to {p['max']:.4g} {p['unit']} | "
                     f"{len(p['machines'])} | {bound:.1%} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", help="comma-separated programs to keep (default: all)")
    ap.add_argument("summaries", nargs="+", help="[MACHINE=]summary.csv files")
    a = ap.parse_args()
    try:
        rows = pool(a.summaries, a.programs.split(",") if a.programs else None)
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"stress_pool.py: {e}")
    if not rows:
        sys.exit("stress_pool.py: no verdict rows in those summaries")
    print(table(rows))


if __name__ == "__main__":
    main()
