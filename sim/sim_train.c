/* sim_train: a mini-batch of a trained plan on the simulator.  See sim_train.h.
 *
 * The job is compiled on the caller's thread (segments, Sends both ways, orders, DRAM matrices) from a plan
 * (sim_train_compile_plan) or from a recorded training trace (sim_train_record.c: the same job, so a replay
 * on the recording chip is the same run), and run
 * on the engine's (sim_engine_call): a group actor per group walks its order, and a sender actor per group
 * that sends anything runs its transfers one at a time in the order they were posted, forward and backward
 * alike (double buffering, as in inference), then raises the receiving group's arrival count.  A pass
 * waits for what it needs by re-checking the counts each time its group's semaphore is released.  Arrivals
 * of one Recv come in micro-batch order (one sender, posts in order), so "m has arrived" is "more than m
 * arrived".  Times are differences of the engine's clock. */
#include "sim_train.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>
#include <simgrid/semaphore.h>

#include "fileio.h"
#include "jsonio.h"
#include "sim_int.h"
#include "sim_schedule.h"
#include "sim_train_int.h"
#include "split.h"

void sim_train_job_free(tjob *j) {
  for (int g = 0; j->groups && g < j->n_groups; g++) {
    tgroup *gr = &j->groups[g];
    for (int k = 0; gr->segs && k < gr->n_segs; k++) {
      free(gr->segs[k].needs);
      free(gr->segs[k].bneeds);
      free(gr->segs[k].gposts);
    }
    free(gr->segs);
    free(gr->fsends);
    free(gr->bsends);
    free(gr->farrived);
    free(gr->barrived);
    free(gr->order);
    free(gr->pass_x);
    free(gr->upd_x);
    sim_streams_free(&gr->dram);
    sim_gather_free(&gr->gather);
    free(gr->queue);
    free(gr->b_end);
  }
  free(j->groups);
  train_result_free(j->model);
}

int sim_train_push(int **list, int *n, int v) {
  for (int i = 0; i < *n; i++)
    if ((*list)[i] == v) return 0;
  int *x = realloc(*list, ((size_t)*n + 1) * sizeof *x);
  if (!x) return -1;
  *list = x;
  (*list)[(*n)++] = v;
  return 0;
}

/* The arrays of a group of n_segs segments, n_fsends Sends and n_recvs Recvs over M micro-batches; 0, or -1
 * out of memory. */
int sim_train_alloc_group(tgroup *gr, int M, int n_segs, int n_fsends, int n_recvs) {
  gr->n_segs = n_segs;
  gr->n_fsends = n_fsends;
  gr->n_recvs = n_recvs;
  gr->segs = calloc((size_t)n_segs + 1, sizeof *gr->segs);
  gr->fsends = calloc((size_t)n_fsends + 1, sizeof *gr->fsends);
  gr->bsends = calloc((size_t)n_recvs + 1, sizeof *gr->bsends);
  gr->farrived = calloc((size_t)n_recvs + 1, sizeof *gr->farrived);
  gr->barrived = calloc((size_t)n_fsends + 1, sizeof *gr->barrived);
  gr->order = malloc(3 * (size_t)M * sizeof *gr->order); /* room for zb's */
  gr->queue = malloc(((size_t)M * ((size_t)n_fsends + (size_t)n_recvs) + 1) * sizeof *gr->queue);
  gr->b_end = calloc((size_t)M, sizeof *gr->b_end);
  return gr->segs && gr->fsends && gr->bsends && gr->farrived && gr->barrived && gr->order && gr->queue && gr->b_end
             ? 0
             : -1;
}

/* What the group's run needs beyond its program, from its model stage: the work on its first core (its
 * share of the group's), the all-gathers' scratch and, when it does not fit, its DRAM streams.  0, or -1
 * out of memory. */
int sim_train_finish_group(const sim *s, tgroup *gr) {
  const chip *c = s->chip;
  const cost_stage *cs = &gr->model->cs;
  int n = gr->n_cores;
  double share = c->cores[gr->first_core].flops / cs->speed;
  gr->update_flops = gr->update_raw * share;
  for (int k = 0; k < gr->n_segs; k++) {
    gr->segs[k].f_flops = gr->segs[k].f_raw * share;
    gr->segs[k].b_flops = (gr->segs[k].b_raw - (gr->split_w ? gr->segs[k].w_raw : 0)) * share;
  }
  gr->w_flops = gr->w_raw * share;
  if (n > 1 && sim_gather_init(&gr->gather, gr->first_core, n) != 0) return -1;
  if (cs->fits || c->n_dram == 0) return 0;
  gr->streams = 1;
  gr->pass_x = calloc(2 * (size_t)n, sizeof *gr->pass_x);
  gr->upd_x = calloc(2 * (size_t)n, sizeof *gr->upd_x);
  if (!gr->pass_x || !gr->upd_x || sim_streams_init(&gr->dram, s, gr->first_core, n) != 0) return -1;
  double static_share = cs->weight_bytes / n;
  for (int k = 0; k < n; k++) {
    int core = gr->first_core + k;
    double in, out;
    cost_core_dram(cs, (double)c->cores[core].sram_bytes, &in, &out);
    gr->pass_x[k] = in;      /* port -> core */
    gr->pass_x[n + k] = out; /* core -> port */
    gr->upd_x[k] = gr->upd_x[n + k] = in < static_share ? in : static_share;
  }
  return 0;
}

/* The program of group gi of plan p (see the comment at the top of sim_train.h). */
static int build_group(const sim *s, const graph *g, const train *t, const split *sp, const train_result *model,
                       int gi, int M, int *recv_of, tgroup *gr) {
  const split_group *sg = &sp->groups[gi];
  const cost_stage *cs = &model->stages[gi].cs;
  gr->first_core = sg->first_core;
  gr->n_cores = sg->n_cores;
  gr->last_core = sg->first_core + sg->n_cores - 1;
  gr->model = &model->stages[gi];
  gr->update_raw = (double)model->stages[gi].r.update_flops;
  if (sim_train_alloc_group(gr, M, sg->n_segments, sg->n_sends, sg->n_recvs) != 0) return -1;
  gr->n_order = sim_schedule_order(t->opt.schedule, gi, sp->n_groups, M, gr->order);
  gr->split_w = t->opt.schedule == TRAIN_ZB;
  for (int k = 0; k < sg->n_sends; k++) {
    const split_send *sd = &sg->sends[k];
    const graph_tensor *tn = &g->tensors[sd->tensor];
    gr->fsends[k] = (txfer){cs->gamma * (double)tn->bytes, (double)tn->bytes, tn->name, gr->last_core,
                            sp->groups[sd->dst_group].first_core, sd->dst_group, sd->dst_recv};
  }
  for (int r = 0; r < sg->n_recvs; r++) {
    const split_recv *rv = &sg->recvs[r];
    const split_group *src = &sp->groups[rv->src_group];
    const graph_tensor *tn = &g->tensors[rv->tensor];
    gr->bsends[r] = (txfer){cs->gamma * (double)tn->bytes, (double)tn->bytes, tn->name, gr->first_core,
                            src->first_core + src->n_cores - 1, rv->src_group, rv->src_send};
    recv_of[rv->tensor] = r;
  }
  int next_send = 0, rc = 0;
  for (int k = 0; k < gr->n_segs; k++) gr->segs[k].first_post = -1; /* not reached yet */
  for (int l = sg->first_layer; l < sg->first_layer + sg->n_layers && rc == 0; l++) {
    const graph_op *op = &g->ops[l];
    const train_layer *tl = &t->layers[l];
    tseg *x = &gr->segs[sg->segment[l - sg->first_layer]];
    if (x->first_post < 0) {
      x->first_post = next_send;
      x->name = op->name;
    }
    x->f_raw += (double)op->flops;
    x->b_raw += (double)(tl->dx_flops + tl->dw_flops + (t->opt.recompute ? op->flops : 0));
    x->w_raw += (double)tl->dw_flops;
    gr->w_raw += gr->split_w ? (double)tl->dw_flops : 0;
    x->f_gather += (double)op->out_bytes;
    x->b_gather += (double)tl->grad_bytes;
    for (int k = 0; k < op->n_inputs && rc == 0; k++)
      if (recv_of[op->inputs[k]] >= 0) rc = sim_train_push(&x->needs, &x->n_needs, recv_of[op->inputs[k]]);
    while (next_send < sg->n_sends && sg->sends[next_send].layer == l) next_send++;
    x->n_posts = next_send - x->first_post;
  }
  for (int k = 0; k < gr->n_segs && rc == 0; k++) /* a backward waits for the gradients of its own Sends */
    for (int i = gr->segs[k].first_post; i < gr->segs[k].first_post + gr->segs[k].n_posts && rc == 0; i++)
      rc = sim_train_push(&gr->segs[k].bneeds, &gr->segs[k].n_bneeds, i);
  for (int r = 0; r < sg->n_recvs && rc == 0; r++) { /* the lowest reader's segment sends the gradient back */
    tseg *x = &gr->segs[sg->segment[sg->recvs[r].consumers[0] - sg->first_layer]];
    rc = sim_train_push(&x->gposts, &x->n_gposts, r);
  }
  for (int r = 0; r < sg->n_recvs; r++) recv_of[sg->recvs[r].tensor] = -1;
  if (rc != 0) return -1;
  return sim_train_finish_group(s, gr);
}

/* The job of plan p trained under t's options: j's groups, programs and model (j->model). */
mp_status sim_train_compile_plan(sim *s, train *t, const plan *p, tjob *j, mp_error *err) {
  const graph *g = t->g;
  split *sp = NULL;
  int *recv_of = NULL;
  mp_status st = train_evaluate(t, s->chip, p, &j->model, err);
  if (st == MP_OK) st = split_new(g, p, &sp, err);
  if (st != MP_OK) goto cleanup;
  j->M = t->opt.microbatches;
  j->groups = calloc((size_t)sp->n_groups, sizeof *j->groups);
  recv_of = malloc(((size_t)g->n_tensors + 1) * sizeof *recv_of);
  if (!j->groups || !recv_of) {
    st = err_nomem(err);
    goto cleanup;
  }
  j->n_groups = sp->n_groups;
  for (int i = 0; i < g->n_tensors; i++) recv_of[i] = -1;
  for (int gi = 0; gi < sp->n_groups; gi++)
    if (build_group(s, g, t, sp, j->model, gi, j->M, recv_of, &j->groups[gi]) != 0) {
      st = err_nomem(err);
      break;
    }
cleanup:
  free(recv_of);
  split_free(sp);
  return st;
}

/* ---- actors (engine thread) ------------------------------------------------------------------------ */

static void post(tgroup *gr, int backward, int idx, int mb) {
  gr->queue[gr->q_tail++] = (titem){backward, idx, mb};
  sg_sem_release(gr->q);
}

static int ready(const tgroup *gr, const tseg *x, int backward, int mb) {
  if (!backward) {
    for (int i = 0; i < x->n_needs; i++)
      if (gr->farrived[x->needs[i]] <= mb) return 0;
  } else {
    for (int i = 0; i < x->n_bneeds; i++)
      if (gr->barrived[x->bneeds[i]] <= mb) return 0;
  }
  return 1;
}

/* Timeline events (only when the job has a timeline; times relative to the job's start). */

static void tl_add(tjob *j, const timeline_event *e) {
  if (timeline_add(j->tl, e, NULL) != MP_OK) j->tl_failed = 1;
}

/* A segment's pass (name "OP" forward, "OP (backward)"), zb's weight-gradient pass of the stage ("OP
 * (weight gradients)", OP its first op), or the update (mb -1): its gathered bytes count as held on the
 * group's cores until the micro-batch is done there (timeline.h), which for a forward is the end of its
 * backward: the naive stash. */
static void tl_exec(tjob *j, int g, const char *op, const char *suffix, int mb, double flops, double bytes, double t0,
                    double tg, double t1) {
  const tgroup *gr = &j->groups[g];
  char name[256];
  snprintf(name, sizeof name, "%s%s", op, suffix);
  timeline_event e = {.kind = TIMELINE_EXEC,
                      .start_s = t0 - j->t0,
                      .end_s = t1 - j->t0,
                      .name = name,
                      .microbatch = mb,
                      .first_core = gr->first_core,
                      .n_cores = gr->n_cores,
                      .flops = flops,
                      .gather_s = tg > t0 && tg < t1 ? tg - j->t0 : 0,
                      .bytes = (uint64_t)llround(bytes),
                      .dram_port = -1};
  tl_add(j, &e);
}

/* The DRAM streams of a pass (mb >= 0) or of the update (mb -1) in one direction: x the part of the
 * group's pass_x or upd_x for it. */
static void tl_dram(tjob *j, int g, const double *x, int mb, int write, double t0, double t1) {
  const tgroup *gr = &j->groups[g];
  const chip *c = j->s->chip;
  for (int k = 0; k < gr->n_cores; k++) {
    double bytes = x[k];
    timeline_event e = {.kind = TIMELINE_TRANSFER,
                        .start_s = t0 - j->t0,
                        .end_s = t1 - j->t0,
                        .name = mb < 0 ? "weights and optimizer state" : write ? "spilled" : "weights and spilled",
                        .microbatch = mb,
                        .src_core = gr->first_core + k,
                        .dst_core = gr->first_core + k,
                        .dram_port = chip_nearest_dram(c, gr->first_core + k),
                        .to_dram = write,
                        .src_group = write ? g : -1,
                        .dst_group = write ? -1 : g,
                        .bytes = (uint64_t)llround(bytes)};
    if (bytes > 0) tl_add(j, &e);
  }
}

/* A Send, or a gradient sent back (named "grad TENSOR"). */
static void tl_send(tjob *j, int g, const txfer *x, int backward, int mb, double t0, double t1) {
  char name[256];
  snprintf(name, sizeof name, "%s%s", backward ? "grad " : "", x->name);
  timeline_event e = {.kind = TIMELINE_TRANSFER,
                      .start_s = t0 - j->t0,
                      .end_s = t1 - j->t0,
                      .name = name,
                      .microbatch = mb,
                      .src_core = x->from,
                      .dst_core = x->to,
                      .dram_port = -1,
                      .src_group = g,
                      .dst_group = x->group,
                      .is_send = 1,
                      .bytes = (uint64_t)llround(x->bytes)};
  tl_add(j, &e);
}

/* Streams of group g (x its pass_x or upd_x) in one direction, timed for the timeline. */
static double streams(tjob *j, int g, const double *x, int mb, int write) {
  tgroup *gr = &j->groups[g];
  double t = simgrid_get_clock();
  x += write ? gr->n_cores : 0;
  gr->acts += sim_dram_streams(&gr->dram, x, write);
  double t1 = simgrid_get_clock();
  if (j->tl) tl_dram(j, g, x, mb, write, t, t1);
  return t1 - t;
}

/* Group g's actor executes `flops` on its first core (sim_int.h, "Timer"). */
static void execute(tjob *j, int g, double flops) {
  tgroup *gr = &j->groups[g];
  sim_timer_execute(&j->timer, gr->tm, flops, sg_host_get_speed(j->s->hosts[gr->first_core]));
}

static void pass(tjob *j, int g, int backward, int mb) {
  sim *s = j->s;
  tgroup *gr = &j->groups[g];
  double busy = 0, t;
  double dram = gr->streams ? streams(j, g, gr->pass_x, mb, 0) : 0;
  for (int q = 0; q < gr->n_segs; q++) {
    int k = backward ? gr->n_segs - 1 - q : q;
    const tseg *x = &gr->segs[k];
    while (!ready(gr, x, backward, mb)) sg_sem_acquire(gr->ev);
    t = simgrid_get_clock();
    double flops = backward ? x->b_flops : x->f_flops, bytes = backward ? x->b_gather : x->f_gather;
    if (flops > 0) {
      execute(j, g, flops);
      gr->acts++;
    }
    double tg = simgrid_get_clock();
    if (gr->n_cores > 1 && bytes > 0) {
      sim_all_gather(s, &gr->gather, bytes);
      gr->acts++;
    }
    double t1 = simgrid_get_clock();
    if (j->tl)
      tl_exec(j, g, x->name, backward ? " (backward)" : "", mb,
              backward ? x->b_raw - (gr->split_w ? x->w_raw : 0) : x->f_raw, bytes, t,
              gr->n_cores > 1 && bytes > 0 ? tg : 0, t1);
    busy += t1 - t;
    if (!backward)
      for (int i = x->first_post; i < x->first_post + x->n_posts; i++) post(gr, 0, i, mb);
    else
      for (int i = 0; i < x->n_gposts; i++) post(gr, 1, x->gposts[i], mb);
  }
  if (gr->streams) dram += streams(j, g, gr->pass_x, mb, 1);
  gr->dram_s += dram;
  *(backward ? &gr->bwd_s : &gr->fwd_s) += busy + dram;
}

/* zb's weight-gradient pass of micro-batch mb: every segment's weight-gradient work as one computation
 * (each core computes the gradients of its own weights: nothing to gather or send), between DRAM streams
 * as any pass when the group streams. */
static void weight_pass(tjob *j, int g, int mb) {
  tgroup *gr = &j->groups[g];
  double flops = gr->w_flops, dram = gr->streams ? streams(j, g, gr->pass_x, mb, 0) : 0, t = simgrid_get_clock();
  if (flops > 0) {
    execute(j, g, flops);
    gr->acts++;
  }
  double t1 = simgrid_get_clock();
  if (j->tl && flops > 0) tl_exec(j, g, gr->segs[0].name, " (weight gradients)", mb, gr->w_raw, 0, t, 0, t1);
  if (gr->streams) dram += streams(j, g, gr->pass_x, mb, 1);
  gr->dram_s += dram;
  gr->bwd_s += t1 - t + dram;
}

static void group_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  targ *a = sg_actor_self_get_data();
  tjob *j = a->j;
  tgroup *gr = &j->groups[a->g];
  sim_pass last = gr->split_w ? SIM_PASS_W : SIM_PASS_B; /* a micro-batch's last pass here */
  for (int i = 0; i < gr->n_order; i++) {
    const sim_schedule_step *st = &gr->order[i];
    if (st->pass == SIM_PASS_W)
      weight_pass(j, a->g, st->mb);
    else
      pass(j, a->g, st->pass == SIM_PASS_B, st->mb);
    if (st->pass == last) gr->last_b = gr->b_end[st->mb] = simgrid_get_clock();
  }
  double t = simgrid_get_clock();
  if (gr->streams) streams(j, a->g, gr->upd_x, -1, 0);
  double tu = simgrid_get_clock();
  if (gr->update_flops > 0) {
    execute(j, a->g, gr->update_flops);
    gr->acts++;
  }
  if (j->tl && gr->update_flops > 0) tl_exec(j, a->g, "update", "", -1, gr->update_raw, 0, tu, 0, simgrid_get_clock());
  if (gr->streams) streams(j, a->g, gr->upd_x, -1, 1);
  gr->end = simgrid_get_clock();
  gr->upd_s = gr->end - t;
  if (gr->n_fsends + gr->n_recvs > 0) post(gr, 0, -1, -1);
  sim_timer_leave(&j->timer);
}

static void sender_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  targ *a = sg_actor_self_get_data();
  tjob *j = a->j;
  sim *s = j->s;
  tgroup *gr = &j->groups[a->g];
  for (;;) {
    sg_sem_acquire(gr->q);
    titem it = gr->queue[gr->q_head++];
    if (it.idx < 0) break;
    const txfer *x = it.backward ? &gr->bsends[it.idx] : &gr->fsends[it.idx];
    double t = simgrid_get_clock();
    if (x->bytes > 0) {
      sim_ptask2(s->hosts[x->from], s->hosts[x->to], x->bytes);
      gr->acts++;
    }
    double t1 = simgrid_get_clock();
    if (j->tl && x->bytes > 0) tl_send(j, a->g, x, it.backward, it.mb, t, t1);
    gr->comm_s += t1 - t;
    tgroup *dg = &j->groups[x->group];
    (it.backward ? dg->barrived : dg->farrived)[x->slot]++;
    sg_sem_release(dg->ev);
  }
}

static void run_job(sim *s, void *ctx) {
  tjob *j = ctx;
  int n = j->n_groups, n_actors = 0;
  targ *args = malloc((size_t)n * sizeof *args);
  sg_actor_t *actors = malloc(2 * (size_t)n * sizeof *actors);
  if (!args || !actors) {
    free(args);
    free(actors);
    j->failed = 1;
    return;
  }
  if (sim_timer_open(&j->timer, s, n) != 0) {
    free(args);
    free(actors);
    j->failed = 1;
    return;
  }
  j->t0 = simgrid_get_clock();
  for (int g = 0; g < n; g++) {
    j->groups[g].ev = sg_sem_init(0);
    j->groups[g].q = sg_sem_init(0);
    j->groups[g].tm = sg_sem_init(0);
  }
  for (int g = 0; g < n; g++) {
    tgroup *gr = &j->groups[g];
    char name[32];
    args[g] = (targ){j, g};
    snprintf(name, sizeof name, "train%d", g);
    sg_actor_t a = sg_actor_init(name, s->hosts[gr->first_core]);
    sg_actor_set_data(a, &args[g]);
    sg_actor_ref(a);
    actors[n_actors++] = a;
    sg_actor_start(a, group_actor, 0, NULL);
    if (gr->n_fsends + gr->n_recvs > 0) {
      snprintf(name, sizeof name, "tsender%d", g);
      sg_actor_t b = sg_actor_init(name, s->hosts[gr->last_core]);
      sg_actor_set_data(b, &args[g]);
      sg_actor_ref(b);
      actors[n_actors++] = b;
      sg_actor_start(b, sender_actor, 0, NULL);
    }
  }
  sim_timer_run(&j->timer, s->hosts[0], n); /* the groups' actors wait on it, senders never */
  for (int k = 0; k < n_actors; k++) {
    sg_actor_join(actors[k], -1);
    sg_actor_unref(actors[k]);
  }
  sim_timer_join(&j->timer);
  for (int g = 0; g < n; g++) {
    sg_sem_destroy(j->groups[g].ev);
    sg_sem_destroy(j->groups[g].q);
    sg_sem_destroy(j->groups[g].tm);
  }
  sim_timer_free(&j->timer);
  free(actors);
  free(args);
}

/* ---- results ----------------------------------------------------------------------------------------- */

/* The result of job j once run: trained under o with `batch` samples per micro-batch, of the graph and
 * plan of those hashes. */
static mp_status fill(const sim *s, const tjob *j, const train_options *o, int batch, uint64_t graph_hash,
                      uint64_t plan_hash, sim_train_result *res, mp_error *err) {
  const chip *c = s->chip;
  const train_result *model = j->model;
  int M = j->M, n = j->n_groups;
  res->schedule = o->schedule;
  res->optimizer = o->optimizer;
  res->microbatches = M;
  res->batch = batch;
  res->recompute = o->recompute;
  res->n_stages = n;
  res->stages = calloc((size_t)n, sizeof *res->stages);
  res->completions = calloc((size_t)M, sizeof *res->completions);
  if (!res->stages || !res->completions) return err_nomem(err);
  res->graph_hash = graph_hash;
  res->plan_hash = plan_hash;
  res->chip_hash = c->hash;
  double end = j->t0, fb = j->t0, work = 0;
  for (int gi = 0; gi < n; gi++) {
    const tgroup *gr = &j->groups[gi];
    end = gr->end > end ? gr->end : end;
    fb = gr->last_b > fb ? gr->last_b : fb;
    for (int m = 0; m < M; m++)
      if (gr->b_end[m] - j->t0 > res->completions[m]) res->completions[m] = gr->b_end[m] - j->t0;
  }
  res->minibatch_s = sim_round12(end - j->t0);
  res->fb_s = sim_round12(fb - j->t0);
  res->samples_per_s = res->minibatch_s > 0 ? sim_round12((double)M * res->batch / res->minibatch_s) : 0;
  for (int m = 0; m < M; m++) res->completions[m] = sim_round12(res->completions[m]);
  res->period_s = M > 1 ? sim_round12((res->completions[M - 1] - res->completions[0]) / (M - 1)) : res->fb_s;
  res->model_minibatch_s = model->minibatch_s;
  res->model_period_s = model->period_s;
  res->model_bubble = model->bubble;
  res->feasible = 1;
  for (int gi = 0; gi < n; gi++) {
    const tgroup *gr = &j->groups[gi];
    const train_stage *ts = gr->model;
    sim_train_stage *st = &res->stages[gi];
    st->first_layer = ts->cs.first_layer;
    st->n_layers = ts->cs.n_layers;
    st->first_core = gr->first_core;
    st->n_cores = gr->n_cores;
    st->fwd_s = sim_round12(gr->fwd_s);
    st->bwd_s = sim_round12(gr->bwd_s);
    st->update_s = sim_round12(gr->upd_s);
    st->dram_s = sim_round12(gr->dram_s);
    st->comm_s = sim_round12(gr->comm_s);
    double idle = res->minibatch_s - st->fwd_s - st->bwd_s - st->update_s;
    st->idle_s = idle > 0 ? sim_round12(idle) : 0;
    st->model_fwd_s = ts->fwd_s;
    st->model_bwd_s = ts->bwd_s;
    sim_schedule_peak(gr->order, gr->n_order, (double)ts->r.stash_bytes, (double)ts->r.wstash_bytes, &st->held,
                      &st->w_held);
    st->model_held = ts->in_flight;
    st->model_w_held = ts->w_pending;
    st->static_bytes = (uint64_t)ceil(ts->cs.weight_bytes / gr->n_cores);
    st->stash_bytes = ts->r.stash_bytes;
    st->peak_bytes = ts->r.peak_bytes;
    st->naive_bytes = ts->r.naive_bytes;
    st->wstash_bytes = ts->r.wstash_bytes;
    st->sram_peak_bytes = (uint64_t)ceil(train_mem_bytes(&ts->r, gr->n_cores, st->held, st->w_held));
    st->sram_naive_bytes = (uint64_t)ceil(train_mem_naive_bytes(&ts->r, gr->n_cores, st->held, st->w_held));
    st->sram_capacity = (uint64_t)ts->cs.sram_bytes;
    st->fits = st->sram_peak_bytes <= st->sram_capacity;
    st->n_sends = gr->n_fsends;
    st->n_recvs = gr->n_recvs;
    res->feasible &= st->fits;
    if (st->sram_peak_bytes > res->sram_peak_bytes) res->sram_peak_bytes = st->sram_peak_bytes;
    for (int k = 0, n_c = gr->n_cores; gr->streams && k < n_c; k++) /* pass_x: the reads, then the writes */
      res->dram_bytes +=
          (uint64_t)llround((gr->split_w ? 3.0 : 2.0) * M * (gr->pass_x[k] + gr->pass_x[n_c + k]) + 2 * gr->upd_x[k]);
    res->activities += gr->acts;
    work += gr->fwd_s + gr->bwd_s;
  }
  res->bubble = res->fb_s > 0 ? sim_round12(1 - work / (n * res->fb_s)) : 0;
  if (res->bubble < 0) res->bubble = 0;
  return MP_OK;
}

/* The links of job j's all-gathers (sim_int.h, "All-gathers"): those its Sends, their gradients and its
 * DRAM streams may cross, and the busiest.  0, or -1 when out of memory. */
static int plan_gathers(const sim *s, tjob *j) {
  const chip *c = s->chip;
  unsigned char *busy = s->opt.full_gather ? NULL : calloc((size_t)chip_n_links(c), 1);
  if (!s->opt.full_gather && !busy) return -1;
  for (int g = 0; busy && g < j->n_groups; g++) {
    const tgroup *gr = &j->groups[g];
    for (int k = 0; k < gr->n_fsends; k++)
      if (gr->fsends[k].bytes > 0) sim_mark_route(c, gr->fsends[k].from, gr->fsends[k].to, busy);
    for (int k = 0; k < gr->n_recvs; k++)
      if (gr->bsends[k].bytes > 0) sim_mark_route(c, gr->bsends[k].from, gr->bsends[k].to, busy);
    for (int k = 0; gr->streams && k < gr->n_cores; k++) {
      int core = gr->first_core + k, port = CHIP_PORT(chip_nearest_dram(c, core));
      int n = gr->n_cores;
      if (gr->pass_x[k] > 0 || gr->upd_x[k] > 0) sim_mark_route(c, port, core, busy);
      if (gr->pass_x[n + k] > 0 || gr->upd_x[n + k] > 0) sim_mark_route(c, core, port, busy);
    }
  }
  for (int g = 0; g < j->n_groups; g++)
    if (j->groups[g].n_cores > 1) sim_gather_plan(c, &j->groups[g].gather, busy);
  free(busy);
  return 0;
}

/* Runs compiled job j on the engine and fills res (fill's arguments); counted as sim_evaluate counts
 * (sim_get_stats). */
mp_status sim_train_run(sim *s, tjob *j, const train_options *o, int batch, uint64_t graph_hash, uint64_t plan_hash,
                        sim_train_result *res, mp_error *err) {
  mp_status st = plan_gathers(s, j) != 0 ? err_nomem(err) : sim_engine_call(s, run_job, j, err);
  if (st == MP_OK && j->failed) st = err_nomem(err);
  if (st == MP_OK) st = fill(s, j, o, batch, graph_hash, plan_hash, res, err);
  if (st == MP_OK) {
    s->stats.evaluations++;
    s->stats.activities += res->activities;
  } else {
    sim_train_result_clear(res);
  }
  return st;
}

/* ---- the cache of training results ------------------------------------------------------------------ */

/* Direct-mapped, keyed by the graph, the training options and the plan (its whole arranged_core list
 * compared): a learning method proposes the same plan many times.  Emptied with the inference cache, so
 * a resumed run meets the same hits as the run it resumes. */
#define SIM_TRAIN_CACHE 1024

typedef struct sim_train_cache_entry {
  int valid;
  uint64_t key;
  int n_arranged;
  int *arranged;
  sim_train_result res;
} sim_train_cache_entry;

void sim_train_cache_clear(sim *s, int release) {
  if (!s->train_cache) return;
  for (int i = 0; i < SIM_TRAIN_CACHE; i++)
    if (s->train_cache[i].valid) {
      free(s->train_cache[i].arranged);
      sim_train_result_clear(&s->train_cache[i].res);
    }
  if (release) {
    free(s->train_cache);
    s->train_cache = NULL;
  } else {
    memset(s->train_cache, 0, SIM_TRAIN_CACHE * sizeof *s->train_cache);
  }
}

static uint64_t train_key(const train *t, const plan *p) {
  uint64_t v[6] = {t->g->hash, (uint64_t)t->opt.schedule, (uint64_t)t->opt.optimizer, (uint64_t)t->opt.microbatches,
                   (uint64_t)t->opt.recompute, plan_hash(p)};
  return fileio_hash(FILEIO_HASH_INIT, v, sizeof v);
}

/* A deep copy of from into to; 0, or -1 out of memory (to then empty). */
static int train_result_copy(const sim_train_result *from, sim_train_result *to) {
  *to = *from;
  to->stages = malloc(((size_t)from->n_stages + 1) * sizeof *to->stages);
  to->completions = malloc(((size_t)from->microbatches + 1) * sizeof *to->completions);
  if (!to->stages || !to->completions) {
    sim_train_result_clear(to);
    return -1;
  }
  memcpy(to->stages, from->stages, (size_t)from->n_stages * sizeof *to->stages);
  memcpy(to->completions, from->completions, (size_t)from->microbatches * sizeof *to->completions);
  return 0;
}

static sim_train_cache_entry *train_slot(sim *s, uint64_t key) {
  if (s->opt.cache_size == 0) return NULL;
  if (!s->train_cache) s->train_cache = calloc(SIM_TRAIN_CACHE, sizeof *s->train_cache);
  return s->train_cache ? &s->train_cache[key % SIM_TRAIN_CACHE] : NULL;
}

static int train_hit(const sim_train_cache_entry *e, uint64_t key, const plan *p) {
  return e && e->valid && e->key == key && e->n_arranged == p->n_cores &&
         memcmp(e->arranged, p->arranged, (size_t)p->n_cores * sizeof(int)) == 0;
}

/* Keeps a copy of r in e (when there is room: a result that cannot be kept is still right). */
static void train_keep(sim_train_cache_entry *e, uint64_t key, const plan *p, const sim_train_result *r) {
  if (!e) return;
  int *arr = malloc((size_t)p->n_cores * sizeof *arr);
  sim_train_result copy;
  if (!arr || train_result_copy(r, &copy) != 0) {
    free(arr);
    return;
  }
  if (e->valid) {
    free(e->arranged);
    sim_train_result_clear(&e->res);
  }
  memcpy(arr, p->arranged, (size_t)p->n_cores * sizeof *arr);
  *e = (sim_train_cache_entry){1, key, p->n_cores, arr, copy};
}

mp_status sim_train_evaluate(sim *s, train *t, const plan *p, sim_train_result *res, mp_error *err) {
  memset(res, 0, sizeof *res);
  const chip *c = s->chip;
  const graph *g = t->g;
  if (p->n_cores != c->n_cores)
    return err_set(err, MP_INPUT, "sim: the plan is for %d cores but chip '%s' has %d", p->n_cores, c->name,
                   c->n_cores);
  if (p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan covers %d layers but graph '%s' has %d", p->n_layers, g->name,
                   g->n_ops);
  uint64_t key = train_key(t, p);
  sim_train_cache_entry *slot = train_slot(s, key);
  if (train_hit(slot, key, p)) {
    if (train_result_copy(&slot->res, res) != 0) return err_nomem(err);
    s->stats.evaluations++;
    s->stats.cache_hits++;
    return MP_OK;
  }
  tjob j = {.s = s};
  mp_status st = sim_train_compile_plan(s, t, p, &j, err);
  if (st == MP_OK) st = sim_train_run(s, &j, &t->opt, graph_batch(g), g->hash, plan_hash(p), res, err);
  if (st == MP_OK) train_keep(slot, key, p, res);
  sim_train_job_free(&j);
  return st;
}

mp_status sim_train_evaluate_timeline(sim *s, train *t, const plan *p, timeline *tl, sim_train_result *res,
                                      mp_error *err) {
  memset(res, 0, sizeof *res);
  const chip *c = s->chip;
  if (p->n_cores != c->n_cores || p->n_layers != t->g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan (%d cores, %d layers) does not fit chip '%s' (%d) and graph '%s' (%d)",
                   p->n_cores, p->n_layers, c->name, c->n_cores, t->g->name, t->g->n_ops);
  tjob j = {.s = s, .tl = tl};
  mp_status st = sim_train_compile_plan(s, t, p, &j, err);
  if (st == MP_OK) st = sim_train_run(s, &j, &t->opt, graph_batch(t->g), t->g->hash, plan_hash(p), res, err);
  if (st == MP_OK && j.tl_failed) st = err_nomem(err);
  /* what each core keeps of its static bytes (weights, gradients, optimizer state): the rest streams */
  for (int gi = 0; st == MP_OK && gi < j.n_groups; gi++) st = sim_timeline_resident(c, &j.groups[gi].model->cs, tl, err);
  if (st != MP_OK) sim_train_result_clear(res);
  sim_train_job_free(&j);
  return st;
}

void sim_train_result_clear(sim_train_result *r) {
  if (!r) return;
  free(r->stages);
  free(r->completions);
  memset(r, 0, sizeof *r);
}

cJSON *sim_train_result_to_json(const sim_train_result *r) {
  char hex[17];
  cJSON *o = cJSON_CreateObject(), *stages = o ? cJSON_AddArrayToObject(o, "stages") : NULL;
  int ok = stages && cJSON_AddStringToObject(o, "mode", "train") &&
           cJSON_AddStringToObject(o, "schedule", train_schedule_name(r->schedule)) &&
           cJSON_AddStringToObject(o, "optimizer", train_optimizer_name(r->optimizer)) &&
           cJSON_AddNumberToObject(o, "microbatches", r->microbatches) && cJSON_AddNumberToObject(o, "batch", r->batch) &&
           cJSON_AddBoolToObject(o, "recompute", r->recompute) &&
           cJSON_AddNumberToObject(o, "samples_per_s", r->samples_per_s) &&
           cJSON_AddNumberToObject(o, "minibatch_s", r->minibatch_s) && cJSON_AddNumberToObject(o, "fb_s", r->fb_s) &&
           cJSON_AddNumberToObject(o, "bubble", r->bubble) && cJSON_AddNumberToObject(o, "period_s", r->period_s) &&
           cJSON_AddNumberToObject(o, "model_minibatch_s", r->model_minibatch_s) &&
           cJSON_AddNumberToObject(o, "model_period_s", r->model_period_s) &&
           cJSON_AddNumberToObject(o, "model_bubble", r->model_bubble) &&
           cJSON_AddBoolToObject(o, "feasible", r->feasible) &&
           jsonio_add_u64(o, "sram_peak_bytes", r->sram_peak_bytes) && jsonio_add_u64(o, "dram_bytes", r->dram_bytes) &&
           cJSON_AddNumberToObject(o, "activities", (double)r->activities) &&
           cJSON_AddStringToObject(o, "graph_hash", fileio_hash_hex(r->graph_hash, hex)) &&
           cJSON_AddStringToObject(o, "plan_hash", fileio_hash_hex(r->plan_hash, hex)) &&
           cJSON_AddStringToObject(o, "chip_hash", fileio_hash_hex(r->chip_hash, hex));
  cJSON *comp = ok ? cJSON_CreateDoubleArray(r->completions, r->microbatches) : NULL;
  ok = ok && comp && cJSON_AddItemToObject(o, "completions_s", comp);
  if (!ok) cJSON_Delete(comp);
  for (int i = 0; ok && i < r->n_stages; i++) {
    const sim_train_stage *s = &r->stages[i];
    cJSON *x = cJSON_CreateObject();
    ok = x && cJSON_AddItemToArray(stages, x);
    if (!ok) {
      cJSON_Delete(x);
      break;
    }
    int layers[2] = {s->first_layer, s->first_layer + s->n_layers - 1}, cores[2] = {s->first_core,
                                                                                     s->first_core + s->n_cores - 1};
    cJSON *la = cJSON_CreateIntArray(layers, 2), *ca = cJSON_CreateIntArray(cores, 2);
    ok = la && ca && cJSON_AddItemToObject(x, "layers", la) && cJSON_AddItemToObject(x, "cores", ca);
    if (!ok) break;
    ok = cJSON_AddNumberToObject(x, "stage", i) && cJSON_AddNumberToObject(x, "fwd_s", s->fwd_s) &&
         cJSON_AddNumberToObject(x, "bwd_s", s->bwd_s) && cJSON_AddNumberToObject(x, "update_s", s->update_s) &&
         cJSON_AddNumberToObject(x, "idle_s", s->idle_s) && cJSON_AddNumberToObject(x, "dram_s", s->dram_s) &&
         cJSON_AddNumberToObject(x, "comm_s", s->comm_s) && cJSON_AddNumberToObject(x, "model_fwd_s", s->model_fwd_s) &&
         cJSON_AddNumberToObject(x, "model_bwd_s", s->model_bwd_s) && cJSON_AddNumberToObject(x, "held", s->held) &&
         cJSON_AddNumberToObject(x, "model_held", s->model_held) &&
         (r->schedule != TRAIN_ZB || /* what only zb holds */
          (cJSON_AddNumberToObject(x, "w_held", s->w_held) && cJSON_AddNumberToObject(x, "model_w_held", s->model_w_held) &&
           jsonio_add_u64(x, "wstash_bytes", s->wstash_bytes))) &&
         jsonio_add_u64(x, "static_bytes", s->static_bytes) && jsonio_add_u64(x, "stash_bytes", s->stash_bytes) &&
         jsonio_add_u64(x, "peak_bytes", s->peak_bytes) && jsonio_add_u64(x, "naive_bytes", s->naive_bytes) &&
         jsonio_add_u64(x, "sram_peak_bytes", s->sram_peak_bytes) &&
         jsonio_add_u64(x, "sram_naive_bytes", s->sram_naive_bytes) &&
         jsonio_add_u64(x, "sram_capacity", s->sram_capacity) && cJSON_AddBoolToObject(x, "fits", s->fits) &&
         cJSON_AddNumberToObject(x, "sends", s->n_sends) && cJSON_AddNumberToObject(x, "recvs", s->n_recvs);
  }
  if (ok) return o;
  cJSON_Delete(o);
  return NULL;
}
