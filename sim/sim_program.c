/* sim_program: compiling an evaluation into the job the engine runs (sim_int.h), from a plan or from a
 * recorded trace.
 *
 * From a plan.  The plan is rewritten with Send/Recv nodes (split.h).  Each group's layers are cut into
 * segments: runs of consecutive layers that wait for the same received tensors (directly or through
 * earlier layers of the group), cut after a layer whose output is sent, so within a segment nothing
 * waits.  A segment runs as one execution of its layers' work (opcost.h: their flops, or on a chip with a
 * core model each op's share timed on it, as flops at peak) at the group's total speed (on the
 * group's first core, scaled by that core's share) followed by one all-gather of the total output
 * bytes A of its layers (ptasks over the group's cores along the snake chain: link k->k+1 carries
 * (k+1)/c of A and k+1->k the rest, so the busiest link carries (c-1)/c * A; the links that cannot bind
 * are left out, sim_int.h "All-gathers"), none in a one-core group;
 * with no contention that is exactly the model's per-layer sum.  A send is a ptask of gamma * bytes
 * from the group's last core to the destination group's first core on the XY route; a tensor read by
 * several later groups is sent once to each (one Send/Recv pair per destination group), as the model
 * counts it.  Graph inputs are fed by the host to every group that reads them and cost nothing.
 *
 * DRAM.  When a group's per-core share s_i = W_i/c_i + max a_j exceeds a core's SRAM by e, the core
 * streams e every micro-batch through its nearest DRAM port (chip_nearest_dram): before the first
 * segment it reads e (its excess weights, W_i/c_i at most, then the spilled activations it reloads),
 * after the last segment it writes the spill, max(0, e - W_i/c_i), back (cost_core_dram).  Each core's transfer is its
 * own two-host ptask from the port's host over the port's down link and the XY route (or back over the
 * up link), or with sim_options.fast_streams the cores of a port share one (sim_int.h, "DRAM streams"),
 * all of a group's started at once; the group waits for the last.  The port's links have the
 * port's bandwidth, so a stream is limited by whichever of them and the NoC links it crosses is busiest.
 * A chip without DRAM ports streams nothing.
 *
 * Sharing.  SimGrid's ptask model (L07) splits a link's bandwidth equally between the activities on it
 * (its fair-bottleneck solver, not the weighted max-min of plain transfers), each activity running at the
 * pace its most contended link allows; the analytical model treats each link as a processor-sharing
 * queue to match (cost.h, cost_contended).
 *
 * From a trace.  Micro-batch 0 of each group defines its program (every other micro-batch must repeat
 * it): the receives before a compute are its needs, the sends after it its posts, the DRAM reads come
 * before the first compute.  The actions keep their recorded flops and bytes; the chip's speeds,
 * transfer factors and DRAM ports are the replay chip's, and the stage's analytical figures come from
 * the group's recorded sums through the model's own formulas (cost_stage_complete).  So do its DRAM
 * streams, as in a plan's job: the recorded DRAM reads say what the recording chip streamed, while a
 * chip with less SRAM streams more.  On the chip it was recorded on a trace compiles to the very job
 * its plan does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opcost.h"
#include "sim_int.h"
#include "split.h"

void sim_job_free(job *j) {
  if (!j) return;
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    for (int k = 0; gr->segs && k < gr->n_segs; k++) {
      free(gr->segs[k].needs);
      free(gr->segs[k].deps);
    }
    free(gr->segs);
    free(gr->sends);
    free(gr->recvs);
    free(gr->dram_in);
    free(gr->dram_out);
    free(gr->dram_port);
    sim_streams_free(&gr->streams);
    sim_gather_free(&gr->gather);
    free(gr->done);
    free(gr->left);
    free(gr->sends_left);
    free(gr->arrived);
    free(gr->mb_compute);
    free(gr->mb_dram);
    free(gr->mb_comm);
    free(gr->ev_t);
    free(gr->queue);
  }
  free(j->groups);
  free(j->link_bytes);
  free(j->groups_done);
  free(j->c);
  free(j->start_t);
  free(j);
}

/* The DRAM streams of a group whose share does not fit every core (cost_core_dram, from its
 * analytical figures, so that a plan and its trace stream alike on any chip): each core reads its
 * excess from its nearest port before the micro-batch's first segment and writes its spilled
 * activation back after the last, each core's transfer its own (a core has its own DMA engine) or
 * with sim_options.fast_streams the cores of a port in one (sim_int.h, "DRAM streams").
 * Nothing on a chip without DRAM ports.  0, or -1 when out of memory. */
static int setup_dram(const sim *s, jgroup *gr) {
  const chip *c = s->chip;
  const cost_stage *cs = &gr->model;
  int n = gr->n_cores;
  if (cs->fits || c->n_dram == 0) return 0;
  gr->dram_in = calloc((size_t)n, sizeof *gr->dram_in);
  gr->dram_out = calloc((size_t)n, sizeof *gr->dram_out);
  gr->dram_port = malloc((size_t)n * sizeof *gr->dram_port);
  if (!gr->dram_in || !gr->dram_out || !gr->dram_port || sim_streams_init(&gr->streams, s, gr->first_core, n) != 0)
    return -1;
  for (int k = 0; k < n; k++) {
    int core = gr->first_core + k;
    cost_core_dram(cs, (double)c->cores[core].sram_bytes, &gr->dram_in[k], &gr->dram_out[k]);
    gr->dram_port[k] = chip_nearest_dram(c, core);
  }
  return 0;
}

/* The plan terms of every group's analytical figures (cost_stage_plan: its gathering segments and
 * its Sends), the job's link loads, and the model's period with contention (cost_contended).  0, or -1
 * when out of memory. */
static int plan_terms(cost_model *cm, const chip *c, job *j) {
  int n = j->n_groups, rc = -1;
  j->link_bytes = calloc((size_t)chip_n_links(c), sizeof *j->link_bytes);
  int *off = malloc(((size_t)n + 1) * sizeof *off);
  cost_stage *stages = malloc(((size_t)n + 1) * sizeof *stages);
  cost_transfer *x = NULL;
  if (!j->link_bytes || !off || !stages) goto cleanup;
  off[0] = 0;
  for (int gi = 0; gi < n; gi++) off[gi + 1] = off[gi] + j->groups[gi].n_sends;
  if (!(x = calloc((size_t)off[n] + 1, sizeof *x))) goto cleanup; /* zeroed: GCC cannot see every entry set */
  for (int gi = 0; gi < n; gi++) {
    jgroup *gr = &j->groups[gi];
    int segs = 0;
    for (int k = 0; k < gr->n_segs; k++) segs += gr->segs[k].gather > 0;
    for (int k = 0; k < gr->n_sends; k++) x[off[gi] + k] = (cost_transfer){gr->sends[k].raw_bytes, gr->sends[k].dst_core};
    cost_stage_plan(cm, &gr->model, segs, x + off[gi], gr->n_sends, j->link_bytes);
    stages[gi] = gr->model;
  }
  j->model_period_s = cost_contended(cm, stages, n, x, off, j->link_bytes);
  if (j->model_period_s < 0) goto cleanup;
  for (int gi = 0; gi < n; gi++) j->groups[gi].model.contended_s = stages[gi].contended_s;
  rc = 0;
cleanup:
  free(off);
  free(stages);
  free(x);
  return rc;
}

/* Calls fn(ctx, link) on every link of group gr's snake chain (both directions, chain 1), of its
 * Sends' routes (sends 1) or of its DRAM streams' routes (dram 1). */
static void group_links(const chip *c, const jgroup *gr, int chain, int sends, int dram, void *ctx,
                        void (*fn)(void *, int)) {
  for (int k = 0; chain && k + 1 < gr->n_cores; k++) {
    chip_route(c, gr->first_core + k, gr->first_core + k + 1, fn, ctx);
    chip_route(c, gr->first_core + k + 1, gr->first_core + k, fn, ctx);
  }
  for (int k = 0; sends && k < gr->n_sends; k++)
    if (gr->sends[k].bytes > 0 && gr->last_core != gr->sends[k].dst_core)
      chip_route(c, gr->last_core, gr->sends[k].dst_core, fn, ctx);
  for (int k = 0; dram && gr->dram_port && k < gr->n_cores; k++) {
    if (gr->dram_in[k] > 0) chip_route(c, CHIP_PORT(gr->dram_port[k]), gr->first_core + k, fn, ctx);
    if (gr->dram_out[k] > 0) chip_route(c, gr->first_core + k, CHIP_PORT(gr->dram_port[k]), fn, ctx);
  }
}

static void mark_busy(void *ctx, int link) { ((unsigned char *)ctx)[link] = 1; }

/* The links of job j's all-gathers (sim_int.h, "All-gathers"): those its Sends and DRAM streams may
 * cross, and the busiest.  0, or -1 when out of memory. */
static int plan_gathers(const sim *s, job *j) {
  const chip *c = s->chip;
  unsigned char *busy = s->opt.full_gather ? NULL : calloc((size_t)chip_n_links(c), 1);
  if (!s->opt.full_gather && !busy) return -1;
  for (int g = 0; busy && g < j->n_groups; g++) group_links(c, &j->groups[g], 0, 1, 1, busy, mark_busy);
  for (int g = 0; g < j->n_groups; g++)
    if (j->groups[g].n_cores > 1) sim_gather_plan(c, &j->groups[g].gather, busy);
  free(busy);
  return 0;
}

/* Which server uses each link (sim_int.h, "Private transfers"): LINK_FREE, a server's number (2g for
 * group g's actor, 2g + 1 for its sender), or LINK_SHARED. */
enum { LINK_FREE = -1, LINK_SHARED = -2 };

typedef struct link_use {
  int *server; /* per link */
  int me;      /* the server marking, or the one asking */
  int other;   /* asking: a link of the route is another server's too */
} link_use;

static void use_link(void *ctx, int link) {
  link_use *u = ctx;
  int *x = &u->server[link];
  *x = *x == LINK_FREE || *x == u->me ? u->me : LINK_SHARED;
}

static void ask_link(void *ctx, int link) {
  link_use *u = ctx;
  u->other |= u->server[link] != u->me;
}

/* Marks job j's private transfers (sim_int.h, "Private transfers"), none with rerun_private or a Paje
 * trace; every kept time unknown.  0, or -1 when out of memory. */
static int plan_private(const sim *s, job *j) {
  const chip *c = s->chip;
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    gr->private_gather = gr->private_dram = 0;
    gr->dram_solo_s[0] = gr->dram_solo_s[1] = -1;
    for (int k = 0; k < gr->n_segs; k++) gr->segs[k].solo_s = -1;
    for (int k = 0; k < gr->n_sends; k++) {
      gr->sends[k].private = 0;
      gr->sends[k].solo_s = -1;
    }
  }
  if (s->opt.rerun_private || s->opt.paje_file) return 0;
  link_use u = {.server = malloc((size_t)chip_n_links(c) * sizeof *u.server)};
  if (!u.server) return -1;
  for (int k = 0; k < chip_n_links(c); k++) u.server[k] = LINK_FREE;
  for (int g = 0; g < j->n_groups; g++) {
    u.me = 2 * g;
    group_links(c, &j->groups[g], 1, 0, 1, &u, use_link);
    u.me = 2 * g + 1;
    group_links(c, &j->groups[g], 0, 1, 0, &u, use_link);
  }
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    u.me = 2 * g;
    u.other = 0;
    group_links(c, gr, 1, 0, 0, &u, ask_link);
    gr->private_gather = gr->n_cores > 1 && !u.other;
    u.other = 0;
    group_links(c, gr, 0, 0, 1, &u, ask_link);
    gr->private_dram = gr->dram_port && !u.other;
    u.me = 2 * g + 1;
    for (int k = 0; k < gr->n_sends; k++) {
      jsend *sd = &gr->sends[k];
      u.other = 0;
      if (gr->last_core != sd->dst_core) chip_route(c, gr->last_core, sd->dst_core, ask_link, &u);
      sd->private = !u.other;
    }
  }
  free(u.server);
  return 0;
}

/* A steady run's first window (sim_int.h): by Little's law, the micro-batches its servers (groups and
 * senders) hold at the model's period, plus one queued before the bottleneck and one for what the model
 * does not see; 2p + 2 when the model has no period. */
static int first_window(const job *j) {
  if (!(j->model_period_s > 0)) return sim_job_wmax(j);
  double busy = 0;
  for (int g = 0; g < j->n_groups; g++) {
    const cost_stage *m = &j->groups[g].model;
    busy += m->compute_s + m->dram_s + m->send_s;
  }
  double w = ceil(busy / j->model_period_s) + 2;
  return w < sim_job_wmax(j) ? (int)w : sim_job_wmax(j);
}

/* Every run-state array and counter of job j (whose arrays prepare_run allocated) as before its first
 * micro-batch; the window and whether to retry stay. */
static void clear_run(job *j) {
  size_t n = (size_t)j->M;
  j->limit = j->M;
  j->cap_now = j->cap;
  j->n_complete = 0;
  j->warmup = -1;
  j->cycle = j->closed_at = 0;
  memset(j->groups_done, 0, n * sizeof *j->groups_done);
  memset(j->c, 0, n * sizeof *j->c);
  for (size_t m = 0; m < n; m++) j->start_t[m] = -1;
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    memset(gr->done, 0, n * (size_t)gr->n_segs * sizeof *gr->done);
    memset(gr->mb_compute, 0, n * sizeof *gr->mb_compute);
    memset(gr->mb_dram, 0, n * sizeof *gr->mb_dram);
    memset(gr->mb_comm, 0, n * sizeof *gr->mb_comm);
    memset(gr->arrived, 0, (size_t)gr->n_recvs * sizeof *gr->arrived);
    if (gr->ev_t)
      for (size_t k = 0; k < n * (size_t)gr->n_ev; k++) gr->ev_t[k] = -1;
    for (size_t m = 0; m < n; m++) {
      gr->left[m] = gr->n_segs;
      gr->sends_left[m] = gr->n_sends;
    }
    gr->q_head = gr->q_tail = 0;
    gr->waiting = 0;
    gr->window_bound = 0;
    for (int q = 0; q < gr->n_segs; q++)
      if (gr->segs[q].n_needs == 0) gr->window_bound = 1;
    for (int k = 0; k < 2; k++) {
      gr->wait_from[k] = -1;
      gr->busy_since[k] = 0;
    }
  }
}

/* Array p resized to n entries of `size` bytes (its contents are clear_run's to set), or p itself, with
 * *failed set, when out of memory (so that sim_job_free still frees it). */
static void *resized(void *p, size_t n, size_t size, int *failed) {
  void *q = realloc(p, n * size + 1); /* + 1: never a zero-sized request */
  if (q) return q;
  *failed = 1;
  return p;
}

/* The per-micro-batch arrays of job j for its cap: M micro-batches (job.M).  0, or -1 when out of
 * memory. */
static int size_arrays(job *j) {
  j->M = j->fixed ? j->cap : j->cap + (j->cap + 1) / 2 + sim_job_wmax(j);
  size_t n = (size_t)j->M;
  int failed = 0;
  j->groups_done = resized(j->groups_done, n, sizeof *j->groups_done, &failed);
  j->c = resized(j->c, n, sizeof *j->c, &failed);
  j->start_t = resized(j->start_t, n, sizeof *j->start_t, &failed);
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    gr->done = resized(gr->done, n * (size_t)gr->n_segs, sizeof *gr->done, &failed);
    gr->left = resized(gr->left, n, sizeof *gr->left, &failed);
    gr->sends_left = resized(gr->sends_left, n, sizeof *gr->sends_left, &failed);
    gr->mb_compute = resized(gr->mb_compute, n, sizeof *gr->mb_compute, &failed);
    gr->mb_dram = resized(gr->mb_dram, n, sizeof *gr->mb_dram, &failed);
    gr->mb_comm = resized(gr->mb_comm, n, sizeof *gr->mb_comm, &failed);
    gr->queue = resized(gr->queue, (size_t)gr->n_sends * n + 1, sizeof *gr->queue, &failed);
    if (!j->fixed) gr->ev_t = resized(gr->ev_t, n * (size_t)gr->n_ev, sizeof *gr->ev_t, &failed);
  }
  return failed ? -1 : 0;
}

/* The run state of a job whose groups are built: M micro-batches, exactly (fixed) or at most (M == 0:
 * the cap from the options), the window, the per-micro-batch arrays and the DRAM streams.  0, or -1
 * when out of memory. */
static int prepare_run(const sim *s, job *j, int M, int fixed) {
  int p = j->n_groups;
  j->fixed = fixed;
  j->window = fixed ? sim_job_wmax(j) : s->opt.first_window > 0 ? s->opt.first_window : first_window(j);
  if (j->window > sim_job_wmax(j)) j->window = sim_job_wmax(j);
  j->retry = !fixed && j->window < sim_job_wmax(j);
  j->cap = M > 0 ? M : s->opt.max_microbatches > 0 ? s->opt.max_microbatches : 4 * p + 32;
  j->doublings = !fixed && s->opt.max_microbatches == 0 ? SIM_STEADY_DOUBLINGS : 0;
  if (!fixed)
    for (int g = 0; g < p; g++) j->groups[g].n_ev = sim_group_events(&j->groups[g]);
  if (size_arrays(j) != 0) return -1;
  for (int g = 0; g < p; g++) {
    jgroup *gr = &j->groups[g];
    if (gr->n_cores > 1 && sim_gather_init(&gr->gather, gr->first_core, gr->n_cores) != 0) return -1;
    if (setup_dram(s, gr) != 0) return -1;
  }
  clear_run(j);
  return plan_gathers(s, j) != 0 || plan_private(s, j) != 0 ? -1 : 0;
}

void sim_job_restart(job *j) {
  j->window = sim_job_wmax(j);
  j->retry = 0;
  clear_run(j);
}

int sim_job_double_cap(job *j) {
  j->cap *= 2;
  j->doublings--;
  if (size_arrays(j) != 0) return -1;
  sim_job_restart(j);
  return 0;
}

/* Builds the program of plan p from its split: segments, sends, DRAM streams (see the comment at the
 * top). */
static mp_status build(const sim *s, const graph *g, const split *sp, cost_model *cm, int M, job **out,
                       mp_error *err) {
  const chip *c = s->chip;
  const optimes *ot = s->opt.op_times;
  double core_flops = ot ? chip_typical_core(c).flops : 0;
  job *j = calloc(1, sizeof *j);
  int *recv_of = malloc((size_t)g->n_tensors * sizeof *recv_of);
  int *seg_of = malloc((size_t)g->n_ops * sizeof *seg_of); /* per layer of the current group */
  if (!j || !recv_of || !seg_of) goto nomem;
  for (int t = 0; t < g->n_tensors; t++) recv_of[t] = -1;
  j->groups = calloc((size_t)sp->n_groups, sizeof *j->groups);
  if (!j->groups) goto nomem;
  j->n_groups = sp->n_groups; /* only now: sim_job_free visits groups[0 .. n_groups) */
  for (int gi = 0; gi < sp->n_groups; gi++) {
    const split_group *sg = &sp->groups[gi];
    jgroup *gr = &j->groups[gi];
    gr->first_core = sg->first_core;
    gr->n_cores = sg->n_cores;
    gr->last_core = sg->first_core + sg->n_cores - 1;
    gr->n_recvs = sg->n_recvs;
    gr->n_sends = sg->n_sends;
    cost_model_stage(cm, sg->first_layer, sg->n_layers, sg->first_core, sg->n_cores, &gr->model);
    double gamma = gr->model.gamma, share = c->cores[gr->first_core].flops / gr->model.speed;
    gr->segs = calloc((size_t)sg->n_layers, sizeof *gr->segs);
    gr->sends = calloc((size_t)sg->n_sends + 1, sizeof *gr->sends);
    gr->recvs = calloc((size_t)sg->n_recvs + 1, sizeof *gr->recvs);
    gr->arrived = calloc((size_t)sg->n_recvs + 1, sizeof *gr->arrived);
    if (!gr->segs || !gr->sends || !gr->recvs || !gr->arrived) goto nomem;
    for (int k = 0; k < sg->n_sends; k++) {
      const split_send *sd = &sg->sends[k];
      gr->sends[k].raw_bytes = (double)g->tensors[sd->tensor].bytes;
      gr->sends[k].bytes = gamma * gr->sends[k].raw_bytes;
      gr->sends[k].name = g->tensors[sd->tensor].name;
      gr->sends[k].dst_group = sd->dst_group;
      gr->sends[k].dst_recv = sd->dst_recv;
      gr->sends[k].dst_core = sp->groups[sd->dst_group].first_core;
    }
    for (int r = 0; r < sg->n_recvs; r++) {
      recv_of[sg->recvs[r].tensor] = r;
      gr->recvs[r] = (jrecv){g->tensors[sg->recvs[r].tensor].name, sg->recvs[r].src_group};
    }
    /* The segments of split.h: layers that are ready together run back to back.  A segment waits for
     * the recvs its layers read, and posts the sends of its layers (a contiguous range). */
    int next_send = 0;
    gr->n_segs = sg->n_segments;
    for (int l = sg->first_layer; l < sg->first_layer + sg->n_layers; l++) {
      const graph_op *op = &g->ops[l];
      seg *cur = &gr->segs[sg->segment[l - sg->first_layer]];
      if (!cur->name) {
        cur->name = op->name;
        cur->first_post = next_send;
      }
      for (int k = 0; k < op->n_inputs; k++) {
        int r = recv_of[op->inputs[k]], dup = 0;
        if (r < 0) continue;
        for (int q = 0; q < cur->n_needs; q++) dup |= cur->needs[q] == r;
        if (dup) continue;
        int *nn = realloc(cur->needs, ((size_t)cur->n_needs + 1) * sizeof *nn);
        if (!nn) goto nomem;
        cur->needs = nn;
        cur->needs[cur->n_needs++] = r;
      }
      seg_of[l] = (int)(cur - gr->segs);
      cur->raw_flops += ot && ot->seconds[l] >= 0 ? optimes_flops(ot, g, core_flops, l)
                                                  : cost_model_layer_work(cm, l, sg->n_cores);
      cur->gather += (double)op->out_bytes;
      cur->macs += (double)op->macs;
      cur->ops += (double)op->flops;
      cur->traffic += (double)opcost_op_traffic(op);
      while (next_send < sg->n_sends && sg->sends[next_send].layer == l) next_send++;
      cur->n_posts = next_send - cur->first_post;
    }
    for (int k = 0; k < gr->n_segs; k++) gr->segs[k].flops = gr->segs[k].raw_flops * share;
    for (int r = 0; r < sg->n_recvs; r++) recv_of[sg->recvs[r].tensor] = -1;
    /* local dependencies between segments: an input made by a layer of an earlier segment */
    for (int l = sg->first_layer; l < sg->first_layer + sg->n_layers; l++) {
      const graph_op *op = &g->ops[l];
      seg *x = &gr->segs[seg_of[l]];
      for (int k = 0; k < op->n_inputs; k++) {
        int prod = g->tensors[op->inputs[k]].producer;
        if (prod < sg->first_layer || seg_of[prod] == seg_of[l]) continue; /* outside, or same segment */
        int d = seg_of[prod], dup = 0;
        for (int q = 0; q < x->n_deps; q++) dup |= x->deps[q] == d;
        if (dup) continue;
        int *nd = realloc(x->deps, ((size_t)x->n_deps + 1) * sizeof *nd);
        if (!nd) goto nomem;
        x->deps = nd;
        x->deps[x->n_deps++] = d;
      }
    }
  }
  if (plan_terms(cm, c, j) != 0 || prepare_run(s, j, M, M > 0) != 0) goto nomem;
  free(recv_of);
  free(seg_of);
  *out = j;
  return MP_OK;
nomem:
  free(recv_of);
  free(seg_of);
  sim_job_free(j);
  return err_nomem(err);
}

mp_status sim_job_from_plan(const sim *s, const graph *g, const plan *p, int M, job **out, mp_error *err) {
  *out = NULL;
  split *sp = NULL;
  cost_model *cm = NULL;
  mp_status st = split_new(g, p, &sp, err);
  if (st == MP_OK) st = cost_model_new(g, s->chip, &cm, err);
  if (st == MP_OK) st = build(s, g, sp, cm, M, out, err);
  if (st == MP_OK) {
    (*out)->graph_hash = g->hash;
    (*out)->plan_hash = plan_hash(p);
  }
  cost_model_free(cm);
  split_free(sp);
  return st;
}

/* Same action, ignoring its micro-batch and line. */
static int same_action(const trace *t, const trace_action *a, const trace_action *b) {
  if (a->kind != b->kind || a->core != b->core || a->peer != b->peer || a->flops != b->flops || a->bytes != b->bytes ||
      a->name != b->name || a->n_deps != b->n_deps)
    return 0;
  for (int d = 0; d < a->n_deps; d++)
    if (t->deps[a->first_dep + d] != t->deps[b->first_dep + d]) return 0;
  return 1;
}

/* The distinct receives of a group (sending core, tensor) in micro-batch 0, in order of first
 * appearance: index r is the job's recv r. */
typedef struct recv_list {
  int n;
  int *src, *name, *group; /* sending core, tensor name, sending group */
} recv_list;

static int recv_index(const recv_list *l, int src, int name) {
  for (int r = 0; r < l->n; r++)
    if (l->src[r] == src && l->name[r] == name) return r;
  return -1;
}

/* A trace group's analytical figures on the sim's chip, from its recorded sums. */
static void trace_model(cost_model *cm, const trace_group *tg, cost_stage *cs) {
  *cs = (cost_stage){.first_layer = tg->first_layer,
                     .n_layers = tg->n_layers,
                     .first_core = tg->cores[0],
                     .n_cores = tg->n_cores,
                     .flops = tg->flops,
                     .work = tg->flops, /* a trace records the work its chip's core model gave */
                     .weight_bytes = tg->weight_bytes,
                     .gather_bytes = tg->gather_bytes,
                     .max_act_bytes = tg->max_act_bytes,
                     .send_bytes = tg->send_bytes};
  cost_stage_complete(cm, cs);
}

mp_status sim_job_from_trace(const sim *s, const trace *t, int steady, job **out, mp_error *err) {
  *out = NULL;
  const chip *c = s->chip;
  int M = t->microbatches;
  mp_status st = MP_OK;
  char where[32];
  cost_model *cm = NULL;
  job *j = calloc(1, sizeof *j);
  recv_list *rl = calloc((size_t)t->n_groups, sizeof *rl);
  int *n0 = calloc((size_t)t->n_groups, sizeof *n0);
  if (!j || !rl || !n0) goto nomem;
  if ((st = cost_model_new(NULL, c, &cm, err)) != MP_OK) goto fail;
  j->graph_hash = t->graph_hash;
  j->plan_hash = t->plan_hash;
  j->groups = calloc((size_t)t->n_groups, sizeof *j->groups);
  if (!j->groups) goto nomem;
  j->n_groups = t->n_groups;
  /* Micro-batch 0 defines each group's program; every other micro-batch must repeat it. */
  for (int gi = 0; gi < t->n_groups; gi++) {
    const trace_group *tg = &t->groups[gi];
    for (int k = 1; k < tg->n_cores; k++)
      if (tg->cores[k] != tg->cores[0] + k) {
        st = err_at(err, MP_INPUT, t->file, NULL,
                    "group %d: its cores are not consecutive ids on chip '%s' (--map xy): the simulator runs a "
                    "group on a snake-ordered id range; use --map snake:K",
                    gi, c->name);
        goto fail;
      }
    while (n0[gi] < tg->n_actions && tg->actions[n0[gi]].microbatch == 0) n0[gi]++;
    int n = n0[gi];
    if (n == 0 || tg->n_actions != n * M) {
      st = err_at(err, MP_INPUT, t->file, NULL,
                  "group %d: %d actions for %d micro-batches, %d in micro-batch 0: a replay runs the same actions "
                  "for every micro-batch",
                  gi, tg->n_actions, M, n);
      goto fail;
    }
    for (int i = n; i < tg->n_actions; i++) {
      const trace_action *a = &tg->actions[i], *a0 = &tg->actions[i % n];
      if (a->microbatch != i / n || !same_action(t, a, a0)) {
        snprintf(where, sizeof where, "line %d", a->line);
        st = err_at(err, MP_INPUT, t->file, a->line ? where : NULL,
                    "micro-batch %d of group %d differs from micro-batch 0 (line %d): a replay runs the same "
                    "actions, in the same order, for every micro-batch",
                    a->microbatch, gi, a0->line);
        goto fail;
      }
    }
    rl[gi].src = malloc((size_t)n * sizeof *rl[gi].src);
    rl[gi].name = malloc((size_t)n * sizeof *rl[gi].name);
    rl[gi].group = malloc((size_t)n * sizeof *rl[gi].group);
    if (!rl[gi].src || !rl[gi].name || !rl[gi].group) goto nomem;
    for (int i = 0; i < n; i++) {
      const trace_action *a = &tg->actions[i];
      if (a->kind != TRACE_RECV || recv_index(&rl[gi], a->peer, a->name) >= 0) continue;
      rl[gi].src[rl[gi].n] = a->peer;
      rl[gi].group[rl[gi].n] = a->peer_group;
      rl[gi].name[rl[gi].n++] = a->name;
    }
  }
  for (int gi = 0; gi < t->n_groups; gi++) {
    const trace_group *tg = &t->groups[gi];
    jgroup *gr = &j->groups[gi];
    int n = n0[gi];
    gr->first_core = tg->cores[0];
    gr->n_cores = tg->n_cores;
    gr->last_core = tg->cores[tg->n_cores - 1];
    trace_model(cm, tg, &gr->model);
    double gamma = gr->model.gamma, share = c->cores[gr->first_core].flops / gr->model.speed;
    int n_segs = 0, n_sends = 0;
    for (int i = 0; i < n; i++) {
      trace_kind k = tg->actions[i].kind;
      n_segs += k == TRACE_COMPUTE;
      n_sends += k == TRACE_SEND;
    }
    gr->n_sends = n_sends;
    gr->n_recvs = rl[gi].n;
    gr->segs = calloc((size_t)n_segs + 1, sizeof *gr->segs);
    gr->sends = calloc((size_t)n_sends + 1, sizeof *gr->sends);
    gr->recvs = calloc((size_t)rl[gi].n + 1, sizeof *gr->recvs);
    gr->arrived = calloc((size_t)rl[gi].n + 1, sizeof *gr->arrived);
    if (!gr->segs || !gr->sends || !gr->recvs || !gr->arrived) goto nomem;
    for (int r = 0; r < rl[gi].n; r++) gr->recvs[r] = (jrecv){t->names[rl[gi].name[r]], rl[gi].group[r]};
    /* Segments: the receives before a compute are its needs, the sends after it its posts. */
    int *pending = malloc(((size_t)rl[gi].n + 1) * sizeof *pending), n_pending = 0, send = 0;
    if (!pending) goto nomem;
    seg *cur = NULL;
    for (int i = 0; i < n && st == MP_OK; i++) {
      const trace_action *a = &tg->actions[i];
      snprintf(where, sizeof where, "line %d", a->line);
      const char *at = a->line ? where : NULL;
      switch (a->kind) {
      case TRACE_RECV: {
        int r = recv_index(&rl[gi], a->peer, a->name), dup = 0;
        for (int q = 0; q < n_pending; q++) dup |= pending[q] == r;
        if (!dup) pending[n_pending++] = r;
        break;
      }
      case TRACE_DRAM:
        if (gr->n_segs > 0)
          st = err_at(err, MP_INPUT, t->file, at,
                      "group %d reads DRAM after its first compute: a replay streams weights before a micro-batch's "
                      "first compute",
                      gi);
        break; /* what the recording chip streamed: the replay chip's streams follow from the model */
      case TRACE_COMPUTE:
        cur = &gr->segs[gr->n_segs++];
        if (gr->n_segs == 1) { /* the group's energy counts, recorded per group: with its first segment */
          cur->macs = tg->macs;
          cur->ops = tg->ops;
          cur->traffic = tg->traffic;
        }
        cur->raw_flops = a->flops;
        cur->flops = a->flops * share;
        cur->gather = a->bytes;
        cur->name = t->names[a->name];
        cur->first_post = send;
        if (n_pending > 0) {
          cur->needs = malloc((size_t)n_pending * sizeof *cur->needs);
          if (!cur->needs) {
            st = err_nomem(err);
            break;
          }
          memcpy(cur->needs, pending, (size_t)n_pending * sizeof *pending);
          cur->n_needs = n_pending;
          n_pending = 0;
        }
        if (a->n_deps > 0) {
          cur->deps = malloc((size_t)a->n_deps * sizeof *cur->deps);
          if (!cur->deps) {
            st = err_nomem(err);
            break;
          }
          memcpy(cur->deps, t->deps + a->first_dep, (size_t)a->n_deps * sizeof *cur->deps);
          cur->n_deps = a->n_deps;
        }
        break;
      case TRACE_SEND: {
        const trace_group *dg = &t->groups[a->peer_group];
        int r = recv_index(&rl[a->peer_group], a->core, a->name);
        if (!cur)
          st = err_at(err, MP_INPUT, t->file, at, "group %d sends before its first compute: nothing produced it yet",
                      gi);
        else if (a->core != gr->last_core)
          st = err_at(err, MP_INPUT, t->file, at, "c%d sends, but a group sends from its last core (c%d)", a->core,
                      gr->last_core);
        else if (a->peer != dg->cores[0] || r < 0)
          st = err_at(err, MP_INPUT, t->file, at,
                      "c%d sends to c%d, but a group receives on its first core (c%d) in micro-batch 0", a->core,
                      a->peer, dg->cores[0]);
        if (st != MP_OK) break;
        jsend *sd = &gr->sends[send++];
        sd->raw_bytes = a->bytes;
        sd->bytes = gamma * a->bytes;
        sd->dst_group = a->peer_group;
        sd->dst_core = a->peer;
        sd->dst_recv = r;
        sd->name = t->names[a->name];
        cur->n_posts = send - cur->first_post;
        break;
      }
      default: /* trace_check keeps training actions out of inference traces; sim_replay refuses training ones */
        st = err_at(err, MP_INPUT, t->file, at, "'%s' is not an action of an inference trace", trace_kind_name(a->kind));
        break;
      }
    }
    free(pending);
    if (st != MP_OK) goto fail;
    if (n_pending > 0) {
      st = err_at(err, MP_INPUT, t->file, NULL, "group %d receives after its last compute: nothing would wait for it",
                  gi);
      goto fail;
    }
  }
  if (plan_terms(cm, c, j) != 0 || prepare_run(s, j, M, !steady) != 0) goto nomem;
  for (int gi = 0; gi < t->n_groups; gi++) {
    free(rl[gi].src);
    free(rl[gi].name);
    free(rl[gi].group);
  }
  free(rl);
  free(n0);
  cost_model_free(cm);
  *out = j;
  return MP_OK;
nomem:
  st = err_nomem(err);
fail:
  cost_model_free(cm);
  if (rl)
    for (int gi = 0; gi < t->n_groups; gi++) {
      free(rl[gi].src);
      free(rl[gi].name);
      free(rl[gi].group);
    }
  free(rl);
  free(n0);
  sim_job_free(j);
  return st;
}

