/* Prints the statistics of the numbers on its command line, so the tests can
 * check stats_of() against values worked out by hand. Host-only: no GPU. */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: stats_test X [X ...]\n");
        return 2;
    }
    int n = argc - 1;
    double *x = malloc((size_t)n * sizeof *x);
    if (!x)
        return 1;
    for (int i = 0; i < n; i++)
        x[i] = atof(argv[i + 1]);
    stats s = stats_of(x, n);
    printf("n=%d median=%.6g p5=%.6g p95=%.6g min=%.6g max=%.6g mean=%.6g spread=%.6g\n", s.n,
           s.median, s.p5, s.p95, s.min, s.max, s.mean, stats_spread(&s));
    free(x);
    return 0;
}
