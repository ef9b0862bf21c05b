/* report: the human-readable report of a simulation, shared by 'simulate', 'record' and 'replay'. */
#ifndef MESHPIPE_REPORT_H
#define MESHPIPE_REPORT_H

#include "chip.h"
#include "optimes.h"
#include "sim.h"

/* Prints r (a run of graph graph_name on chip c) to stdout: throughput, latency, makespan, the
 * analytical bottleneck, per stage its times, memory, the busiest links.  ot (may be NULL) adds a
 * line saying how many ops took measured times.  All borrowed. */
void report_print(const char *graph_name, const chip *c, const sim_result *r, const optimes *ot);

#endif
