/* report_train: the human-readable reports of trained plans - a simulated mini-batch ('simulate --mode
 * train', 'partition --mode train') and the training model of a plan ('partition --mode train'). */
#ifndef MESHPIPE_REPORT_TRAIN_H
#define MESHPIPE_REPORT_TRAIN_H

#include <stddef.h>

#include "chip.h"
#include "graph.h"
#include "sim_train.h"
#include "train.h"

/* "1f1b, 8 micro-batches per mini-batch, adam: 16 B per parameter (fp16 weight and gradient, fp32 master
 * copy, 2 fp32 states), no recompute" for t (borrowed); returns buf. */
char *report_train_setup(const train *t, char *buf, size_t n);

/* Prints a simulated mini-batch r of graph_name on c: throughput, bubble, period, memory and per stage
 * its forward, backward, update and idle time, stashes held and SRAM peak per core.  All borrowed. */
void report_train_sim(const char *graph_name, const chip *c, const sim_train_result *r);

/* Prints the training model r of a plan of g on c (per stage its passes, Sends, stashes in flight and
 * memory, planned and naive; the period, mini-batch, bubble and memory verdict).  All borrowed. */
void report_train_model(const graph *g, const chip *c, const train *t, const train_result *r);

#endif
