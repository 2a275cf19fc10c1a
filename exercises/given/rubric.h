/* A rubric (grader/rubrics/exNN.ini) read and scored in C, for the points
 * preview that ./exNN prints: the rules of grader/rubric.py, which the
 * grader scores with, applied to one run of the program. tests/cpu_grade.bats
 * checks that the two give the same points on the recorded runs. Host C99
 * only (no CUDA), so a test tool builds it alone. */
#ifndef STREAMLAB_RUBRIC_H
#define STREAMLAB_RUBRIC_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RUBRIC_MAX_LEVEL: an exercise's criteria are of level 1 or of its
 * second level, scored apart (grader/rubric.py says how). */
enum { RUBRIC_MAX_CRITERIA = 16, RUBRIC_MAX_LEVEL = 2, RUBRIC_NAME = 64, RUBRIC_TEXT = 512 };

typedef struct {
    char name[RUBRIC_NAME], metric[RUBRIC_NAME], what[RUBRIC_TEXT];
    int concept; /* 0: a correctness criterion */
    int level;   /* 1, or 2 for the exercise's second level */
    double points;
    int has_min, has_max, has_relative, has_limit;
    double min, max, relative; /* relative: relative_to_solution */
    double limit;              /* model_limit: past it, a value is outside physics */
    char judged_by[RUBRIC_NAME]; /* "": always judged; else judged only where this metric is 1 */
} rubric_criterion;

typedef struct {
    char title[RUBRIC_TEXT];
    int levels; /* the highest level of c[]: 1, or 2 when it has a second level */
    int n;
    rubric_criterion c[RUBRIC_MAX_CRITERIA];
} rubric;

/* Reads the rubric in `path`, without the criteria of a level past
 * `[exercise] levels` when it says one. Returns 0; 1 when there is no such
 * file (an instructor may withhold grader/rubrics/); -1 when it cannot be
 * used, with the file, the section and the key in why[], as rubric.py
 * words it. */
int rubric_load(const char *path, rubric *r, char *why, size_t size);

/* One criterion as the grader scores it from one run and no reference
 * solution: `reason` in rubric.py's words ("speedup 1.99, limit >= 1.8"). */
typedef struct {
    int scored; /* 0: a concept criterion left unscored, a correctness one having failed */
    int passed;
    int flagged; /* its value lies past model_limit, or it was not judged (judged_by):
                    not awarded, for the instructor */
    double points;
    char reason[RUBRIC_TEXT];
} rubric_result;

/* Scores the metrics names[i] = values[i] (i < n; a NaN or an absent name is
 * "not measured") against r: out[i] for r->c[i]. Returns the points. */
double rubric_score(const rubric *r, const char *const *names, const double *values, int n,
                    rubric_result *out);

/* The points that out[] (from rubric_score) gives the criteria of `level`,
 * and their maximum in *max; level 0: all of them, the exercise's total. */
double rubric_points(const rubric *r, const rubric_result *out, int level, double *max);

/* A number as rubric.py's fmt() writes it: 3, 0.5, 1.87, 1.2e-05. */
const char *rubric_fmt(char *buf, size_t size, double v);

#ifdef __cplusplus
}
#endif
#endif
