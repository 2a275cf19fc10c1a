/* Command-line options: one table per program, --help generated from it.
 *
 * Every program accepts the common options (--help, --device, --quick,
 * --reps, --csv, --json, --trace, --timeline, --dry-run) and lists its own in
 * a table of `option` that ends with {NULL}. Numbers are range-checked here,
 * so a program never sees a value it did not allow. */
#ifndef STREAMLAB_OPTIONS_H
#define STREAMLAB_OPTIONS_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

enum option_kind {
    OPT_FLAG,   /* no value; sets an int to 1 */
    OPT_INT,    /* an integer in [min, max], stored in an int */
    OPT_DOUBLE, /* a finite number in [min, max], stored in a double */
    OPT_STRING, /* any text, stored as a const char * into argv */
};

/* An option's `quick` when --quick leaves it at its default. */
#define NO_QUICK NAN

typedef struct {
    const char *name;      /* long name without the leading "--" */
    enum option_kind kind;
    void *value;           /* int * for OPT_FLAG and OPT_INT, double * for OPT_DOUBLE,
                              const char ** for OPT_STRING;
                              the value it holds before parsing is the default */
    double min, max;       /* accepted range of a number, inclusive */
    double quick;          /* its value under --quick unless the user gave it; NO_QUICK */
    const char *arg;       /* the value's name in --help, e.g. "MS" */
    const char *help;      /* one line */
} option;

/* What a lab needs of the GPU to show its effect; lab_begin() exits 3 with
 * the reason when this GPU or this environment lacks one. */
enum lab_needs {
    NEEDS_CONCURRENT_KERNELS = 1 << 0, /* kernels of different streams run together */
    NEEDS_COPY_ENGINE = 1 << 1,        /* copies run beside kernels */
    NEEDS_OVERLAP = 1 << 2,            /* CUDA_LAUNCH_BLOCKING not set */
    NEEDS_PRIORITIES = 1 << 3,         /* a range of stream priorities */
    NEEDS_HOST_REGISTER = 1 << 4,      /* cudaHostRegister works here */
};

typedef struct {
    int device; /* --device N */
    int quick;  /* --quick: small sizes, under a second */
    int reps;   /* --reps N: timed repetitions per measurement */
    int retries; /* --retries N: re-measurements of a comparison spoilt by interference */
    int csv;    /* --csv */
    int json;   /* --json */
    const char *trace; /* --trace FILE: .json (Chrome trace) or .tsv (raw records) */
    int timeline;      /* --timeline: draw the run in the terminal */
} common_options;

/* A program: its name, its options and what lab_begin() checks before any
 * GPU work. Written with designated initializers; fields left out are 0. */
typedef struct {
    const char *name;       /* "lab04": used in messages and in the report */
    const char *title;      /* one line: what the program shows */
    const char *handout;    /* where the lesson is explained: the report points there */
    const option *options;  /* the program's own options, ending with {NULL}; may be NULL */
    int reps;               /* --reps when not given */
    int quick_reps;         /* --reps under --quick when not given; 0: as without */
    unsigned needs;         /* enum lab_needs, or-ed */
    /* The free-memory guard: the option that sets the run's size on the GPU
     * and the device bytes per unit of it, times the value of memory_times
     * where one is named (--chunks x --chunk-mib). A size that needs more than
     * half of the memory free now is a usage error naming the accepted range. */
    const char *memory_option;
    double memory_per_unit;
    const char *memory_times;
    /* Rules between options that the table cannot state (a product of two
     * at most a limit, say): called after parsing and --quick, it calls
     * fail_usage() on a mistake and never changes a value. */
    void (*check_options)(void);
    /* Called after parsing and --quick, before check_options, --dry-run's
     * settings and the memory guard: the one place that may change an
     * option's value, one the user typed included, so that whatever judges
     * or prints the settings sees the values the run will use. The exercises'
     * check pass sets its small sizes here (exercises/given/grading.c); it
     * may set a value outside the range a user may type. May be NULL. */
    void (*override_options)(common_options *opt);
    /* Called by lab_begin() after the options are parsed and before the
     * first CUDA call: the one moment to set an environment variable that the
     * driver reads once, when it creates the context
     * (CUDA_DEVICE_MAX_CONNECTIONS, for lab07). May be NULL. */
    void (*before_context)(void);
} program_info;

#define REPS_MAX 10000
/* Two more measurements at most: on a shared machine a burst of another
 * process's traffic lasts a moment, and one that outlasts three
 * measurements is the machine's state, which the run then reports. */
#define RETRIES_DEFAULT 2
#define RETRIES_MAX 10

/* Parses argv into *common and the program's table, then applies --quick to
 * the options the user did not give: a value typed on the command line is
 * never changed, but by prog->override_options, called next. Prints help
 * and exits 0 on --help or -h; prints the settings the run would use and
 * exits 0 on --dry-run, before any GPU work; prints one line naming the
 * option and exits EXIT_USAGE on any mistake.
 * Sets program_name. */
void options_parse(int argc, char **argv, const program_info *prog, common_options *common);

/* An option's value as a number (a flag's 0 or 1); NAN for text. */
double option_value(const option *o);

/* The value of the program's option `name` (without "--") as a number, and
 * its table entry in *o. Exits when there is no such option: a typo in a
 * program, not the user's mistake. */
double option_number(const program_info *prog, const char *name, const option **o);

#ifdef __cplusplus
}
#endif
#endif
