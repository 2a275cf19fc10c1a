/* Statistics of repeated measurements. Host-only C, no CUDA, so the tests
 * can check it on known inputs without a GPU. */
#ifndef STREAMLAB_STATS_H
#define STREAMLAB_STATS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int n;
    double median, p5, p95, min, max, mean;
} stats;

/* Percentile p (0..100) of sorted[0..n-1], interpolating linearly between the
 * two nearest ranks (the same rule as numpy's default). */
double percentile_sorted(const double *sorted, int n, double p);

/* Percentile p (0..100) of samples[0..n-1], unsorted; they are left as they
 * were. For a tail stats_of() does not keep, such as p99. n >= 1. */
double stats_percentile(const double *samples, int n, double p);

/* Summary of samples[0..n-1]; the samples are left as they were. n >= 1. */
stats stats_of(const double *samples, int n);

/* k divided by each statistic of t: a rate from times (bytes / ms), a
 * speedup from times (serial ms / ms). The fastest sample is the largest
 * rate, so p5 and p95 (and min and max) swap sides. The mean is k over the
 * mean time: the rate of the average run, not the average rate. */
stats stats_over(double k, const stats *t);

/* Pair by pair, a[i] / b[i] for i < n, summarised: the ratio of two things
 * measured interleaved (A B A B ...), so a moment of other traffic that slows
 * one pair slows both of its sides, and the median pair speaks for the run. */
stats stats_of_ratios(const double *a, const double *b, int n);
/* Pair by pair, a[i] - b[i], summarised the same way: for a wait whose size
 * is set by something else (lab14 divides it by its model's wait), where a
 * ratio of the pair would mix in the size of b. */
stats stats_of_differences(const double *a, const double *b, int n);

/* Rows of `rounds` samples, as measure_rounds() and measure_ways() lay out
 * their tables: out[i] = stats_of() of row i, for i < rows. */
void stats_of_rows(const double *samples, int rows, int rounds, stats *out);

/* Ways compared two by two in such a table: ratio[p] = stats_of_ratios() of
 * row first + 2p over row first + 2p + 1, round by round, for p < pairs.
 * Returns the widest stats_spread() of them: what lab_attempt() asks. */
double stats_of_row_pairs(const double *samples, int first, int pairs, int rounds, stats *ratio);

/* p95 - p5 relative to the median: how much one sample could mislead. */
double stats_spread(const stats *s);

#ifdef __cplusplus
}
#endif
#endif
