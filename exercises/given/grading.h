/* What every given program shares (exercises/given/exNN.cu): one
 * measurement, shown to the student as a lab's report with the points the
 * rubric would give, and to the grader as one JSON line.
 *
 * A given program is the whole of an exercise but the student's functions:
 * options, the bench, fresh random inputs, the measurement, the checks and
 * the report. Its main() reads:
 *
 *     lab_run lab;
 *     grading_begin(&lab, argc, argv, &program, check_pass_sizes);   instead of lab_begin()
 *     ... the measurement, calling the student's functions; the report ...
 *     grading_value("speedup", s);                 each metric the rubric may name
 *     return grading_finish(&lab);                 instead of lab_end()
 *
 * Level two's answers stay out of a student's run, and in the grader's
 * result line: the model's value of what the student predicts until they
 * have predicted (grading_predicted), a scored optimum always (a
 * grading_value() only, never reported), and the number of a metric that
 * gives it in one step (grading_value_withheld).
 *
 * check_pass_sizes(), the program's own, sets the check pass's small sizes:
 * the option variables it changes, and opt->reps. Under --check,
 * grading_begin() calls it as soon as the options are parsed and --quick
 * applied, before anything reads them: the settings line, --dry-run and the
 * memory guard all show and judge the sizes the check pass runs. What is not
 * an option (a duration drawn at random, a count of requests) main() still
 * chooses with grading_check().
 *
 * Three ways to run it, two options that grading_begin() adds:
 *   ./exNN                the student's: the report, then "What the grader
 *                         would give": each criterion of grader/rubrics/exNN.ini
 *                         (read now) against this run's metrics, its points,
 *                         the total; exit code as a lab's;
 *   ./exNN --grade        the grader's measure pass: the report, then one JSON
 *                         line of the metrics, the last on stdout, with the
 *                         token grade.py wrote on stdin; exit 0 whenever it
 *                         measured (a wrong result is a measurement), 1 when
 *                         the student's code stopped it, 3 when this machine
 *                         cannot run it;
 *   ... --check           small sizes, checks only: the check pass, which the
 *                         grader runs under compute-sanitizer memcheck.
 *
 * The token is read from stdin, and stdin closed, before any of the
 * student's code runs (grader/checks.py refuses a file with code that runs
 * before main()); it is never in the environment. Everything here is in
 * grading.c, whose state is static: the student's file can call these
 * functions but reach none of their data by name. grading.c and rubric.c are
 * linked into the exNN programs only, not into libstreamlab.a. */
#ifndef STREAMLAB_GRADING_H
#define STREAMLAB_GRADING_H

#include "streamlab.h"

#ifdef __cplusplus
extern "C" {
#endif

/* At most this many metrics per program. */
enum { GRADING_MAX_VALUES = 40 };

/* Sets the check pass's sizes: the program's option variables and
 * opt->reps, whatever the user typed; may go below an option's range (a
 * check pass checks, it does not time). */
typedef void (*check_pass_fn)(common_options *opt);

/* lab_begin() for prog with --grade and --check added to its options, and
 * named after the binary (./sol01 speaks as sol01); prog->name is the
 * exercise, which names the rubric and the JSON line. Under --check, calls
 * check_pass_sizes (NULL: none) before the options are printed or judged
 * (program_info's override_options). Under --grade, then takes the grader's
 * token from stdin and closes stdin.
 *
 * check_pass_sizes is an argument here, not a field of program_info: every
 * lab shares program_info, and no lab has a check pass; and main()'s first
 * line then names where the check pass's sizes are. */
void grading_begin(lab_run *run, int argc, char **argv, const program_info *prog,
                   check_pass_fn check_pass_sizes);

/* 1 in the check pass (--check): small sizes, checks only. */
int grading_check(void);

/* A metric, by the name the rubric gives it, once a run: a name given twice
 * (the student's code calling this before or after the program) ends the
 * run as wrong, so that the grader's line and the points preview read the
 * program's number, the one number there is. */
void grading_value(const char *name, double value);

/* A metric whose number would give a level-two answer away (the distance
 * of the student's choice from the model's optimum, which the choice then
 * gives in one step): the grader's result line carries it as any other,
 * but the student's points preview shows only whether its criterion
 * passed, and its limit. */
void grading_value_withheld(const char *name, double value);

/* A verdict on a distance from a scored optimum (its limits 0 to under 1):
 * judged on `within` alone, reported with the value 0 (within) or 1 (not),
 * since the distance itself, in the CSV and JSON, would give the optimum
 * with the student's own choice. The detail says "within" or "not within"
 * in the caller's words; returns `within`. */
int grading_verdict_withheld(report *r, const verdict *v, int within, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Has the student written level two's prediction? The model's value of
 * the quantity they predict is its answer, so a given program prints that
 * value (beside the prediction and the measurement) only once they have:
 * `prediction` a number other than `as_handed_out`, what the exercise's
 * stub writes (0 or a marker; a NaN is no prediction). Returns 1 then;
 * else prints, in the text format, one line saying the model's value
 * appears once `name` (say "LEVEL2_PREDICTED_RATIO") is written, and
 * returns 0: call it once, where the model's line would be, and keep its
 * answer for the other lines that would give the value away. The
 * measurement is printed either way, and the grader's result line carries
 * the model's value either way, as a grading_value(). */
int grading_predicted(report *r, double prediction, double as_handed_out, const char *name);

/* report_compare() where `shown` (grading_predicted()'s answer), else the
 * measurement alone (report_stats()): a model's value that answers the
 * prediction, beside the measurement only once the student has predicted. */
void grading_compare(report *r, int shown, const char *variant, const char *metric,
                     const char *model, double predicted, const stats *measured,
                     const char *unit);

/* A number drawn uniformly from [lo, hi), fresh every run. */
double grading_uniform(double lo, double hi);

/* Ends the run, in place of lab_end(): returns main()'s exit code. The
 * student's run: the points preview, then lab_end(). The grader's: whether
 * another process used the GPU (the metric gpu_shared; grade.py warns),
 * lab_end(), the JSON line, and stdout closed, so nothing can follow it. */
int grading_finish(lab_run *run);

#ifdef __cplusplus
}
#endif
#endif
