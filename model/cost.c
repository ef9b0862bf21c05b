/* cost: the analytical model of a pipeline plan.  See cost.h and partitioner/README.md.
 *
 * Sums of flops, works and bytes are taken in uint64 and converted once, so a stage's figures do not
 * depend on the order in which its layers were added (the optimum's DP adds them incrementally and
 * must reproduce cost_model_stage bit for bit).  A group's speed, transfer factor and SRAM come
 * from chip_group_of, as in the simulator.  The plan terms are summed in the order of split.h's
 * Sends (producer layer, then tensor, then destination), so cost_model_period and cost_evaluate (which
 * goes through split_new, as the simulator does) give bit-identical figures. */
#include "cost.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cost_int.h"
#include "split.h"


double cost_compute_s(double work, double speed, double gather_bytes, int n_cores, double bandwidth) {
  return work / speed + ((double)(n_cores - 1) / (double)n_cores) * (gather_bytes / bandwidth);
}

double cost_send_s(double send_bytes, double gamma, double bandwidth) { return gamma * (send_bytes / bandwidth); }

double cost_mem_bytes(double weight_bytes, double max_act_bytes, int n_cores) {
  return weight_bytes / (double)n_cores + max_act_bytes;
}

void cost_core_dram(const cost_stage *s, double sram, double *in, double *out) {
  double e = s->mem_bytes - sram, w = s->weight_bytes / (double)s->n_cores;
  *in = e > 0 ? e : 0;
  *out = e > w ? e - w : 0;
}

const char *cost_binding_name(cost_binding b) {
  static const char *const names[] = {"compute", "dram", "send", "link", "port"};
  return (unsigned)b < sizeof names / sizeof *names ? names[b] : "?";
}

const char *cost_stage_limiter(const cost_stage *s) {
  if (s->send_s > s->compute_s + s->dram_s) return "send";
  double work = s->work / s->speed, gather = s->compute_s - work;
  if (s->dram_s > work && s->dram_s >= gather) return "dram";
  return gather > work ? "gather" : "compute";
}

/* ---- the routes the model walks again and again ------------------------------------------------------ */

typedef struct listing {
  int *links, n;
} listing;

static void list_link(void *ctx, int link) {
  listing *x = ctx;
  x->links[x->n++] = link;
}

/* Lists the table of cost_int.h; -1 when out of memory. */
static int list_routes(cost_model *m) {
  const chip *c = m->c;
  int n = c->n_cores;
  size_t longest = (size_t)c->width + (size_t)c->height; /* NoC hops + a port's link, at most */
  m->route_off = malloc((4 * (size_t)n + 1) * sizeof *m->route_off);
  m->route_links = malloc((size_t)n * (2 + (c->n_dram > 0 ? 2 * longest : 0)) * sizeof *m->route_links);
  if (!m->route_off || !m->route_links) return -1;
  listing x = {m->route_links, 0};
  for (int k = 0; k < n; k++) {
    m->route_off[4 * k] = x.n;
    if (k + 1 < n) chip_route(c, k, k + 1, list_link, &x);
    m->route_off[4 * k + 1] = x.n;
    if (k + 1 < n) chip_route(c, k + 1, k, list_link, &x);
    m->route_off[4 * k + 2] = x.n;
    if (m->port_of[k] >= 0) chip_route(c, CHIP_PORT(m->port_of[k]), k, list_link, &x);
    m->route_off[4 * k + 3] = x.n;
    if (m->port_of[k] >= 0) chip_route(c, k, CHIP_PORT(m->port_of[k]), list_link, &x);
  }
  m->route_off[4 * n] = x.n;
  return 0;
}

mp_status cost_model_new(const graph *g, const chip *c, cost_model **out, mp_error *err) {
  *out = NULL;
  cost_model *m = calloc(1, sizeof *m);
  if (!m) return err_nomem(err);
  m->memo.width = 1;
  m->g = g;
  m->c = c;
  m->n_links = chip_n_links(c);
  int L = g ? g->n_ops : 0;
  m->port_of = malloc((size_t)c->n_cores * sizeof *m->port_of);
  m->scratch = calloc((size_t)m->n_links, sizeof *m->scratch);
  m->touched = malloc((size_t)m->n_links * sizeof *m->touched);
  m->plan_load = calloc((size_t)m->n_links, sizeof *m->plan_load);
  m->side = calloc((size_t)m->n_links, sizeof *m->side);
  m->side_touched = malloc((size_t)m->n_links * sizeof *m->side_touched);
  m->route_buf = malloc(((size_t)c->width + (size_t)c->height) * sizeof *m->route_buf);
  m->stage_of = malloc(((size_t)L + 1) * sizeof *m->stage_of);
  m->seg_of = malloc(((size_t)L + 1) * sizeof *m->seg_of);
  m->has_a = malloc((size_t)L + 1);
  m->traffic = malloc(((size_t)L + 1) * sizeof *m->traffic);
  if (!m->port_of || !m->scratch || !m->touched || !m->plan_load || !m->side || !m->side_touched || !m->route_buf ||
      !m->stage_of || !m->seg_of || !m->has_a || !m->traffic) {
    cost_model_free(m);
    return err_nomem(err);
  }
  for (int k = 0; k < c->n_cores; k++) m->port_of[k] = chip_nearest_dram(c, k);
  for (int j = 0; j < L; j++) m->traffic[j] = opcost_op_traffic(&g->ops[j]);
  if (list_routes(m) != 0) {
    cost_model_free(m);
    return err_nomem(err);
  }
  if (g) {
    mp_status st = opcost_new(g, c, &m->oc, err);
    if (st != MP_OK) {
      cost_model_free(m);
      return st;
    }
  }
  *out = m;
  return MP_OK;
}

void cost_model_free(cost_model *m) {
  if (!m) return;
  opcost_free(m->oc);
  free(m->port_of);
  free(m->route_off);
  free(m->route_links);
  free(m->route_buf);
  free(m->scratch);
  free(m->touched);
  free(m->plan_load);
  free(m->side);
  free(m->side_touched);
  free(m->stage_of);
  free(m->seg_of);
  free(m->has_a);
  free(m->traffic);
  free(m->xfer);
  free(m->xfer_off);
  free(m->stg);
  free(m->terms);
  free(m->acts);
  free(m->send_ranges);
  free(m->sb);
  free(m->sb_sorted);
  free(m->sb_first);
  free(m->phase);
  seg_memo_clear(&m->memo);
  free(m);
}

double cost_model_layer_work(cost_model *m, int layer, int n_cores) {
  return (double)opcost_work(m->oc, layer, n_cores);
}

/* ---- link loads -------------------------------------------------------------------------------- */

/* A route's visit: bytes onto every link of it. */
typedef struct loading {
  double *load;
  double bytes;
  int *touched, *n_touched; /* when not NULL: links whose load was 0, listed */
} loading;

static void add_load(void *ctx, int link) {
  loading *x = ctx;
  if (x->touched && x->load[link] == 0) x->touched[(*x->n_touched)++] = link;
  x->load[link] += x->bytes;
}

int cost_load_route(const chip *c, double *load, int from, int to, double bytes, int *touched, int *n_touched) {
  loading x = {load, bytes, touched, n_touched};
  return chip_route(c, from, to, add_load, &x);
}

int cost_route(cost_model *m, int from, int to, const int **links) {
  int e = -1;
  if (from >= 0 && to == from + 1)
    e = 4 * from;
  else if (to >= 0 && from == to + 1)
    e = 4 * to + 1;
  else if (to >= 0 && from < 0 && from == CHIP_PORT(m->port_of[to]))
    e = 4 * to + 2;
  else if (from >= 0 && to < 0 && to == CHIP_PORT(m->port_of[from]))
    e = 4 * from + 3;
  if (e >= 0) {
    *links = m->route_links + m->route_off[e];
    return m->route_off[e + 1] - m->route_off[e];
  }
  listing x = {m->route_buf, 0};
  chip_route(m->c, from, to, list_link, &x);
  *links = m->route_buf;
  return x.n;
}

int cost_model_load_route(cost_model *m, double *load, int from, int to, double bytes, int *touched, int *n_touched) {
  const int *links;
  int n = cost_route(m, from, to, &links);
  for (int i = 0; i < n; i++) {
    if (touched && load[links[i]] == 0) touched[(*n_touched)++] = links[i];
    load[links[i]] += bytes;
  }
  return n - (from < 0) - (to < 0);
}

/* The time of one DRAM stream of stage s: every core's bytes (reads when up is 0, writes when 1) at
 * once over its route: the largest load over its link's bandwidth, plus the longest route's latency.
 * On a chip whose cores are alike every core streams the same e bytes, and the time is computed as
 * e x max over links of (cores routed over it / bandwidth), the form optimal.c tabulates by position.
 * Returns the bytes in *bytes. */
static double stream_s(cost_model *m, cost_stage *s, int up, double *bytes) {
  const chip *c = m->c;
  int n = 0, hops = 0, alike = !c->heterogeneous;
  double each = 0;
  *bytes = 0;
  for (int k = s->first_core; k < s->first_core + s->n_cores; k++) {
    double in, out;
    cost_core_dram(s, (double)c->cores[k].sram_bytes, &in, &out);
    double b = up ? out : in;
    if (!(b > 0)) continue;
    int port = CHIP_PORT(m->port_of[k]);
    double w = alike ? 1 : b;
    int h = up ? cost_model_load_route(m, m->scratch, k, port, w, m->touched, &n)
               : cost_model_load_route(m, m->scratch, port, k, w, m->touched, &n);
    if (h > hops) hops = h;
    *bytes += b;
    s->dram_byte_hops += b * h;
    each = b;
  }
  double worst = 0;
  for (int i = 0; i < n; i++) {
    int link = m->touched[i];
    double t = m->scratch[link] / chip_link_bandwidth(c, link);
    if (t > worst) worst = t;
    m->scratch[link] = 0;
  }
  if (n == 0) return 0;
  return (alike ? each * worst : worst) + (double)hops * c->noc_latency;
}

static void stage_times(cost_stage *s) {
  double busy = s->compute_s + s->dram_s;
  s->time_s = busy > s->send_s ? busy : s->send_s;
}

void cost_stage_complete(cost_model *m, cost_stage *s) {
  const chip *c = m->c;
  chip_group grp = chip_group_of(c, s->first_core, s->n_cores);
  s->speed = grp.speed;
  s->gamma = grp.gamma;
  s->sram_bytes = (double)grp.sram_bytes;
  s->compute_s = cost_compute_s(s->work, s->speed, s->gather_bytes, s->n_cores, c->noc_bandwidth);
  s->send_s = cost_send_s(s->send_bytes, s->gamma, c->noc_bandwidth);
  s->mem_bytes = cost_mem_bytes(s->weight_bytes, s->max_act_bytes, s->n_cores);
  s->fits = s->mem_bytes <= s->sram_bytes;
  s->dram_in_bytes = s->dram_out_bytes = s->dram_in_s = s->dram_out_s = s->dram_byte_hops = 0;
  if (!s->fits && c->n_dram > 0) {
    s->dram_in_s = stream_s(m, s, 0, &s->dram_in_bytes);
    s->dram_out_s = stream_s(m, s, 1, &s->dram_out_bytes);
  }
  s->dram_s = s->dram_in_s + s->dram_out_s;
  s->n_segments = s->n_transfers = s->send_hops = 0;
  s->sent_bytes = s->send_byte_hops = 0;
  stage_times(s);
}

void cost_model_stage(cost_model *m, int first_layer, int n_layers, int first_core, int n_cores, cost_stage *out) {
  const graph *g = m->g;
  int last = first_layer + n_layers - 1;
  uint64_t flops = 0, weights = 0, gather = 0, max_act = 0, send = 0, macs = 0, traffic = 0;
  for (int j = first_layer; j <= last; j++) {
    const graph_op *op = &g->ops[j];
    flops += op->flops;
    macs += op->macs;
    traffic += m->traffic[j];
    weights += op->weight_bytes;
    gather += op->out_bytes;
    if (op->out_bytes > max_act) max_act = op->out_bytes;
    for (int k = 0; k < op->n_outputs; k++) {
      const graph_tensor *t = &g->tensors[op->outputs[k]];
      if (t->last_consumer > last) send += t->bytes;
    }
  }
  memset(out, 0, sizeof *out);
  out->first_layer = first_layer;
  out->n_layers = n_layers;
  out->first_core = first_core;
  out->n_cores = n_cores;
  out->flops = (double)flops;
  out->work = (double)opcost_range(m->oc, first_layer, n_layers, n_cores);
  out->macs = (double)macs;
  out->sram_traffic = (double)traffic;
  out->weight_bytes = (double)weights;
  out->gather_bytes = (double)gather;
  out->max_act_bytes = (double)max_act;
  out->send_bytes = (double)send;
  cost_stage_complete(m, out);
}

void cost_stage_plan(cost_model *m, cost_stage *s, int n_segments, const cost_transfer *sends, int n_sends,
                     double *link_bytes) {
  const chip *c = m->c;
  int c_n = s->n_cores, last = s->first_core + c_n - 1;
  double B = c->noc_bandwidth, lat = c->noc_latency;
  s->n_segments = c_n > 1 ? n_segments : 0;
  s->compute_s = cost_compute_s(s->work, s->speed, s->gather_bytes, c_n, B) + (double)s->n_segments * lat;
  s->send_s = 0;
  s->n_transfers = n_sends;
  s->sent_bytes = s->send_byte_hops = 0;
  s->send_hops = 0;
  for (int i = 0; i < n_sends; i++) {
    if (!(sends[i].bytes > 0)) continue;
    int hops = chip_hops(c, last, sends[i].dst_core);
    s->send_s += cost_send_s(sends[i].bytes, s->gamma, B) + (double)hops * lat;
    s->sent_bytes += sends[i].bytes;
    s->send_hops += hops;
    s->send_byte_hops += sends[i].bytes * hops;
  }
  stage_times(s);
  if (!link_bytes) return;
  double A = s->gather_bytes;
  for (int k = 0; k + 1 < c_n && A > 0; k++) {
    int a = s->first_core + k;
    link_bytes[cost_chain_link(m, a, 0)] += A * (double)(k + 1) / c_n;
    link_bytes[cost_chain_link(m, a, 1)] += A * (double)(c_n - 1 - k) / c_n;
  }
  for (int i = 0; i < n_sends; i++)
    if (sends[i].bytes > 0)
      cost_model_load_route(m, link_bytes, last, sends[i].dst_core, s->gamma * sends[i].bytes, NULL, NULL);
  cost_stage_dram_load(m, s, link_bytes);
}

void cost_stage_dram_load(cost_model *m, const cost_stage *s, double *link_bytes) {
  const chip *c = m->c;
  if (s->fits || c->n_dram == 0) return;
  for (int k = s->first_core; k < s->first_core + s->n_cores; k++) {
    double in, out;
    cost_core_dram(s, (double)c->cores[k].sram_bytes, &in, &out);
    if (in > 0) cost_model_load_route(m, link_bytes, CHIP_PORT(m->port_of[k]), k, in, NULL, NULL);
    if (out > 0) cost_model_load_route(m, link_bytes, k, CHIP_PORT(m->port_of[k]), out, NULL, NULL);
  }
}

/* ---- plans ------------------------------------------------------------------------------------- */

/* The all-gathers of stage [first, first + n) that carry bytes: its segments (split.h) with a layer
 * whose outputs are not empty.  -1 when out of memory. */
static int gathering_segments(cost_model *m, int first, int n, const int *seg_of) {
  const graph *g = m->g;
  int segs = 0;
  for (int l = 0; l < n; l++)
    if (seg_of[l] + 1 > segs) segs = seg_of[l] + 1;
  memset(m->has_a, 0, (size_t)segs);
  for (int l = 0; l < n; l++)
    if (g->ops[first + l].out_bytes > 0) m->has_a[seg_of[l]] = 1;
  int count = 0;
  for (int k = 0; k < segs; k++) count += m->has_a[k];
  return count;
}

static uint64_t memo_hash(uint64_t key) {
  key ^= key >> 33;
  key *= UINT64_C(0xff51afd7ed558ccd);
  return key ^ (key >> 33);
}

int seg_memo_get(const seg_memo *t, int first, int n, int *out) {
  uint64_t key = (uint64_t)first << 32 | (uint64_t)(unsigned)n;
  for (size_t i = t->cap ? memo_hash(key) & (t->cap - 1) : 0; t->cap && t->keys[i]; i = (i + 1) & (t->cap - 1))
    if (t->keys[i] == key) {
      memcpy(out, t->counts + i * (size_t)t->width, (size_t)t->width * sizeof *out);
      return 1;
    }
  return 0;
}

void seg_memo_put(seg_memo *t, int first, int n, const int *counts) {
  size_t w = (size_t)t->width;
  if (2 * (t->used + 1) > t->cap) { /* grow to keep the table at most half full */
    size_t cap = t->cap ? 2 * t->cap : 1024;
    uint64_t *keys = calloc(cap, sizeof *keys);
    int *grown = malloc(cap * w * sizeof *grown);
    if (!keys || !grown) {
      free(keys);
      free(grown);
      return;
    }
    for (size_t i = 0; i < t->cap; i++)
      if (t->keys[i]) {
        size_t j = memo_hash(t->keys[i]) & (cap - 1);
        while (keys[j]) j = (j + 1) & (cap - 1);
        keys[j] = t->keys[i];
        memcpy(grown + j * w, t->counts + i * w, w * sizeof *grown);
      }
    free(t->keys);
    free(t->counts);
    t->keys = keys;
    t->counts = grown;
    t->cap = cap;
  }
  uint64_t key = (uint64_t)first << 32 | (uint64_t)(unsigned)n;
  size_t i = memo_hash(key) & (t->cap - 1);
  while (t->keys[i]) i = (i + 1) & (t->cap - 1);
  t->keys[i] = key;
  memcpy(t->counts + i * w, counts, w * sizeof *counts);
  t->used++;
}

void seg_memo_clear(seg_memo *t) {
  free(t->keys);
  free(t->counts);
  t->keys = NULL;
  t->counts = NULL;
  t->cap = t->used = 0;
}

/* The gathering segments of stage [first, first + n), computed once per range.  -1 when out of memory. */
static int segments_of(cost_model *m, int first, int n) {
  int count;
  if (seg_memo_get(&m->memo, first, n, &count)) return count;
  if (split_segments(m->g, first, n, m->seg_of) < 0) return -1;
  count = gathering_segments(m, first, n, m->seg_of);
  seg_memo_put(&m->memo, first, n, &count);
  return count;
}

cost_transfer *cost_stage_sends(const graph *g, const plan *p, const int *stage_of, int i, cost_transfer *out) {
  const plan_stage *st = &p->stages[i];
  int last = st->first_layer + st->n_layers - 1;
  for (int l = st->first_layer; l <= last; l++)
    for (int k = 0; k < g->ops[l].n_outputs; k++) {
      const graph_tensor *t = &g->tensors[g->ops[l].outputs[k]];
      if (t->last_consumer <= last) continue;
      for (int q = 0, prev = i; q < t->n_consumers; q++) {
        int dst = stage_of[t->consumers[q]];
        if (dst == prev) continue;
        prev = dst;
        *out++ = (cost_transfer){(double)t->bytes, p->stages[dst].first_core};
      }
    }
  return out;
}

/* Appends the Sends of stage i of plan p to m->xfer from index n (cost_stage_sends); returns the new count
 * or -1 when out of memory.  m->stage_of must map the plan's layers to stages. */
static int stage_sends(cost_model *m, const plan *p, int i, int n) {
  const graph *g = m->g;
  const plan_stage *st = &p->stages[i];
  int room = n; /* at most one Send per reader of a tensor leaving the stage */
  for (int l = st->first_layer; l < st->first_layer + st->n_layers; l++)
    for (int k = 0; k < g->ops[l].n_outputs; k++) room += g->tensors[g->ops[l].outputs[k]].n_consumers;
  if (room > m->xfer_cap) {
    int cap = m->xfer_cap ? m->xfer_cap : 64;
    while (cap < room) cap *= 2;
    cost_transfer *x = realloc(m->xfer, (size_t)cap * sizeof *x);
    if (!x) return -1;
    m->xfer = x;
    m->xfer_cap = cap;
  }
  return (int)(cost_stage_sends(g, p, m->stage_of, i, m->xfer + n) - m->xfer);
}

/* The period of stages with their plan terms and the loads they put on the links. */
typedef struct verdict {
  double bottleneck, bound;
  int stage, link;
} verdict;

static verdict judge(const cost_model *m, const cost_stage *stages, int n, const double *load) {
  verdict v = {0, 0, 0, -1};
  for (int i = 0; i < n; i++)
    if (i == 0 || stages[i].time_s > v.bottleneck) {
      v.bottleneck = stages[i].time_s;
      v.stage = i;
    }
  for (int k = 0; k < m->n_links; k++) {
    double t = load[k] / chip_link_bandwidth(m->c, k);
    if (t > v.bound) {
      v.bound = t;
      v.link = k;
    }
  }
  return v;
}

double cost_model_period(cost_model *m, const plan *p, double *stage_s, double *stage_mem, int *feasible,
                         double *mem_ratio) {
  int n = p->n_stages;
  if (n > m->cap_stages) {
    cost_stage *stg = realloc(m->stg, (size_t)n * sizeof *stg);
    if (stg) m->stg = stg;
    int *off = realloc(m->xfer_off, ((size_t)n + 1) * sizeof *off);
    if (off) m->xfer_off = off;
    if (!stg || !off) return -1;
    m->cap_stages = n;
  }
  memset(m->plan_load, 0, (size_t)m->n_links * sizeof *m->plan_load);
  for (int i = 0; i < n; i++)
    for (int l = p->stages[i].first_layer; l < p->stages[i].first_layer + p->stages[i].n_layers; l++)
      m->stage_of[l] = i;
  m->xfer_off[0] = 0;
  for (int i = 0; i < n; i++) {
    int k = stage_sends(m, p, i, m->xfer_off[i]);
    if (k < 0) return -1;
    m->xfer_off[i + 1] = k;
  }
  double ratio = 0;
  int fits = 1;
  for (int i = 0; i < n; i++) {
    const plan_stage *ps = &p->stages[i];
    cost_stage *cs = &m->stg[i];
    cost_model_stage(m, ps->first_layer, ps->n_layers, ps->first_core, ps->n_cores, cs);
    int segs = segments_of(m, ps->first_layer, ps->n_layers);
    if (segs < 0) return -1;
    cost_stage_plan(m, cs, segs, m->xfer + m->xfer_off[i], m->xfer_off[i + 1] - m->xfer_off[i], m->plan_load);
    if (!cs->fits) fits = 0;
    double r = cs->mem_bytes / cs->sram_bytes;
    if (r > ratio) ratio = r;
    if (stage_mem) stage_mem[i] = r;
  }
  m->n_stg = n;
  double period = cost_contended(m, m->stg, n, m->xfer, m->xfer_off, m->plan_load);
  if (period < 0) return -1;
  for (int i = 0; stage_s && i < n; i++) stage_s[i] = m->stg[i].contended_s;
  if (feasible) *feasible = fits;
  if (mem_ratio) *mem_ratio = ratio;
  return period;
}

double cost_model_energy(const cost_model *m, double period_s) {
  double j = 0;
  for (int i = 0; i < m->n_stg; i++) {
    energy_parts e;
    energy_of_stage(m->c, &m->stg[i], period_s, &e);
    j += energy_sum(&e);
  }
  return j;
}

/* A link busy this share of the period or more is what sets it when no stage takes that long alone:
 * under processor sharing the stages that cross it take at least a period whatever else they do. */
#define COST_SATURATED 0.95

mp_status cost_evaluate(const graph *g, const chip *c, const plan *p, cost_result **out, mp_error *err) {
  *out = NULL;
  if (p->n_layers != g->n_ops || p->n_cores != c->n_cores)
    return err_at(err, MP_INPUT, g->file ? g->file : g->name, "plan",
                  "the plan has %d layers on %d cores, but the graph has %d layers and the chip %d cores", p->n_layers,
                  p->n_cores, g->n_ops, c->n_cores);
  cost_result *r = calloc(1, sizeof *r);
  cost_model *m = NULL;
  split *sp = NULL;
  cost_transfer *xfer = NULL;
  int *off = NULL;
  mp_status st = MP_OK;
  if (!r) return err_nomem(err);
  r->n_links = chip_n_links(c);
  r->stages = calloc((size_t)p->n_stages, sizeof *r->stages);
  r->link_bytes = calloc((size_t)r->n_links, sizeof *r->link_bytes);
  off = malloc(((size_t)p->n_stages + 1) * sizeof *off);
  if (!r->stages || !r->link_bytes || !off) {
    st = err_nomem(err);
    goto cleanup;
  }
  st = cost_model_new(g, c, &m, err);
  if (st == MP_OK) st = split_new(g, p, &sp, err);
  if (st != MP_OK) goto cleanup;
  off[0] = 0;
  for (int i = 0; i < p->n_stages; i++) off[i + 1] = off[i] + sp->groups[i].n_sends;
  xfer = malloc(((size_t)off[p->n_stages] + 1) * sizeof *xfer);
  if (!xfer) {
    st = err_nomem(err);
    goto cleanup;
  }
  r->n_stages = p->n_stages;
  r->feasible = 1;
  for (int i = 0; i < p->n_stages; i++) {
    const split_group *sg = &sp->groups[i];
    cost_stage *cs = &r->stages[i];
    cost_model_stage(m, sg->first_layer, sg->n_layers, sg->first_core, sg->n_cores, cs);
    for (int k = 0; k < sg->n_sends; k++)
      xfer[off[i] + k] = (cost_transfer){(double)g->tensors[sg->sends[k].tensor].bytes,
                                         sp->groups[sg->sends[k].dst_group].first_core};
    int segs = gathering_segments(m, sg->first_layer, sg->n_layers, sg->segment);
    cost_stage_plan(m, cs, segs, xfer + off[i], sg->n_sends, r->link_bytes);
    if (!cs->fits) r->feasible = 0;
    double ratio = cs->mem_bytes / cs->sram_bytes;
    if (ratio > r->mem_ratio) r->mem_ratio = ratio;
  }
  verdict v = judge(m, r->stages, r->n_stages, r->link_bytes);
  r->bottleneck_s = v.bottleneck;
  r->bottleneck_stage = v.stage;
  r->link_bound_s = v.bound;
  r->busiest_link = v.link;
  r->uncontended_s = v.bound > v.bottleneck ? v.bound : v.bottleneck;
  r->period_s = cost_contended(m, r->stages, r->n_stages, xfer, off, r->link_bytes);
  if (r->period_s < 0) {
    st = err_nomem(err);
    goto cleanup;
  }
  int top = 0;
  for (int i = 1; i < r->n_stages; i++)
    if (r->stages[i].contended_s > r->stages[top].contended_s) top = i;
  if (r->stages[top].time_s < COST_SATURATED * r->period_s && v.bound >= COST_SATURATED * r->period_s) {
    /* contention sets the period, and the stages wait on a link that busy */
    r->binding = v.link >= 4 * c->width * c->height ? COST_BIND_PORT : COST_BIND_LINK;
  } else {
    const cost_stage *b = &r->stages[top];
    r->bottleneck_stage = top;
    r->binding = b->send_s > b->compute_s + b->dram_s ? COST_BIND_SEND
                 : b->dram_s > b->compute_s           ? COST_BIND_DRAM
                                                      : COST_BIND_COMPUTE;
  }
  energy_parts total = {0, 0, 0, 0, 0};
  double flops = 0;
  int batch = graph_batch(g);
  for (int i = 0; i < r->n_stages; i++) {
    energy_parts e;
    energy_of_stage(c, &r->stages[i], r->period_s, &e);
    r->stages[i].energy_j = energy_sum(&e) / batch;
    energy_add(&total, &e);
    flops += r->stages[i].flops;
  }
  energy_summarise(&total, r->period_s, batch, flops, &r->energy);
cleanup:
  free(xfer);
  free(off);
  split_free(sp);
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
  free(r->link_bytes);
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
  for (int j = 0; j < g->n_ops; j++) total_flops += (double)opcost_op_floor(c, &g->ops[j]);
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
    double a = (double)g->ops[j].out_bytes;
    if (top) {
      for (int k = 1; k <= n; k++) {
        double t = cost_compute_s((double)opcost_op_work(c, &g->ops[j], k), top[k - 1], a, k, c->noc_bandwidth);
        if (t < best) best = t;
      }
    } else { /* out of memory for the sort: the bound with every core's speed, no all-gather (weaker) */
      best = (double)opcost_op_floor(c, &g->ops[j]) / total_speed;
    }
    if (out->layer < 0 || best > out->layer_s) {
      out->layer_s = best;
      out->layer = j;
    }
  }
  free(top);
  out->bound_s = out->flops_s > out->layer_s ? out->flops_s : out->layer_s;
}

/* ---- JSON ---------------------------------------------------------------------------------------- */

static cJSON *stage_to_json(const cost_stage *s, int has_energy) {
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  const struct {
    const char *key;
    double v;
  } nums[] = {
      {"first_layer", s->first_layer},
      {"n_layers", s->n_layers},
      {"first_core", s->first_core},
      {"n_cores", s->n_cores},
      {"flops", s->flops},
      {"work", s->work},
      {"weight_bytes", s->weight_bytes},
      {"gather_bytes", s->gather_bytes},
      {"max_act_bytes", s->max_act_bytes},
      {"send_bytes", s->send_bytes},
      {"compute_s", s->compute_s},
      {"dram_s", s->dram_s},
      {"dram_in_bytes", s->dram_in_bytes},
      {"dram_out_bytes", s->dram_out_bytes},
      {"send_s", s->send_s},
      {"transfers", s->n_transfers},
      {"sent_bytes", s->sent_bytes},
      {"send_hops", s->send_hops},
      {"segments", s->n_segments},
      {"t_s", s->time_s},
      {"s_bytes", s->mem_bytes},
      {"sram_bytes", s->sram_bytes},
  };
  for (size_t i = 0; i < sizeof nums / sizeof *nums; i++)
    if (!cJSON_AddNumberToObject(o, nums[i].key, nums[i].v)) goto fail;
  if (has_energy && !cJSON_AddNumberToObject(o, "energy_j", s->energy_j)) goto fail;
  if (!cJSON_AddBoolToObject(o, "fits", s->fits) || !cJSON_AddStringToObject(o, "limiter", cost_stage_limiter(s)))
    goto fail;
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

cJSON *cost_result_to_json(const cost_result *r, const chip *c) {
  char link[48] = "";
  if (r->busiest_link >= 0) chip_link_name(c, r->busiest_link, link, sizeof link);
  cJSON *o = cJSON_CreateObject();
  cJSON *arr = cJSON_AddArrayToObject(o, "stages");
  if (!o || !arr || !cJSON_AddNumberToObject(o, "period_s", r->period_s) ||
      !cJSON_AddStringToObject(o, "binding", cost_binding_name(r->binding)) ||
      !cJSON_AddNumberToObject(o, "bottleneck_s", r->bottleneck_s) ||
      !cJSON_AddNumberToObject(o, "bottleneck_stage", r->bottleneck_stage) ||
      !cJSON_AddNumberToObject(o, "link_bound_s", r->link_bound_s) ||
      !(r->busiest_link >= 0 ? cJSON_AddStringToObject(o, "busiest_link", link)
                             : cJSON_AddNullToObject(o, "busiest_link")) ||
      !cJSON_AddBoolToObject(o, "feasible", r->feasible) || !cJSON_AddNumberToObject(o, "mem_ratio", r->mem_ratio) ||
      (c->has_energy && !energy_summary_to_json(o, &r->energy))) {
    cJSON_Delete(o);
    return NULL;
  }
  for (int i = 0; i < r->n_stages; i++) {
    cJSON *s = stage_to_json(&r->stages[i], c->has_energy);
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
