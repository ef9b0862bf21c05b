/* sim_transfer: the simulator's transfers as SimGrid parallel tasks (ptask_L07), run by the engine's
 * actors (sim_engine.c) for inference and training jobs alike: a two-host transfer (a Send, a gradient),
 * a group's all-gather over its snake chain, and a group's DRAM streams.  An all-gather is one ptask per
 * block of SIM_GATHER_BLOCK links of its chain, each over the links that can bind (sim_int.h,
 * "All-gathers"); its plan (sim_gather_plan) is made once per job from the links the job's other
 * transfers cross (sim_mark_route).  Every function here runs on the engine's thread, except the plan's
 * set-up (sim_gather_init/_free/_plan, sim_mark_route), which touches no SimGrid state. */
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>

#include "sim_int.h"

void sim_ptask2(sg_host_t from, sg_host_t to, double bytes) {
  sg_host_t h[2] = {from, to};
  double flops[2] = {0, 0};
  double b[4] = {0, bytes, 0, 0};
  sg_actor_parallel_execute(2, h, flops, b);
}

/* Index of core `core` among the n hosts of h (added when new). */
static int host_slot(sim *s, sg_host_t *h, int *n, int core) {
  for (int i = 0; i < *n; i++)
    if (h[i] == s->hosts[core]) return i;
  h[*n] = s->hosts[core];
  return (*n)++;
}

/* Blocks of a chain of c cores: SIM_GATHER_BLOCK links each, the last shorter. */
static int gather_blocks(int c) { return (c - 2) / SIM_GATHER_BLOCK + 1; }

int sim_gather_init(sim_gather *g, int first_core, int n_cores) {
  size_t blocks = (size_t)gather_blocks(n_cores);
  *g = (sim_gather){.first_core = first_core, .n_cores = n_cores};
  g->keep = malloc(2 * ((size_t)n_cores - 1));
  g->matrix = malloc(blocks * SIM_GATHER_SCRATCH * sizeof *g->matrix);
  g->hosts = malloc(blocks * (SIM_GATHER_BLOCK + 1) * sizeof *g->hosts);
  g->execs = malloc(blocks * sizeof *g->execs);
  if (!g->keep || !g->matrix || !g->hosts || !g->execs) return -1;
  memset(g->keep, 1, 2 * ((size_t)n_cores - 1));
  return 0;
}

void sim_gather_free(sim_gather *g) {
  free(g->keep);
  free(g->matrix);
  free(g->hosts);
  free(g->execs);
}

static void mark_link(void *ctx, int link) { ((unsigned char *)ctx)[link] = 1; }

void sim_mark_route(const chip *c, int from, int to, unsigned char *busy) {
  if (from != to) chip_route(c, from, to, mark_link, busy);
}

static void set_link(void *ctx, int link) { *(int *)ctx = link; }

/* Directed chain link d of g (2k: k->k+1, 2k+1: k+1->k): its load in units of bytes / c, and its ends. */
static int chain_load(int c, int d) { return d % 2 ? c - 1 - d / 2 : d / 2 + 1; }
static int chain_from(const sim_gather *g, int d) { return g->first_core + d / 2 + d % 2; }
static int chain_to(const sim_gather *g, int d) { return g->first_core + d / 2 + 1 - d % 2; }

void sim_gather_plan(const chip *c, sim_gather *g, const unsigned char *busy) {
  int n = g->n_cores, quiet_block = -1, quiet_top = 0;
  memset(g->keep, busy ? 0 : 1, 2 * ((size_t)n - 1));
  if (!busy) return;
  for (int k0 = 0; k0 + 1 < n; k0 += SIM_GATHER_BLOCK) { /* links k0 .. k1 - 1 */
    int k1 = k0 + SIM_GATHER_BLOCK < n - 1 ? k0 + SIM_GATHER_BLOCK : n - 1, top = 0, crossed = 0;
    for (int d = 2 * k0; d < 2 * k1; d++) {
      int link = -1;
      chip_route(c, chain_from(g, d), chain_to(g, d), set_link, &link);
      g->keep[d] = busy[link];
      crossed |= g->keep[d];
      if (chain_load(n, d) > top) top = chain_load(n, d);
    }
    if (crossed) {
      for (int d = 2 * k0; d < 2 * k1; d++) g->keep[d] |= chain_load(n, d) == top;
    } else if (top > quiet_top) {
      quiet_top = top;
      quiet_block = k0;
    }
  }
  if (quiet_block < 0) return;
  int k1 = quiet_block + SIM_GATHER_BLOCK < n - 1 ? quiet_block + SIM_GATHER_BLOCK : n - 1;
  for (int d = 2 * quiet_block; d < 2 * k1; d++) g->keep[d] = chain_load(n, d) == quiet_top;
}

void sim_all_gather(sim *s, sim_gather *g, double bytes) {
  int c = g->n_cores;
  if (s->opt.fast_gather) { /* the two busiest links of the chain, (c-2)->(c-1) and 1->0, on their hosts only */
    double share = bytes * (double)(c - 1) / (double)c, b[16] = {0}, flops[4] = {0};
    sg_host_t h[4];
    int n = 0, from = host_slot(s, h, &n, g->first_core + c - 2), to = host_slot(s, h, &n, g->first_core + c - 1);
    b[from * 4 + to] += share;
    from = host_slot(s, h, &n, g->first_core + 1);
    to = host_slot(s, h, &n, g->first_core);
    b[from * 4 + to] += share;
    double m[16] = {0}; /* b is 4 wide: pack it to n wide */
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) m[i * n + j] = b[i * 4 + j];
    sg_actor_parallel_execute(n, h, flops, m);
    return;
  }
  /* per block, one ptask over the ends of its kept links (host k0 + i is hosts slot[i]), all at once */
  int n = 0;
  for (int k0 = 0; k0 + 1 < c; k0 += SIM_GATHER_BLOCK) {
    int k1 = k0 + SIM_GATHER_BLOCK < c - 1 ? k0 + SIM_GATHER_BLOCK : c - 1, h = 0, slot[SIM_GATHER_BLOCK + 1];
    sg_host_t *hosts = g->hosts + (size_t)n * (SIM_GATHER_BLOCK + 1);
    for (int k = k0; k <= k1; k++) {
      int used = (k < k1 && (g->keep[2 * k] || g->keep[2 * k + 1])) ||
                 (k > k0 && (g->keep[2 * k - 2] || g->keep[2 * k - 1])); /* an end of link k or k - 1 */
      slot[k - k0] = used ? h : -1;
      if (used) hosts[h++] = s->hosts[g->first_core + k];
    }
    if (h == 0) continue;
    double *m = g->matrix + (size_t)n * SIM_GATHER_SCRATCH;
    memset(m, 0, ((size_t)h * (size_t)h + (size_t)h) * sizeof *m);
    for (int k = k0; k < k1; k++) {
      int a = slot[k - k0], b = slot[k - k0 + 1];
      if (g->keep[2 * k]) m[a * h + b] = bytes * (double)(k + 1) / (double)c;
      if (g->keep[2 * k + 1]) m[b * h + a] = bytes * (double)(c - 1 - k) / (double)c;
    }
    g->execs[n] = sg_actor_parallel_exec_init(h, hosts, m + (size_t)h * (size_t)h, m);
    sg_exec_start(g->execs[n++]);
  }
  for (int i = 0; i < n; i++) sg_exec_wait(g->execs[i]);
}

int sim_streams_init(sim_streams *st, const sim *s, int first_core, int n_cores) {
  const chip *c = s->chip;
  size_t n = (size_t)n_cores;
  *st = (sim_streams){.n_cores = n_cores};
  st->member = malloc(n * sizeof *st->member);
  st->first = malloc((n + 1) * sizeof *st->first);
  st->port_host = malloc(n * sizeof *st->port_host);
  st->core_host = malloc(n * sizeof *st->core_host);
  st->hosts = malloc(2 * n * sizeof *st->hosts);
  st->execs = malloc(n * sizeof *st->execs);
  int *batch = malloc(n * sizeof *batch); /* per core: its batch */
  int rc = -1;
  if (!st->member || !st->first || !st->port_host || !st->core_host || !st->hosts || !st->execs || !batch)
    goto cleanup;
  for (int k = 0; k < n_cores; k++) {
    sg_host_t h = s->dram_hosts[chip_nearest_dram(c, first_core + k)];
    int b = s->opt.fast_streams ? 0 : st->n_batches; /* batches in the order of their first core */
    while (b < st->n_batches && st->port_host[b] != h) b++;
    if (b == st->n_batches) st->port_host[st->n_batches++] = h;
    batch[k] = b;
    st->core_host[k] = s->hosts[first_core + k];
  }
  memset(st->first, 0, (n + 1) * sizeof *st->first); /* a counting sort of the cores by batch */
  for (int k = 0; k < n_cores; k++) st->first[batch[k] + 1]++;
  size_t scratch = 0;
  for (int b = 0; b < st->n_batches; b++) {
    size_t m = (size_t)st->first[b + 1] + 1;
    scratch += m * m + m;
    st->first[b + 1] += st->first[b];
  }
  for (int k = 0; k < n_cores; k++) st->member[st->first[batch[k]]++] = k;
  for (int b = st->n_batches; b > 0; b--) st->first[b] = st->first[b - 1]; /* each advanced to the next's start */
  st->first[0] = 0;
  if ((st->matrix = malloc(scratch * sizeof *st->matrix))) rc = 0;
cleanup:
  free(batch);
  return rc;
}

void sim_streams_free(sim_streams *st) {
  free(st->member);
  free(st->first);
  free(st->port_host);
  free(st->core_host);
  free(st->hosts);
  free(st->matrix);
  free(st->execs);
}

int sim_dram_streams(sim_streams *st, const double *bytes, int write) {
  sg_host_t *h = st->hosts;
  double *x = st->matrix;
  int n = 0;
  for (int b = 0; b < st->n_batches; b++) {
    int m = 1;
    h[0] = st->port_host[b];
    for (int i = st->first[b]; i < st->first[b + 1]; i++)
      if (bytes[st->member[i]] > 0) h[m++] = st->core_host[st->member[i]];
    if (m == 1) continue;
    size_t mm = (size_t)m * (size_t)m;
    memset(x, 0, (mm + (size_t)m) * sizeof *x);
    for (int i = st->first[b], j = 1; i < st->first[b + 1]; i++) /* host j: the port (0) to it, or back */
      if (bytes[st->member[i]] > 0) x[write ? (size_t)j++ * (size_t)m : (size_t)j++] = bytes[st->member[i]];
    st->execs[n] = sg_actor_parallel_exec_init(m, h, x + mm, x);
    sg_exec_start(st->execs[n++]);
    h += m;
    x += mm + (size_t)m;
  }
  for (int i = 0; i < n; i++) sg_exec_wait(st->execs[i]);
  return n;
}
