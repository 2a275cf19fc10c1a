/* What every grading harness shares (grader/harness/exNN.cu). Transitional:
 * an exercise converted to the new layout has a given program instead
 * (exercises/given/exNN.cu, whose exercises/given/grading.h replaces this
 * file); this goes with the last harness.
 *
 * A harness is one program built from the grader's code and the student's
 * exercise file: it includes the file with the student's main() renamed
 * student_main (never called), then drives the student's TODO(student)
 * functions itself, with fresh random inputs every run, its own CPU reference
 * and its own clock. What the student's program would have printed is never
 * read: the harness prints one JSON object of what IT measured, as the last
 * line on stdout, and grade.py scores that against grader/rubrics/exNN.ini.
 *
 * Two passes, both run by grade.py:
 *   exNN            the measure pass: the exercise's sizes, timing and checks;
 *   exNN --check    the check pass: small sizes, checks only, run under
 *                   compute-sanitizer memcheck where it is installed.
 * Exit 0 whenever it measured (wrong results are a measurement, not an
 * error); 1 when the student's code stopped it (a CUDA error: the message
 * says where); 3 when this machine cannot run it (no GPU).
 *
 * Everything here is named grading_*, the harnesses' own helpers grader_*,
 * so nothing clashes with the names in the student's file. */
#ifndef STREAMLAB_GRADING_H
#define STREAMLAB_GRADING_H

#include "streamlab.h"
#include "json.h"
#include "kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GRADING_MAX_VALUES = 40 };

static struct {
    const char *exercise;
    int check;           /* 1 in the check pass */
    char nonce[64];      /* from grade.py: tells this line from one the student printed */
    device_info dev;
    gpu_sharing at_start; /* sharing_probe() before any of the student's code ran */
    int n;
    const char *name[GRADING_MAX_VALUES];
    double value[GRADING_MAX_VALUES];
} grading;

static int grading_check_flag, grading_grade_flag;
static const option grading_options[] = {
    {"check", OPT_FLAG, &grading_check_flag, 0, 1, NO_QUICK, NULL,
     "the check pass: small sizes, correctness only (for compute-sanitizer)"},
    {"grade", OPT_FLAG, &grading_grade_flag, 0, 1, NO_QUICK, NULL,
     "the grader's run, as a given program takes it (a harness always is)"},
    {NULL},
};

/* Parses the options (--check, --grade, --device N, --help), selects the GPU
 * and takes the nonce from stdin (grade.py writes it there), then closes
 * stdin, before any of the student's code runs. Returns 1 in the check pass. */
static inline int grading_begin(const char *exercise, int argc, char **argv)
{
    static char name[32];
    snprintf(name, sizeof name, "grade-%s", exercise);
    const program_info info = {
        .name = name,
        .title = "grading harness: drives the student's functions, prints one JSON line of "
                 "measurements",
        .options = grading_options, .reps = 1};
    common_options opt;
    options_parse(argc, argv, &info, &opt);
    grading.exercise = exercise;
    grading.check = grading_check_flag;
    if (fgets(grading.nonce, sizeof grading.nonce, stdin))
        grading.nonce[strcspn(grading.nonce, "\r\n")] = '\0';
    if (!freopen("/dev/null", "r", stdin))
        fail_cannot_run("cannot close stdin (reopening it on /dev/null failed)");
    device_select(&opt, &grading.dev);
    device_load_nvml(&grading.dev);
    sharing_probe(&grading.at_start);
    return grading.check;
}

/* One measurement, by name, for the JSON line. */
static inline void grading_value(const char *name, double value)
{
    if (grading.n == GRADING_MAX_VALUES)
        fail_wrong("grading harness: more than %d values", GRADING_MAX_VALUES);
    grading.name[grading.n] = name;
    grading.value[grading.n++] = value;
}

/* Prints the JSON line and returns the exit code. In the measure pass it
 * first asks whether another process used the GPU, at the start (measured by
 * grading_begin) or now: timings taken beside another process's work are not
 * the student's to answer for. The newline first: the student's code may have
 * left a line unfinished. */
static inline int grading_finish(void)
{
    if (!grading.check) {
        gpu_sharing now;
        sharing_probe(&now);
        grading_value("gpu_shared", gpu_was_shared(&grading.at_start) || gpu_was_shared(&now));
    }
    printf("\n{\"exercise\": ");
    json_write_string(stdout, grading.exercise);
    printf(", \"pass\": \"%s\", \"nonce\": ", grading.check ? "check" : "measure");
    json_write_string(stdout, grading.nonce);
    printf(", \"device\": ");
    json_write_string(stdout, grading.dev.name);
    for (int i = 0; i < grading.n; i++) {
        printf(", ");
        json_write_string(stdout, grading.name[i]);
        printf(": ");
        json_write_number(stdout, grading.value[i]);
    }
    printf("}\n");
    fflush(stdout);
    return EXIT_OK;
}

/* A number drawn uniformly from [lo, hi), fresh every run. */
static inline double grading_uniform(double lo, double hi)
{
    uint32_t u;
    fill_random_u32(&u, 1, fresh_seed());
    return lo + (hi - lo) * (u / 4294967296.0);
}

#endif
