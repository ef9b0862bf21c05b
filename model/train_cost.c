/* train_cost: the analytical model of a plan trained under a schedule.  See train.h and traces/README.md
 * ("Training").
 *
 * Each stage goes through cost.h as a stage whose sums are the training ones (train.h, train_stage), so
 * its compute, memory and DRAM streams follow the inference model's formulas; the plan terms are added
 * here: the Sends both ways (split.h gives the forward ones; a backward one per Recv, from the receiving
 * group's first core to the sending group's last core), a hop's latency per gathering segment of each
 * pass, the link loads of all of them and of the second DRAM pass.  There is no contention term: the
 * period is the slowest stage or the busiest link's load over its bandwidth.
 *
 * The mini-batch (forward and backward) follows the flow-shop identity for identical jobs: M jobs through
 * stages of times t_i take sum_i t_i + (M - 1) max_i t_i.  GPipe runs the forwards as one such flow and
 * the backwards as another; 1F1B one flow of (forward + backward) at the period.  Both are exact for
 * equal stages without communication, (M + p - 1)(t_f + t_b).  zb takes 1F1B's figure less
 * W_i + min(B_i, W_i) for every stage but the last (B_i, W_i: the input- and weight-gradient parts of its
 * backward), never below M periods: for equal stages without communication and M >= p that is
 * M (t_f + t_B + t_W) + (p - 1)(t_f + max(t_B - t_W, 0)), ZB-H1's bubble, exactly.  None can beat the
 * busiest link, which carries every micro-batch's bytes: at least M link bounds (GPipe's flows, built
 * from the stages alone, would otherwise miss a link-bound pipeline entirely).  The slowest update
 * follows. */
#include <stdlib.h>
#include <string.h>

#include "cost_int.h"
#include "split.h"
#include "train.h"
#include "train_int.h"

void train_stage_local(cost_model *m, const train_range *r, int first_layer, int n_layers, int first_core, int n_cores,
                       const train_hold *h, cost_stage *cs) {
  *cs = (cost_stage){.first_layer = first_layer,
                     .n_layers = n_layers,
                     .first_core = first_core,
                     .n_cores = n_cores,
                     .flops = (double)(r->fwd_flops + r->bwd_flops + r->recompute_flops),
                     /* training work is at peak: a core model's per-op times (opcost.h) cover forwards only */
                     .work = (double)(r->fwd_flops + r->bwd_flops + r->recompute_flops),
                     .weight_bytes = (double)r->static_bytes,
                     .gather_bytes = (double)(r->fwd_gather + r->bwd_gather),
                     .max_act_bytes = train_hold_act_bytes(r, h),
                     .send_bytes = (double)(r->send_bytes + r->recv_bytes)};
  cost_stage_complete(m, cs);
  cs->dram_s = h->passes * (cs->dram_in_s + cs->dram_out_s);
  double busy = cs->compute_s + cs->dram_s;
  cs->time_s = busy > cs->send_s ? busy : cs->send_s;
}

/* One stage with its plan terms (stage i of p); link (chip_n_links entries) accumulates its loads. */
static void stage(cost_model *m, const chip *c, const train_options *o, int i, int p, const train_stage_input *in,
                  double *link, train_stage *ts) {
  memset(ts, 0, sizeof *ts);
  ts->r = in->r;
  const train_range *r = &ts->r;
  ts->hold = train_hold_of(o, i, p);
  train_hold_peak(r, &ts->hold, &ts->in_flight, &ts->w_pending);
  cost_stage *cs = &ts->cs;
  int passes = ts->hold.passes;
  train_stage_local(m, r, in->first_layer, in->n_layers, in->first_core, in->n_cores, &ts->hold, cs);
  double pass = cs->dram_in_s + cs->dram_out_s; /* one DRAM pass: around a forward, a backward, a W */
  int nf = in->fwd_segments, nb = in->bwd_segments, n = in->n_cores;
  cost_stage_plan(m, cs, nf + nb, in->fwd, in->n_fwd, link);
  ts->fwd_send_s = cs->send_s;
  ts->fwd_sends = in->n_fwd;
  double B = c->noc_bandwidth, lat = c->noc_latency, speed = cs->speed;
  for (int k = 0; k < in->n_bwd; k++) { /* the gradient of each received tensor, back to its sender */
    double bytes = in->bwd[k].bytes;
    int to = in->bwd[k].dst_core;
    if (!(bytes > 0)) continue;
    ts->bwd_send_s += cost_send_s(bytes, cs->gamma, B) + (double)chip_hops(c, in->first_core, to) * lat;
    cost_load_route(c, link, in->first_core, to, cs->gamma * bytes, NULL, NULL);
    ts->bwd_sends++;
  }
  for (int k = 1; k < passes; k++) cost_stage_dram_load(m, cs, link); /* cost_stage_plan added the first's */
  cs->send_s = ts->fwd_send_s + ts->bwd_send_s;
  double busy = cs->compute_s + cs->dram_s;
  cs->time_s = busy > cs->send_s ? busy : cs->send_s;
  double lf = n > 1 ? (double)nf * lat : 0, lb = n > 1 ? (double)nb * lat : 0;
  ts->fwd_s = cost_compute_s((double)r->fwd_flops, speed, (double)r->fwd_gather, n, B) + lf + pass;
  ts->bwd_s = cost_compute_s((double)(r->bwd_flops + r->recompute_flops), speed, (double)r->bwd_gather, n, B) + lb + pass;
  if (o->schedule == TRAIN_ZB) { /* W: its work, nothing gathered, and a pass of its own */
    ts->w_s = (double)r->dw_flops / speed + pass;
    ts->bwd_s += pass;
  }
  ts->update_s = (double)r->update_flops / speed;
  double share = (double)r->static_bytes / n, e = cs->mem_bytes - cs->sram_bytes;
  if (!cs->fits && c->n_dram > 0 && e > 0) /* the update reads and writes the excess of its static bytes */
    ts->update_s += 2 * (e < share ? e : share) / e * cs->dram_in_s;
  ts->mem_naive_bytes = train_mem_naive_bytes(r, n, ts->in_flight, ts->w_pending); /* the peak's state, found above */
}

/* The mini-batch estimate of the comment at the top, and the bubble. */
static void minibatch(const train_options *o, train_result *res) {
  int p = res->n_stages, M = o->microbatches;
  double sum_f = 0, sum_b = 0, max_f = 0, max_b = 0, max_u = 0;
  for (int i = 0; i < p; i++) {
    const train_stage *s = &res->stages[i];
    double f = s->fwd_s > s->fwd_send_s ? s->fwd_s : s->fwd_send_s, b = s->bwd_s > s->bwd_send_s ? s->bwd_s : s->bwd_send_s;
    sum_f += s->fwd_s;
    sum_b += s->bwd_s;
    max_f = f > max_f ? f : max_f;
    max_b = b > max_b ? b : max_b;
    max_u = s->update_s > max_u ? s->update_s : max_u;
  }
  double fb = o->schedule == TRAIN_GPIPE ? sum_f + (M - 1) * max_f + sum_b + (M - 1) * max_b
                                         : sum_f + sum_b + (M - 1) * res->period_s;
  if (o->schedule == TRAIN_ZB) { /* every stage but the last: W + min(B, W) less than under 1F1B */
    for (int i = 0; i + 1 < p; i++) {
      const train_stage *s = &res->stages[i];
      double w = s->w_s, b = s->bwd_s - s->w_s;
      fb -= w + (b < w ? b : w);
    }
    if (fb < M * res->period_s) fb = M * res->period_s;
  }
  if (M * res->link_bound_s > fb) fb = M * res->link_bound_s; /* the busiest link carries all M */
  res->minibatch_s = fb + max_u;
  res->bubble = fb > 0 ? 1 - M * (sum_f + sum_b) / (p * fb) : 0;
  if (res->bubble < 0) res->bubble = 0;
  res->samples_per_s = res->minibatch_s > 0 ? (double)M * res->batch / res->minibatch_s : 0;
}

/* The model of the n stages in on m's chip, with link (chip_n_links entries, zeroed here) for the loads. */
static mp_status evaluate_stages(const train_options *o, int batch, cost_model *m, const chip *c, double *link, int n,
                                 const train_stage_input *in, train_result **out, mp_error *err) {
  *out = NULL;
  train_result *res = calloc(1, sizeof *res);
  if (!res || !(res->stages = calloc((size_t)n + 1, sizeof *res->stages))) {
    train_result_free(res);
    return err_nomem(err);
  }
  memset(link, 0, (size_t)chip_n_links(c) * sizeof *link);
  res->schedule = o->schedule;
  res->microbatches = o->microbatches;
  res->batch = batch;
  res->n_stages = n;
  res->feasible = 1;
  res->busiest_link = -1;
  for (int i = 0; i < n; i++) {
    train_stage *ts = &res->stages[i];
    stage(m, c, o, i, n, &in[i], link, ts);
    if (i == 0 || ts->cs.time_s > res->period_s) {
      res->period_s = ts->cs.time_s;
      res->bottleneck_stage = i;
    }
    res->feasible &= ts->cs.fits;
    double ratio = ts->cs.mem_bytes / ts->cs.sram_bytes;
    if (ratio > res->mem_ratio) res->mem_ratio = ratio;
  }
  for (int k = 0; k < chip_n_links(c); k++) {
    double v = link[k] / chip_link_bandwidth(c, k);
    if (v > res->link_bound_s) {
      res->link_bound_s = v;
      res->busiest_link = k;
    }
  }
  if (res->link_bound_s > res->period_s) res->period_s = res->link_bound_s;
  minibatch(o, res);
  *out = res;
  return MP_OK;
}

mp_status train_evaluate_stages(const train_options *o, int batch, const chip *c, int n, const train_stage_input *in,
                                train_result **out, mp_error *err) {
  *out = NULL;
  cost_model *m = NULL;
  double *link = malloc((size_t)chip_n_links(c) * sizeof *link);
  mp_status st = link ? cost_model_new(NULL, c, &m, err) : err_nomem(err);
  if (st == MP_OK) st = evaluate_stages(o, batch, m, c, link, n, in, out, err);
  cost_model_free(m);
  free(link);
  return st;
}

/* t's scratch for plans on chip c, (re)built when c is not the chip it was built for, with room for n
 * stages (and, once, for the graph's layers, tensors and transfers); NULL when out of memory. */
static train_scratch *scratch_for(train *t, const chip *c, int n, mp_error *err) {
  const graph *g = t->g;
  train_scratch *x = t->scratch;
  if (!x) {
    if (!(x = t->scratch = calloc(1, sizeof *x))) goto nomem;
    x->segs.width = 2; /* forward and backward */
  }
  if (x->c != c || x->chip_hash != c->hash) {
    cost_model_free(x->m);
    free(x->link);
    x->m = NULL;
    x->c = NULL;
    if (!(x->link = malloc((size_t)chip_n_links(c) * sizeof *x->link))) goto nomem;
    if (cost_model_new(NULL, c, &x->m, err) != MP_OK) return NULL;
    x->c = c;
    x->chip_hash = c->hash;
  }
  if (n > x->cap_in) {
    train_stage_input *v = realloc(x->in, (size_t)n * sizeof *v);
    if (!v) goto nomem;
    x->in = v;
    x->cap_in = n;
  }
  if (!x->x) { /* a Send per cross-group (tensor, reader group) and a gradient per Recv: each is a reference */
    size_t refs = 1, widest = 1;
    for (int l = 0; l < g->n_ops; l++) {
      refs += (size_t)g->ops[l].n_inputs;
      if ((size_t)g->ops[l].n_inputs > widest) widest = (size_t)g->ops[l].n_inputs;
    }
    x->stage_of = malloc(((size_t)g->n_ops + 1) * sizeof *x->stage_of);
    x->seen = calloc((size_t)g->n_tensors + 1, sizeof *x->seen);
    x->pending = malloc(widest * sizeof *x->pending);
    x->x = malloc(2 * refs * sizeof *x->x);
    if (!x->stage_of || !x->seen || !x->pending || !x->x) { /* all four tried again next time */
      free(x->stage_of);
      free(x->seen);
      free(x->pending);
      free(x->x);
      x->stage_of = x->pending = NULL;
      x->seen = NULL;
      x->x = NULL;
      goto nomem;
    }
  }
  return x;
nomem:
  err_nomem(err);
  return NULL;
}

/* The gathering segments of a stage of layers [first, first + n): forward those with a layer that has
 * outputs, backward those with a layer that makes input-gradients (split_segments' segments), kept per
 * range in x.  0, or -1 out of memory. */
static int segments(const train *t, train_scratch *x, int first, int n, int *fwd, int *bwd) {
  int counts[2];
  if (seg_memo_get(&x->segs, first, n, counts)) {
    *fwd = counts[0];
    *bwd = counts[1];
    return 0;
  }
  int *seg_of = malloc((size_t)n * sizeof *seg_of), segs = seg_of ? split_segments(t->g, first, n, seg_of) : -1;
  unsigned char *has = segs >= 0 ? calloc(2 * (size_t)segs + 2, 1) : NULL;
  if (!has) {
    free(seg_of);
    return -1;
  }
  for (int l = 0; l < n; l++) {
    has[2 * seg_of[l]] |= t->g->ops[first + l].out_bytes > 0;
    has[2 * seg_of[l] + 1] |= t->layers[first + l].grad_bytes > 0;
  }
  *fwd = *bwd = 0;
  for (int k = 0; k < segs; k++) {
    *fwd += has[2 * k];
    *bwd += has[2 * k + 1];
  }
  free(seg_of);
  free(has);
  seg_memo_put(&x->segs, first, n, (int[]){*fwd, *bwd});
  return 0;
}

void train_scratch_free(train_scratch *x) {
  if (!x) return;
  cost_model_free(x->m);
  free(x->link);
  free(x->in);
  free(x->stage_of);
  free(x->seen);
  free(x->pending);
  seg_memo_clear(&x->segs);
  free(x->x);
  free(x);
}

/* Stage i's gradients sent back, one per Recv in split.h's order (by first reader, then tensor), each to
 * the sending stage's last core, from next on; returns the end. */
static cost_transfer *stage_grads(const graph *g, const plan *p, train_scratch *x, int i, cost_transfer *next) {
  const plan_stage *st = &p->stages[i];
  if (++x->epoch == 0) { /* wrapped: nothing is seen in the new epoch */
    memset(x->seen, 0, (size_t)g->n_tensors * sizeof *x->seen);
    x->epoch = 1;
  }
  for (int l = st->first_layer; l < st->first_layer + st->n_layers; l++) {
    int n = 0;
    for (int k = 0; k < g->ops[l].n_inputs; k++) {
      int tt = g->ops[l].inputs[k], prod = g->tensors[tt].producer;
      if (prod < 0 || x->stage_of[prod] == i || x->seen[tt] == x->epoch) continue;
      x->seen[tt] = x->epoch;
      int at = n++; /* insertion by tensor index */
      while (at > 0 && x->pending[at - 1] > tt) {
        x->pending[at] = x->pending[at - 1];
        at--;
      }
      x->pending[at] = tt;
    }
    for (int q = 0; q < n; q++) {
      const plan_stage *src = &p->stages[x->stage_of[g->tensors[x->pending[q]].producer]];
      *next++ = (cost_transfer){(double)g->tensors[x->pending[q]].bytes, src->first_core + src->n_cores - 1};
    }
  }
  return next;
}

mp_status train_evaluate(train *t, const chip *c, const plan *p, train_result **out, mp_error *err) {
  *out = NULL;
  const graph *g = t->g;
  if (p->n_layers != g->n_ops || p->n_cores != c->n_cores)
    return err_at(err, MP_INPUT, g->file ? g->file : g->name, "plan",
                  "the plan has %d layers on %d cores, but the graph has %d layers and the chip %d cores", p->n_layers,
                  p->n_cores, g->n_ops, c->n_cores);
  train_scratch *x = scratch_for(t, c, p->n_stages + 1, err);
  if (!x) return err->status;
  for (int i = 0; i < p->n_stages; i++)
    for (int l = p->stages[i].first_layer; l < p->stages[i].first_layer + p->stages[i].n_layers; l++)
      x->stage_of[l] = i;
  mp_status st = MP_OK;
  cost_transfer *next = x->x;
  for (int i = 0; i < p->n_stages && st == MP_OK; i++) {
    const plan_stage *ps = &p->stages[i];
    train_stage_input *s = &x->in[i];
    st = train_range_of(t, ps->first_layer, ps->n_layers, &s->r, err);
    s->first_layer = ps->first_layer;
    s->n_layers = ps->n_layers;
    s->first_core = ps->first_core;
    s->n_cores = ps->n_cores;
    if (st == MP_OK && segments(t, x, ps->first_layer, ps->n_layers, &s->fwd_segments, &s->bwd_segments) != 0)
      st = err_nomem(err);
    s->fwd = next;
    next = cost_stage_sends(g, p, x->stage_of, i, next);
    s->n_fwd = (int)(next - s->fwd);
    s->bwd = next;
    next = stage_grads(g, p, x, i, next);
    s->n_bwd = (int)(next - s->bwd);
  }
  if (st == MP_OK) st = evaluate_stages(&t->opt, graph_batch(g), x->m, c, x->link, p->n_stages, x->in, out, err);
  return st;
}

double train_model_period(train *t, const chip *c, const plan *p, double *stage_s, double *stage_mem, int *feasible,
                          mp_error *err) {
  train_result *r = NULL;
  if (train_evaluate(t, c, p, &r, err) != MP_OK) return -1;
  for (int i = 0; i < r->n_stages; i++) {
    if (stage_s) stage_s[i] = r->stages[i].cs.time_s;
    if (stage_mem) stage_mem[i] = r->stages[i].cs.mem_bytes / r->stages[i].cs.sram_bytes;
  }
  if (feasible) *feasible = r->feasible;
  double period = r->period_s;
  train_result_free(r);
  return period;
}

void train_result_free(train_result *r) {
  if (!r) return;
  free(r->stages);
  free(r);
}

static cJSON *stage_json(const train_stage *s) {
  cJSON *o = cJSON_CreateObject();
  const train_range *r = &s->r;
  const struct {
    const char *key;
    double v;
  } nums[] = {
      {"first_layer", s->cs.first_layer}, {"n_layers", s->cs.n_layers}, {"first_core", s->cs.first_core},
      {"n_cores", s->cs.n_cores}, {"fwd_flops", (double)r->fwd_flops}, {"bwd_flops", (double)r->bwd_flops},
      {"recompute_flops", (double)r->recompute_flops}, {"update_flops", (double)r->update_flops},
      {"params", (double)r->params}, {"static_bytes", (double)r->static_bytes},
      {"stash_bytes", (double)r->stash_bytes}, {"peak_bytes", (double)r->peak_bytes},
      {"naive_bytes", (double)r->naive_bytes}, {"live_bytes", (double)r->live_bytes}, {"in_flight", s->in_flight},
      {"mem_bytes", s->cs.mem_bytes}, {"mem_naive_bytes", s->mem_naive_bytes}, {"sram_bytes", s->cs.sram_bytes},
      {"fwd_s", s->fwd_s}, {"bwd_s", s->bwd_s}, {"update_s", s->update_s}, {"dram_s", s->cs.dram_s},
      {"fwd_send_s", s->fwd_send_s}, {"bwd_send_s", s->bwd_send_s}, {"fwd_sends", s->fwd_sends},
      {"bwd_sends", s->bwd_sends}, {"t_s", s->cs.time_s},
  };
  for (size_t i = 0; o && i < sizeof nums / sizeof *nums; i++)
    if (!cJSON_AddNumberToObject(o, nums[i].key, nums[i].v)) goto fail;
  if (s->hold.schedule == TRAIN_ZB && /* what only zb uses (a replayed trace of another schedule has none) */
      (!cJSON_AddNumberToObject(o, "dw_flops", (double)r->dw_flops) ||
       !cJSON_AddNumberToObject(o, "wstash_bytes", (double)r->wstash_bytes) ||
       !cJSON_AddNumberToObject(o, "w_pending", s->w_pending) || !cJSON_AddNumberToObject(o, "w_s", s->w_s)))
    goto fail;
  if (o && cJSON_AddBoolToObject(o, "fits", s->cs.fits)) return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

cJSON *train_result_to_json(const train *t, const train_result *r) {
  cJSON *o = cJSON_CreateObject(), *arr = o ? cJSON_AddArrayToObject(o, "stages") : NULL;
  int ok = arr && cJSON_AddStringToObject(o, "schedule", train_schedule_name(r->schedule)) &&
           cJSON_AddStringToObject(o, "optimizer", train_optimizer_name(t->opt.optimizer)) &&
           cJSON_AddNumberToObject(o, "microbatches", r->microbatches) &&
           cJSON_AddBoolToObject(o, "recompute", t->opt.recompute) &&
           cJSON_AddNumberToObject(o, "bytes_per_param", (double)t->bytes_per_param) &&
           cJSON_AddBoolToObject(o, "fp32_master", t->master) && cJSON_AddNumberToObject(o, "period_s", r->period_s) &&
           cJSON_AddNumberToObject(o, "bottleneck_stage", r->bottleneck_stage) &&
           cJSON_AddNumberToObject(o, "link_bound_s", r->link_bound_s) &&
           cJSON_AddNumberToObject(o, "minibatch_s", r->minibatch_s) && cJSON_AddNumberToObject(o, "bubble", r->bubble) &&
           cJSON_AddNumberToObject(o, "samples_per_s", r->samples_per_s) &&
           cJSON_AddBoolToObject(o, "feasible", r->feasible) && cJSON_AddNumberToObject(o, "mem_ratio", r->mem_ratio);
  for (int i = 0; ok && i < r->n_stages; i++) {
    cJSON *s = stage_json(&r->stages[i]);
    ok = s && cJSON_AddItemToArray(arr, s);
    if (!ok) cJSON_Delete(s);
  }
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}
