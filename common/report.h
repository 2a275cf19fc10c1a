/* The report: what a program found, in one of three formats.
 *
 * A lab calls these in the order of its lesson. In the default text format
 * each call prints a readable line at once; with --csv each number becomes a
 * row `lab,variant,metric,value,unit`; with --json everything is collected and
 * printed as one document by report_finish(). Narrative text is printed only
 * in the text format, so the machine formats stay parseable. Nothing here
 * launches GPU work.
 *
 * The exit code is derived, never chosen: report_finish() returns
 * EXIT_WRONG_RESULTS if any check failed, else EXIT_NOT_OBSERVED if any
 * verdict was "no", else EXIT_OK. */
#ifndef STREAMLAB_REPORT_H
#define STREAMLAB_REPORT_H

#include "device.h"
#include "options.h"
#include "stats.h"
#include "tally.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct report report;

report *report_begin(const program_info *prog, const common_options *opt, const device_info *d);

/* A heading, and free text (text format only). */
void report_section(report *r, const char *title);
void report_text(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* An input of the run: a size, a duration asked for, a repetition count. */
void report_param(report *r, const char *name, double value, const char *unit);

/* A measured number, with its statistics when it came from measure(). */
void report_value(report *r, const char *variant, const char *metric, double value,
                  const char *unit);
void report_stats(report *r, const char *variant, const char *metric, const stats *s,
                  const char *unit);
/* A measured number for scripts only: CSV and JSON carry it, the text format
 * prints nothing (for a table the lab prints in its own layout). */
void report_data(report *r, const char *variant, const char *metric, double value,
                 const char *unit);

/* Every sample behind a statistic, for plots of its distribution: in CSV
 * one row per sample (metric "<metric>_sample"), in JSON the same rows among
 * the measurements; the text format prints nothing (report_stats says it). */
void report_samples(report *r, const char *variant, const char *metric, const double *v, int n,
                    const char *unit);

/* A fact about the GPU or the setup, with what it means for the lesson:
 * "copy_engines 3: an H2D and a D2H copy can run at once". The text format
 * prints the metric with spaces for underscores, then the explanation. */
void report_fact(report *r, const char *metric, double value, const char *unit,
                 const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* The model's prediction beside the measurement, and their ratio, on one
 * line that ends with the model's formula ("n(h+k+d)"). */
void report_compare(report *r, const char *variant, const char *metric, const char *model,
                    double predicted, const stats *measured, const char *unit);

/* A correctness check: results verified, bytes intact. A failed check makes
 * the exit code EXIT_WRONG_RESULTS. */
void report_check(report *r, const char *name, int passed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The check of a tally: "N of M <what>", passed when nothing was wrong and
 * something was checked; the first wrong result is named when there is one. */
void report_tally(report *r, const char *name, const tally *t, const char *what);

/* A demonstration's verdict, declared once, beside the lesson it judges:
 * the number it reads, the range in which the effect counts as observed
 * (-INFINITY or INFINITY for an open end), how that number prints ("%": a
 * fraction shown as a percentage; "x": a ratio; else a unit), and the likely
 * reason to print when it is not observed. The range comes from the lesson's
 * model and a stated tolerance, in a comment beside the declaration; how
 * often each verdict was observed over 200 runs of `make stress` on H100s,
 * and how far its values stayed from the range, is in
 * docs/results/h100/stress/README.md. */
typedef struct {
    const char *name;
    double min, max;
    const char *unit;
    const char *hint;
} verdict;

/* 1 when v->min <= value <= v->max: what report_verdict() will judge, for an
 * attempt (lab_attempt) to ask before it reports. */
int verdict_holds(const verdict *v, double value);
/* Judges v->min <= value <= v->max, prints "observed: yes/NO name: <detail>
 * (limit: ...)" and returns 1 when observed. The hints of the verdicts that
 * failed are printed by report_finish(). Under --trace or --timeline the
 * line says it was judged on a traced run, and the hints begin with the
 * tracing: the limits are for untraced runs. In CSV: the rows "verdict,NAME,
 * 0|1,observed", "verdict,NAME_value,V,unit" and, for each finite limit,
 * "verdict,NAME_min" and "NAME_max", a "%" verdict's three as percentages
 * (make stress and plots/page.py read them). */
int report_verdict(report *r, const verdict *v, double value, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* How many attempts lab_attempt() needed for `what` (a row "what,attempts,N"
 * in every format) and, when it saw interference, what it saw (`why`) and
 * whether an attempt then showed the effect (`seen`): a line in the text, an
 * item of "interference" in JSON, and, when none showed it, the first of the
 * likely reasons. */
void report_attempts(report *r, const char *what, int attempts, int seen, const char *why);
/* The machine at the start and the end of the run (machine_probe): rows
 * "machine at start"/"machine at end" (link_H2D, link_D2H, host_memcpy,
 * launch, sm_clock), and what changed between the two, as a likely reason. */
void report_machine(report *r, const machine_state *start, const machine_state *end,
                    double max_mhz);
/* Was the GPU this program's alone? Given sharing_probe()'s measurements at
 * the start and the end of the run: shared at either moment is a "no"
 * verdict of its own (gpu_not_shared), whose hint leads the likely reasons,
 * so a shared GPU can never make or mar an "observed". Not shared, but the
 * driver lists other processes: a note beside any failed verdict. */
void report_sharing(report *r, const gpu_sharing *start, const gpu_sharing *end);

/* This machine cannot show the lesson's effect (lab13 on one GPU), though
 * everything it ran was checked: report_finish() then returns
 * EXIT_CANNOT_RUN, unless a check failed, and says why in one line on
 * stderr, after the report. printf-style. */
void report_cannot_show(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints the JSON document, or the closing line and the hints of the
 * verdicts not observed; frees the report and returns the exit code. */
int report_finish(report *r);

/* Numbers as the text report prints them: about four significant digits. */
const char *format_value(char *buf, size_t size, double v);

#ifdef __cplusplus
}
#endif
#endif
