/* Everything a streamlab program includes: one line at the top of each lab. */
#ifndef STREAMLAB_H
#define STREAMLAB_H

#include "check.h"
#include "device.h"
#include "exitcodes.h"
#include "options.h"
#include "report.h"
#include "stats.h"
#include "timeline.h"
#include "timing.h"

#endif
