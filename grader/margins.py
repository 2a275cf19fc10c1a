"""How far repeated runs lay from a limit, in their own spread: what `make
stress` (tests/tools/stress_summary.py) and `make grade-stress`
(rubric_stress.py) print beside each verdict's and criterion's counts.

n runs without a miss bound the miss rate only to about 3/n (95%): 200 runs,
1.5%. The measurement issue aims at 1 miss in 1,000 runs a verdict, which
runs alone would take some 3,000 of to show. The runs' spread says more:
the median run's distance to the limit, z times the runs' spread on that
side (the root mean square of the runs' distances from the median, over the
runs that lie toward the limit: a normal spread's standard deviation, and
blind to a tail that points away from the limit). If that side were normal,
misses would come at the rate 1 - Phi(z), and z = 3.09 is 1 in 1,000. That
is an extrapolation, and read as one: another process's load gives timings a
longer tail than a normal one, so a z under 3.1 says the aim is not met,
and a z well above it says the aim is within reach of the runs' own spread,
not that it is met. Standard library only.
"""
import math
import statistics

AIM = 1e-3     # the aim: at most one miss in 1,000 runs of a verdict


def normal_tail(values, low=None, high=None):
    """(z, rate): the median's distance to the nearer limit in the runs'
    spread toward it, and the share of runs past either limit were each side
    normal. (None, None) with fewer than three finite values or no finite
    limit; z infinite (rate 0) where no run lies toward a limit and the median
    is inside. A limit is None or infinite where there is none."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    limits = [(x, side) for x, side in ((low, 1), (high, -1))
              if x is not None and math.isfinite(x)]
    if len(values) < 3 or not limits:
        return None, None
    mid = statistics.median(values)
    zs = []
    for limit, side in limits:              # side 1: a lower limit, -1: an upper one
        gap = side * (mid - limit) + 0.0    # > 0: the median inside that limit (never -0.0)
        toward = [v - mid for v in values if side * (v - mid) < 0]
        spread = math.sqrt(sum(d * d for d in toward) / len(toward)) if toward else 0.0
        zs.append(gap / spread if spread else (math.inf if gap >= 0 else -math.inf))
    rate = sum(0.5 * math.erfc(z / math.sqrt(2)) for z in zs)
    return min(zs), min(rate, 1.0)


def words(z, rate):
    """z and the rate for a table: "4.2  1e-05", "no spread", or "-"."""
    if z is None:
        return "-"
    if math.isinf(z):
        return "no spread" if z > 0 else "all past"
    flag = "  over 1/1000" if rate > AIM else ""
    return f"{z:.1f}  {'<1e-9' if rate < 1e-9 else f'{rate:.0e}'}{flag}"
