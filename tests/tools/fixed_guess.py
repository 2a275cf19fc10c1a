#!/usr/bin/env python3
"""How often a size fixed in a student's code meets a level-two criterion that
asks for the model's size, over the given program's own draw of jobs.

The draws are mirrored from the given programs, their constants read from
the source, so that narrowing a draw shows here:
  ex10 (level2_threshold_fits): a scale b log-uniform in [L2_SCALE_LO,
    L2_SCALE_HI] MiB, out and work each b to L2_SPREAD b; the working set F
    is out + work in whole 2 MiB granules; a threshold T passes when
    |T / F - 1| <= 25%.
  ex11 (level2_sized_by_model): k from LEVEL2_K_LO to LEVEL2_K_HI (a host of
    16 cores), f in [LEVEL2_FRAC_LO, LEVEL2_FRAC_HI); the least size is
    (ceil(k + f), ceil(k + f + 1)), and a size passes within [least, least + 1]
    of each.
Prints each one's best fixed answer and the share of jobs it passes; exits 1
when one passes more than --limit (default 0.3) of them."""
import argparse, bisect, math, os, random, re, sys

N = 40_000
GRANULE = 2.0  # MiB: the H100's pool granularity


def constant(source, name):
    m = re.search(r"\b%s = ([\d.]+)(?: / ([\d.]+))?[,;} ]" % name, source)
    if not m:
        sys.exit("fixed_guess: %s not found: update %s" % (name, sys.argv[0]))
    return float(m.group(1)) / (float(m.group(2)) if m.group(2) else 1)


def ex10(src, rng):
    lo, hi = constant(src, "L2_SCALE_LO"), constant(src, "L2_SCALE_HI")
    spread = constant(src, "L2_SPREAD")
    granules = lambda mib: math.ceil(mib / GRANULE - 1e-9) * GRANULE
    working = sorted(granules(b * rng.uniform(1, spread) + b * rng.uniform(1, spread))
                     for b in (lo * (hi / lo) ** rng.random() for _ in range(N)))
    # the best window [T / 1.25, T / 0.75] starts at a drawn F
    best = max((bisect.bisect_right(working, 1.25 * f / 0.75) - bisect.bisect_left(working, f),
                1.25 * f) for f in working[::max(1, N // 2000)])
    return "a threshold of %.0f MiB" % best[1], best[0] / N


def ex11(src, rng, cores=16):
    k_lo, k_hi = constant(src, "LEVEL2_K_LO"), constant(src, "LEVEL2_K_HI")
    f_lo, f_hi = constant(src, "LEVEL2_FRAC_LO"), constant(src, "LEVEL2_FRAC_HI")
    hi = int(min(cores - 2, k_hi))
    least = [math.ceil(k + rng.uniform(f_lo, f_hi) - 1e-9)
             for k in (rng.randint(int(k_lo), hi) for _ in range(N))]
    # producers w and slots w + 1 pass least producers l when l <= w <= l + 1
    best = max((sum(l <= w <= l + 1 for l in least), w) for w in range(1, hi + 3))
    return "%d producers and %d slots" % (best[1], best[1] + 1), best[0] / N


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root", nargs="?", default=".")
    ap.add_argument("--limit", type=float, default=0.3)
    a = ap.parse_args()
    rng, worst = random.Random(21), 0.0
    for ex, study in (("ex10", ex10), ("ex11", ex11)):
        src = open(os.path.join(a.root, "exercises/given/%s.cu" % ex)).read()
        answer, share = study(src, rng)
        worst = max(worst, share)
        print("%s: the best fixed answer, %s, passes %.0f%% of %d jobs" % (ex, answer,
                                                                         100 * share, N))
    return 1 if worst > a.limit else 0


if __name__ == "__main__":
    sys.exit(main())
