/* binds: what binds a plan in the analytical model.  See binds.h. */
#include "binds.h"

const char *binds_name(binds_kind k) {
  static const char *const names[] = {"compute", "all-gather", "send", "sram", "noc", "dram"};
  return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

void binds_stage_parts(const cost_stage *s, binds_parts *out) {
  double work = s->speed > 0 ? s->work / s->speed : 0;
  out->work_s = work;
  out->gather_s = s->compute_s > work ? s->compute_s - work : 0;
  out->dram_s = s->dram_s;
  out->send_s = s->send_s;
}

binds_kind binds_stage(const cost_stage *s) {
  binds_parts p;
  binds_stage_parts(s, &p);
  if (p.send_s > s->compute_s + s->dram_s) return BINDS_SEND;
  if (p.dram_s > p.work_s && p.dram_s > p.gather_s) return BINDS_SRAM;
  return p.gather_s > p.work_s ? BINDS_GATHER : BINDS_COMPUTE;
}

void binds_run(const cost_result *r, binds_verdict *out) {
  out->stage = -1;
  out->link = -1;
  if (r->binding == COST_BIND_LINK || r->binding == COST_BIND_PORT) {
    out->kind = r->binding == COST_BIND_PORT ? BINDS_DRAM : BINDS_NOC;
    out->link = r->busiest_link;
    return;
  }
  out->stage = r->bottleneck_stage;
  out->kind = r->n_stages > 0 ? binds_stage(&r->stages[r->bottleneck_stage]) : BINDS_COMPUTE;
}

void binds_count(const cost_result *r, int counts[BINDS_KINDS]) {
  for (int k = 0; k < BINDS_KINDS; k++) counts[k] = 0;
  for (int i = 0; i < r->n_stages; i++) counts[binds_stage(&r->stages[i])]++;
}

int binds_add_stage_json(cJSON *o, const cost_stage *s) {
  binds_parts p;
  binds_stage_parts(s, &p);
  cJSON *parts = NULL;
  return cJSON_AddStringToObject(o, "binds", binds_name(binds_stage(s))) &&
         (parts = cJSON_AddObjectToObject(o, "binds_parts")) && cJSON_AddNumberToObject(parts, "work_s", p.work_s) &&
         cJSON_AddNumberToObject(parts, "all_gather_s", p.gather_s) &&
         cJSON_AddNumberToObject(parts, "dram_s", p.dram_s) && cJSON_AddNumberToObject(parts, "send_s", p.send_s);
}

int binds_add_run_json(cJSON *o, const cost_result *r, const chip *c) {
  binds_verdict v;
  binds_run(r, &v);
  char link[48];
  if (v.link >= 0) chip_link_name(c, v.link, link, sizeof link);
  int counts[BINDS_KINDS];
  binds_count(r, counts);
  cJSON *by = NULL;
  int ok = cJSON_AddStringToObject(o, "binds", binds_name(v.kind)) &&
           (v.stage >= 0 ? cJSON_AddNumberToObject(o, "binds_stage", v.stage) != NULL
                         : cJSON_AddNullToObject(o, "binds_stage") != NULL) &&
           (v.link >= 0 ? cJSON_AddStringToObject(o, "binds_link", link) != NULL
                        : cJSON_AddNullToObject(o, "binds_link") != NULL) &&
           (by = cJSON_AddObjectToObject(o, "stages_binding"));
  for (int k = 0; ok && k < BINDS_SRAM + 1; k++) ok = cJSON_AddNumberToObject(by, binds_name(k), counts[k]) != NULL;
  return ok;
}
