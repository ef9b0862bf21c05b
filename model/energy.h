/* energy: what a pipeline spends, from a chip's energy figures (chip.h's chip_energy; platforms/README.md,
 * "Energy").  Per micro-batch, a stage spends dynamic energy
 *   compute = macs x mac_pj + (flops - 2 macs) x vector_op_pj          (the MACs done, not padded ones)
 *   sram    = bytes its ops read and write in SRAM x sram_pj_per_byte   (opcost_op_traffic)
 *   noc     = byte-hops x noc_pj_per_byte_hop: its all-gathers ((c-1) A: every byte crosses each link
 *             of its chain once), its Sends (bytes x hops of each) and its DRAM streams (bytes x hops
 *             between the port's core and the streaming core)
 *   dram    = bytes read from and written to DRAM x dram_pj_per_byte
 * and its cores leak static_w_per_core each over the whole period, busy or not.  Every core belongs to a
 * stage, so the chip's energy per micro-batch is the sum over its stages.  The summary divides by the
 * batch (samples per micro-batch): J/sample, the average power (energy per micro-batch / period),
 * samples/J and the effective TOPS/W (the graph's flops per joule: padded or idle work earns nothing).
 * Pure functions of their arguments. */
#ifndef MESHPIPE_ENERGY_H
#define MESHPIPE_ENERGY_H

#include <cjson/cJSON.h>

#include "chip.h"

struct cost_stage;

/* Joules by kind. */
typedef struct energy_parts {
  double compute, sram, noc, dram, leak; /* leak: static energy */
} energy_parts;

/* The dynamic energy of counts (every argument >= 0; leak is 0). */
void energy_dynamic(const chip_energy *e, double macs, double other_flops, double sram_bytes, double byte_hops,
                    double dram_bytes, energy_parts *out);

/* A stage of the model (cost.h, with its plan terms) per micro-batch: its dynamic energy and its cores'
 * static energy over period_s. */
void energy_of_stage(const chip *c, const struct cost_stage *s, double period_s, energy_parts *out);

/* The sum of the kinds; *acc += *p, kind by kind; *p scaled by k. */
double energy_sum(const energy_parts *p);
void energy_add(energy_parts *acc, const energy_parts *p);
void energy_scale(energy_parts *p, double k);

/* What users compare chips by. */
typedef struct energy_summary {
  energy_parts per_sample; /* joules per sample by kind */
  double j_per_sample;     /* their sum */
  double power_w;          /* energy per micro-batch / period */
  double samples_per_j;
  double tops_per_w;       /* flops per joule / 1e12 */
} energy_summary;

/* The summary of a plan whose stages spend per_microbatch (joules per micro-batch, leak included) at
 * period_s, a micro-batch being batch samples and flops of work. */
void energy_summarise(const energy_parts *per_microbatch, double period_s, int batch, double flops,
                      energy_summary *out);

/* Adds energy_j_per_sample, power_w, samples_per_j, tops_per_w and "energy" {compute_j, sram_j, noc_j,
 * dram_j, static_j} (joules per sample) to o; 0 when out of memory. */
int energy_summary_to_json(cJSON *o, const energy_summary *s);

#endif
