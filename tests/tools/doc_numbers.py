#!/usr/bin/env python3
"""Do the numbers the handouts, exercise comments and rubrics quote match the
code's constants? (cpu_docs.bats)

Each fact below is read from the source that decides it (a given program's
default, a verdict's threshold), then every text that quotes it must say it
as written here. A number changed in the code and not in the prose, or the
other way round, fails with the file and the text it expected. Only numbers
that are constants are checked; measured figures are not (they come from
docs/results/h100 and say so where they are quoted).

    python3 tests/tools/doc_numbers.py [ROOT]      # ROOT: the repository (default .)
"""
import os
import re
import sys

GIVEN = "exercises/given/"
EX = {n: "exercises/" + f for n, f in [
    ("ex01", "ex01_default_stream.cu"), ("ex02", "ex02_pinned_memory.cu"),
    ("ex03", "ex03_event_timing.cu"), ("ex04", "ex04_double_buffering.cu"),
    ("ex05", "ex05_stream_priorities.cu"), ("ex06", "ex06_stream_races.cu")]}
LAB = {n: "labs/%s/README.md" % d for n, d in [
    ("lab01", "lab01_default_stream"), ("lab02", "lab02_pinned_memory"),
    ("lab03", "lab03_event_timing"), ("lab04", "lab04_double_buffering"),
    ("lab05", "lab05_stream_priorities"), ("lab06", "lab06_stream_races")]}
RUBRIC = "grader/rubrics/%s.ini"
GUIDE = "exercises/README.md"


def pct(v):
    return "%g%%" % round(v * 100, 6)


def num(v):
    return "%g" % v


def rpct(v):
    """A fraction as a whole percentage, rounded half up: 0.875 is 88%."""
    return "%d%%" % int(v * 100 + 0.5)


# (what, source, the regex whose group 1 is the number, {file: [texts]}):
# each text is a function of v, the number.
FACTS = [
    ("ex01's kernel length", GIVEN + "ex01.cu", r"static double kernel_ms = ([\d.]+);",
     {EX["ex01"]: [lambda v: f"kernels of {num(v)} ms"],
      GUIDE: [lambda v: f"the two {num(v)} ms kernels"]}),
    ("ex01's target", GIVEN + "ex01.cu", r'"your_streams_overlap", ([\d.]+),',
     {EX["ex01"]: [lambda v: f"at least {num(v)}x faster"],
      LAB["lab01"]: [lambda v: f"at least {num(v)}x faster"],
      RUBRIC % "ex01": [lambda v: f"min = {num(v)}"],
      GUIDE: [lambda v: f"at least {num(v)}x faster"]}),
    ("ex02's chunks", GIVEN + "ex02.cu", r"static int chunks = (\d+);",
     {EX["ex02"]: [lambda v: f"{rpct((v - 1) / v)} with the default {num(v)} chunks"],
      LAB["lab02"]: [lambda v: f"{rpct((v - 1) / v)} with {num(v)} chunks"],
      RUBRIC % "ex02": [lambda v: f"{rpct((v - 1) / v)} for {num(v)} chunks"]}),
    ("ex02's overlap target", GIVEN + "ex02.cu", r'"copies_overlap_host_work", ([\d.]+),',
     {EX["ex02"]: [lambda v: f"at least {pct(v)} of the shorter"],
      LAB["lab02"]: [lambda v: f"at least {pct(v)}"],
      RUBRIC % "ex02": [lambda v: f"min = {num(v)}"],
      GUIDE: [lambda v: f"target {pct(v)}"]}),
    ("ex02's call limit", GIVEN + "ex02.cu", r'"copy_call_returns_at_once", -INFINITY, ([\d.]+),',
     {RUBRIC % "ex02": [lambda v: f"max = {num(v)}"]}),
    ("ex03's accuracy target", GIVEN + "ex03.cu", r'"median_matches_known", 0, ([\d.]+),',
     {EX["ex03"]: [lambda v: f"within {pct(v)} of both"],
      LAB["lab03"]: [lambda v: f"within {pct(v)} of both"],
      RUBRIC % "ex03": [lambda v: f"max = {num(v * 100)}"],
      GUIDE: [lambda v: f"within {pct(v)} of both"]}),
    ("ex03's short kernel", GIVEN + "ex03.cu", r"grading_uniform\(([\d.]+), 3\)",
     {EX["ex03"]: [lambda v: f"{num(v)}-3 ms"],
      LAB["lab03"]: [lambda v: f"({num(v)}-3 ms)"],
      RUBRIC % "ex03": [lambda v: f"{num(v)}-3 ms"]}),
    ("ex03's long kernel", GIVEN + "ex03.cu", r"grading_uniform\((\d+), 8\)",
     {EX["ex03"]: [lambda v: f"{num(v)}-8 ms"],
      LAB["lab03"]: [lambda v: f"({num(v)}-8 ms)"],
      RUBRIC % "ex03": [lambda v: f"{num(v)}-8 ms"]}),
    ("ex04's batches", GIVEN + "ex04.cu", r"static int batches = (\d+);",
     {EX["ex04"]: [lambda v: f"{num(v)} batches of"],
      LAB["lab04"]: [lambda v: f"hands them {num(v)} batches"],
      RUBRIC % "ex04": [lambda v: f"({num(v)} batches,"]}),
    ("ex04's batch size", GIVEN + "ex04.cu", r"static int batch_mib = (\d+);",
     {EX["ex04"]: [lambda v: f"batches of {num(v)} MiB"]}),
    ("ex04's kernel ratio", GIVEN + "ex04.cu", r"static double kernel_ratio = ([\d.]+);",
     {EX["ex04"]: [lambda v: f"(--kernel-ratio {num(v)})",
          lambda v: f"k = {num(v)}h"],
      LAB["lab04"]: [lambda v: f"(`--kernel-ratio {num(v)}`)",
          lambda v: f"k = {num(v)}h"]}),
    ("ex04's target", GIVEN + "ex04.cu", r'"pipeline_efficient", ([\d.]+),',
     {EX["ex04"]: [lambda v: f"efficiency of at least {pct(v)}",
          lambda v: f"The {pct(v)} assumes"],
      LAB["lab04"]: [lambda v: f"at least {pct(v)} of the ideal speedup",
          lambda v: f"The {pct(v)} has no slack"],
      RUBRIC % "ex04": [lambda v: f"exercise's {pct(v)} target"]}),
    ("ex05's target", GIVEN + "ex05.cu", r'"high_priority_jumps_queue", ([\d.]+),',
     {EX["ex05"]: [lambda v: f"at least {num(v)}x lower"],
      LAB["lab05"]: [lambda v: f"at least **{num(v)}x lower**"],
      RUBRIC % "ex05": [lambda v: f"min = {num(v)}"],
      GUIDE: [lambda v: f"at least {num(v)}x lower"]}),
    ("ex05's block", GIVEN + "ex05.cu", r"static double block_us = ([\d.]+);",
     {EX["ex05"]: [lambda v: f"waves of {num(v)} us blocks"],
      RUBRIC % "ex05": [lambda v: f"the {num(v)} us blocks"]}),
    ("ex05's waves", GIVEN + "ex05.cu", r"static int waves = (\d+);",
     {EX["ex05"]: [lambda v: f"background is {num(v)} waves"]}),
    ("ex05's earliest moment", GIVEN + "ex05.cu", r"random_strata\([^;]*, ([\d.]+) \* shortest, ",
     {EX["ex05"]: [lambda v: f"over {pct(v)}-"],
      LAB["lab05"]: [lambda v: f"over {pct(v)}-"],
      RUBRIC % "ex05": [lambda v: f"over {pct(v)}-"]}),
    ("ex05's latest moment", GIVEN + "ex05.cu", r"random_strata\([^;]*, ([\d.]+) \* shortest\);",
     {EX["ex05"]: [lambda v: f"%-{pct(v)} of"],
      LAB["lab05"]: [lambda v: f"%-{pct(v)} of"],
      RUBRIC % "ex05": [lambda v: f"%-{pct(v)} of"]}),
    # The timed runs are --reps; a warm-up run is checked too: runs + 1 in all.
    ("ex06's runs", GIVEN + "ex06.cu", r"\.reps = (\d+),",
     {EX["ex06"]: [lambda v: f"over {num(v + 1)} runs ({num(v)} timed runs",
          lambda v: f"every one of the {num(v)} timed runs"],
      LAB["lab06"]: [lambda v: f"over {num(v + 1)} runs (the {num(v)} timed runs",
          lambda v: f"one of the {num(v)} timed runs"],
      RUBRIC % "ex06": [lambda v: f"over {num(v + 1)} runs (the {num(v)} timed runs"],
      GUIDE: [lambda v: f"over {num(v + 1)} runs"]}),
    ("ex06's quick runs", GIVEN + "ex06.cu", r"\.quick_reps = (\d+),",
     {EX["ex06"]: [lambda v: f"--quick: {num(v)} timed runs"]}),
    ("ex06's check runs", GIVEN + "ex06.cu", r"runs = check \? (\d+) :",
     {RUBRIC % "ex06": [lambda v: f"{num(v + 1)} more in the check pass: {num(v)} and a warm-up"]}),
    ("ex06's issue limit", GIVEN + "ex06.cu", r'"host_never_blocks", -INFINITY, ([\d.]+),',
     {EX["ex06"]: [lambda v: f"under {pct(v)} of the slow step"],
      LAB["lab06"]: [lambda v: f"under {pct(v)} of the slow step"],
      RUBRIC % "ex06": [lambda v: f"max = {num(v)}"],
      GUIDE: [lambda v: f"under {pct(v)} of the slow step"]}),
    ("ex06's slow step", GIVEN + "ex06.cu", r"static double spin_ms = ([\d.]+);",
     {EX["ex06"]: [lambda v: f"slow step ({num(v)} ms"],
      RUBRIC % "ex06": [lambda v: f"slow step ({num(v)} ms"]}),
    ("ex06's slowest factor", GIVEN + "ex06.cu", r"SLOW_MAX = (\d+)",
     {EX["ex06"]: [],
      LAB["lab06"]: [lambda v: f"4 to {num(v)} times"],
      RUBRIC % "ex06": [lambda v: f"4-{num(v)}x"],
      GUIDE: [lambda v: f"4-{num(v)}x slower"]}),
    ("ex06's least slow factor", GIVEN + "ex06.cu", r"SLOW_MIN = (\d+)",
     {LAB["lab06"]: [lambda v: f"{num(v)} to 8 times"],
      RUBRIC % "ex06": [lambda v: f"{num(v)}-8x"],
      GUIDE: [lambda v: f"{num(v)}-8x slower"]}),
]


def flatten(text):
    """The prose as one line: line breaks, comment leaders and runs of
    blanks become one space, so a phrase wrapped across lines still matches."""
    text = re.sub(r"\n[ \t]*(?:\*(?!\*)|#|//)?[ \t]*", " ", text)
    return re.sub(r"[ \t]+", " ", text)


def main(root):
    failures, checked = [], 0
    texts = {}
    for what, source, pattern, quotes in FACTS:
        code = open(os.path.join(root, source)).read()
        m = re.search(pattern, code)
        if not m:
            failures.append("%s: %s no longer matches /%s/: update %s" %
                            (source, what, pattern, sys.argv[0]))
            continue
        v = float(m.group(1))
        for doc, wanted in quotes.items():
            if doc not in texts:
                texts[doc] = flatten(open(os.path.join(root, doc)).read())
            for quote in wanted:
                text = quote(v)
                checked += 1
                # a number may not run on into more digits: "1.8" is not "1.85"
                end = r"(?!\.?\d)" if text[-1].isdigit() else ""
                if not re.search(re.escape(text) + end, texts[doc]):
                    failures.append("%s: %s is %s in %s, but this does not say \"%s\"" %
                                    (doc, what, m.group(1), source, text))
    for f in failures:
        print(f)
    print("%d quotes of %d constants checked, %d wrong" % (checked, len(FACTS), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
