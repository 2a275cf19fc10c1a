/* Drives the report module with fixed numbers and no GPU, so the tests can
 * parse its text, CSV and JSON on any machine. The device name holds a comma
 * and a quote on purpose: CSV quoting and JSON escaping must survive them. */
#include "streamlab.h"

#include <string.h>

static int fail_check, not_observed, interfered, cannot_show, no_verdicts;
static double size = 64;

static const option own[] = {
    {"fail-check", OPT_FLAG, &fail_check, 0, 0, NO_QUICK, NULL, "make the check fail (exit 1)"},
    {"not-observed", OPT_FLAG, &not_observed, 0, 0, NO_QUICK, NULL, "make the verdict no (exit 4)"},
    {"interfered", OPT_FLAG, &interfered, 0, 0, NO_QUICK, NULL,
     "report a comparison re-measured twice for interference, and the machine changing"},
    {"cannot-show", OPT_FLAG, &cannot_show, 0, 0, NO_QUICK, NULL,
     "say at the end that a part cannot run here (exit 3)"},
    {"no-verdicts", OPT_FLAG, &no_verdicts, 0, 0, NO_QUICK, NULL,
     "judge no verdict, as an exercise's --check pass does"},
    {"size", OPT_DOUBLE, &size, 0.5, 1024, 2, "MIB", "a number option to parse"},
    {NULL},
};
static const program_info prog = {
    .name = "report_test", .title = "the report module on fixed numbers",
    .handout = "tests/cpu_report.bats", .options = own, .reps = 3, .quick_reps = 1,
};
static const verdict EFFECT = {"effect", 1.8, INFINITY, "x", "a made-up reason"};
static const verdict SECOND = {"second", -0.02, 0.02, "%", "another made-up reason"};

int main(int argc, char **argv)
{
    common_options opt;
    options_parse(argc, argv, &prog, &opt);

    device_info dev;
    memset(&dev, 0, sizeof dev);
    strcpy(dev.name, "Test GPU, \"fake\" edition");
    dev.cc_major = 9;
    dev.sm_count = 132;
    dev.async_engines = 3;
    dev.concurrent_kernels = 1;
    dev.priority_greatest = -5;

    report *r = report_begin(&prog, &opt, &dev);
    report_section(r, "Section");
    report_text(r, "free text appears only in the text format\n");
    report_param(r, "bytes", size * 1048576, "bytes");
    report_fact(r, "copy_engines", 3, "", "explanation");
    double samples[] = {4, 1, 3, 2, 5};
    stats s = stats_of(samples, 5);
    report_stats(r, "variant a", "time", &s, "ms");
    report_compare(r, "variant b", "time", "a + b", 2.5, &s, "ms");
    report_value(r, "variant c", "bandwidth", 52.25, "GB/s");
    report_check(r, "verified", !fail_check, "%d mismatches", fail_check ? 7 : 0);
    tally t = {0};
    t.where = "variant a";
    tally_add(&t, 100, fail_check ? 3 : 0, 42);
    report_tally(r, "outputs", &t, "outputs differ");
    /* What lab_attempt() and lab_end() report, with made-up probes. */
    report_attempts(r, "effect pair", interfered ? 3 : 1, !not_observed,
                    interfered ? "attempt 1: the link ran at 31-55 GB/s H2D; attempt 2: the same"
                               : "");
    machine_state start = {{0, 0, 5}, {55, 54}, 12, 6, 1980}, end = start;
    if (interfered)
        end.link_gbps[0] = 30;
    report_machine(r, &start, &end, 1980);
    double ratio = not_observed ? 1.1 : 1.95;
    if (!no_verdicts) {
        report_verdict(r, &EFFECT, ratio, "ratio %.2f", ratio);
        report_verdict(r, &SECOND, not_observed ? 0.05 : 0.001, "off by a little");
    }
    if (cannot_show)
        report_cannot_show(r, "part 3 needs 2 GPUs");
    return report_finish(r);
}
