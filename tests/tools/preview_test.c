/* Scores metrics against a rubric with the C reader that ./exNN's points
 * preview uses (exercises/given/rubric.c), so the tests can hold it to what
 * grader/rubric.py gives on the same numbers. Host-only: no GPU.
 *
 *   preview_test RUBRIC.ini NAME=VALUE ...
 * prints one line per criterion, "name points passed|failed|flagged|unscored: reason", then
 * with a second level "level-N points" per level, then "total points"; exits 1
 * (with the reason) when the rubric cannot be read. */
#include "rubric.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_METRICS = 64 };

int main(int argc, char **argv)
{
    static rubric r;
    char why[1024], v[32];
    const char *names[MAX_METRICS];
    double values[MAX_METRICS];
    rubric_result res[RUBRIC_MAX_CRITERIA];
    if (argc < 2 || argc - 2 > MAX_METRICS) {
        fprintf(stderr, "usage: preview_test RUBRIC.ini [NAME=VALUE ...] (at most %d)\n",
                MAX_METRICS);
        return 2;
    }
    if (rubric_load(argv[1], &r, why, sizeof why)) {
        fprintf(stderr, "preview_test: %s\n", why);
        return 1;
    }
    int n = 0;
    for (int i = 2; i < argc; i++) {
        char *eq = strchr(argv[i], '=');
        if (!eq)
            continue;
        *eq = '\0';
        names[n] = argv[i];
        values[n++] = atof(eq + 1);
    }
    double total = rubric_score(&r, names, values, n, res);
    for (int i = 0; i < r.n; i++)
        printf("%s %s %s: %s\n", r.c[i].name, rubric_fmt(v, sizeof v, res[i].points),
               !res[i].scored ? "unscored" : res[i].flagged ? "flagged"
               : res[i].passed ? "passed" : "failed", res[i].reason);
    for (int level = 1; r.levels > 1 && level <= r.levels; level++) {
        double max;
        printf("level-%d %s\n", level, rubric_fmt(v, sizeof v, rubric_points(&r, res, level, &max)));
    }
    printf("total %s\n", rubric_fmt(v, sizeof v, total));
    return 0;
}
