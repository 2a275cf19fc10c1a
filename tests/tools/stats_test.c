/* Prints the statistics of the numbers on its command line, so the tests can
 * check stats_of() against values worked out by hand; `--over K X ...` prints
 * stats_over(K, stats of X ...). Host-only: no GPU. */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int first = 1, over = argc > 2 && !strcmp(argv[1], "--over");
    int pairs = argc > 1 && !strcmp(argv[1], "--pairs"); /* A:B A:B ... -> stats_of_ratios */
    int diffs = argc > 1 && !strcmp(argv[1], "--diffs"); /* A:B A:B ... -> stats_of_differences */
    if (over)
        first = 3;
    if (pairs || diffs)
        first = 2;
    if (argc <= first) {
        fprintf(stderr, "usage: stats_test [--over K] X [X ...] | --pairs|--diffs A:B [A:B ...]\n");
        return 2;
    }
    int n = argc - first;
    double *x = malloc(2 * (size_t)n * sizeof *x);
    if (!x)
        return 1;
    double *y = x + n;
    for (int i = 0; i < n; i++) {
        const char *b = strchr(argv[first + i], ':');
        x[i] = atof(argv[first + i]);
        y[i] = b ? atof(b + 1) : 1;
    }
    stats s = pairs ? stats_of_ratios(x, y, n) : diffs ? stats_of_differences(x, y, n)
                                                       : stats_of(x, n);
    if (over) {
        stats t = s;
        s = stats_over(atof(argv[2]), &t);
    }
    printf("n=%d median=%.6g p5=%.6g p95=%.6g min=%.6g max=%.6g mean=%.6g spread=%.6g\n", s.n,
           s.median, s.p5, s.p95, s.min, s.max, s.mean, stats_spread(&s));
    free(x);
    return 0;
}
