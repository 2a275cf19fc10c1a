/* Option parsing; see options.h.
 *
 * A small hand-written parser instead of getopt_long: it accepts exactly
 * "--name value" and "--name=value", never abbreviations, and every message
 * names the option and the range it accepts. */
#define _POSIX_C_SOURCE 200809L /* sigaction, unlink, stat */
#include "options.h"
#include "check.h"
#include "exitcodes.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int help_requested;

static void table_of_common(option *t, common_options *c)
{
    const option common[] = {
        {"help", OPT_FLAG, &help_requested, 0, 0, NULL, "show this help and exit"},
        {"device", OPT_INT, &c->device, 0, 63, "N", "GPU to use, counted from 0"},
        {"quick", OPT_FLAG, &c->quick, 0, 0, NULL, "small sizes, under a second (tests, sanitizers)"},
        {"reps", OPT_INT, &c->reps, 1, REPS_MAX, "N", "timed repetitions of each measurement"},
        {"csv", OPT_FLAG, &c->csv, 0, 0, NULL, "print rows lab,variant,metric,value,unit"},
        {"json", OPT_FLAG, &c->json, 0, 0, NULL, "print one JSON document"},
        {"trace", OPT_STRING, &c->trace, 0, 0, "FILE",
         "record a timeline into FILE: a .json name for Perfetto, .tsv for raw records"},
        {"timeline", OPT_FLAG, &c->timeline, 0, 0, NULL, "draw the run's timeline in the terminal"},
    };
    memcpy(t, common, sizeof common);
}
enum { N_COMMON = 8 };

static void print_number(double v, enum option_kind kind)
{
    if (kind == OPT_INT)
        printf("%.0f", v);
    else
        printf("%g", v);
}

static void print_help(const program_info *prog, const option *common)
{
    printf("usage: %s [options]\n%s\n\noptions:\n", prog->name, prog->title);
    for (int pass = 0; pass < 2; pass++) {
        const option *t = pass == 0 ? common : prog->options;
        int n = pass == 0 ? N_COMMON : prog->n_options;
        for (int i = 0; i < n; i++) {
            char left[64];
            snprintf(left, sizeof left, "--%s%s%s", t[i].name, t[i].arg ? " " : "",
                     t[i].arg ? t[i].arg : "");
            printf("  %-22s %s", left, t[i].help);
            if (t[i].kind == OPT_INT || t[i].kind == OPT_DOUBLE) {
                double def = t[i].kind == OPT_INT ? *(int *)t[i].value : *(double *)t[i].value;
                printf(" (");
                print_number(t[i].min, t[i].kind);
                printf(" to ");
                print_number(t[i].max, t[i].kind);
                printf("; default ");
                print_number(def, t[i].kind);
                printf(")");
            }
            printf("\n");
        }
    }
    printf("\nexit codes:\n");
    for (int code = EXIT_OK; code <= EXIT_NOT_OBSERVED; code++)
        printf("  %d  %s\n", code, exit_code_meaning(code));
}

static void fail_range(const option *o, const char *text)
{
    if (o->kind == OPT_INT)
        fail_usage("--%s must be an integer from %.0f to %.0f (got '%s')", o->name, o->min,
                   o->max, text);
    fail_usage("--%s must be a number from %g to %g (got '%s')", o->name, o->min, o->max, text);
}

/* 1 when text is a plain decimal number: an optional sign, digits, and for a
 * real number a decimal point and an exponent. strtoll and strtod accept
 * more (leading spaces, hexadecimal, "infinity"), which on a command line is
 * more often a typing mistake than a wish. */
static int plain_number(const char *text, int integer)
{
    const char *c = text;
    int digits = 0;
    if (*c == '+' || *c == '-')
        c++;
    for (; *c >= '0' && *c <= '9'; c++)
        digits++;
    if (!integer && *c == '.')
        for (c++; *c >= '0' && *c <= '9'; c++)
            digits++;
    if (!integer && digits && (*c == 'e' || *c == 'E')) {
        c++;
        if (*c == '+' || *c == '-')
            c++;
        if (!(*c >= '0' && *c <= '9'))
            return 0;
        while (*c >= '0' && *c <= '9')
            c++;
    }
    return digits > 0 && *c == '\0';
}

/* Converts text to the option's kind, or exits naming the option. */
static void store_number(const option *o, const char *text)
{
    char *end;
    errno = 0;
    double v;
    if (!plain_number(text, o->kind == OPT_INT))
        fail_range(o, text);
    if (o->kind == OPT_INT) {
        long long n = strtoll(text, &end, 10);
        v = (double)n;
    } else {
        v = strtod(text, &end);
        if (!isfinite(v))
            fail_range(o, text);
    }
    if (end == text || *end != '\0' || errno == ERANGE || v < o->min || v > o->max)
        fail_range(o, text);
    if (o->kind == OPT_INT)
        *(int *)o->value = (int)v;
    else
        *(double *)o->value = v;
}

/* The trace is written as FILE.partial and renamed when complete (see
 * timeline.c). Should the run be stopped (Ctrl-C, kill) while that file
 * exists, it is removed on the way out: an interrupted run leaves nothing
 * behind. A signal the caller chose to ignore (nohup, a background job)
 * stays ignored. */
static char *trace_partial;

static void remove_partial_then_stop(int sig)
{
    unlink(trace_partial); /* async-signal-safe; fails harmlessly if not there */
    raise(sig);            /* SA_RESETHAND: now with the default action, ending the program */
}

static void clean_up_when_interrupted(void)
{
    static const int signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    for (size_t i = 0; i < sizeof signals / sizeof signals[0]; i++) {
        struct sigaction now, sa;
        if (sigaction(signals[i], NULL, &now) != 0 || now.sa_handler == SIG_IGN)
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_partial_then_stop;
        sa.sa_flags = SA_RESETHAND;
        sigemptyset(&sa.sa_mask);
        sigaction(signals[i], &sa, NULL);
    }
}

/* A trace is written at the end of a run: find out now, before any GPU
 * work, whether it can be. The file is written under a temporary name and
 * renamed when complete, so the probe uses that name too. */
static void check_trace_path(const char *path)
{
    size_t len = strlen(path);
    int json = len > 5 && strcmp(path + len - 5, ".json") == 0;
    int tsv = len > 4 && strcmp(path + len - 4, ".tsv") == 0;
    struct stat st;
    if (!json && !tsv)
        fail_usage("--trace FILE must end in .json (Chrome trace) or .tsv (raw records), "
                   "got '%s'", path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        fail_usage("--trace %s is a folder: name a file in it, e.g. %s/trace.json", path, path);
    trace_partial = xmalloc(len + sizeof ".partial");
    sprintf(trace_partial, "%s.partial", path);
    FILE *f = fopen(trace_partial, "w");
    if (!f)
        fail_usage("--trace %s cannot be written: %s", path, strerror(errno));
    fclose(f);
    remove(trace_partial);
    clean_up_when_interrupted();
}

static const option *find(const char *name, size_t len, const option *common,
                          const program_info *prog)
{
    for (int i = 0; i < N_COMMON; i++)
        if (strlen(common[i].name) == len && strncmp(common[i].name, name, len) == 0)
            return &common[i];
    for (int i = 0; i < prog->n_options; i++)
        if (strlen(prog->options[i].name) == len && strncmp(prog->options[i].name, name, len) == 0)
            return &prog->options[i];
    return NULL;
}

void options_parse(int argc, char **argv, const program_info *prog, common_options *c)
{
    option common[N_COMMON];
    program_name = prog->name;
    c->device = 0;
    c->quick = c->csv = c->json = 0;
    c->reps = prog->default_reps;
    c->trace = NULL;
    c->timeline = 0;
    table_of_common(common, c);

    /* --help wins over any mistake beside it: someone asking for help is
     * usually in the middle of getting the rest wrong. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0) {
            print_help(prog, common);
            exit(EXIT_OK);
        }

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 || a[2] == '\0')
            fail_usage("unexpected argument '%s' (options start with --; see --help)", a);
        const char *name = a + 2;
        const char *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        const option *o = find(name, len, common, prog);
        if (!o)
            fail_usage("unknown option '%.*s' (see --help)", (int)(len + 2), a);
        if (o->kind == OPT_FLAG) {
            if (eq)
                fail_usage("--%s takes no value (got '%s')", o->name, eq + 1);
            *(int *)o->value = 1;
            continue;
        }
        const char *text = eq ? eq + 1 : (i + 1 < argc ? argv[i + 1] : NULL);
        if (!eq && text && strncmp(text, "--", 2) == 0)
            text = NULL; /* "--reps --csv": the value was forgotten */
        if (!eq && text)
            i++;
        if (!text)
            fail_usage("--%s needs a value: %s", o->name, o->arg ? o->arg : "a number");
        if (o->kind == OPT_STRING)
            *(const char **)o->value = text;
        else
            store_number(o, text);
    }
    if (c->csv && c->json)
        fail_usage("--csv and --json cannot be used together: choose one output format");
    if (c->trace)
        check_trace_path(c->trace);
}

int option_given(int argc, char **argv, const char *name)
{
    size_t len = strlen(name);
    for (int i = 1; i < argc; i++)
        if (strncmp(argv[i], name, len) == 0 && (argv[i][len] == '\0' || argv[i][len] == '='))
            return 1;
    return 0;
}
