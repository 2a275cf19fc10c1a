/* Drives the report module with fixed numbers and no GPU, so the tests can
 * parse its text, CSV and JSON on any machine. The device name holds a comma
 * and a quote on purpose: CSV quoting and JSON escaping must survive them. */
#include "streamlab.h"

#include <string.h>

static int fail_check, not_observed;
static double size = 64;

static const option own[] = {
    {"fail-check", OPT_FLAG, &fail_check, 0, 0, NULL, "make the check fail (exit 1)"},
    {"not-observed", OPT_FLAG, &not_observed, 0, 0, NULL, "make the verdict no (exit 4)"},
    {"size", OPT_DOUBLE, &size, 0.5, 1024, "MIB", "a number option to parse"},
};
static const program_info prog = {"report_test", "the report module on fixed numbers", own, 3, 7};

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
    report_param(r, "size", size, "MiB");
    report_fact(r, "copy_engines", 3, "", "explanation");
    double samples[] = {4, 1, 3, 2, 5};
    stats s = stats_of(samples, 5);
    report_stats(r, "variant a", "time", &s, "ms");
    report_compare(r, "variant b", "time", 2.5, &s, "ms");
    report_value(r, "variant c", "bandwidth", 52.25, "GB/s");
    report_check(r, "verified", !fail_check, "%d mismatches", fail_check ? 7 : 0);
    report_verdict(r, "effect", !not_observed, "ratio %.2f (limit 1.80)",
                   not_observed ? 1.1 : 1.95);
    report_hint(r, "a made-up reason");
    return report_finish(r);
}
