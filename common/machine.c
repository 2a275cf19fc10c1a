/* Is another process using the machine? See machine.h. */
#include "machine.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* How far a number may move between two moments before it counts as a sign
 * of interference: far beyond what one quiet machine shows from probe to
 * probe, well inside what another tenant's work does. Measured on a quiet
 * H100 (2026-11-22, tests/tools/machine_probe): copies 45-53 GB/s on a fresh
 * machine's first probes, then within 2% (lab01, 03 and 05 on another fresh
 * H100, 2026-11-23, started at 12-38 GB/s in their first seconds); host memcpy 5.6-13 GB/s (776 lab
 * runs of make stress); launches 8.4-14 us; the clock at its top, 1980 MHz. Beside tests/tools/gpu_load
 * (copies both ways and kernels on every SM) the probe lost 7 ms of 12 to
 * the other process and launches took 2.4 ms; at other moments labs saw the
 * link at 29-41 GB/s. */
static const double RATE_DIP = 0.80;      /* a copy rate under 80% of the other moment's */
static const double HOST_DIP = 0.40;      /* host memcpy: 5.6-13 GB/s on one quiet H100 host */
static const double RAW_LINK_SHARE = 0.60; /* pinned copies reach 80-90% of the raw rate alone */
static const double LAUNCH_GROWTH = 2.0;  /* launches twice as slow as the other moment's ... */
static const double LAUNCH_EXTRA_US = 10; /* ... and 10 us slower: a few us is the host's jitter */
static const double CLOCK_SHARE = 0.85;   /* the SM clock under 85% of its top */

int gpu_was_shared(const gpu_sharing *s)
{
    return s->probe_ms > 0 && s->lost_ms >= SHARED_MS_MIN &&
           s->lost_ms >= SHARED_FRACTION_MIN * s->probe_ms;
}

int why_append(char *why, size_t size, const char *fmt, ...)
{
    size_t used = size ? strlen(why) : 0;
    if (used && used + 2 < size) {
        strcpy(why + used, "; ");
        used += 2;
    }
    va_list ap;
    va_start(ap, fmt);
    if (used + 1 < size)
        vsnprintf(why + used, size - used, fmt, ap);
    va_end(ap);
    return 1;
}

static double lo(double x, double y) { return x < y ? x : y; }
static double hi(double x, double y) { return x > y ? x : y; }

/* A rate that dipped at one of the two moments (0 is "not measured"). */
static int dipped(double x, double y, double share)
{
    return x > 0 && y > 0 && lo(x, y) < share * hi(x, y);
}

int machine_interference(const machine_state *a, const machine_state *b, double raw_link_gbps,
                         double max_mhz, char *why, size_t size)
{
    static const char *const dir[2] = {"H2D", "D2H"};
    char raw_text[48];
    int n = 0; /* signs seen */
    snprintf(raw_text, sizeof raw_text, " (the link's raw rate: %.0f)", raw_link_gbps);
    if (size)
        why[0] = '\0';
    if (gpu_was_shared(&a->sharing) || gpu_was_shared(&b->sharing))
        n += why_append(why, size, "the GPU ran another process's work for %.1f ms of a %.1f ms "
                        "probe: it is time-sliced between processes",
                        hi(a->sharing.lost_ms, b->sharing.lost_ms),
                        a->sharing.lost_ms > b->sharing.lost_ms ? a->sharing.probe_ms
                                                                : b->sharing.probe_ms);
    for (int d = 0; d < 2; d++) {
        double x = a->link_gbps[d], y = b->link_gbps[d];
        if (dipped(x, y, RATE_DIP) || (raw_link_gbps > 0 && lo(x, y) > 0 &&
                             lo(x, y) < RAW_LINK_SHARE * raw_link_gbps))
            n += why_append(why, size, "the link ran at %.0f-%.0f GB/s %s%s: another process may "
                            "be copying, or the machine has just started (a fresh one's first "
                            "copies run slow)", lo(x, y), hi(x, y), dir[d],
                            raw_link_gbps > 0 ? raw_text : "");
    }
    if (dipped(a->host_gbps, b->host_gbps, HOST_DIP))
        n += why_append(why, size, "host memcpy ran at %.1f-%.1f GB/s: another process is using "
                        "host memory or the CPU", lo(a->host_gbps, b->host_gbps),
                        hi(a->host_gbps, b->host_gbps));
    double la = a->launch_us, lb = b->launch_us;
    if (la > 0 && lb > 0 && hi(la, lb) > LAUNCH_GROWTH * lo(la, lb) &&
        hi(la, lb) > lo(la, lb) + LAUNCH_EXTRA_US)
        n += why_append(why, size, "an empty kernel took %.0f-%.0f us from launch to done: the "
                        "CPU or the GPU's queues are busy", lo(la, lb), hi(la, lb));
    double clock = lo(a->sm_mhz > 0 ? a->sm_mhz : b->sm_mhz, b->sm_mhz > 0 ? b->sm_mhz : a->sm_mhz);
    if (clock > 0 && max_mhz > 0 && clock < CLOCK_SHARE * max_mhz)
        n += why_append(why, size, "the SM clock ran at %.0f MHz of its %.0f: the GPU is holding "
                        "its power or temperature down", clock, max_mhz);
    return n;
}
