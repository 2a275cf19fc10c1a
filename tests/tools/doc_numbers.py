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
    ("ex05", "ex05_stream_priorities.cu"), ("ex06", "ex06_stream_races.cu"),
    ("ex07", "ex07_stream_pool.cu"), ("ex08", "ex08_event_pipeline.cu"),
    ("ex09", "ex09_hidden_syncs.cu"), ("ex10", "ex10_cross_stream_free.cu"),
    ("ex11", "ex11_ring_loader.cu"),
    ("ex12", "ex12_graph_pipeline.cu"), ("ex13", "ex13_gradient_overlap.cu")]}
LAB = {n: "labs/%s/README.md" % d for n, d in [
    ("lab01", "lab01_default_stream"), ("lab02", "lab02_pinned_memory"),
    ("lab03", "lab03_event_timing"), ("lab04", "lab04_double_buffering"),
    ("lab05", "lab05_stream_priorities"), ("lab06", "lab06_stream_races"),
    ("lab07", "lab07_concurrent_kernels"), ("lab08", "lab08_event_pipelines"),
    ("lab09", "lab09_implicit_sync"), ("lab10", "lab10_stream_ordered_memory"),
    ("lab11", "lab11_host_feeding"),
    ("lab12", "lab12_cuda_graphs"), ("lab13", "lab13_gradient_overlap"),
    ("lab14", "lab14_green_contexts")]}
LAB10 = "labs/lab10_stream_ordered_memory/"
LAB11 = "labs/lab11_host_feeding/"
LAB12 = "labs/lab12_cuda_graphs/"
RUBRIC = "grader/rubrics/%s.ini"
GUIDE = "exercises/README.md"


def pct(v):
    return "%g%%" % round(v * 100, 6)


def num(v):
    return "%g" % v


def thousands(v):
    """A count as the prose writes it: 1000 is 1,000."""
    return "{:,}".format(int(v))


def quarter(v):
    """0.25 as the prose says it; any other value as a percentage, which the
    prose does not say, so a changed limit fails until the prose follows."""
    return "a quarter" if v == 0.25 else pct(v)


def fifth(v):
    """0.2 as the prose says it; any other value as a percentage."""
    return "a fifth" if v == 0.2 else pct(v)


def drawn(before, between, after, end, other):
    """A quote of a range [lo, hi] whose `end` ("min" or "max") is the
    constant v and the other end `other`: "tiles of 2 to 16 us"."""
    def quote(v):
        lo, hi = (v, other) if end == "min" else (other, v)
        return f"{before}{num(lo)}{between}{num(hi)}{after}"
    return quote


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
    ("ex02's level-two target", GIVEN + "ex02.cu", r'"level2_round_trip_reaches_model", ([\d.]+),',
     {EX["ex02"]: [lambda v: f"at least {pct(v)} of the model's best wall",
                   lambda v: f"the whole round trip within {pct(v)} of the model's best wall"],
      LAB["lab02"]: [lambda v: f"yours **at least {pct(v)}**"],
      RUBRIC % "ex02": [lambda v: f"min = {num(v)}", lambda v: f"reaches {pct(v)} of the model's best wall"],
      GUIDE: [lambda v: f"at least {pct(v)} (the way handed out"]}),
    ("ex02's level-two chunks", GIVEN + "ex02.h", r"LEVEL2_CHUNKS = (\d+)",
     {EX["ex02"]: [lambda v: f"run_round_trip() sends {num(v)} chunks up",
                   lambda v: f"what fraction of the model's best wall the way handed out reaches: {num(v)} chunks"],
      LAB["lab02"]: [lambda v: f"`run_round_trip()` sends {num(v)} chunks",
                     lambda v: f"the way handed out reaches with {num(v)} chunks"],
      RUBRIC % "ex02": [lambda v: f"after level one: {num(v)} chunks"],
      GUIDE: [lambda v: f"`run_round_trip()`, {num(v)} chunks up"]}),
    ("ex02's level-two GPU path", GIVEN + "ex02.cu", r"L2_GPU_SHARE = ([\d.]+),",
     {LAB["lab02"]: [lambda v: f"`G = {num(v)} (P + C)`"],
      RUBRIC % "ex02": [lambda v: f"set at start-up to {num(v)} (P + C)"]}),
    ("ex02's level-two slow runs", GIVEN + "ex02.cu", r"L2_SLOW = ([\d.]+);",
     {EX["ex02"]: [lambda v: f"GPU's work is {'three' if v == 3 else num(v)} times as long"],
      LAB["lab02"]: [lambda v: f"the GPU's work is {'three' if v == 3 else num(v)} times as long"],
      RUBRIC % "ex02": [lambda v: f"with G {'three' if v == 3 else num(v)} times as long"],
      GUIDE: [lambda v: f"the GPU's work {'three' if v == 3 else num(v)} times as long"]}),
    ("ex02's call limit", GIVEN + "ex02.cu", r'"copy_call_returns_at_once", -INFINITY, ([\d.]+),',
     {RUBRIC % "ex02": [lambda v: f"max = {num(v)}"]}),
    ("ex03's accuracy target", GIVEN + "ex03.cu", r'"median_matches_events", 0, ([\d.]+),',
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
    ("ex03's level-two target", GIVEN + "ex03.cu", r'"level2_median_matches_known", 0, ([\d.]+),',
     {EX["ex03"]: [lambda v: f"within {pct(v)} of both known durations, with no host-side"],
      LAB["lab03"]: [lambda v: f"within {pct(v)} of both known durations, drawn as in level one"],
      GUIDE: [lambda v: f"within {pct(v)} of both durations, every launch"]}),
    ("ex03's shortest background", GIVEN + "ex03.cu", r"bg_lo = check \? [\d.]+ : (\d+),",
     {EX["ex03"]: [lambda v: f"every SM for {num(v)} to 4 ms"],
      LAB["lab03"]: [lambda v: f"every SM for {num(v)} to 4 ms"],
      RUBRIC % "ex03": [lambda v: f"every SM for {num(v)}-4 ms"],
      GUIDE: [lambda v: f"backgrounds of {num(v)}-4 ms"]}),
    ("ex03's longest background", GIVEN + "ex03.cu", r"bg_hi = check \? [\d.]+ : (\d+);",
     {EX["ex03"]: [lambda v: f"every SM for 2 to {num(v)} ms"],
      LAB["lab03"]: [lambda v: f"every SM for 2 to {num(v)} ms"],
      RUBRIC % "ex03": [lambda v: f"every SM for 2-{num(v)} ms"],
      GUIDE: [lambda v: f"backgrounds of 2-{num(v)} ms"]}),
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
    ("ex04's level-two target", GIVEN + "ex04.cu", r'"level2_efficient", ([\d.]+),',
     {EX["ex04"]: [lambda v: f"the target is {pct(v)} of it again"],
      LAB["lab04"]: [lambda v: f"The target is again **{pct(v)} of the"],
      RUBRIC % "ex04": [lambda v: f"min = {num(v)}"],
      GUIDE: [lambda v: f"at ratio 1, at least {pct(v)}"]}),
    ("ex04's level-two kernel ratio", GIVEN + "ex04.cu", r"LEVEL2_RATIO = ([\d.]+);",
     {RUBRIC % "ex04": [lambda v: f"recalibrated to {num(v)} x an upload"]}),
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
    ("ex05's level-two budget", GIVEN + "ex05.h", r"LEVEL2_WAIT_BUDGET_US = (\d+)",
     {EX["ex05"]: [lambda v: f"LEVEL2_WAIT_BUDGET_US, {num(v)} us"],
      LAB["lab05"]: [lambda v: f"within **{num(v)} us**"],
      RUBRIC % "ex05": [lambda v: f"max = {num(v)}"],
      GUIDE: [lambda v: f"9 of 10 waits within {num(v)} us"]}),
    ("ex05's level-two setup share", GIVEN + "ex05.h", r"LEVEL2_SETUP_SHARE_PCT = (\d+)",
     {EX["ex05"]: [lambda v: f"LEVEL2_SETUP_SHARE_PCT, {num(v)}%"],
      LAB["lab05"]: [lambda v: f"more than {num(v)}% of its time", lambda v: f"at most {num(v)}%"],
      RUBRIC % "ex05": [lambda v: f"the setup at most {num(v)}%"],
      GUIDE: [lambda v: f"no block more than {num(v)}% setup"]}),
    # each end of level two's drawn ranges, as each text writes the range
    *[("ex05's level-two %s, %s" % (what, end), GIVEN + "ex05.cu",
       r"%s_US_%s = ([\d.]+)[,;]" % (what.upper(), end.upper()),
       {EX["ex05"]: [drawn(prose + " of ", " to ", " us", end, other)],
        LAB["lab05"]: [drawn(prose + " of ", " to ", " us", end, other)],
        RUBRIC % "ex05": [drawn(rubric + " of ", "-", " us", end, other)],
        GUIDE: [drawn(what + " (", "-", " us)", end, other)]})
      for what, prose, rubric, ranges in [("tile", "tiles", "tiles", (2, 16)),
                                          ("setup", "setup", "setup per block", (5, 10))]
      for end, other in [("min", ranges[1]), ("max", ranges[0])]],
    ("ex05's level-two work", GIVEN + "ex05.cu", r"static double level2_work_us = ([\d.]+);",
     {EX["ex05"]: [lambda v: f"about {num(v / 1000)} ms of work"],
      LAB["lab05"]: [lambda v: f"about {num(v / 1000)} ms of"]}),
    # The timed runs are --reps; a warm-up run is checked too: runs + 1 in all.
    ("ex08's level-two target", GIVEN + "ex08.cu", r'"level2_pipeline_reaches_model", ([\d.]+),',
     {EX["ex08"]: [lambda v: f"The target is {pct(v)} of the model's speedup again"],
      LAB["lab08"]: [lambda v: f"The target is again {pct(v)} of the model's speedup"],
      RUBRIC % "ex08": [lambda v: f"min = {num(v)}", lambda v: f"reaches {pct(v)} of the fork-join"],
      GUIDE: [lambda v: f"each round's times, at least {pct(v)}"]}),
    ("ex09's level-two target", GIVEN + "ex09.cu", r'"level2_gpu_never_idle", 0, ([\d.]+),',
     {EX["ex09"]: [lambda v: f"the GPU idle for under {pct(v)} of those stalls"],
      LAB["lab09"]: [lambda v: f"The target: the GPU idle for under {pct(v)} of the stalls"],
      RUBRIC % "ex09": [lambda v: f"max = {num(v)}", lambda v: f"idles for under {pct(v)} of the host's"],
      GUIDE: [lambda v: f"under {pct(v)} of the host's stalls"]}),
    ("ex09's level-two lag", GIVEN + "ex09.h", r"LEVEL2_MAX_LAG = (\d+)",
     {EX["ex09"]: [lambda v: f"the host's logger within {num(v)} steps"],
      LAB["lab09"]: [lambda v: f"**within {num(v)} steps** of that step"],
      RUBRIC % "ex09": [lambda v: f"logger within {num(v)} steps", lambda v: f"within {num(v)} steps of the step"],
      GUIDE: [lambda v: f"logger within {num(v)} steps"]}),
    ("ex09's level-two slots", GIVEN + "ex09.h", r"LEVEL2_SLOTS = (\d+)",
     {LAB["lab09"]: [lambda v: f"a ring of {num(v)} slots of pinned host memory and {num(v)} events"],
      GUIDE: [lambda v: f"a ring of {num(v)} pinned slots and {num(v)} events"]}),
    ("ex09's stalls", GIVEN + "ex09.h", r"LEVEL2_STALL_EVERY = (\d+)",
     {EX["ex09"]: [lambda v: f"before every {num(v)}th step"],
      LAB["lab09"]: [lambda v: f"Before every {num(v)}th step"],
      RUBRIC % "ex09": [lambda v: f"before every {num(v)}th step"],
      GUIDE: [lambda v: f"before every {num(v)}th step"]}),
    ("ex09's shortest stall", GIVEN + "ex09.cu", r"STALL_MIN_G = ([\d.]+),",
     {EX["ex09"]: [lambda v: f"for {num(v)}-"], LAB["lab09"]: [lambda v: f"for {num(v)}-"],
      RUBRIC % "ex09": [lambda v: f"away for {num(v)}-"], GUIDE: [lambda v: f"stalls of {num(v)}-"]}),
    ("ex09's longest stall", GIVEN + "ex09.cu", r"STALL_MAX_G = ([\d.]+);",
     {EX["ex09"]: [lambda v: f"-{num(v)} steps' time"], LAB["lab09"]: [lambda v: f"-{num(v)} times the step's GPU"],
      GIVEN + "ex09.h": [lambda v: f"longest stall ({num(v)} G)"],
      GIVEN + "ex09.cu": [lambda v: f"the longest stall the program draws ({num(v)} G,"],
      RUBRIC % "ex09": [lambda v: f"-{num(v)} x G"], GUIDE: [lambda v: f"-{num(v)} steps"]}),
    ("ex08's level-two batches", GIVEN + "ex08.h", r"LEVEL2_BATCHES = (\d+)",
     {EX["ex08"]: [lambda v: f"joins, {num(v)} batches of four stages"],
      LAB["lab08"]: [lambda v: f"a pipeline that **forks and joins**, {num(v)} batches"],
      RUBRIC % "ex08": [lambda v: f"in the same way: {num(v)} batches"],
      GUIDE: [lambda v: f"joins them, {num(v)} batches"]}),
    ("ex08's level-two events", GIVEN + "ex08.h", r"LEVEL2_EVENTS = (\d+)",
     {LAB["lab08"]: [lambda v: f"a pool of {num(v)} events"],
      GUIDE: [lambda v: f"a pool of {num(v)} events"]}),
    ("ex11's level-two target", GIVEN + "ex11.cu", r'"level2_gpu_kept_busy", ([\d.]+),',
     {EX["ex11"]: [lambda v: f"at least {pct(v)} of what the largest size allowed"],
      LAB["lab11"]: [lambda v: f"the GPU busy at least {pct(v)} of what the largest size allowed"],
      RUBRIC % "ex11": [lambda v: f"min = {num(v)}", lambda v: f"busy at least {pct(v)} of what the largest"],
      GUIDE: [lambda v: f"at least {pct(v)} of what the largest size allowed"]}),
    ("ex11's level-two shortest step", GIVEN + "ex11.cu", r"grading_uniform\(([\d.]+), 2\.5\)",
     {LAB["lab11"]: [lambda v: f"a step of K ({num(v)}-2.5 ms)"],
      RUBRIC % "ex11": [lambda v: f"K {num(v)}-2.5 ms"]}),
    ("ex11's level-two least ratio", GIVEN + "ex11.cu", r"LEVEL2_K_LO = (\d+),",
     {LAB["lab11"]: [lambda v: f"with P from {num(v + 0.2)} to 8.5 times C + K"],
      RUBRIC % "ex11": [lambda v: f"k from {num(v)} to 8"]}),
    ("ex11's level-two largest ratio", GIVEN + "ex11.cu", r"LEVEL2_K_HI = (\d+) \}",
     {LAB["lab11"]: [lambda v: f"with P from 2.2 to {num(v + 0.5)} times C + K"],
      RUBRIC % "ex11": [lambda v: f"k from 2 to {num(v)}", lambda v: f"drawn from 2 to {num(v)}"]}),
    ("ex13's level-two target", GIVEN + "ex13.cu", r'"level2_bucket_size", ([\d.]+),',
     {EX["ex13"]: [lambda v: f"at least {num(v)} of the fastest size's speedup"],
      LAB["lab13"]: [lambda v: f"at least {num(v)} of the fastest candidate's"],
      RUBRIC % "ex13": [lambda v: f"min = {num(v)}", lambda v: f"at least {num(v)} of the fastest size's"],
      GUIDE: [lambda v: f"at least {num(v)} of the fastest candidate's speedup"]}),
    ("ex13's level-two margin", GIVEN + "ex13.cu", r"L2_MARGIN = ([\d.]+);",
     {LAB["lab13"]: [lambda v: f"one bucket for all {pct(v - 1)} or more above its best"],
      RUBRIC % "ex13": [lambda v: f"one bucket for all {pct(v - 1)} or more above its best",
                        lambda v: f"bucket {pct(v - 1)} or more above its best in every drawn job"],
      GUIDE: [lambda v: f"{pct(v - 1)} or more slower by the model"]}),
    ("ex13's level-two least alpha / t", GIVEN + "ex13.cu", r"L2_Q_LO = ([\d.]+), L2_Q_HI = 3\.0,",
     {LAB["lab13"]: [lambda v: f"alpha / t in {num(v)}-3"], RUBRIC % "ex13": [lambda v: f"q {num(v)}-3"]}),
    ("ex13's level-two largest alpha / t", GIVEN + "ex13.cu", r"L2_Q_HI = ([\d.]+),",
     {LAB["lab13"]: [lambda v: f"alpha / t in 0.4-{num(v)}"], RUBRIC % "ex13": [lambda v: f"q 0.4-{num(v)}"]}),
    ("ex13's level-two least g / (B t)", GIVEN + "ex13.cu", r"L2_R_LO = ([\d.]+), L2_R_HI = 1\.0;",
     {LAB["lab13"]: [lambda v: f"g / (B t) in {num(v)}-1"], RUBRIC % "ex13": [lambda v: f"r {num(v)}-1"]}),
    ("ex13's level-two largest g / (B t)", GIVEN + "ex13.cu", r"L2_R_HI = ([\d.]+);",
     {LAB["lab13"]: [lambda v: f"g / (B t) in 0.1-{num(v)}"], RUBRIC % "ex13": [lambda v: f"r 0.1-{num(v)}"]}),
    ("ex13's level-two model gap", GIVEN + "ex13.cu", r"L2_GAP_MAX = ([\d.]+),",
     {EX["ex13"]: [lambda v: f"within {pct(v)} of the best m's"],
      LAB["lab13"]: [lambda v: f"within {pct(v)} of the best m's"],
      RUBRIC % "ex13": [lambda v: f"within {pct(v)} of the best m's"],
      GUIDE: [lambda v: f"within {pct(v)} of the best m's"]}),
    ("ex13's level-two predicted time", GIVEN + "ex13.cu", r"L2_PREDICTION_MAX = ([\d.]+);",
     {EX["ex13"]: [lambda v: f"within {pct(v)} of the program's"],
      LAB["lab13"]: [lambda v: f"within {pct(v)} of the program's"],
      RUBRIC % "ex13": [lambda v: f"within {pct(v)} of the program's"],
      GUIDE: [lambda v: f"within {pct(v)} of the program's"]}),
    ("ex06's runs", GIVEN + "ex06.cu", r"\.reps = (\d+),",
     {EX["ex06"]: [lambda v: f"over {num(v + 1)} runs ({num(v)} timed runs",
          lambda v: f"every one of the {num(v)} timed runs"],
      LAB["lab06"]: [lambda v: f"over {num(v + 1)} runs (the {num(v)} timed runs",
          lambda v: f"one of the {num(v)} timed runs"],
      RUBRIC % "ex06": [lambda v: f"over {num(v + 1)} runs (the {num(v)} timed runs"],
      GUIDE: [lambda v: f"over {num(v + 1)} runs"]}),
    ("ex06's quick runs", GIVEN + "ex06.cu", r"\.quick_reps = (\d+),",
     {EX["ex06"]: [lambda v: f"--quick: {num(v)} timed runs"]}),
    ("ex06's check runs", GIVEN + "ex06.cu", r"opt->reps = (\d+); /\* runs \*/",
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
    ("ex06's level-two items", GIVEN + "ex06.h", r"LEVEL2_ITEMS = (\d+)",
     {EX["ex06"]: [lambda v: f"the same stages over {num(v)} items"],
      LAB["lab06"]: [lambda v: f"over **{num(v)} items through a ring"],
      RUBRIC % "ex06": [lambda v: f"{num(v)} items through"],
      GUIDE: [lambda v: f"`issue_ring()`, {num(v)} items through"]}),
    ("ex06's level-two ring", GIVEN + "ex06.h", r"LEVEL2_RING = (\d+)",
     {EX["ex06"]: [lambda v: f"a ring of {num(v)} slots"],
      LAB["lab06"]: [lambda v: f"a ring of {num(v)} device slots"],
      RUBRIC % "ex06": [lambda v: f"through {num(v)} slots"],
      GUIDE: [lambda v: f"a ring of {num(v)} slots"]}),
    ("ex07's target", GIVEN + "ex07.cu", r'"pool_reaches_model", ([\d.]+),',
     {EX["ex07"]: [lambda v: f"at least {pct(v)} of that model"],
      LAB["lab07"]: [lambda v: f"The target is {pct(v)} of the model's speedup"],
      RUBRIC % "ex07": [lambda v: f"min = {num(v)}"],
      GUIDE: [lambda v: f"n / ceil(n / w): at least {pct(v)}"]}),
    ("ex07's level-two target", GIVEN + "ex07.cu", r'"level2_pool_reaches_model", ([\d.]+),',
     {EX["ex07"]: [lambda v: f"The target is {pct(v)} of the model's speedup again"],
      LAB["lab07"]: [lambda v: f"The target is again {pct(v)} of the model's speedup"],
      RUBRIC % "ex07": [lambda v: f"reaches {pct(v)} of the model's speedup: every request"],
      GUIDE: [lambda v: f"fit the SMs, at least {pct(v)}"]}),
    ("ex07's level-two requests", GIVEN + "ex07.h", r"LEVEL2_REQUESTS = (\d+)",
     {EX["ex07"]: [lambda v: f"Level two (graded apart, below close_pool): {num(v)} requests"],
      LAB["lab07"]: [lambda v: f"`serve_level2()`: {num(v)} requests again"],
      RUBRIC % "ex07": [lambda v: f"in the same way: {num(v)} requests"],
      GUIDE: [lambda v: f"`serve_level2()`, {num(v)} requests of two steps"]}),
    ("ex07's level-two streams", GIVEN + "ex07.h", r"LEVEL2_STREAMS = (\d+)",
     {LAB["lab07"]: [lambda v: f"hands you {num(v)} of its streams"],
      GUIDE: [lambda v: f"handed {num(v)} streams"]}),
    # level two's step is LEVEL2_STEP_RATIO x level one's default request
    ("ex07's level-two step", GIVEN + "ex07.cu", r"LEVEL2_STEP_RATIO = ([\d.]+);",
     {LAB["lab07"]: [lambda v: f"a kernel of {num(v)} ms holding"],
      RUBRIC % "ex07": [lambda v: f"each step {num(v)} x --request-ms"]}),
    ("lab10's pairs", LAB10 + "lab10.cu", r"PAIRS = (\d+)",
     {LAB["lab10"]: [lambda v: f"times {num(v)} pairs back to back"]}),
    ("lab10's big size", LAB10 + "lab10.cu", r"static int big_mib = (\d+);",
     {LAB["lab10"]: [lambda v: f"at 1 MiB and {num(v)} MiB (`--big-mib`)"]}),
    ("lab10's pool verdict", LAB10 + "lab10.cu", r'"pool_pair_cheaper", ([\d.]+),',
     {LAB["lab10"]: [lambda v: f"the pool at least {num(v)}x cheaper at the big size"]}),
    ("lab10's B kernels", LAB10 + "lab10.cu", r"B_KERNELS = (\d+)",
     {LAB["lab10"]: [lambda v: f"max(N a, {num(v)} b)", lambda v: f"{num(v)} b + N (a + pair)"]}),
    ("lab10's b", LAB10 + "lab10.cu", r"b_ms = ([\d.]+),",
     {LAB["lab10"]: [lambda v: f"kernels of b = {num(v)} ms"]}),
    ("lab10's a", LAB10 + "lab10.cu", r"static double a_ms = ([\d.]+),",
     {LAB["lab10"]: [lambda v: f"a kernel of a = {num(v)} ms"]}),
    ("lab10's N", LAB10 + "lab10.cu", r"static int iterations = (\d+);",
     {LAB["lab10"]: [lambda v: f"loops N = {num(v)} times"]}),
    ("lab10's cudaFree limit", LAB10 + "lab10.cu", r'"cudafree_waits_for_device", -INFINITY, ([\d.]+),',
     {LAB["lab10"]: [lambda v: f"at most {pct(v)} of A's kernels beside B"]}),
    ("lab10's overlap limit", LAB10 + "lab10.cu", r'"stream_ordered_keeps_overlap", ([\d.]+),',
     {LAB["lab10"]: [lambda v: f"stream-ordered at least {pct(v)}, and"]}),
    *[("lab10's stream-ordered loop, %s" % end, LAB10 + "lab10.cu",
       r'"stream_ordered_costs_nothing", %s,' % bounds, {LAB["lab10"]: [quote]})
      for end, bounds, quote in [
          ("low", r"([\d.]+), [\d.]+", lambda v: f"within {num(v)}x to"),
          ("high", r"[\d.]+, ([\d.]+)", lambda v: f"x to {num(v)}x of the preallocated")]],
    ("lab10's remap verdict", LAB10 + "threshold.cu", r'"zero_threshold_remaps", ([\d.]+),',
     {LAB["lab10"]: [lambda v: f"threshold 0 at least {num(v)}x the unlimited pool's"]}),
    ("lab10's race verdict", LAB10 + "frees.cu", r'"unsafe_free_reads_reused_memory", ([\d.]+),',
     {LAB["lab10"]: [lambda v: f"at least {pct(v)} of the words wrong in the median run"]}),
    ("lab11's one-thread verdict", LAB11 + "lab11.cu", r'"one_thread_overlaps", ([\d.]+),',
     {LAB["lab11"]: [lambda v: f"over serial at least {v:.2f} of the"]}),
    ("lab11's producers' least", LAB11 + "lab11.cu", r'"producers_keep_gpu_busy", ([\d.]+),',
     {LAB["lab11"]: [lambda v: f"with four producers {v:.2f} to"]}),
    ("lab11's producers' most", LAB11 + "lab11.cu", r'"producers_keep_gpu_busy", [\d.]+, ([\d.]+),',
     {LAB["lab11"]: [lambda v: f"to {v:.2f} of the model's"]}),
    ("lab10's buffer", LAB10 + "lab10.cu", r"static int size_mib = (\d+);",
     {LAB["lab10"]: [lambda v: f"{thousands(v * 2**18)} of {thousands(v * 2**18)} at {num(v)} MiB"]}),
    ("lab10's delay", LAB10 + "lab10.cu", r"delay_ms = ([\d.]+);",
     {LAB["lab10"]: [lambda v: f"works `--delay-ms` ({num(v)} ms)",
          lambda v: f"B reads A's new words {num(v)} ms later"]}),
    ("ex10's shortest delay", GIVEN + "ex10.cu", r"lo = check \? [\d.]+ : ([\d.]+),",
     {LAB["lab10"]: [lambda v: f"({num(v)}-6 ms)", lambda v: f"waited {num(v)}-6 ms"],
      RUBRIC % "ex10": [lambda v: f"of {num(v)}-6 ms", lambda v: f"delay ({num(v)}-6 ms)"],
      GUIDE: [lambda v: f"delays drawn at {num(v)}-6 ms"]}),
    ("ex10's longest delay", GIVEN + "ex10.cu", r"hi = check \? [\d.]+ : ([\d.]+);",
     {LAB["lab10"]: [lambda v: f"(2-{num(v)} ms)", lambda v: f"waited 2-{num(v)} ms"],
      RUBRIC % "ex10": [lambda v: f"of 2-{num(v)} ms", lambda v: f"delay (2-{num(v)} ms)"],
      GUIDE: [lambda v: f"delays drawn at 2-{num(v)} ms"]}),
    # The timed runs and a warm-up, of each of the two functions.
    ("ex10's runs", GIVEN + "ex10.cu", r"static int runs = (\d+);",
     {RUBRIC % "ex10": [lambda v: f"({num(2 * (v + 1))} runs of"],
      LAB["lab10"]: [lambda v: f"({num(v + 1)} runs of 16 MiB, the warm-up run counted)"]}),
    ("ex10's host limit", GIVEN + "ex10.cu", r'"host_does_not_wait", 0, ([\d.]+),',
     {EX["ex10"]: [lambda v: f"under {fifth(v)} of the user's pending work"],
      LAB["lab10"]: [lambda v: f"pending work (limit {num(v)})"],
      RUBRIC % "ex10": [lambda v: f"max = {num(v)}", lambda v: f"under {fifth(v)} of the user's pending work"],
      GUIDE: [lambda v: f"under {fifth(v)} of the reader's pending work"]}),
    # ex10's level two: the loop's buffer sizes, its rounds, the two targets.
    ("ex10's level-two least scale", GIVEN + "ex10.cu", r"L2_SCALE_LO = ([\d.]+),",
     {LAB["lab10"]: [lambda v: f"for a b of {num(v)}-240 MiB"],
      RUBRIC % "ex10": [lambda v: f"for a b of {num(v)}-240 MiB"],
      GUIDE: [lambda v: f"for a b of {num(v)}-240 MiB, drawn afresh"]}),
    ("ex10's level-two greatest scale", GIVEN + "ex10.cu", r"L2_SCALE_HI = ([\d.]+),",
     {LAB["lab10"]: [lambda v: f"24-{num(v)} MiB) are drawn"],
      RUBRIC % "ex10": [lambda v: f"for a b of 24-{num(v)} MiB"],
      GUIDE: [lambda v: f"for a b of 24-{num(v)} MiB, drawn afresh"]}),
    ("ex10's level-two spread", GIVEN + "ex10.cu", r"L2_SPREAD = ([\d.]+) / 3;",
     {LAB["lab10"]: [lambda v: f"(each b to {num(v)}/3 b, for"],
      RUBRIC % "ex10": [lambda v: f"each b to {num(v)}/3 b MiB"],
      GUIDE: [lambda v: f"(each b to {num(v)}/3 b MiB"]}),
    ("ex10's level-two iterations", GIVEN + "ex10.cu", r"L2_ITERS = (\d+)",
     {LAB["lab10"]: [lambda v: f"rounds of {num(v)} iterations"],
      RUBRIC % "ex10": [lambda v: f"pairs of {num(v + 1)} iterations"]}),
    ("ex10's level-two cost limit", GIVEN + "ex10.cu", r'"level2_keeps_working_set", -INFINITY, ([\d.]+),',
     {EX["ex10"]: [lambda v: f"within {num(v)}x of one from a pool"],
      LAB["lab10"]: [lambda v: f"within {num(v)}x of the unlimited pool's"],
      RUBRIC % "ex10": [lambda v: f"max = {num(v)}", lambda v: f"within {num(v)}x of one from a pool"],
      GUIDE: [lambda v: f"within {num(v)}x of one from an unlimited pool"]}),
    ("ex10's level-two threshold limit", GIVEN + "ex10.cu", r'"level2_threshold_fits", 0, ([\d.]+),',
     {EX["ex10"]: [lambda v: f"within {pct(v)} of the memory"],
      LAB["lab10"]: [lambda v: f"within {pct(v)} of the working set"],
      RUBRIC % "ex10": [lambda v: f"max = {num(v * 100)}", lambda v: f"within {pct(v)}: no more"],
      GUIDE: [lambda v: f"within {pct(v)} of the working set"]}),
    ("ex14's level-two budget slack", GIVEN + "ex14.cu",
     r"budget_us = launch_us \+ \(w \+ ([\d.]+)\) \* job->block_us",
     {LAB["lab14"]: [lambda v: f"`launch + (W + {num(v)}) t`"],
      GIVEN + "ex14.cu": [lambda v: f"launch + (W + {num(v)})"]}),
    ("lab12's chain", LAB12 + "lab12.cu", r"static int chain_kernels = (\d+);",
     {LAB["lab12"]: [lambda v: f"N = {thousands(v)} launches"]}),
    ("lab12's branch length", LAB12 + "lab12.cu", r"static int branch_kernels = (\d+);",
     {LAB["lab12"]: [lambda v: f"K = {num(v)} kernels", lambda v: f"four branches of {num(v)} kernels"]}),
    ("lab12's branch kernel", LAB12 + "lab12.cu", r"static double kernel_us = ([\d.]+);",
     {LAB["lab12"]: [lambda v: f"kernels of {num(v)} us"]}),
    ("lab12's gate", LAB12 + "lab12.cu", r"GATE_MS = (\d+)",
     {LAB["lab12"]: [lambda v: f"behind a {num(v)} ms gate kernel"]}),
    ("lab12's GPU-only launches", LAB12 + "lab12.cu", r"GPU_ONLY_KERNELS = (\d+)",
     {LAB["lab12"]: [lambda v: f"{num(v)} launches queued", lambda v: f"launches {num(v)} kernels, not N"]}),
    # two verdicts each share the bounds the handout quotes once
    *[("lab12's %s, %s" % (name, end), LAB12 + "lab12.cu", r'"%s", %s,' % (name, bounds),
       {LAB["lab12"]: [quote]})
      for name in ("stream_follows_launch_model", "graph_follows_node_model")
      for end, bounds, quote in [
          ("low", r"([\d.]+), [\d.]+", lambda v: f"within {pct(1 - v)} of their models ({num(v)}x to"),
          ("high", r"[\d.]+, ([\d.]+)", lambda v: f"x to {num(v)}x), the replay")]],
    *[("lab12's %s" % name, LAB12 + "forkjoin.cu", r'"%s", ([\d.]+),' % name,
       {LAB["lab12"]: [lambda v: f"each part 2 speedup within {pct(1 - v)} of its model's"]})
      for name in ("four_streams_follow_model", "graph_lifts_host_bound")],
    ("lab12's graph speedup", LAB12 + "lab12.cu", r'"graph_beats_stream_launches", ([\d.]+),',
     {LAB["lab12"]: [lambda v: f"at least {num(v)}x faster than the launches"]}),
    ("lab12's host limit", LAB12 + "lab12.cu", r'GRAPH_HOST = \{\s+"graph_frees_host", -INFINITY, ([\d.]+),',
     {LAB["lab12"]: [lambda v: f"under {pct(v)} of its time launching"]}),
    ("lab12's traced host limit", LAB12 + "lab12.cu", r'GRAPH_HOST_TRACED = \{\s+"graph_frees_host", -INFINITY, ([\d.]+),',
     {LAB["lab12"]: [lambda v: f"under {pct(v)} with `--trace`"]}),
    ("lab12's update limit", LAB12 + "forkjoin.cu", r'"update_cheaper_than_instantiate", -INFINITY, ([\d.]+),',
     {LAB["lab12"]: [lambda v: f"at most {num(v)}x of a new graph's cost"]}),
    ("torch_lab12's ops", LAB12 + "torch_lab12.py", r"N = \d+ if lab.args.quick else (\d+)",
     {LAB["lab12"]: [lambda v: f"The companion runs {thousands(v)} tiny in-place ops"]}),
    ("torch_lab12's host-bound limit", LAB12 + "torch_lab12.py", r'<= t\["eager"\] / host\["eager"\] <= ([\d.]+)',
     {LAB["lab12"]: [lambda v: f"eager within {pct(v - 1)} of the host's time"]}),
    ("torch_lab12's speedup", LAB12 + "torch_lab12.py", r"speedup >= ([\d.]+),",
     {LAB["lab12"]: [lambda v: f"the replay at least {num(v)}x faster"]}),
    ("ex12's batches", GIVEN + "ex12.cu", r"static int batches = (\d+);",
     {EX["ex12"]: [lambda v: f"over {num(v)} batches"],
      LAB["lab12"]: [lambda v: f"pipeline over {num(v)} batches"]}),
    # a step's calls at the default B: 3B launches and 4B + 7 event calls
    # (exercises/given/ex12.cu's opening comment counts them from issue())
    ("ex12's calls a step", GIVEN + "ex12.cu", r"static int batches = (\d+);",
     {GIVEN + "ex12.cu": [lambda v: f"{num(3 * v)} and {num(4 * v + 7)} at B = {num(v)}"],
      GIVEN + "ex12.h": [lambda v: f"{num(3 * v)} kernels and {num(4 * v + 7)} event calls"],
      EX["ex12"]: [lambda v: f"{num(3 * v)} launches and {num(4 * v + 7)} event calls",
                   lambda v: f"{num(3 * v)} kernels and {num(4 * v + 7)} event calls"],
      LAB["lab12"]: [lambda v: f"{num(3 * v)} launches and {num(4 * v + 7)} event calls"],
      RUBRIC % "ex12": [lambda v: f"{num(3 * v)} launches and {num(4 * v + 7)} event calls"]}),
    ("ex12's steps", GIVEN + "ex12.cu", r"static int steps = (\d+);",
     {EX["ex12"]: [lambda v: f"{num(v)} steps back to back"],
      LAB["lab12"]: [lambda v: f"run as {num(v)} steps back to back"],
      RUBRIC % "ex12": [lambda v: f"two runs of {num(v)} steps"],
      GUIDE: [lambda v: f"after {num(v)} steps"]}),
    ("ex12's shortest stage", GIVEN + "ex12.cu", r"grading_uniform\(([\d.e-]+), [\d.e-]+\)",
     {LAB["lab12"]: [lambda v: f"each stage {num(v * 1e3)}-"]}),
    ("ex12's longest stage", GIVEN + "ex12.cu", r"grading_uniform\([\d.e-]+, ([\d.e-]+)\)",
     {LAB["lab12"]: [lambda v: f"-{num(v * 1e3)} us, run as"]}),
    ("ex12's target", GIVEN + "ex12.cu", r'"graph_faster_per_step", ([\d.]+),',
     {EX["ex12"]: [lambda v: f"at least {num(v)}x faster per step"],
      LAB["lab12"]: [lambda v: f"speedup per step (at least {num(v)}x;"],
      RUBRIC % "ex12": [lambda v: f"exercise's own {num(v)}x"],
      GUIDE: [lambda v: f"speedup over the stream run, at least {num(v)}x)"]}),
    # the grade's bars are the rubric's own (graph_efficiency, not the verdict's speedup)
    ("ex12's graded speed bar", RUBRIC % "ex12", r"\[faster_per_step\][^\[]*?\nmin = ([\d.]+)",
     {GIVEN + "ex12.cu": [lambda v: f"read graph_efficiency against {num(v)}"],
      EX["ex12"]: [lambda v: f"(behind a gate, in the same rounds) over yours, at least {num(v)}"],
      LAB["lab12"]: [lambda v: f"grader asks your step at least {num(v)}x faster"],
      GUIDE: [lambda v: f"timed on the GPU in the same rounds, at the same stage times: at least {num(v)}x faster"]}),
    ("ex12's graded level-two speed bar", RUBRIC % "ex12",
     r"\[level2_faster_per_step\][^\[]*?\nmin = ([\d.]+)",
     {GIVEN + "ex12.cu": [lambda v: f"(level two's against {v:.1f})"],
      EX["ex12"]: [lambda v: f"(level two {v:.1f};"]}),
    ("ex12's host limit", GIVEN + "ex12.cu", r'"host_issue_light", -INFINITY, ([\d.]+),',
     {EX["ex12"]: [lambda v: f"under {quarter(v)} of its time issuing a step"],
      LAB["lab12"]: [lambda v: f"under {quarter(v)} of its time issuing a step"],
      RUBRIC % "ex12": [lambda v: f"max = {num(v)}", lambda v: f"under {quarter(v)} of issuing"],
      GUIDE: [lambda v: f"under {quarter(v)} of issuing the step"]}),
    ("ex12's stream kernel on the GPU", GIVEN + "ex12.cu", r"STREAM_KERNEL_US = ([\d.]+),",
     {RUBRIC % "ex12": [lambda v: f"{num(v)} us a stream kernel"]}),
    ("ex12's graph node on the GPU", GIVEN + "ex12.cu", r"GRAPH_NODE_US = ([\d.]+),",
     {RUBRIC % "ex12": [lambda v: f"{num(v)} a graph node"]}),
    ("ex12's graph launch a run", GIVEN + "ex12.cu", r"ROUND_TRIP_US = ([\d.]+);",
     {RUBRIC % "ex12": [lambda v: f"{num(v)} us a run for the"]}),
    ("ex12's level-two target", GIVEN + "ex12.cu", r'"level2_graph_faster_per_step", ([\d.]+),',
     {EX["ex12"]: [lambda v: f"at least {num(v)}x faster per step than the streams",
                   lambda v: f"at least {num(v)}x faster per step than the program's"],
      LAB["lab12"]: [lambda v: f"least {num(v)}x faster per step than the program's own stream run"]}),
    ("ex12's level-two host limit", GIVEN + "ex12.cu", r'"level2_host_issue_light", -INFINITY, ([\d.]+),',
     {EX["ex12"]: [lambda v: f"the host under {quarter(v)} of their issue time",
                   lambda v: f"the host in here under {quarter(v)} of its time"],
      LAB["lab12"]: [lambda v: f"`level2_step()` under {quarter(v)} of its time issuing a step"],
      RUBRIC % "ex12": [lambda v: f"The limit is {quarter(v)}, level one's"]}),
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
