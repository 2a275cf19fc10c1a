/* machine_probe: probes the machine now, as a lab does at each end of a run
 * (kernels/machine.cu), and prints what it saw; with --against-first, also
 * what machine_interference() makes of each probe against the first. For
 * tests/gpu_busy.bats and for looking at a course machine by hand. */
#include "streamlab.h"
#include "kernels.h"

#include <stdio.h>

static int probes = 3, against_first = 0;

static const option own[] = {
    {"probes", OPT_INT, &probes, 1, 100, NO_QUICK, "N", "how many probes, one after another"},
    {"against-first", OPT_FLAG, &against_first, 0, 0, NO_QUICK, NULL,
     "compare each probe with the first, as a failed comparison would"},
    {NULL},
};
static const program_info tool = {
    .name = "machine_probe", .title = "what the machine gives this program now",
    .handout = "kernels/machine.cu", .options = own, .reps = 1,
};

int main(int argc, char **argv)
{
    common_options opt;
    device_info dev;
    machine_state first, now;
    char why[1024];
    options_parse(argc, argv, &tool, &opt);
    device_select(&opt, &dev);
    device_load_nvml(&dev);
    double raw = pcie_raw_gbps(dev.pcie_gen, dev.pcie_width);
    for (int i = 0; i < probes; i++) {
        machine_probe(i ? &now : &first);
        const machine_state *m = i ? &now : &first;
        printf("probe %d: link %.1f GB/s H2D, %.1f D2H (raw %.1f); host memcpy %.1f GB/s; "
               "launch %.1f us; SM clock %.0f of %.0f MHz; lost %.2f of %.2f ms\n", i,
               m->link_gbps[0], m->link_gbps[1], raw, m->host_gbps, m->launch_us, m->sm_mhz,
               dev.clock_mhz, m->sharing.lost_ms, m->sharing.probe_ms);
        if (against_first) {
            int n = machine_interference(&first, m, raw, dev.clock_mhz, why, sizeof why);
            printf("  interference: %d%s%s\n", n, n ? ": " : "", why);
        }
    }
    return 0;
}
