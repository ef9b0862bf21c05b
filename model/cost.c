/* cost: the analytical model of a pipeline plan.  See cost.h and partitioner/README.md.
 *
 * Sums of flops and bytes are taken in uint64 and converted once, so a stage's figures do not
 * depend on the order in which its layers were added (the optimum's DP adds them incrementally and
 * must reproduce cost_model_stage bit for bit).  A group's speed, transfer factor and SRAM come
 * from chip_group_of, as in the simulator. */
#include "cost.h"

#include <math.h>
#include <stdlib.h>

struct cost_model {
  const graph *g;
  const chip *c;
};

double cost_compute_s(double flops, double speed, double gather_bytes, int n_cores, double bandwidth) {
  return flops / speed + ((double)(n_cores - 1) / (double)n_cores) * (gather_bytes / bandwidth);
}

double cost_send_s(double send_bytes, double gamma, double bandwidth) { return gamma * (send_bytes / bandwidth); }

double cost_mem_bytes(double weight_bytes, double max_act_bytes, int n_cores) {
  return weight_bytes / (double)n_cores + max_act_bytes;
}

mp_status cost_model_new(const graph *g, const chip *c, cost_model **out, mp_error *err) {
  *out = NULL;
  cost_model *m = calloc(1, sizeof *m);
  if (!m) return err_nomem(err);
  m->g = g;
  m->c = c;
  *out = m;
  return MP_OK;
}

void cost_model_free(cost_model *m) { free(m); }

void cost_model_stage(const cost_model *m, int first_layer, int n_layers, int first_core, int n_cores,
                      cost_stage *out) {
  const graph *g = m->g;
  const chip *c = m->c;
  int last = first_layer + n_layers - 1;
  uint64_t flops = 0, weights = 0, gather = 0, max_act = 0, send = 0;
  for (int j = first_layer; j <= last; j++) {
    const graph_op *op = &g->ops[j];
    flops += op->flops;
    weights += op->weight_bytes;
    gather += op->out_bytes;
    if (op->out_bytes > max_act) max_act = op->out_bytes;
    for (int k = 0; k < op->n_outputs; k++) {
      const graph_tensor *t = &g->tensors[op->outputs[k]];
      if (t->last_consumer > last) send += t->bytes;
    }
  }
  out->first_layer = first_layer;
  out->n_layers = n_layers;
  out->first_core = first_core;
  out->n_cores = n_cores;
  out->flops = (double)flops;
  out->weight_bytes = (double)weights;
  out->gather_bytes = (double)gather;
  out->max_act_bytes = (double)max_act;
  out->send_bytes = (double)send;
  cost_stage_complete(c, out);
}

void cost_stage_complete(const chip *c, cost_stage *s) {
  chip_group grp = chip_group_of(c, s->first_core, s->n_cores);
  s->speed = grp.speed;
  s->gamma = grp.gamma;
  s->sram_bytes = (double)grp.sram_bytes;
  s->compute_s = cost_compute_s(s->flops, s->speed, s->gather_bytes, s->n_cores, c->noc_bandwidth);
  s->send_s = cost_send_s(s->send_bytes, s->gamma, c->noc_bandwidth);
  s->time_s = s->compute_s > s->send_s ? s->compute_s : s->send_s;
  s->mem_bytes = cost_mem_bytes(s->weight_bytes, s->max_act_bytes, s->n_cores);
  s->fits = s->mem_bytes <= s->sram_bytes;
}

double cost_model_bottleneck(const cost_model *m, const plan *p, int *feasible, double *mem_ratio) {
  double worst = 0, ratio = 0;
  int fits = 1;
  for (int i = 0; i < p->n_stages; i++) {
    const plan_stage *st = &p->stages[i];
    cost_stage cs;
    cost_model_stage(m, st->first_layer, st->n_layers, st->first_core, st->n_cores, &cs);
    if (cs.time_s > worst) worst = cs.time_s;
    if (!cs.fits) fits = 0;
    double r = cs.mem_bytes / cs.sram_bytes;
    if (r > ratio) ratio = r;
  }
  if (feasible) *feasible = fits;
  if (mem_ratio) *mem_ratio = ratio;
  return worst;
}

mp_status cost_evaluate(const graph *g, const chip *c, const plan *p, cost_result **out, mp_error *err) {
  *out = NULL;
  if (p->n_layers != g->n_ops || p->n_cores != c->n_cores)
    return err_at(err, MP_INPUT, g->file ? g->file : g->name, "plan",
                  "the plan has %d layers on %d cores, but the graph has %d layers and the chip %d cores", p->n_layers,
                  p->n_cores, g->n_ops, c->n_cores);
  cost_result *r = calloc(1, sizeof *r);
  cost_model *m = NULL;
  mp_status st = MP_OK;
  if (!r) return err_nomem(err);
  r->stages = calloc((size_t)p->n_stages, sizeof *r->stages);
  if (!r->stages) {
    st = err_nomem(err);
    goto cleanup;
  }
  st = cost_model_new(g, c, &m, err);
  if (st != MP_OK) goto cleanup;
  r->n_stages = p->n_stages;
  r->feasible = 1;
  for (int i = 0; i < p->n_stages; i++) {
    const plan_stage *ps = &p->stages[i];
    cost_stage *cs = &r->stages[i];
    cost_model_stage(m, ps->first_layer, ps->n_layers, ps->first_core, ps->n_cores, cs);
    if (i == 0 || cs->time_s > r->bottleneck_s) {
      r->bottleneck_s = cs->time_s;
      r->bottleneck_stage = i;
    }
    if (!cs->fits) r->feasible = 0;
    double ratio = cs->mem_bytes / cs->sram_bytes;
    if (ratio > r->mem_ratio) r->mem_ratio = ratio;
  }
cleanup:
  cost_model_free(m);
  if (st != MP_OK) {
    cost_result_free(r);
    return st;
  }
  *out = r;
  return MP_OK;
}

void cost_result_free(cost_result *r) {
  if (!r) return;
  free(r->stages);
  free(r);
}

static int cmp_desc(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x > y ? -1 : x < y ? 1 : 0;
}

void cost_lower_bound(const graph *g, const chip *c, cost_bound *out) {
  out->flops_s = out->layer_s = out->bound_s = 0;
  out->layer = -1;
  int n = c->n_cores;
  double *top = malloc((size_t)n * sizeof *top); /* top[k]: speed of the k+1 fastest cores */
  double total_flops = 0;
  for (int j = 0; j < g->n_ops; j++) total_flops += (double)g->ops[j].flops;
  double total_speed = 0;
  for (int i = 0; i < n; i++) total_speed += c->cores[i].flops;
  out->flops_s = total_flops / total_speed;
  if (top) {
    for (int i = 0; i < n; i++) top[i] = c->cores[i].flops;
    qsort(top, (size_t)n, sizeof *top, cmp_desc);
    for (int i = 1; i < n; i++) top[i] += top[i - 1];
  }
  for (int j = 0; j < g->n_ops; j++) {
    double best = INFINITY;
    double f = (double)g->ops[j].flops, a = (double)g->ops[j].out_bytes;
    if (top) {
      for (int k = 1; k <= n; k++) {
        double t = cost_compute_s(f, top[k - 1], a, k, c->noc_bandwidth);
        if (t < best) best = t;
      }
    } else { /* out of memory for the sort: the bound with every core's speed, no all-gather (weaker) */
      best = f / total_speed;
    }
    if (out->layer < 0 || best > out->layer_s) {
      out->layer_s = best;
      out->layer = j;
    }
  }
  free(top);
  out->bound_s = out->flops_s > out->layer_s ? out->flops_s : out->layer_s;
}

static cJSON *stage_to_json(const cost_stage *s) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  int ok = cJSON_AddNumberToObject(o, "first_layer", s->first_layer) && cJSON_AddNumberToObject(o, "n_layers", s->n_layers) &&
           cJSON_AddNumberToObject(o, "first_core", s->first_core) && cJSON_AddNumberToObject(o, "n_cores", s->n_cores) &&
           cJSON_AddNumberToObject(o, "flops", s->flops) && cJSON_AddNumberToObject(o, "weight_bytes", s->weight_bytes) &&
           cJSON_AddNumberToObject(o, "gather_bytes", s->gather_bytes) &&
           cJSON_AddNumberToObject(o, "max_act_bytes", s->max_act_bytes) &&
           cJSON_AddNumberToObject(o, "send_bytes", s->send_bytes) && cJSON_AddNumberToObject(o, "compute_s", s->compute_s) &&
           cJSON_AddNumberToObject(o, "send_s", s->send_s) && cJSON_AddNumberToObject(o, "t_s", s->time_s) &&
           cJSON_AddNumberToObject(o, "s_bytes", s->mem_bytes) && cJSON_AddNumberToObject(o, "sram_bytes", s->sram_bytes) &&
           cJSON_AddBoolToObject(o, "fits", s->fits);
  if (!ok) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *cost_result_to_json(const cost_result *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(o, "stages");
  if (!o || !arr || !cJSON_AddNumberToObject(o, "bottleneck_s", r->bottleneck_s) ||
      !cJSON_AddNumberToObject(o, "bottleneck_stage", r->bottleneck_stage) ||
      !cJSON_AddBoolToObject(o, "feasible", r->feasible) || !cJSON_AddNumberToObject(o, "mem_ratio", r->mem_ratio)) {
    cJSON_Delete(o);
    return NULL;
  }
  for (int i = 0; i < r->n_stages; i++) {
    cJSON *s = stage_to_json(&r->stages[i]);
    if (!s || !cJSON_AddItemToArray(arr, s)) {
      cJSON_Delete(s);
      cJSON_Delete(o);
      return NULL;
    }
  }
  return o;
}

cJSON *cost_bound_to_json(const cost_bound *b) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddNumberToObject(o, "flops_s", b->flops_s) || !cJSON_AddNumberToObject(o, "layer_s", b->layer_s) ||
      !cJSON_AddNumberToObject(o, "layer", b->layer) || !cJSON_AddNumberToObject(o, "bound_s", b->bound_s)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}
