/* machine_test: machine_interference() on numbers typed in, for the CPU
 * tests (tests/cpu_report.bats): two moments, each as seven numbers
 * (link H2D, link D2H GB/s, host memcpy GB/s, launch us, SM MHz, GPU time
 * lost ms, probe ms), after the link's raw rate and the SM's top clock.
 * Prints how many signs it saw, then what it would tell a student. */
#include "machine.h"

#include <stdio.h>
#include <stdlib.h>

static machine_state moment(char **v)
{
    machine_state m = {{0, atof(v[5]), atof(v[6])}, {atof(v[0]), atof(v[1])}, atof(v[2]),
                       atof(v[3]), atof(v[4])};
    return m;
}

int main(int argc, char **argv)
{
    if (argc != 17) {
        fprintf(stderr, "usage: machine_test RAW_GBPS MAX_MHZ  H2D D2H HOST LAUNCH MHZ LOST "
                        "PROBE  (the start)  H2D D2H HOST LAUNCH MHZ LOST PROBE  (now)\n");
        return 2;
    }
    machine_state a = moment(argv + 3), b = moment(argv + 10);
    char why[1024];
    int n = machine_interference(&a, &b, atof(argv[1]), atof(argv[2]), why, sizeof why);
    printf("%d\n%s\n", n, why);
    return 0;
}
