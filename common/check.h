/* Checked CUDA calls, and the three ways a program stops early.
 *
 * Every CUDA call in streamlab goes through CUDA_CHECK and every launch is
 * followed by CHECK_LAUNCH(): an unchecked error surfaces later, at some
 * unrelated call, and the student debugs the wrong line. */
#ifndef STREAMLAB_CHECK_H
#define STREAMLAB_CHECK_H

#include <cuda_runtime_api.h>
#include "exitcodes.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Set once by options_parse() from argv[0]; every message starts with it. */
extern const char *program_name;

/* A macro only because a function cannot see the caller's file, line and text. */
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
/* A launch returns nothing: its configuration error waits in cudaGetLastError. */
#define CHECK_LAUNCH() cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)

/* Exits when err is not cudaSuccess: with EXIT_CANNOT_RUN and one line when the
 * error means "this machine cannot run CUDA code" (no driver, no device, no
 * kernel image for this GPU) or "not enough memory left" (another process took
 * it), otherwise with EXIT_WRONG_RESULTS and the file, line, call, error name
 * and text. */
void cuda_check(cudaError_t err, const char *call, const char *file, int line);

/* "program: <message>" on one line to stderr, then exit with `code`
 * (exitcodes.h); EXIT_CANNOT_RUN's message starts "cannot run here: ".
 * printf-style. */
void fail_exit(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* The three ways a program stops early. Macros only because C cannot hand
 * a "..." on to another function that takes one. */
#define fail_usage(...) fail_exit(EXIT_USAGE, __VA_ARGS__)
#define fail_cannot_run(...) fail_exit(EXIT_CANNOT_RUN, __VA_ARGS__)
#define fail_wrong(...) fail_exit(EXIT_WRONG_RESULTS, __VA_ARGS__)

/* malloc that never returns NULL (a lab has no use for a half-built state). */
void *xmalloc(size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
