/* binds: what binds a plan in the analytical model — the answer to "why is it slow?", per stage and for
 * the whole run, in six words:
 *   compute     the stage's work, F / speed (more flop/s or cores would help)
 *   all-gather  the stage's all-gathers along its chain (more NoC bandwidth, fewer cores per stage)
 *   send        the stage's Sends to later stages (more NoC bandwidth or shorter routes)
 *   sram        the stage's cores need more than their SRAM and wait for the excess streamed from DRAM
 *               every micro-batch (more SRAM, or more cores for the stage)
 *   noc         (a run only) the load of one NoC link, over all stages' traffic
 *   dram        (a run only) the load of one DRAM port's link: DRAM bandwidth
 * A stage's word is the largest part of its time t_i = max(work + all-gathers + DRAM waits, Sends) as
 * cost.h defines it (cost_stage_limiter's verdict in these words); a run's is its period's: the slowest
 * stage's, or noc / dram when a link's load sets the period (cost_result.binding).  Pure functions of a
 * cost_result; nothing is owned. */
#ifndef MESHPIPE_BINDS_H
#define MESHPIPE_BINDS_H

#include <cjson/cJSON.h>

#include "chip.h"
#include "cost.h"

typedef enum binds_kind { BINDS_COMPUTE, BINDS_GATHER, BINDS_SEND, BINDS_SRAM, BINDS_NOC, BINDS_DRAM } binds_kind;

#define BINDS_KINDS 6

/* "compute", "all-gather", "send", "sram", "noc" or "dram". */
const char *binds_name(binds_kind k);

/* The parts of a stage's time per micro-batch: work (F / speed), all-gathers (with their latency), DRAM
 * waits and Sends, in seconds. */
typedef struct binds_parts {
  double work_s, gather_s, dram_s, send_s;
} binds_parts;

void binds_stage_parts(const cost_stage *s, binds_parts *out);

/* What binds stage s: BINDS_SEND when its Sends outlast the rest, else the largest of work (compute),
 * all-gathers and DRAM waits (sram); ties go to compute, then all-gather. */
binds_kind binds_stage(const cost_stage *s);

/* What binds a run: kind, and the stage (-1 for noc / dram) or link (-1 for a stage) that sets it. */
typedef struct binds_verdict {
  binds_kind kind;
  int stage;
  int link;
} binds_verdict;

void binds_run(const cost_result *r, binds_verdict *out);

/* Adds to a JSON object o: "binds" (the word) and "binds_parts" {work_s, all_gather_s, dram_s,
 * send_s} for stage s; returns 0 when out of memory. */
int binds_add_stage_json(cJSON *o, const cost_stage *s);

/* Adds to o: "binds", "binds_stage" (or null) and "binds_link" (the link's name, or null) of run r on
 * chip c (borrowed; it names the link, so it may be NULL for a run a stage binds), and "stages_binding"
 * {word: number of stages it binds}; returns 0 when out of memory. */
int binds_add_run_json(cJSON *o, const cost_result *r, const chip *c);

/* How many of r's stages each word binds, indexed by binds_kind (noc and dram stay 0). */
void binds_count(const cost_result *r, int counts[BINDS_KINDS]);

#endif
