/* attempt_test: lab_attempt() with a made-up comparison, for tests/gpu_busy.bats.
 * Its attempts time nothing and spread by 0; the first --fail of them fail.
 * The first --saw of those say, through lab_attempt_saw() (twice, as lab02
 * may for both directions), that they saw what lab02 sees when its pinned
 * copies run slower than the same copies timed as the link: lab_attempt must
 * then measure again and name it, where a failed attempt on a quiet machine
 * is simply the answer. */
#include "streamlab.h"

static int fail = 1, saw = 0;

static const option own[] = {
    {"fail", OPT_INT, &fail, 0, 10, NO_QUICK, "N", "how many attempts fail first"},
    {"saw", OPT_INT, &saw, 0, 10, NO_QUICK, "N", "how many failed attempts say they saw interference"},
    {NULL},
};
static const program_info tool = {
    .name = "attempt_test", .title = "lab_attempt on a made-up comparison",
    .handout = "common/lab.h", .options = own, .reps = 1,
};
static const verdict HOLDS = {"made_up_holds", 1, INFINITY, "x", "the made-up attempt failed"};

typedef struct { int made; } tries;

static int attempt(void *ctx, double *spread)
{
    tries *t = (tries *)ctx;
    *spread = 0;
    if (++t->made > fail)
        return 1;
    if (t->made <= saw) {
        lab_attempt_saw("made-up: the same thing timed twice, %d GB/s and %d", 41, 55);
        lab_attempt_saw("made-up: D2H too");
    }
    return 0;
}

int main(int argc, char **argv)
{
    lab_run run;
    tries t = {0};
    lab_begin(&run, argc, argv, &tool);
    int seen = lab_attempt(&run, "made up", attempt, &t);
    report_verdict(run.r, &HOLDS, seen, "after %d attempts", t.made);
    return lab_end(&run);
}
