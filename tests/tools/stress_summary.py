#!/usr/bin/env python3
"""The table at the end of `make stress` (tests/stress.sh), from its folder.

    stress_summary.py FOLDER [--strict]

FOLDER holds runs.csv, one row per run the runner made
(program,mode,run,exit_code,seconds,report), and each run's --csv report.
For each program and mode this prints, per verdict, how often its effect was
observed, how many runs needed re-measuring and how many re-measurements
they used, the verdict's value, min / median / max, and how far the runs
lay inside the verdict's limits in their spread toward them, with the share
of misses a normal spread would give (grader/margins.py: what it is and
what it is worth); then the exit codes
seen and the spread of the machine probes. Then it names every run that
failed. The same table goes to FOLDER/summary.txt, the same numbers to
FOLDER/summary.csv (with rows for the probes, and for a comparison no
verdict followed: their `observed` is empty).

Re-measurements come from the rows `lab,WHAT,attempts,N,count`: comparison
WHAT was measured N times, N - 1 of them again because the lab saw
interference. A lab reports a comparison's attempts, then the verdicts that
comparison decides (lab_attempt, then report_verdict), so a verdict belongs
to the comparison whose attempts row came last before it; the machine
probe's rows, which lab_end writes, close the last comparison. A verdict
with no comparison before it shows '-'.

Exit status: 1 when a run exited 1 (results wrong) or anything but 0, 3 and
4 (a crash, a timeout); with --strict also when a verdict was not observed in
every run that was not waived; 3 when every run was waived (exit 3: nothing
could run here) and none of them judged a verdict; 0 otherwise. Standard
library only.

A waived run (exit 3) still counts the verdicts its report judged: lab14 on
one GPU judges parts 1 and 2, then says part 3 cannot run, and since "cannot
run here" outranks "not observed" in a lab's exit code (report_finish), a
miss in part 1 would otherwise hide behind the exit 3.
"""
import argparse
import csv
import os
import signal
import statistics
import sys
from collections import OrderedDict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "grader"))
import margins  # noqa: E402  (grader/margins.py: the runs' distance from a limit)

SUMMARY_HEADER = ["program", "mode", "verdict", "observed", "runs", "remeasured_runs",
                  "remeasurements", "min", "median", "max", "unit", "sds_to_limit"]
FINE = {0, 3, 4}          # exit codes that are not failures (lab_end's codes)
WAIVED = 3                # cannot run here: neither a failure nor, unless it judged verdicts, a run
PROBES = ("machine at start", "machine at end")


def exit_meaning(code):
    """What an exit code says about a run, in words."""
    words = {0: "effect observed", 1: "results wrong", 2: "usage error",
             3: "waived: cannot run here", 4: "effect not observed",
             124: "timed out (ran past LAB_TIMEOUT)", 127: "could not start"}
    if code in words:
        return words[code]
    if code == 137:
        return "killed (timed out and did not stop, or out of memory)"
    if code > 128:
        try:
            return f"killed by {signal.Signals(code - 128).name}"
        except ValueError:
            pass
    return "crashed"


def number(text):
    try:
        return float(text)
    except ValueError:
        return None


def read_report(path):
    """A run's report as {verdicts, values, units, limits, attempts, decided_by,
    probes}: limits maps a verdict to its {"min": x, "max": y}, as far as the
    report gives them (reports before 2026-11-25 do not); attempts lists
    [comparison, N, whether a verdict followed]; decided_by maps a verdict to
    the [comparison, N] before it. A report a crash cut short gives what it
    has (rows not of 5 fields are skipped)."""
    got = {"verdicts": OrderedDict(), "values": {}, "units": {}, "limits": {}, "attempts": [],
           "decided_by": {}, "probes": {}}
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError:
        return got
    comparison = None   # the comparison whose verdicts come next
    for row in rows:
        if len(row) != 5:
            continue
        _, variant, metric, value, unit = row
        v = number(value)
        if v is None:
            continue
        if variant == "verdict" and unit == "observed":
            got["verdicts"][metric] = v == 1
            if comparison is not None:
                got["decided_by"][metric] = comparison[:2]
                comparison[2] = True
        elif variant == "verdict" and metric.endswith("_value"):
            got["values"][metric[:-len("_value")]] = v
            got["units"][metric[:-len("_value")]] = unit
        elif variant == "verdict" and metric.endswith(("_min", "_max")):
            got["limits"].setdefault(metric[:-4], {})[metric[-3:]] = v
        elif metric == "attempts":
            comparison = [variant, int(v), False]
            got["attempts"].append(comparison)
        elif variant in PROBES:
            got["probes"][(variant, metric)] = (v, unit)
            comparison = None
    return got


def last_line(path):
    """The last line of text in a file, or "" (a lab says why it cannot run on one line)."""
    try:
        with open(path, errors="replace") as f:
            said = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    return said[-1] if said else ""


def fmt(v):
    return "-" if v is None else f"{v:.4g}"


def spread(values):
    """min, median, max of a list, or three Nones."""
    if not values:
        return None, None, None
    return min(values), statistics.median(values), max(values)


class Group:
    """The runs of one program in one mode."""

    def __init__(self, program, mode):
        self.program, self.mode = program, mode
        self.runs = []      # (run number, exit code, report path)
        self.reports = []   # read_report() of each run not waived or that judged verdicts
        self.waived_why = ""  # what the first waived run said on stderr
        self.waived_judged = 0  # waived runs whose verdicts are counted all the same

    def summarise(self):
        """Rows for summary.csv and lines for the table."""
        n = len(self.reports)
        exits = {}
        for _, code, _ in self.runs:
            exits[code] = exits.get(code, 0) + 1
        waived = exits.get(WAIVED, 0)
        exit_line = "  exit codes: " + ", ".join(f"exit {c}: {k}" for c, k in sorted(exits.items()))
        lines = [f"{self.program} {self.mode} ({len(self.runs)} runs)"]
        rows = []
        if not n:
            lines += [f"  every run waived (exit 3): {self.waived_why or 'it cannot run here'}",
                      exit_line]
            return rows, lines, []

        names = list(OrderedDict.fromkeys(v for r in self.reports for v in r["verdicts"]))
        short = []          # (verdict, observed, runs) where observed < runs
        table = []
        for name in names:
            observed = sum(1 for r in self.reports if r["verdicts"].get(name))
            missing = sum(1 for r in self.reports if name not in r["verdicts"])
            values = [r["values"][name] for r in self.reports if name in r["values"]]
            unit = next((r["units"][name] for r in self.reports if name in r["units"]), "")
            # the attempts of the comparison that decided it, run by run
            again = [r["decided_by"][name][1] for r in self.reports if name in r["decided_by"]]
            by = next((r["decided_by"][name][0] for r in self.reports
                       if name in r["decided_by"]), "-")
            low, mid, high = spread(values)
            limits = next((r["limits"][name] for r in self.reports if name in r["limits"]), {})
            z, rate = margins.normal_tail(values, limits.get("min"), limits.get("max"))
            remeasured = sum(1 for a in again if a > 1) if again else None
            remeasurements = sum(a - 1 for a in again) if again else None
            rows.append([self.program, self.mode, name, observed, n,
                         "" if remeasured is None else remeasured,
                         "" if remeasurements is None else remeasurements,
                         *("" if x is None else f"{x:.6g}" for x in (low, mid, high)), unit,
                         "" if z is None else f"{z:.3g}"])
            seen = f"{observed} of {n}" + (f" ({100 * observed / n:.0f}%)" if observed < n else "")
            if missing:
                seen += f", missing in {missing}"
            table.append((name, seen, "-" if remeasured is None else str(remeasured),
                          "-" if remeasurements is None else str(remeasurements),
                          fmt(low), fmt(mid), fmt(high), unit, margins.words(z, rate), by))
            if observed < n:
                short.append((name, observed, n))
        head = ("verdict", "observed", "re-measured runs", "re-measurements", "min", "median",
                "max", "unit", "sds to limit", "comparison")
        width = max(len(t[0]) for t in [head] + table)
        seen_w = max(len(t[1]) for t in [head] + table)
        unit_w = max(len(t[7]) for t in [head] + table)
        tail_w = max(len(t[8]) for t in [head] + table)
        if table:
            for t in [head] + table:
                lines.append(f"  {t[0]:<{width}}  {t[1]:<{seen_w}}  {t[2]:>16}  {t[3]:>15}"
                             f"  {t[4]:>9}  {t[5]:>9}  {t[6]:>9}  {t[7]:<{unit_w}}"
                             f"  {t[8]:<{tail_w}}  {t[9]}")
        else:
            lines.append("  no verdict rows in its reports")

        # Comparisons no verdict followed: counted on their own.
        alone = OrderedDict()
        for r in self.reports:
            for what, attempts, followed in r["attempts"]:
                if not followed:
                    alone.setdefault(what, []).append(attempts)
        for what, again in alone.items():
            remeasured = sum(1 for a in again if a > 1)
            low, mid, high = spread(again)
            rows.append([self.program, self.mode, what, "", len(again), remeasured,
                         sum(a - 1 for a in again), low, mid, high, "attempts", ""])
            lines.append(f"  comparison '{what}', no verdict after it: re-measured in "
                         f"{remeasured} of {len(again)} runs, {sum(a - 1 for a in again)} "
                         "re-measurements in all")

        # The machine probes: how much the machine itself varied over the runs.
        metrics = list(OrderedDict.fromkeys(m for r in self.reports for _, m in r["probes"]))
        if metrics:
            lines.append(f"  {'machine probe':<{width}}  {'at start: min - max':>24}"
                         f"  {'at end: min - max':>24}")
            for metric in metrics:
                cells, unit = [], ""
                for when in PROBES:
                    got = [r["probes"][(when, metric)] for r in self.reports
                           if (when, metric) in r["probes"]]
                    values = [v for v, _ in got]
                    unit = unit or next((u for _, u in got), "")
                    low, mid, high = spread(values)
                    cells.append(f"{fmt(low)} - {fmt(high)}" if values else "-")
                    if values:
                        rows.append([self.program, self.mode, f"{when}: {metric}", "",
                                     len(values), "", "", f"{low:.6g}", f"{mid:.6g}",
                                     f"{high:.6g}", unit, ""])
                lines.append(f"  {metric:<{width}}  {cells[0]:>24}  {cells[1]:>24}  {unit}")
        why, judged = self.waived_why or "cannot run here", self.waived_judged
        if waived and judged == waived:
            exit_line += (f" (the {waived} waived judged the verdicts above before stopping,"
                          f" and are counted: {why})")
        elif waived and judged:
            exit_line += (f" (of the {waived} waived, {judged} judged verdicts and are counted"
                          f" above, {waived - judged} judged nothing and are left out: {why})")
        elif waived:
            exit_line += f" (the {waived} waived left out of the counts above: {why})"
        lines.append(exit_line)
        return rows, lines, short


def summarise(folder, strict):
    runs_csv = os.path.join(folder, "runs.csv")
    try:
        with open(runs_csv, newline="") as f:
            runs = list(csv.DictReader(f))
    except OSError as e:
        print(f"stress_summary.py: {runs_csv}: {e.strerror} (is {folder} a folder that "
              "`make stress` wrote?)", file=sys.stderr)
        return 1
    groups = OrderedDict()
    failed = []
    for run in runs:
        try:
            code = int(run["exit_code"])
        except (KeyError, TypeError, ValueError):
            print(f"stress_summary.py: {runs_csv}: malformed row {run}", file=sys.stderr)
            return 1
        key = (run["program"], run["mode"])
        group = groups.setdefault(key, Group(*key))
        report = os.path.join(folder, run["report"])
        group.runs.append((run["run"], code, report))
        err = os.path.splitext(run["report"])[0] + ".err"
        got = read_report(report)
        if code != WAIVED:
            group.reports.append(got)
        else:
            if got["verdicts"]:
                group.reports.append(got)
                group.waived_judged += 1
            if not group.waived_why:
                group.waived_why = last_line(os.path.join(folder, err))
        if code not in FINE:
            said = f"; its stderr: {err}" if os.path.exists(os.path.join(folder, err)) else ""
            failed.append(f"  {run['report']}: exit {code}, {exit_meaning(code)}{said}")

    lines, rows, short = [], [], []
    for group in groups.values():
        g_rows, g_lines, g_short = group.summarise()
        rows += g_rows
        lines += g_lines + [""]
        short += [(group.program, group.mode, *s) for s in g_short]

    total = len(runs)
    waived = sum(1 for r in runs if int(r["exit_code"]) == WAIVED)
    status = 1 if failed else 0
    if failed:
        lines.append(f"!!! {len(failed)} of {total} runs FAILED (results wrong, a crash or a "
                     "timeout):")
        lines += failed
    if strict and short:
        lines.append(f"!!! STRICT=1: {len(short)} verdict(s) not observed in every run:")
        lines += [f"  {p} {m} {v}: observed {k} of {n}" for p, m, v, k, n in short]
        status = 1
    judged = sum(g.waived_judged for g in groups.values())
    if total and waived == total and not judged:
        lines.append(f"stress: all {total} runs waived (exit 3): nothing could run here")
        status = 3
    else:
        said = [f"{total} runs"] + ([f"{waived} waived"] if waived else []) + \
               ([f"{len(failed)} FAILED"] if failed else [])
        always = ("every verdict observed in every run" if not short else
                  f"{len(short)} verdict(s) not observed in every run"
                  + ("" if strict else " (STRICT=1 fails on that)"))
        lines.append(f"stress: {', '.join(said)}; {always}; exit {status}")

    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    with open(os.path.join(folder, "summary.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(folder, "summary.csv"), "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(SUMMARY_HEADER)
        writer.writerows(rows)
    return status


def main(argv):
    parser = argparse.ArgumentParser(prog="stress_summary.py",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("folder", help="a folder `make stress` wrote")
    parser.add_argument("--strict", action="store_true",
                        help="fail when a verdict was not observed in every run")
    args = parser.parse_args(argv)
    return summarise(args.folder, args.strict)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
