#!/usr/bin/env python3
"""Charts of a results folder that `make results` wrote (see plots/results.sh).

  python3 plots/plot.py all [FOLDER] [--out DIR]     every figure and index.html (make plots)
  python3 plots/plot.py page [FOLDER] [--out DIR]    index.html alone: the folder on one page
  python3 plots/plot.py FIGURE [FOLDER] [--out DIR]  one of: speedups, bandwidth,
                                                     sweep, timeline, latency,
                                                     queues, pipeline, loaders,
                                                     buckets, partitions,
                                                     schedule01, schedule04,
                                                     schedule06, schedule08
  python3 plots/plot.py spread [FOLDER]              each lab's key number over
                                                     RUNS=N runs: a table and spread.csv

FOLDER defaults to the newest folder in results/; the PNGs go into it unless
--out names another. Every number comes from the labs' CSV reports and the
lab04, lab07, lab08 and lab11 traces, and the traced runs of the solutions
sol01, sol04, sol06 and sol08 (their traces and reports). Exit codes: 0
done; 1 the input is missing or malformed (the message names the file and
line); 2 usage.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from data import DataError, Results, newest  # noqa: E402 (after the path is set)

# name -> (module, what it draws[, its arguments]). Each module's
# draw(results, out, **arguments) writes one PNG into out and returns (its
# path, a note or None). They are imported only when drawn, so `spread`
# works where matplotlib is not installed.
FIGURES = {
    "speedups": ("fig_speedups", "1: each lab's fix over its trap, measured and predicted"),
    "bandwidth": ("fig_bandwidth", "2: lab02 bandwidth by copy size"),
    "sweep": ("fig_sweep", "3: lab04 speedup vs compute/copy ratio"),
    "timeline": ("fig_timeline", "4: lab04 timeline, serial above pipelined"),
    "latency": ("fig_latency", "5: lab05 latency distributions"),
    "queues": ("fig_lab07", "6: lab07 kernel pairs depth-first above breadth-first"),
    "pipeline": ("fig_lab08", "7: lab08 host-chained above event-chained"),
    "loaders": ("fig_lab11", "8: lab11 serial loader above 4 producers"),
    "buckets": ("fig_lab13", "9: lab13 speedup vs bucket size, and what decides the overlap"),
    "partitions": ("fig_lab14", "10: lab14 urgent latency three ways, and the trade over k"),
    "schedule01": ("fig_schedule", "11: ex01 solved, its critical chain and the model's bound",
                   {"exercise": "ex01"}),
    "schedule04": ("fig_schedule", "12: ex04 solved, its critical chain and the model's bound",
                   {"exercise": "ex04"}),
    "schedule06": ("fig_schedule", "13: ex06 solved, its critical chain and the model's bound",
                   {"exercise": "ex06"}),
    "schedule08": ("fig_schedule", "14: ex08 solved, its critical chain and the model's bound",
                   {"exercise": "ex08"}),
}


def main(argv):
    parser = argparse.ArgumentParser(
        prog="plot.py", description="Charts of a streamlab results folder.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="figures:\n" + "\n".join(f"  {k:10} {v[1]}" for k, v in FIGURES.items()))
    parser.add_argument("what", choices=["all", "spread", "page"] + list(FIGURES),
                        help="all, spread, page, or one figure")
    parser.add_argument("folder", nargs="?", help="a results folder (default: the newest "
                        "in results/)")
    parser.add_argument("--out", help="where the PNGs go (default: the results folder)")
    parser.add_argument("--variant", help="timeline: the pipelined variant to draw "
                        "(default: the fastest)")
    args = parser.parse_args(argv)
    try:
        results = Results(args.folder or newest())
        if args.what == "spread":
            return spread(results)
        out = args.out or results.folder
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as e:
            raise DataError(f"--out {out}: cannot be created: {e.strerror}")
        if args.what == "page":
            return page(results, out)
        names = list(FIGURES) if args.what == "all" else [args.what]
        failed = draw(results, names, out, args.variant)
        return page(results, out) or failed if args.what == "all" else failed
    except DataError as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 1


def draw(results, names, out, variant):
    """Draws each figure. A figure whose lab was waived here (exit 3, as the
    meta file says) or not run at all (an older results folder: the meta
    file does not name it) is skipped with a note; any other problem is an error,
    reported after the other figures are drawn."""
    try:
        __import__("matplotlib")  # only to say clearly when it is missing
    except ImportError:
        raise DataError(f"matplotlib is not installed for {sys.executable}: "
                        "sudo apt-get install python3-matplotlib, or "
                        "pip install -r plots/requirements.txt")
    import style  # after the check: it imports matplotlib
    errors = 0
    print(f"plots of {results.folder} ({results.provenance}):")
    for name in names:
        module, what, *arguments = FIGURES[name]
        try:
            kwargs = dict(*arguments)
            if name == "timeline" and variant:
                kwargs["variant"] = variant
            path, note = __import__(module).draw(results, out, **kwargs)
            print(f"  {path}" + (f" ({note})" if note else ""))
        except DataError as e:
            style.plt.close("all")  # a figure left half drawn
            stem = READS[name]
            if (results.waived(stem) or results.not_run(stem)) and len(names) > 1:
                print(f"  skipped figure {what}: {results.missing_note(stem)}")
                continue
            print(f"plot.py: figure {what}: {e}", file=sys.stderr)
            errors += 1
    return 1 if errors else 0


# The run of `make results` (a file stem) each figure depends on; figure 1
# reads several labs and leaves out a missing one by itself.
READS = {"speedups": "", "bandwidth": "lab02", "sweep": "lab04",
         "timeline": "lab04-trace", "latency": "lab05", "queues": "lab07-trace",
         "pipeline": "lab08-trace", "loaders": "lab11-trace",
         "buckets": "lab13", "partitions": "lab14", "schedule01": "sol01-trace",
         "schedule04": "sol04-trace", "schedule06": "sol06-trace", "schedule08": "sol08-trace"}


def page(results, out):
    import page as results_page  # standard library only, like data.py
    print(f"  {results_page.write(results, out)} (open it in a browser)")
    return 0


def spread(results):
    from keys import SPREAD_HEADER, spread as spread_rows
    rows, notes = spread_rows(results)
    path = results.path("spread.csv")
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(SPREAD_HEADER)
        writer.writerows(rows)
    print(f"  {'lab':6} {'comparison':52} {'runs':>4} {'min':>8} {'median':>8} {'max':>8}"
          f" {'model':>8}")
    for lab, what, runs, low, median, high, predicted, unit in rows:
        model = f"{predicted:.2f}{unit}" if predicted != "" else "-"
        print(f"  {lab:6} {what:52} {runs:>4} {low:>7.2f}{unit} {median:>7.2f}{unit} "
              f"{high:>7.2f}{unit} {model:>8}")
    for note in notes:
        print(f"  left out: {note}")
    print(f"  written to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
