/* sim: the SimGrid pipeline simulator's object and results (see sim.h).
 *
 * The files of the simulator: sim_platform.c writes the chip's platform, sim_program.c compiles a plan
 * (or a recorded trace) into the job the engine runs and says what work is simulated, sim_engine.c runs
 * SimGrid in a thread of its own with the actors that play a job, sim_record.c records and replays
 * traces (sim_train.c simulates a training mini-batch, sim_train_record.c records and replays it), and this
 * file holds the public object: start-up, the result cache, and results.
 *
 * Figures.  c[m] is the time micro-batch m is complete (every group's segments and sends for it).
 * By default a run goes on until the completions are periodic (steady state, sim_int.h), and the
 * period is the mean interval of the last cycle; with a fixed count M it is (c[M-1] - c[0]) / (M - 1).
 * latency = c[0] (the fill latency, through an empty pipeline), makespan = the last counted
 * completion, throughput = 1 / period; a stage's compute, send, DRAM and idle times are per
 * micro-batch, averaged over the micro-batches after the warm-up.  All times are rounded to 12
 * significant digits.  The clock keeps growing from one evaluation to
 * the next, which moves the last bits: after a few hundred evaluations a figure may differ from a
 * fresh process's in its 12th digit (about 1e-11 relative after 10^3 to 10^4 evaluations).  With
 * sim_options.isolate every evaluation runs in a fork() of the idle engine (whose clock therefore
 * never moves) and the figures are bit-identical to a fresh process's, at some cost in speed.
 * Link traffic is accounted per micro-batch on the XY routes by the simulator itself (exactly what it
 * handed SimGrid), utilisation = bytes / (bandwidth * period).  L07 shares a link fairly between the
 * transfers that use it; every transfer and all-gather also pays its route's latency (hops x
 * per-hop latency). */
#define _GNU_SOURCE /* qsort_r */
#include "sim.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "jsonio.h"
#include "proc.h"
#include "sim_int.h"

/* A cached result (see sim_evaluate_m). */
typedef struct sim_cache_entry {
  int valid;
  long stamp; /* insertion number, to evict the oldest of a set */
  uint64_t graph_hash, plan_hash;
  int M, n_arranged;
  int *arranged;
  sim_result res;
} sim_cache_entry;

double sim_round12(double x) {
  if (x == 0 || !isfinite(x)) return x;
  char buf[32];
  snprintf(buf, sizeof buf, "%.11e", x);
  return strtod(buf, NULL);
}

void sim_options_init(sim_options *o) {
  memset(o, 0, sizeof *o);
  o->microbatches = 0;
  o->max_microbatches = 0;
  o->verbose = 0;
  o->top_links = 8;
  o->cache_size = 4096;
}

const chip *sim_chip(const sim *s) { return s->chip; }

void sim_get_stats(const sim *s, sim_stats *out) { *out = s->stats; }

mp_status sim_new(const chip *c, const sim_options *o, sim **out, mp_error *err) {
  *out = NULL;
  sim_options defaults;
  if (!o) {
    sim_options_init(&defaults);
    o = &defaults;
  }
  if (o->microbatches < 0)
    return err_set(err, MP_USAGE, "sim: the number of micro-batches must be at least 1, or 0 for steady state (got %d)",
                   o->microbatches);
  if (o->max_microbatches < 0 || (o->max_microbatches > 0 && o->max_microbatches < 4))
    return err_set(err, MP_USAGE, "sim: the cap on micro-batches must be at least 4, or 0 for automatic (got %d)",
                   o->max_microbatches);
  if (o->first_window < 0)
    return err_set(err, MP_USAGE, "sim: the first window must be at least 1, or 0 for automatic (got %d)",
                   o->first_window);
  if (o->top_links < 0 || o->cache_size < 0)
    return err_set(err, MP_USAGE, "sim: top_links and cache_size must not be negative");
  if (o->routing != SIM_ROUTING_AUTO && o->routing != SIM_ROUTING_FULL && o->routing != SIM_ROUTING_DIJKSTRA &&
      o->routing != SIM_ROUTING_MANY && o->routing != SIM_ROUTING_TORUS)
    return err_set(err, MP_USAGE, "sim: unknown routing %d (SIM_ROUTING_AUTO, _FULL, _DIJKSTRA, _MANY or _TORUS)",
                   o->routing);
  if (o->routing == SIM_ROUTING_TORUS && !sim_platform_torus_ok(c))
    return err_set(err, MP_USAGE, "sim: the torus routing needs cores of one speed; %s has several", c->file);
  if (c->n_cores < 1 || c->noc_bandwidth <= 0 || !isfinite(c->noc_bandwidth) || c->noc_latency < 0 ||
      (c->n_dram > 0 && !(c->dram_bandwidth > 0)))
    return err_set(err, MP_INPUT, "%s: the chip has no cores or a non-positive NoC/DRAM bandwidth", c->file);
  for (int i = 0; i < c->n_cores; i++)
    if (!(c->cores[i].flops > 0) || !isfinite(c->cores[i].flops) || !(c->cores[i].transfer_factor >= 1))
      return err_set(err, MP_INPUT, "%s: core %d has a non-positive speed or a transfer factor below 1", c->file, i);
  double t_start = proc_now_s();
  mp_status st = MP_OK;
  sim *s = calloc(1, sizeof *s);
  if (!s) {
    st = err_nomem(err);
    goto fail;
  }
  s->chip = c;
  s->opt = *o;
  s->platform = sim_platform_kind(c, o->routing, o->paje_file != NULL);
  if (o->paje_file) {
    if (strlen(o->paje_file) + 6 > sizeof s->paje_part || strchr(o->paje_file, ' ')) {
      st = err_set(err, MP_USAGE, "sim: the Paje file name '%s' is too long or has a blank", o->paje_file);
      goto fail;
    }
    snprintf(s->paje_part, sizeof s->paje_part, "%s.part", o->paje_file);
    /* SimGrid aborts when it cannot create the trace, and the rename at the end would fail onto a
     * directory: find out now, while it is a one-line error. */
    struct stat sb;
    FILE *probe = NULL;
    if (stat(o->paje_file, &sb) == 0 && S_ISDIR(sb.st_mode)) {
      st = err_at(err, MP_OUTPUT, o->paje_file, NULL, "cannot write the Paje trace there: it is a directory");
      goto fail;
    }
    if (!(probe = fopen(s->paje_part, "w"))) {
      st = err_at(err, MP_OUTPUT, o->paje_file, NULL, "cannot write the Paje trace: %s", strerror(errno));
      goto fail;
    }
    fclose(probe);
    remove(s->paje_part);
  }
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->hosts = calloc((size_t)c->n_cores, sizeof *s->hosts);
  s->dram_hosts = calloc((size_t)c->n_dram + 1, sizeof *s->dram_hosts);
  s->link_bytes = calloc((size_t)chip_n_links(c), sizeof *s->link_bytes);
  s->link_order = calloc((size_t)chip_n_links(c), sizeof *s->link_order);
  if (o->cache_size > 0) s->cache = calloc((size_t)o->cache_size, sizeof *s->cache);
  if (!s->hosts || !s->dram_hosts || !s->link_bytes || !s->link_order || (o->cache_size > 0 && !s->cache)) {
    st = err_nomem(err);
    goto fail;
  }
  st = sim_engine_start(s, err);
  if (st != MP_OK) goto fail;
  s->stats.startup_s = proc_now_s() - t_start;
  *out = s;
  return MP_OK;
fail:
  if (s) {
    free(s->hosts);
    free(s->dram_hosts);
    free(s->link_bytes);
    free(s->link_order);
    free(s->cache);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
  }
  return st;
}

void sim_result_clear(sim_result *r) {
  if (!r) return;
  free(r->stages);
  free(r->cores);
  free(r->links);
  memset(r, 0, sizeof *r);
}

/* Per core: its group's share s_i, its SRAM, and whether it fits (s_i is rounded up to whole bytes,
 * so comparing with it equals comparing with the exact share). */
static void fill_cores(const chip *c, sim_result *r) {
  for (int i = 0; i < r->n_stages; i++) {
    const sim_stage_result *st = &r->stages[i];
    for (int k = st->first_core; k < st->first_core + st->n_cores; k++) {
      r->cores[k].sram_bytes = st->sram_bytes;
      r->cores[k].sram_capacity = c->cores[k].sram_bytes;
      r->cores[k].fits = c->cores[k].sram_bytes >= st->sram_bytes;
    }
  }
}

/* Copies a result.  The cache keeps results without their per-core array (it is most of a result on
 * a big chip and follows from the stages): with c == NULL the copy has none, with the chip it is
 * rebuilt. */
static mp_status result_copy(const sim_result *from, sim_result *to, const chip *c, mp_error *err) {
  *to = *from;
  to->stages = malloc((size_t)from->n_stages * sizeof *to->stages);
  to->cores = c ? calloc((size_t)from->n_cores, sizeof *to->cores) : NULL;
  to->links = malloc(((size_t)from->n_links + 1) * sizeof *to->links);
  if (!to->stages || (c && !to->cores) || !to->links) {
    sim_result_clear(to);
    return err_nomem(err);
  }
  memcpy(to->stages, from->stages, (size_t)from->n_stages * sizeof *to->stages);
  memcpy(to->links, from->links, (size_t)from->n_links * sizeof *to->links);
  if (c) fill_cores(c, to);
  return MP_OK;
}

/* Most bytes first, ties to the lower link index; ctx is the per-link bytes. */
static int link_cmp(const void *a, const void *b, void *ctx) {
  const double *bytes = ctx;
  int x = *(const int *)a, y = *(const int *)b;
  double bx = bytes[x], by = bytes[y];
  if (bx != by) return bx > by ? -1 : 1;
  return (x > y) - (x < y);
}

void sim_result_set_batch(sim_result *r, int batch) {
  r->batch = batch;
  r->samples_per_s = r->period_s > 0 ? sim_round12(batch / r->period_s) : 0;
  energy_summarise(&r->energy_microbatch, r->period_s, batch, r->flops_microbatch, &r->energy);
  for (int i = 0; i < r->n_stages; i++) r->stages[i].energy_j = r->stages[i].energy_microbatch_j / batch;
}

/* What group gr spends per micro-batch (energy.h), from what the job runs: its segments' arithmetic and
 * SRAM bytes, its all-gathers along its chain ((c-1) A byte-hops), its Sends (bytes x hops of each), its
 * DRAM streams (bytes, and bytes x hops between the port's core and each core), and its cores' static
 * energy over the period. */
static void group_energy(const chip *c, const jgroup *gr, double period, energy_parts *out, double *flops) {
  double macs = 0, ops = 0, traffic = 0, hops = 0, dram = 0;
  for (int k = 0; k < gr->n_segs; k++) {
    const seg *x = &gr->segs[k];
    macs += x->macs;
    ops += x->ops;
    traffic += x->traffic;
    hops += (gr->n_cores - 1) * x->gather;
  }
  for (int k = 0; k < gr->n_sends; k++)
    if (gr->sends[k].raw_bytes > 0) hops += gr->sends[k].raw_bytes * chip_hops(c, gr->last_core, gr->sends[k].dst_core);
  for (int k = 0; gr->dram_in && k < gr->n_cores; k++) {
    double b = gr->dram_in[k] + gr->dram_out[k];
    dram += b;
    hops += b * chip_hops(c, gr->first_core + k, c->dram[gr->dram_port[k]].core);
  }
  energy_dynamic(&c->energy, macs, ops - 2 * macs, traffic, hops, dram, out);
  out->leak = c->energy.static_w_per_core * gr->n_cores * period;
  *flops += ops;
}

mp_status sim_job_result(sim *s, const job *j, sim_result *res, mp_error *err) {
  const chip *c = s->chip;
  const job_run *run = &j->run;
  memset(res, 0, sizeof *res);
  if (run->microbatches < 1) return err_set(err, MP_RUN, "sim: no micro-batch completed (a deadlock in the plan?)");
  res->microbatches = run->microbatches;
  res->period_kind = j->fixed ? SIM_PERIOD_FIXED : run->settled ? SIM_PERIOD_STEADY : SIM_PERIOD_UNSETTLED;
  res->warmup_microbatches = run->warmup > 0 ? run->warmup : 0;
  res->cycle = run->cycle;
  res->graph_hash = j->graph_hash;
  res->plan_hash = j->plan_hash;
  res->chip_hash = c->hash;
  res->n_stages = j->n_groups;
  res->n_cores = c->n_cores;
  res->stages = calloc((size_t)j->n_groups, sizeof *res->stages);
  res->cores = calloc((size_t)c->n_cores, sizeof *res->cores);
  int top = s->opt.top_links;
  res->links = calloc((size_t)top + 1, sizeof *res->links);
  if (!res->stages || !res->cores || !res->links) {
    sim_result_clear(res);
    return err_nomem(err);
  }
  res->makespan_s = sim_round12(run->makespan_s);
  res->latency_s = sim_round12(run->fill_s);
  res->period_s = sim_round12(run->period_s);
  res->microbatches_per_s = res->period_s > 0 ? sim_round12(1.0 / res->period_s) : 0;
  res->has_energy = c->has_energy;
  double period = run->period_s;
  res->feasible = 1;
  double best = -1;
  for (int gi = 0; gi < j->n_groups; gi++) {
    const jgroup *gr = &j->groups[gi];
    const cost_stage *cs = &gr->model;
    sim_stage_result *st = &res->stages[gi];
    if (!cs->fits) res->feasible = 0;
    st->first_layer = cs->first_layer;
    st->n_layers = cs->n_layers;
    st->first_core = gr->first_core;
    st->n_cores = gr->n_cores;
    st->compute_s = sim_round12(gr->compute_s);
    st->comm_s = sim_round12(gr->comm_s);
    st->dram_s = sim_round12(gr->dram_s);
    double idle = res->period_s - st->compute_s - st->dram_s; /* of the rounded figures: 0 when busy throughout */
    st->idle_s = idle > 0 ? sim_round12(idle) : 0;
    st->analytical_t_s = cs->time_s;
    st->sram_bytes = (uint64_t)ceil(cs->mem_bytes);
    st->fits = cs->fits;
    st->n_sends = gr->n_sends;
    st->n_recvs = gr->n_recvs;
    st->dram_bytes = (uint64_t)llround(cs->dram_in_bytes + cs->dram_out_bytes);
    res->dram_bytes += st->dram_bytes;
    double busy = gr->compute_s + gr->dram_s > gr->comm_s ? gr->compute_s + gr->dram_s : gr->comm_s;
    if (busy > best) {
      best = busy;
      res->bottleneck_stage = gi;
    }
    res->activities += gr->acts;
    energy_parts e;
    group_energy(c, gr, res->period_s, &e, &res->flops_microbatch);
    st->energy_microbatch_j = energy_sum(&e);
    energy_add(&res->energy_microbatch, &e);
  }
  sim_result_set_batch(res, 1);
  fill_cores(c, res);
  /* link traffic per micro-batch on the XY routes, as the model accounts it (cost_stage_plan) */
  int nl = chip_n_links(c), worst_l = -1;
  double worst_b = 0;
  memcpy(s->link_bytes, j->link_bytes, (size_t)nl * sizeof *s->link_bytes);
  for (int k = 0; k < nl; k++) {
    double b = s->link_bytes[k] / chip_link_bandwidth(c, k);
    if (b > worst_b) {
      worst_b = b;
      worst_l = k;
    }
  }
  int slowest = 0; /* the model's slowest stage under contention */
  for (int gi = 1; gi < j->n_groups; gi++)
    if (j->groups[gi].model.contended_s > j->groups[slowest].model.contended_s) slowest = gi;
  const cost_stage *wt = &j->groups[slowest].model;
  res->model_period_s = j->model_period_s;
  res->model_binding = cost_binding_name(worst_b >= wt->contended_s ? (worst_l >= 4 * c->width * c->height ? COST_BIND_PORT
                                                                                                            : COST_BIND_LINK)
                                         : wt->send_s > wt->compute_s + wt->dram_s ? COST_BIND_SEND
                                         : wt->dram_s > wt->compute_s              ? COST_BIND_DRAM
                                                                                   : COST_BIND_COMPUTE);
  int used = 0;
  for (int k = 0; k < nl; k++)
    if (s->link_bytes[k] > 0) s->link_order[used++] = k;
  qsort_r(s->link_order, (size_t)used, sizeof *s->link_order, link_cmp, s->link_bytes);
  for (int k = 0; k < used && k < top; k++) {
    int l = s->link_order[k];
    sim_link_result *lr = &res->links[res->n_links++];
    chip_link_name(c, l, lr->name, sizeof lr->name);
    lr->bytes = (uint64_t)llround(s->link_bytes[l]);
    double bw = chip_link_bandwidth(c, l);
    lr->utilisation = period > 0 ? sim_round12(s->link_bytes[l] / (bw * period)) : 0;
  }
  return MP_OK;
}

/* The cache is 4-way set associative: a key may sit in any of the 4 entries of its set; a new
 * result replaces the set's oldest entry. */
#define CACHE_WAYS 4

static uint64_t cache_key(uint64_t gh, uint64_t ph, int M) {
  uint64_t h = fileio_hash(FILEIO_HASH_INIT, &gh, sizeof gh);
  h = fileio_hash(h, &ph, sizeof ph);
  return fileio_hash(h, &M, sizeof M);
}

static sim_cache_entry *cache_find(sim *s, const graph *g, const plan *p, uint64_t ph, int M) {
  if (!s->cache) return NULL;
  int sets = s->opt.cache_size / CACHE_WAYS > 0 ? s->opt.cache_size / CACHE_WAYS : 1;
  int ways = s->opt.cache_size < CACHE_WAYS ? s->opt.cache_size : CACHE_WAYS;
  sim_cache_entry *set = &s->cache[(cache_key(g->hash, ph, M) % (uint64_t)sets) * (uint64_t)ways];
  for (int w = 0; w < ways; w++) {
    sim_cache_entry *ce = &set[w];
    if (ce->valid && ce->graph_hash == g->hash && ce->plan_hash == ph && ce->M == M && ce->n_arranged == p->n_cores &&
        memcmp(ce->arranged, p->arranged, (size_t)p->n_cores * sizeof(int)) == 0)
      return ce;
  }
  return NULL;
}

static sim_cache_entry *cache_victim(sim *s, uint64_t gh, uint64_t ph, int M) {
  if (!s->cache) return NULL;
  int sets = s->opt.cache_size / CACHE_WAYS > 0 ? s->opt.cache_size / CACHE_WAYS : 1;
  int ways = s->opt.cache_size < CACHE_WAYS ? s->opt.cache_size : CACHE_WAYS;
  sim_cache_entry *set = &s->cache[(cache_key(gh, ph, M) % (uint64_t)sets) * (uint64_t)ways], *best = &set[0];
  for (int w = 0; w < ways; w++) {
    if (!set[w].valid) return &set[w];
    if (set[w].stamp < best->stamp) best = &set[w];
  }
  return best;
}

/* Measured op times apply to the graph they were loaded for only. */
mp_status sim_check_op_times(const sim *s, const graph *g, mp_error *err) {
  const optimes *ot = s->opt.op_times;
  if (ot && (ot->graph_hash != g->hash || ot->n_layers != g->n_ops))
    return err_at(err, MP_INPUT, ot->file, NULL, "the op times were loaded for another graph than '%s'", g->name);
  return MP_OK;
}

/* sim_evaluate_m, with the run's events added to tl when it is not NULL (then never cached). */
static mp_status evaluate(sim *s, const graph *g, const plan *p, int M, timeline *tl, sim_result *res, mp_error *err) {
  memset(res, 0, sizeof *res);
  const chip *c = s->chip;
  if (M < 0)
    return err_set(err, MP_USAGE, "sim: the number of micro-batches must be at least 1, or 0 for steady state (got %d)",
                   M);
  if (p->n_cores != c->n_cores)
    return err_set(err, MP_INPUT, "sim: the plan is for %d cores but chip '%s' has %d", p->n_cores, c->name,
                   c->n_cores);
  if (p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan covers %d layers but graph '%s' has %d", p->n_layers, g->name,
                   g->n_ops);
  mp_status ck = sim_check_op_times(s, g, err);
  if (ck != MP_OK) return ck;
  uint64_t ph = plan_hash(p);
  sim_cache_entry *ce = tl ? NULL : cache_find(s, g, p, ph, M);
  if (ce) {
    mp_status st = result_copy(&ce->res, res, s->chip, err);
    if (st != MP_OK) return st;
    res->cached = 1;
    s->stats.evaluations++;
    s->stats.cache_hits++;
    return MP_OK;
  }
  job *j = NULL;
  mp_status st = sim_job_from_plan(s, g, p, M, &j, err);
  if (st == MP_OK) {
    j->tl = tl;
    st = sim_engine_run(s, j, err);
  }
  if (st == MP_OK) {
    st = sim_job_result(s, j, res, err);
    if (st == MP_OK && j->tl_failed) st = err_nomem(err);
    if (st == MP_OK && s->opt.op_times) res->op_times_overridden = s->opt.op_times->n_overridden;
    if (st == MP_OK) sim_result_set_batch(res, graph_batch(g));
  }
  if (st == MP_OK) {
    s->stats.evaluations++;
    s->stats.activities += res->activities;
    ce = tl ? NULL : cache_victim(s, g->hash, ph, M);
    if (ce) {
      int *arr = malloc((size_t)p->n_cores * sizeof *arr);
      sim_result copy;
      if (arr && result_copy(res, &copy, NULL, NULL) == MP_OK) {
        if (ce->valid) {
          free(ce->arranged);
          sim_result_clear(&ce->res);
        }
        memcpy(arr, p->arranged, (size_t)p->n_cores * sizeof *arr);
        ce->valid = 1;
        ce->stamp = ++s->cache_stamp;
        ce->graph_hash = g->hash;
        ce->plan_hash = ph;
        ce->M = M;
        ce->n_arranged = p->n_cores;
        ce->arranged = arr;
        ce->res = copy;
      } else {
        free(arr); /* no room to cache: the result itself is fine */
      }
    }
  }
  sim_job_free(j);
  return st;
}

mp_status sim_evaluate_m(sim *s, const graph *g, const plan *p, int M, sim_result *res, mp_error *err) {
  return evaluate(s, g, p, M, NULL, res, err);
}

mp_status sim_evaluate(sim *s, const graph *g, const plan *p, sim_result *res, mp_error *err) {
  return sim_evaluate_m(s, g, p, s->opt.microbatches, res, err);
}

/* Empties the cache (every entry invalid, nothing it owned left). */
static void cache_clear(sim *s) {
  sim_train_cache_clear(s, 0);
  if (!s->cache) return;
  for (int i = 0; i < s->opt.cache_size; i++)
    if (s->cache[i].valid) {
      free(s->cache[i].arranged);
      sim_result_clear(&s->cache[i].res);
    }
  memset(s->cache, 0, (size_t)s->opt.cache_size * sizeof *s->cache);
}

mp_status sim_checkpoint(sim *s, double *clock, mp_error *err) {
  cache_clear(s);
  return sim_engine_clock(s, -1.0, clock, err);
}

mp_status sim_restore(sim *s, double clock, mp_error *err) {
  if (!(clock >= 0.0 && clock <= SIM_CLOCK_MAX))
    return err_set(err, MP_INPUT, "sim: a clock of %g s is not one a run reaches (0 to %g s)", clock, SIM_CLOCK_MAX);
  cache_clear(s);
  double now;
  mp_status st = sim_engine_clock(s, -1.0, &now, err);
  if (st != MP_OK) return st;
  if (now > clock)
    return err_set(err, MP_INPUT, "sim: the clock to restore (%.17g s) is earlier than the engine's (%.17g s)", clock,
                   now);
  return sim_engine_clock(s, clock, &now, err);
}

int sim_route_links(sim *s, int a, int b, char (*names)[48], int max) {
  if (a < 0 || b < 0 || a >= s->chip->n_cores || b >= s->chip->n_cores || a == b || max < 0) return -1;
  return sim_engine_route(s, a, b, names, max);
}

void sim_free(sim *s) {
  if (!s) return;
  if (s->thread_started) {
    sim_engine_stop(s);
    if (s->opt.paje_file && rename(s->paje_part, s->opt.paje_file) != 0) remove(s->paje_part);
  }
  cache_clear(s);
  sim_train_cache_clear(s, 1);
  free(s->cache);
  free(s->hosts);
  free(s->dram_hosts);
  free(s->link_bytes);
  free(s->link_order);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

/* ---- JSON ------------------------------------------------------------------------------------- */

const char *sim_period_kind_name(sim_period_kind k) {
  return k == SIM_PERIOD_STEADY ? "steady" : k == SIM_PERIOD_UNSETTLED ? "unsettled" : "fixed";
}

static int add_pair(cJSON *o, const char *key, int first, int n) {
  int v[2] = {first, first + n - 1};
  cJSON *a = cJSON_CreateIntArray(v, 2);
  if (a && cJSON_AddItemToObject(o, key, a)) return 0;
  cJSON_Delete(a); /* not o's unless added */
  return -1;
}

cJSON *sim_result_to_json(const sim_result *r) {
  char hex[17];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddNumberToObject(o, "samples_per_s", r->samples_per_s) ||
      !cJSON_AddNumberToObject(o, "microbatches_per_s", r->microbatches_per_s) ||
      !cJSON_AddNumberToObject(o, "batch", r->batch) ||
      !cJSON_AddNumberToObject(o, "period_s", r->period_s) ||
      !cJSON_AddNumberToObject(o, "makespan_s", r->makespan_s) ||
      !cJSON_AddNumberToObject(o, "latency_s", r->latency_s) ||
      !cJSON_AddNumberToObject(o, "microbatches", r->microbatches) ||
      !cJSON_AddStringToObject(o, "period_kind", sim_period_kind_name(r->period_kind)) ||
      !cJSON_AddNumberToObject(o, "warmup_microbatches", r->warmup_microbatches) ||
      !cJSON_AddNumberToObject(o, "cycle", r->cycle) ||
      !cJSON_AddNumberToObject(o, "bottleneck_stage", r->bottleneck_stage) ||
      !cJSON_AddNumberToObject(o, "model_period_s", r->model_period_s) ||
      !cJSON_AddStringToObject(o, "model_binding", r->model_binding ? r->model_binding : "") ||
      !cJSON_AddBoolToObject(o, "feasible", r->feasible) || !jsonio_add_u64(o, "dram_bytes", r->dram_bytes) ||
      !cJSON_AddNumberToObject(o, "activities", (double)r->activities) ||
      !cJSON_AddStringToObject(o, "graph_hash", fileio_hash_hex(r->graph_hash, hex)) ||
      !cJSON_AddStringToObject(o, "plan_hash", fileio_hash_hex(r->plan_hash, hex)) ||
      !cJSON_AddStringToObject(o, "chip_hash", fileio_hash_hex(r->chip_hash, hex)))
    goto fail;
  if (r->has_energy && !energy_summary_to_json(o, &r->energy)) goto fail;
  if (r->op_times_overridden > 0 && !cJSON_AddNumberToObject(o, "op_times_overridden", r->op_times_overridden))
    goto fail;
  cJSON *stages = cJSON_AddArrayToObject(o, "stages");
  if (!stages) goto fail;
  for (int i = 0; i < r->n_stages; i++) {
    const sim_stage_result *st = &r->stages[i];
    cJSON *x = cJSON_CreateObject();
    if (!x) goto fail;
    cJSON_AddItemToArray(stages, x);
    if (!cJSON_AddNumberToObject(x, "stage", i) || add_pair(x, "layers", st->first_layer, st->n_layers) ||
        add_pair(x, "cores", st->first_core, st->n_cores) || !cJSON_AddNumberToObject(x, "compute_s", st->compute_s) ||
        !cJSON_AddNumberToObject(x, "comm_s", st->comm_s) || !cJSON_AddNumberToObject(x, "dram_s", st->dram_s) ||
        !cJSON_AddNumberToObject(x, "idle_s", st->idle_s) ||
        !cJSON_AddNumberToObject(x, "analytical_t_s", st->analytical_t_s) ||
        !jsonio_add_u64(x, "sram_bytes", st->sram_bytes) || !jsonio_add_u64(x, "dram_bytes", st->dram_bytes) ||
        !cJSON_AddBoolToObject(x, "fits", st->fits) || !cJSON_AddNumberToObject(x, "sends", st->n_sends) ||
        !cJSON_AddNumberToObject(x, "recvs", st->n_recvs) ||
        (r->has_energy && !cJSON_AddNumberToObject(x, "energy_j", st->energy_j)))
      goto fail;
  }
  cJSON *cores = cJSON_AddArrayToObject(o, "cores");
  if (!cores) goto fail;
  for (int k = 0; k < r->n_cores; k++) {
    cJSON *x = cJSON_CreateObject();
    if (!x) goto fail;
    cJSON_AddItemToArray(cores, x);
    if (!cJSON_AddNumberToObject(x, "core", k) || !jsonio_add_u64(x, "sram_bytes", r->cores[k].sram_bytes) ||
        !jsonio_add_u64(x, "sram_capacity", r->cores[k].sram_capacity) ||
        !cJSON_AddBoolToObject(x, "fits", r->cores[k].fits))
      goto fail;
  }
  cJSON *links = cJSON_AddArrayToObject(o, "links");
  if (!links) goto fail;
  for (int k = 0; k < r->n_links; k++) {
    cJSON *x = cJSON_CreateObject();
    if (!x) goto fail;
    cJSON_AddItemToArray(links, x);
    if (!cJSON_AddStringToObject(x, "link", r->links[k].name) || !jsonio_add_u64(x, "bytes", r->links[k].bytes) ||
        !cJSON_AddNumberToObject(x, "utilisation", r->links[k].utilisation))
      goto fail;
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}


/* The timeline's SRAM baseline: each core of a stage keeps its share of the stage's weights resident, less
 * what it streams from DRAM every micro-batch (cost_core_dram); the activations come and go with the
 * run's events (timeline.h). */
mp_status sim_timeline_resident(const chip *c, const cost_stage *cs, timeline *tl, mp_error *err) {
  double w = cs->weight_bytes / cs->n_cores;
  mp_status st = MP_OK;
  for (int k = cs->first_core; st == MP_OK && k < cs->first_core + cs->n_cores; k++) {
    double in, out;
    cost_core_dram(cs, (double)c->cores[k].sram_bytes, &in, &out);
    timeline_event e = {.kind = TIMELINE_SRAM, .first_core = k, .dram_port = -1, .microbatch = -1,
                        .bytes = (uint64_t)llround(w - (in < w ? in : w))};
    if (e.bytes > 0) st = timeline_add(tl, &e, err);
  }
  return st;
}

mp_status sim_evaluate_timeline(sim *s, const graph *g, const plan *p, int microbatches, timeline *tl, sim_result *res,
                                mp_error *err) {
  cost_result *cr = NULL;
  mp_status st = evaluate(s, g, p, microbatches, tl, res, err);
  if (st == MP_OK) st = cost_evaluate(g, s->chip, p, &cr, err);
  for (int i = 0; st == MP_OK && i < cr->n_stages; i++) st = sim_timeline_resident(s->chip, &cr->stages[i], tl, err);
  cost_result_free(cr);
  /* A failed evaluation leaves no result, like sim_evaluate_m, also when the run's events (evaluate's
   * tl_failed) or the SRAM counters could not all be added to the timeline. */
  if (st != MP_OK) sim_result_clear(res);
  return st;
}
