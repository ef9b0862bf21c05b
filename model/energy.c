/* energy: joules from a chip's energy figures.  See energy.h. */
#include "energy.h"

#include "cost.h"

#define PJ 1e-12

void energy_dynamic(const chip_energy *e, double macs, double other_flops, double sram_bytes, double byte_hops,
                    double dram_bytes, energy_parts *out) {
  out->compute = (macs * e->mac_pj + (other_flops > 0 ? other_flops : 0) * e->vector_op_pj) * PJ;
  out->sram = sram_bytes * e->sram_pj_per_byte * PJ;
  out->noc = byte_hops * e->noc_pj_per_byte_hop * PJ;
  out->dram = dram_bytes * e->dram_pj_per_byte * PJ;
  out->leak = 0;
}

void energy_of_stage(const chip *c, const cost_stage *s, double period_s, energy_parts *out) {
  double gather_hops = s->n_cores > 1 ? (s->n_cores - 1) * s->gather_bytes : 0;
  energy_dynamic(&c->energy, s->macs, s->flops - 2 * s->macs, s->sram_traffic,
                 gather_hops + s->send_byte_hops + s->dram_byte_hops, s->dram_in_bytes + s->dram_out_bytes, out);
  out->leak = c->energy.static_w_per_core * s->n_cores * period_s;
}

double energy_sum(const energy_parts *p) { return p->compute + p->sram + p->noc + p->dram + p->leak; }

void energy_add(energy_parts *acc, const energy_parts *p) {
  acc->compute += p->compute;
  acc->sram += p->sram;
  acc->noc += p->noc;
  acc->dram += p->dram;
  acc->leak += p->leak;
}

void energy_scale(energy_parts *p, double k) {
  p->compute *= k;
  p->sram *= k;
  p->noc *= k;
  p->dram *= k;
  p->leak *= k;
}

void energy_summarise(const energy_parts *per_microbatch, double period_s, int batch, double flops,
                      energy_summary *out) {
  double total = energy_sum(per_microbatch);
  out->per_sample = *per_microbatch;
  energy_scale(&out->per_sample, 1.0 / batch);
  out->j_per_sample = total / batch;
  out->power_w = period_s > 0 ? total / period_s : 0;
  out->samples_per_j = total > 0 ? batch / total : 0;
  out->tops_per_w = total > 0 ? flops / total / 1e12 : 0;
}

int energy_summary_to_json(cJSON *o, const energy_summary *s) {
  cJSON *e = NULL;
  return cJSON_AddNumberToObject(o, "energy_j_per_sample", s->j_per_sample) &&
         cJSON_AddNumberToObject(o, "power_w", s->power_w) &&
         cJSON_AddNumberToObject(o, "samples_per_j", s->samples_per_j) &&
         cJSON_AddNumberToObject(o, "tops_per_w", s->tops_per_w) && (e = cJSON_AddObjectToObject(o, "energy")) &&
         cJSON_AddNumberToObject(e, "compute_j", s->per_sample.compute) &&
         cJSON_AddNumberToObject(e, "sram_j", s->per_sample.sram) &&
         cJSON_AddNumberToObject(e, "noc_j", s->per_sample.noc) &&
         cJSON_AddNumberToObject(e, "dram_j", s->per_sample.dram) &&
         cJSON_AddNumberToObject(e, "static_j", s->per_sample.leak);
}
