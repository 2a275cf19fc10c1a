/* What every given program shares; see grading.h. */
#define _POSIX_C_SOURCE 200809L
#include "grading.h"
#include "json.h"
#include "kernels.h"
#include "machine.h"
#include "rubric.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Where the rubrics are: the Makefile compiles in the tree's own, so that
 * ./exNN finds them from any folder. */
#ifndef STREAMLAB_RUBRICS
#define STREAMLAB_RUBRICS "grader/rubrics"
#endif

static int grade_flag, check_flag;
static const option grading_options[] = {
    {"grade", OPT_FLAG, &grade_flag, 0, 1, NO_QUICK, NULL,
     "the grader's run: one JSON line of the metrics, its token read from stdin"},
    {"check", OPT_FLAG, &check_flag, 0, 1, NO_QUICK, NULL,
     "the check pass: small sizes, checks only (for compute-sanitizer)"},
    {NULL},
};

static struct {
    const char *exercise; /* "ex01": names the rubric and the JSON line */
    program_info prog;    /* the program's, renamed and with the options above */
    check_pass_fn check_pass_sizes; /* the program's, for --check */
    char nonce[80];       /* grade.py's token: tells its line from one the student's code printed */
    int n;
    const char *name[GRADING_MAX_VALUES];
    double value[GRADING_MAX_VALUES];
    unsigned char withheld[GRADING_MAX_VALUES]; /* grading_value_withheld()'s */
} grading;

/* prog's options followed by grading_options, in one table. */
static const option *with_grading_options(const option *own)
{
    int n = 0, k = (int)(sizeof grading_options / sizeof *grading_options);
    while (own && own[n].name)
        n++;
    option *all = xmalloc((size_t)(n + k) * sizeof *all);
    if (n)
        memcpy(all, own, (size_t)n * sizeof *all);
    memcpy(all + n, grading_options, (size_t)k * sizeof *all);
    return all;
}

/* One line, at most a token's length: anything else leaves the nonce empty,
 * and grade.py then takes no result line. */
static void take_nonce(void)
{
    char line[sizeof grading.nonce];
    if (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        snprintf(grading.nonce, sizeof grading.nonce, "%s", line);
    }
    if (!freopen("/dev/null", "r", stdin))
        fail_cannot_run("cannot close stdin (reopening it on /dev/null failed)");
}

/* program_info's override_options, which a given program leaves to
 * grading_begin(): called once --check is parsed, and before the settings
 * are printed or judged. */
static void override_for_check(common_options *opt)
{
    if (check_flag && grading.check_pass_sizes)
        grading.check_pass_sizes(opt);
}

void grading_begin(lab_run *run, int argc, char **argv, const program_info *prog,
                   check_pass_fn check_pass_sizes)
{
    const char *slash = argc > 0 ? strrchr(argv[0], '/') : NULL;
    grading.exercise = prog->name;
    grading.prog = *prog;
    grading.prog.name = slash ? slash + 1 : argc > 0 ? argv[0] : prog->name;
    grading.prog.options = with_grading_options(prog->options);
    grading.check_pass_sizes = check_pass_sizes;
    grading.prog.override_options = override_for_check;
    lab_begin(run, argc, argv, &grading.prog);
    if (grade_flag)
        take_nonce();
}

int grading_check(void) { return check_flag; }

void grading_value(const char *name, double value)
{
    if (grading.n == GRADING_MAX_VALUES)
        fail_wrong("more than %d metrics (GRADING_MAX_VALUES)", GRADING_MAX_VALUES);
    for (int i = 0; i < grading.n; i++)
        if (strcmp(grading.name[i], name) == 0)
            fail_wrong("the metric %s was given twice: the program gives each once, and the "
                       "student's code gives none", name);
    grading.name[grading.n] = name;
    grading.withheld[grading.n] = 0;
    grading.value[grading.n++] = value;
}

void grading_value_withheld(const char *name, double value)
{
    grading_value(name, value);
    grading.withheld[grading.n - 1] = 1;
}

/* 1 when `metric` came from grading_value_withheld(). */
static int withheld(const char *metric)
{
    for (int i = 0; i < grading.n; i++)
        if (strcmp(grading.name[i], metric) == 0)
            return grading.withheld[i];
    return 0;
}

int grading_verdict_withheld(report *r, const verdict *v, int within, const char *fmt, ...)
{
    if (!verdict_holds(v, 0) || verdict_holds(v, 1))
        fail_wrong("%s: a withheld verdict needs limits that hold 0 and not 1", v->name);
    char detail[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    report_verdict(r, v, within ? 0 : 1, "%s", detail);
    return within;
}

int grading_predicted(report *r, double prediction, double as_handed_out, const char *name)
{
    if (isfinite(prediction) && prediction != as_handed_out)
        return 1;
    report_text(r, "  (the model's value appears here once you write your prediction, %s: "
                "predict first, then run)\n", name);
    return 0;
}

void grading_compare(report *r, int shown, const char *variant, const char *metric,
                     const char *model, double predicted, const stats *measured,
                     const char *unit)
{
    if (shown)
        report_compare(r, variant, metric, model, predicted, measured, unit);
    else
        report_stats(r, variant, metric, measured, unit);
}

double grading_uniform(double lo, double hi)
{
    uint32_t u;
    fill_random_u32(&u, 1, fresh_seed());
    return lo + (hi - lo) * (u / 4294967296.0);
}

/* One criterion's line of the preview (and its value, in --csv and --json). */
static void preview_criterion(report *r, int text, const rubric_criterion *c,
                              const rubric_result *res)
{
    char got[32], max[32], reason[RUBRIC_TEXT];
    if (!text)
        report_value(r, "points preview", c->name, res->points, "points");
    snprintf(reason, sizeof reason, "%s", res->reason);
    if (res->scored && withheld(c->metric)) /* the rubric's reason gives the value */
        snprintf(reason, sizeof reason, "%s withheld (it would give the answer away), %s %s %s",
                 c->metric, res->passed ? "limit" : "needs", c->has_max ? "<=" : ">=",
                 rubric_fmt(max, sizeof max, c->has_max ? c->max : c->min));
    report_text(r, "  %s %-18s %4s/%-3s %s\n",
                !res->scored ? "[ -- ]" : res->flagged ? "[FLAG]"
                : res->passed ? "[pass]" : "[FAIL]", c->name,
                rubric_fmt(got, sizeof got, res->points),
                rubric_fmt(max, sizeof max, c->points), reason);
    if (c->has_relative)
        report_text(r, "  %-25s (the grader holds it to %s x the reference solution's "
                    "value, measured in the same grading run)\n", "",
                    rubric_fmt(max, sizeof max, c->relative));
}

/* The table "What the grader would give": the rubric read now, scored as
 * grader/rubric.py scores one run; with a second level, its criteria under
 * their own subtotal, as the grader's reports show them. */
static void preview(lab_run *run)
{
    report *r = run->r;
    char path[4096], why[1024], got[32], max[32];
    rubric rb;
    rubric_result res[RUBRIC_MAX_CRITERIA];
    snprintf(path, sizeof path, "%s/%s.ini", STREAMLAB_RUBRICS, grading.exercise);
    report_section(r, "What the grader would give");
    int status = rubric_load(path, &rb, why, sizeof why);
    if (status == 1) {
        report_text(r, "  no rubric at %s (withheld, or not visible here): no points to show\n",
                    path);
        return;
    }
    if (status) {
        report_text(r, "  the rubric cannot be read: %s\n", why);
        return;
    }
    double points = rubric_score(&rb, grading.name, grading.value, grading.n, res), total;
    int text = !run->opt.csv && !run->opt.json;
    for (int level = 1; level <= rb.levels; level++) {
        if (rb.levels > 1) {
            double mine = rubric_points(&rb, res, level, &total);
            char name[32];
            snprintf(name, sizeof name, "level %d", level);
            if (!text)
                report_value(r, "points preview", name, mine, "points");
            report_text(r, "  %s: %s of %s points%s\n", name, rubric_fmt(got, sizeof got, mine),
                        rubric_fmt(max, sizeof max, total),
                        level > 1 ? " (a second level, graded apart)" : "");
        }
        for (int i = 0; i < rb.n; i++)
            if (rb.c[i].level == level)
                preview_criterion(r, text, &rb.c[i], &res[i]);
    }
    rubric_points(&rb, res, 0, &total);
    if (!text)
        report_value(r, "points preview", "total", points, "points");
    report_text(r, "  total: %s of %s points for this run, by %s\n"
                "  (the grader runs this program, so it measures the same way; its correctness "
                "criteria also\n  take the worst of a check pass under compute-sanitizer)\n",
                rubric_fmt(got, sizeof got, points), rubric_fmt(max, sizeof max, total), path);
}

/* The grader's line: the last on stdout. A newline first, in case the
 * student's code left a line unfinished. */
static void print_result_line(const lab_run *run)
{
    printf("\n{\"exercise\": ");
    json_write_string(stdout, grading.exercise);
    printf(", \"pass\": \"%s\", \"nonce\": ", check_flag ? "check" : "measure");
    json_write_string(stdout, grading.nonce);
    printf(", \"device\": ");
    json_write_string(stdout, run->dev.name);
    for (int i = 0; i < grading.n; i++) {
        printf(", ");
        json_write_string(stdout, grading.name[i]);
        printf(": ");
        json_write_number(stdout, grading.value[i]);
    }
    printf("}\n");
    fflush(stdout);
}

int grading_finish(lab_run *run)
{
    if (!grade_flag) {
        if (!check_flag)
            preview(run);
        return lab_end(run);
    }
    if (!check_flag) {
        /* timings taken beside another process's work are not the student's
         * to answer for: asked at the start (lab_begin) and now */
        gpu_sharing now;
        sharing_probe(&now);
        grading_value("gpu_shared", gpu_was_shared(&run->at_start.sharing) || gpu_was_shared(&now));
    }
    (void)lab_end(run); /* its verdicts are the student's to read; the line is the grader's */
    print_result_line(run);
    /* Whatever runs after main() (an atexit handler, a thread) writes to /dev/null. */
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || dup2(null, STDOUT_FILENO) < 0)
        fail_cannot_run("cannot close stdout after the result line");
    close(null);
    return EXIT_OK;
}
