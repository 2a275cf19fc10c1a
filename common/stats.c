/* Statistics of repeated measurements; see stats.h.
 *
 * The median, not the mean, is the number we report: a GPU timing has a hard
 * floor and a long tail (a context switch, a clock ramp), and one slow sample
 * drags the mean but not the median. */
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double percentile_sorted(const double *sorted, int n, double p)
{
    if (n == 1)
        return sorted[0];
    double pos = p / 100.0 * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1)
        return sorted[n - 1];
    double frac = pos - lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/* A sorted copy of samples[0..n-1], to be freed by the caller. */
static double *sorted_copy(const double *samples, int n)
{
    double *sorted = malloc((size_t)n * sizeof *sorted);
    if (!sorted)
        abort();
    memcpy(sorted, samples, (size_t)n * sizeof *sorted);
    qsort(sorted, (size_t)n, sizeof *sorted, compare_doubles);
    return sorted;
}

double stats_percentile(const double *samples, int n, double p)
{
    double *sorted = sorted_copy(samples, n);
    double v = percentile_sorted(sorted, n, p);
    free(sorted);
    return v;
}

stats stats_of(const double *samples, int n)
{
    stats s = {0};
    if (n < 1)
        return s;
    double *sorted = sorted_copy(samples, n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += sorted[i];
    s.n = n;
    s.min = sorted[0];
    s.max = sorted[n - 1];
    s.mean = sum / n;
    s.median = percentile_sorted(sorted, n, 50);
    s.p5 = percentile_sorted(sorted, n, 5);
    s.p95 = percentile_sorted(sorted, n, 95);
    free(sorted);
    return s;
}

stats stats_over(double k, const stats *t)
{
    stats s = *t;
    s.median = k / t->median;
    s.mean = k / t->mean;
    s.p5 = k / t->p95;
    s.p95 = k / t->p5;
    s.min = k / t->max;
    s.max = k / t->min;
    return s;
}

/* a[i] / b[i] or, with differences, a[i] - b[i], summarised. */
static stats of_pairs(const double *a, const double *b, int n, int differences)
{
    double *pair = malloc((size_t)(n > 0 ? n : 1) * sizeof *pair);
    if (!pair)
        abort();
    for (int i = 0; i < n; i++)
        pair[i] = differences ? a[i] - b[i] : a[i] / b[i];
    stats s = stats_of(pair, n);
    free(pair);
    return s;
}

stats stats_of_ratios(const double *a, const double *b, int n) { return of_pairs(a, b, n, 0); }

stats stats_of_differences(const double *a, const double *b, int n)
{ return of_pairs(a, b, n, 1); }

double stats_spread(const stats *s)
{
    return s->median > 0 ? (s->p95 - s->p5) / s->median : 0;
}

void stats_of_rows(const double *samples, int rows, int rounds, stats *out)
{
    for (int i = 0; i < rows; i++)
        out[i] = stats_of(samples + (size_t)i * rounds, rounds);
}

double stats_of_row_pairs(const double *samples, int first, int pairs, int rounds, stats *ratio)
{
    double widest = 0;
    for (int p = 0; p < pairs; p++) {
        const double *a = samples + (size_t)(first + 2 * p) * rounds;
        ratio[p] = stats_of_ratios(a, a + rounds, rounds);
        double spread = stats_spread(&ratio[p]);
        widest = spread > widest ? spread : widest;
    }
    return widest;
}
