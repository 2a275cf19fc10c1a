"""How far repeated runs lay inside a limit, in their own spread: the
`sds to limit` column of `make stress` (tests/tools/stress_summary.py) and
`sds to bound` of `make grade-stress` (rubric_stress.py). This is the one
place that says what the column is and what it is worth.

n runs without a miss bound the miss rate only to about 3/n (95%): 200 runs,
1.5%. The measurement issue aims at 1 miss in 1,000 runs a verdict, which
runs alone would take some 3,000 of to show. The runs' spread reaches
further, as an extrapolation. z: the median run's distance inside the
limit, over the runs' spread toward it (the root mean square of their
distances from the median, over the runs on the limit's side: a normal
spread's standard deviation, and blind to a tail that points away from the
limit). Were that side normal, runs would miss at the rate 1 - Phi(z); z =
3.09 is 1 in 1,000, and a rate over that is flagged `over 1/1000`.

What it is worth, both ways. A shared machine's slow moments give timings a
longer tail than a normal one, so a large z is room, not proof: ex04's
level two (before its redesign) read z = 3.7 over seven H100s, a normal
share of 1 in 10,000, and missed once in 217 runs. One miss is weak evidence
(over all 74 criteria the shares predicted 0.05 misses), but it points the
way a shared machine does. A small z is the same extrapolation: a value
with a hard ceiling has a short tail, and may miss less often than z says.
Read a flag as a bound to look at, not as a measured rate. With about 100
runs on a side, z itself is known to within about 0.3.
"""
import math
import statistics

AIM = 1e-3     # the aim: at most one miss in 1,000 runs of a verdict
SIDE_RUNS = 5  # fewer runs (in all, or on a limit's side) give no spread worth extrapolating


def normal_tail(values, low=None, high=None):
    """(z, rate): the median's distance to the nearer limit in the runs'
    spread toward it, and the share of runs past either limit were each side
    normal, plus the share of runs whose value was not a number (NaN: a
    miss, as verdict_holds() reads it). (None, None) with no finite limit, or
    fewer than SIDE_RUNS runs in all or on a limit's side; z infinite (rate: the
    non-numbers' share) where no run lies toward a limit and the median is
    inside. A limit is None or infinite where there is none."""
    given = [v for v in values if v is not None]
    values = [v for v in given if math.isfinite(v)]
    limits = [(x, side) for x, side in ((low, 1), (high, -1))
              if x is not None and math.isfinite(x)]
    if len(values) < SIDE_RUNS or not limits:
        return None, None
    mid = statistics.median(values)
    zs = []
    for limit, side in limits:              # side 1: a lower limit, -1: an upper one
        gap = side * (mid - limit) + 0.0    # > 0: the median inside that limit (never -0.0)
        toward = [v - mid for v in values if side * (v - mid) < 0]
        if not toward:
            zs.append(math.inf if gap >= 0 else -math.inf)
            continue
        if len(toward) < SIDE_RUNS:
            return None, None
        spread = math.sqrt(sum(d * d for d in toward) / len(toward))
        zs.append(gap / spread)
    past = sum(0.5 * math.erfc(z / math.sqrt(2)) for z in zs)
    odd = 1 - len(values) / len(given)      # NaN, or infinite: never a measurement
    return min(zs), min(1.0, odd + (1 - odd) * past)


def words(z, rate):
    """z and the rate for a table: "4.2  1.3e-05", "no spread", or "-"."""
    if z is None:
        return "-"
    if math.isinf(z) and z < 0:
        return "median past"
    if math.isinf(z):
        return "no spread" + (f", {rate:.2g} not numbers" if rate else "")
    flag = "  over 1/1000" if rate > AIM else ""
    return f"{z:.1f}  {'<1e-9' if rate < 1e-9 else f'{rate:.2g}'}{flag}"
