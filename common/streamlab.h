/* streamlab: everything a lab can call, on one page, in the order a lab
 * uses it. One #include at the top of each program; each header below says
 * more.
 *
 * THE PROGRAM (options.h)
 *   option t[] = {{"batches", OPT_INT, &batches, 2, 1024, 8, "N", "help"}, ..., {NULL}};
 *                   a lab's own options: name, kind, variable (its default),
 *                   min, max, the --quick value (or NO_QUICK), --help text
 *   program_info    .name .title .handout .options .reps .quick_reps .needs (NEEDS_*)
 *                   .memory_option .memory_per_unit .memory_times .check_options
 *                   .override_options (values changed before they are judged)
 *                   .before_context (an environment variable the driver reads once)
 *
 * THE RUN (lab.h)
 *   lab_begin(&run, argc, argv, &program)   options, GPU, guards, report, trace
 *   ... the lesson: run.opt, run.dev, run.r ...
 *   lab_pinned, lab_pageable, lab_device, lab_stream(s), lab_event(s), lab_timer
 *                                           what the run owns: lab_end() releases it
 *   lab_attempt(&run, "what", fn, &ctx)     a demonstration, measured again (both
 *                                           sides) when another process spoilt it
 *   lab_attempt_saw(fmt, ...)               in fn: interference fn saw itself
 *   return lab_end(&run);                   trace, the machine, verdicts, exit code
 *
 * THE GPU (device.h)
 *   run.dev.sm_count, .async_engines, .priority_greatest, .pcie_gen, ...
 *   pcie_raw_gbps(gen, width)               what the link's wires carry
 *
 * TIMING (timing.h, stats.h)
 *   event_timer_create/start/stop/ms/destroy   device events in the work's stream
 *   host_time_ms(), host_cpu_ms()           the host's monotonic clock; the process's CPU time
 *   host_thread_cpu_ms()                    the calling thread's CPU time
 *   event_finished(e)                       has the GPU passed e? without waiting
 *   event_wait(e, nap_us, &returned_ms)     wait by polling or by cudaEventSynchronize: CPU share
 *   events_seen_ms(events, n, seen)         when the host saw each one passed
 *   measure(fn, ctx, warmup, reps)          warm-up, then reps samples: a stats
 *   measure_issued(fn, ctx, stream, k, warmup, reps)   events around k issues, per issue
 *   measure_several(fn, ctx, k, warmup, reps, out)   k numbers per run
 *   measure_paired(a, ca, b, cb, warmup, n)  A B, B A, ...: each side and A/B pair by pair
 *   measure_rounds(fns, ctxs, k, warmup, rounds, samples)   k ways in rotating rounds
 *   measure_ways(fn, ways, size, n, k, warmup, rounds, samples)   n ways of one fn, k numbers a run
 *   issued {fn, ctx, stream, per_sample, timer} + time_issued   an event-timed sample, for rounds
 *   stats_of(samples, n), stats_over(k, &s), stats_percentile(samples, n, p)
 *   stats_of_ratios(a, b, n)                the median of per-pair ratios: what verdicts read
 *   stats_of_rows, stats_of_row_pairs       the same over measure_rounds()' tables
 *
 * DEVICE CODE AND INPUTS (kernels/kernels.h, #include "kernels.h")
 *   spin_for_ns, spin_and_log, background_block    kernels of known duration
 *   host_minus_gpu_clock_ns(stream, pinned, reads)   %globaltimer onto the host's clock
 *   pipeline_fresh, pipeline_verify         a pipeline_stage pipeline's buffers around a run
 *   pipeline_open, pipeline_run (pipeline.h)    ... owned by the run; one run timed and checked
 *   batch_pipeline_open, batch_pipeline_run (batches.h)   batches up, through affine_work
 *                                           and down on S streams in C chunks; the model's bounds
 *   copy_gbps, copy_paired, copy_returns_ms, copy_sweep_plan (copies.h)   a copy's rate, two
 *                                           kinds in turn, when its call returns, a size sweep
 *   kernel_wait_measure, dependency_hop_us (waits.h)   what a wait costs the host
 *   affine_launch(in, out, n, steps, s)     checkable work; affine_launch_with_span
 *   affine_calibrate, affine_steps_for_ms   "a kernel of T ms" on this GPU
 *   fill_random_u32(p, n, fresh_seed())     fresh inputs every run
 *   random_strata(at, n, lo, hi)            moments spread over an interval
 *
 * CHECKING RESULTS (tally.h; the verifiers are in kernels.h)
 *   tally t = {0}; t.where = "serial";      count what was checked and wrong
 *   verify_affine(in, out, n, steps, &t), verify_equal_u32(got, want, n, &t)
 *
 * THE REPORT (report.h), in lesson order
 *   report_section(r, "(a) Serial")         a heading
 *   report_param, report_fact               the inputs, and facts about the GPU
 *   report_stats, report_value, report_samples    what was measured
 *   report_compare(r, variant, metric, "n(h+k+d)", predicted, &measured, unit)
 *                                           the model beside the measurement
 *   report_tally(r, "outputs_verified", &t, "outputs differ from the CPU reference")
 *   report_check(r, name, passed, fmt, ...) any other correctness check
 *   static const verdict V = {name, min, max, unit, hint};
 *   verdict_holds(&V, value)                what report_verdict will say, for an attempt
 *   report_verdict(r, &V, value, fmt, ...)  was the effect observed?
 *   report_text(r, fmt, ...)                a line of text, where no call above fits
 *   format_value(buf, size, v)              a number as the report prints it
 *
 * THE TIMELINE (timeline.h)
 *   timeline_name_stream(s, "stream 1")     names it in traces and Nsight Systems
 *   timeline_span_begin("serial") ... timeline_span_end()   a variant's span
 *   timeline_traced_run(span, fn, ctx)      one more run in a span, for a figure
 *
 * ERRORS (check.h, exitcodes.h)
 *   CUDA_CHECK(call), CHECK_LAUNCH()        every CUDA call and launch, checked
 *   fail_usage, fail_cannot_run, fail_wrong     exit 2, 3, 1 with one line
 *   xmalloc(bytes)                          malloc that never returns NULL
 */
#ifndef STREAMLAB_H
#define STREAMLAB_H

#include "check.h"
#include "device.h"
#include "exitcodes.h"
#include "lab.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "tally.h"
#include "timeline.h"
#include "timing.h"

#endif
