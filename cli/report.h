/* report: the human-readable report of a simulation, shared by 'simulate', 'record' and 'replay', and the
 * pieces of text and JSON that 'partition' and 'compare' share (what binds, samples/s, seconds). */
#ifndef MESHPIPE_REPORT_H
#define MESHPIPE_REPORT_H

#include <stddef.h>

#include "chip.h"
#include "cost.h"
#include "optimes.h"
#include "sim.h"

/* Prints r (a run of graph graph_name on chip c) to stdout: throughput, latency, makespan, the
 * analytical bottleneck, per stage its times, memory, the busiest links.  ot (may be NULL) adds a
 * line saying how many ops took measured times.  All borrowed. */
void report_print(const char *graph_name, const chip *c, const sim_result *r, const optimes *ot);

/* Adds "mesh": {"width", "height", "dram_ports": [[x, y], ...]} of chip c to o (a simulate result), so
 * that scripts/plot_heatmap.py needs no chip file; returns 0 when out of memory. */
int report_add_mesh_json(cJSON *o, const chip *c);

/* "12.3 ms" style seconds with 4 significant digits, into buf; returns buf. */
char *report_fmt_s(double s, char *buf, size_t n);

/* Joules with the largest fitting prefix of J, mJ, uJ, nJ, pJ, 4 significant digits. */
char *report_fmt_j(double j, char *buf, size_t n);

/* What binds run r of the model on chip c, in words (binds.h): "stage 9's compute: work 158.7 us,
 * all-gathers 0 s, DRAM waits 0 s, Sends 15.69 us" or "NoC link x5y0>x6y0: 3.06 MiB per micro-batch,
 * 50.18 us".  Returns buf. */
char *report_binds(const cost_result *r, const chip *c, char *buf, size_t n);

/* How many stages each word binds: "22 compute, 3 sram".  Returns buf. */
char *report_stages_binding(const cost_result *r, char *buf, size_t n);

/* "6584 samples/s" at batch 1 and "6584 samples/s = 823 micro-batches/s x 8" at batch 8: a throughput
 * of microbatches_per_s micro-batches of `batch` samples, with 4 significant digits.  Returns buf. */
char *report_samples(double microbatches_per_s, int batch, char *buf, size_t n);

#endif
