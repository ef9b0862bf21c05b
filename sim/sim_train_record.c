/* sim_train_record: a trained plan's mini-batch as a training trace (trace.h), and the replay of one.
 *
 * Recording writes the job sim_train_evaluate runs (sim_train_int.h): per group its passes in its order,
 * a forward as its segments' receives, computes and sends, a backward as its segments in reverse with the
 * gradients they wait for and send back, then the update; each group carries its stage's training figures
 * (train_range).  Replaying compiles the same job back from the actions - the segments, Sends and Recvs
 * from the group's first forward, the backward's waits and gradients from its first backward, the order
 * from the sequence of passes - after checking that every pass repeats the first of its kind, and models
 * the stages on the replay chip from the recorded figures (train_evaluate_stages), so on the recording
 * chip it is the very run sim_train_evaluate made. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "sim_train_int.h"

static mp_status add(trace *tr, int gi, trace_kind kind, int mb, int core, const txfer *x, double flops, double bytes,
                     const char *name, mp_error *err) {
  trace_action a = {.kind = kind,
                    .microbatch = mb,
                    .core = core,
                    .peer = x ? x->to : -1,
                    .peer_group = x ? x->group : -1,
                    .flops = flops,
                    .bytes = bytes};
  return trace_add_action(tr, gi, &a, name, NULL, 0, err);
}

/* Group gi's order of passes as actions: a forward is its segments in order (receives, compute, sends), a
 * backward its segments in reverse (the gradients it waits for, backward, the gradients it sends back), zb's
 * weight-gradient pass one 'wgrad' (named by the group's first op); then the update.  A Recv names its
 * sender as its way back does (bsends[r].to). */
static mp_status record_group(trace *tr, const tjob *j, int gi, mp_error *err) {
  const tgroup *gr = &j->groups[gi];
  mp_status st = MP_OK;
  for (int i = 0; st == MP_OK && i < gr->n_order; i++) {
    int mb = gr->order[i].mb, bwd = gr->order[i].pass == SIM_PASS_B;
    if (gr->order[i].pass == SIM_PASS_W) {
      st = add(tr, gi, TRACE_WGRAD, mb, gr->first_core, NULL, gr->w_raw, (double)gr->model->r.wstash_bytes,
               gr->segs[0].name, err);
      continue;
    }
    for (int q = 0; st == MP_OK && q < gr->n_segs; q++) {
      const tseg *x = &gr->segs[bwd ? gr->n_segs - 1 - q : q];
      if (!bwd) {
        for (int k = 0; st == MP_OK && k < x->n_needs; k++) {
          const txfer *b = &gr->bsends[x->needs[k]];
          st = add(tr, gi, TRACE_RECV, mb, gr->first_core, b, 0, 0, b->name, err);
        }
        if (st == MP_OK) st = add(tr, gi, TRACE_COMPUTE, mb, gr->first_core, NULL, x->f_raw, x->f_gather, x->name, err);
        for (int k = x->first_post; st == MP_OK && k < x->first_post + x->n_posts; k++)
          st = add(tr, gi, TRACE_SEND, mb, gr->last_core, &gr->fsends[k], 0, gr->fsends[k].raw, gr->fsends[k].name, err);
      } else {
        for (int k = 0; st == MP_OK && k < x->n_bneeds; k++) {
          const txfer *f = &gr->fsends[x->bneeds[k]];
          st = add(tr, gi, TRACE_GRECV, mb, gr->last_core, f, 0, 0, f->name, err);
        }
        if (st == MP_OK)
          st = add(tr, gi, TRACE_BACKWARD, mb, gr->first_core, NULL, x->b_raw - (gr->split_w ? x->w_raw : 0),
                   x->b_gather, x->name, err);
        for (int k = 0; st == MP_OK && k < x->n_gposts; k++) {
          const txfer *b = &gr->bsends[x->gposts[k]];
          st = add(tr, gi, TRACE_GSEND, mb, gr->first_core, b, 0, b->raw, b->name, err);
        }
      }
    }
  }
  if (st == MP_OK) st = add(tr, gi, TRACE_UPDATE, j->M - 1, gr->first_core, NULL, gr->update_raw, 0, "update", err);
  return st;
}

mp_status sim_train_record(sim *s, train *t, const plan *p, trace **out, mp_error *err) {
  *out = NULL;
  const chip *c = s->chip;
  const graph *g = t->g;
  if (p->n_cores != c->n_cores || p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan (%d cores, %d layers) does not fit chip '%s' (%d) and graph '%s' (%d)",
                   p->n_cores, p->n_layers, c->name, c->n_cores, g->name, g->n_ops);
  tjob j = {.s = s};
  trace *tr = NULL;
  mp_status st = sim_train_compile_plan(s, t, p, &j, err);
  if (st == MP_OK)
    st = trace_new(MESHPIPE_VERSION, g->name, g->hash, g->n_ops, p->arranged, p->n_cores, plan_hash(p), c->name,
                   c->hash, c->width, c->height, j.M, &tr, err);
  if (st == MP_OK) {
    tr->training = 1;
    tr->train = t->opt;
    tr->batch = graph_batch(g);
  }
  for (int gi = 0; st == MP_OK && gi < j.n_groups; gi++) {
    const tgroup *gr = &j.groups[gi];
    const train_stage *ts = gr->model;
    const cost_stage *cs = &ts->cs;
    trace_group fig = {.first_layer = cs->first_layer,
                       .n_layers = cs->n_layers,
                       .flops = cs->work,
                       .gather_bytes = cs->gather_bytes,
                       .send_bytes = cs->send_bytes,
                       .weight_bytes = cs->weight_bytes,
                       .max_act_bytes = cs->max_act_bytes,
                       .sram_bytes = (uint64_t)ceil(cs->mem_bytes),
                       .dram_bytes = (uint64_t)llround(cs->dram_in_bytes + cs->dram_out_bytes),
                       .n_sends = gr->n_fsends,
                       .n_recvs = gr->n_recvs,
                       .train = ts->r};
    int *cores = malloc((size_t)gr->n_cores * sizeof *cores);
    if (!cores) {
      st = err_nomem(err);
      break;
    }
    for (int k = 0; k < gr->n_cores; k++) cores[k] = gr->first_core + k;
    st = trace_add_group(tr, cores, gr->n_cores, &fig, NULL, err);
    free(cores);
  }
  for (int gi = 0; st == MP_OK && gi < j.n_groups; gi++) st = record_group(tr, &j, gi, err);
  if (st == MP_OK) st = trace_check(tr, c->n_cores, err);
  sim_train_job_free(&j);
  if (st != MP_OK) {
    trace_free(tr);
    return st;
  }
  *out = tr;
  return MP_OK;
}

/* A pass of a group in a training trace: its actions [start, end), its kind and micro-batch. */
typedef struct tpass {
  int start, end;
  sim_pass pass;
  int mb;
} tpass;

static sim_pass pass_of(trace_kind k) {
  return k == TRACE_WGRAD ? SIM_PASS_W : k == TRACE_GRECV || k == TRACE_BACKWARD || k == TRACE_GSEND ? SIM_PASS_B
                                                                                                     : SIM_PASS_F;
}

static const char *pass_name(sim_pass p) {
  return p == SIM_PASS_F ? "forward" : p == SIM_PASS_B ? "backward" : "weight-gradient pass";
}

static int same_step(const trace_action *a, const trace_action *b) {
  return a->kind == b->kind && a->core == b->core && a->peer == b->peer && a->flops == b->flops &&
         a->bytes == b->bytes && a->name == b->name;
}

/* The Recv of gr from core src of tensor name (interned, so compared as pointers), or -1. */
static int find_recv(const tgroup *gr, int src, const char *name) {
  for (int r = 0; r < gr->n_recvs; r++)
    if (gr->bsends[r].to == src && gr->bsends[r].name == name) return r;
  return -1;
}

/* The forward Send of gr to core dst of tensor name, or -1. */
static int find_send(const tgroup *gr, int dst, const char *name) {
  for (int i = 0; i < gr->n_fsends; i++)
    if (gr->fsends[i].to == dst && gr->fsends[i].name == name) return i;
  return -1;
}

static const char *line_of(const trace_action *a, char *buf, size_t n) {
  if (a->line <= 0) return NULL;
  snprintf(buf, n, "line %d", a->line);
  return buf;
}

/* Group gi's passes (passes: room for sim_schedule_steps), checked: each micro-batch's forward once, then
 * its backward once, then (zb) its weight-gradient pass once, every pass repeating the actions of the
 * first of its kind. */
static mp_status trace_passes(const trace *tr, int gi, tpass *passes, mp_error *err) {
  const trace_group *tg = &tr->groups[gi];
  int M = tr->microbatches, n = 0, zb = tr->train.schedule == TRAIN_ZB;
  char where[32];
  unsigned char *seen = calloc(3 * (size_t)M, 1);
  if (!seen) return err_nomem(err);
  mp_status st = MP_OK;
  for (int i = 0; i + 1 < tg->n_actions && st == MP_OK; i++) { /* the last is the update (trace_check) */
    const trace_action *a = &tg->actions[i];
    sim_pass ps = pass_of(a->kind);
    if (n > 0 && passes[n - 1].pass == ps && passes[n - 1].mb == a->microbatch && ps != SIM_PASS_W) {
      passes[n - 1].end = i + 1;
      continue;
    }
    const char *at = line_of(a, where, sizeof where);
    if (seen[3 * a->microbatch + ps])
      st = err_at(err, MP_INPUT, tr->file, at, "group %d runs the %s of micro-batch %d a second time", gi,
                  pass_name(ps), a->microbatch);
    else if (ps != SIM_PASS_F && !seen[3 * a->microbatch + ps - 1])
      st = err_at(err, MP_INPUT, tr->file, at, "group %d runs the %s of micro-batch %d before its %s", gi,
                  pass_name(ps), a->microbatch, pass_name(ps - 1));
    else
      passes[n++] = (tpass){i, i + 1, ps, a->microbatch};
    seen[3 * a->microbatch + ps] = 1;
  }
  for (int m = 0; m < M && st == MP_OK; m++)
    for (int ps = SIM_PASS_B; ps <= (zb ? SIM_PASS_W : SIM_PASS_B) && st == MP_OK; ps++)
      if (!seen[3 * m + ps])
        st = err_at(err, MP_INPUT, tr->file, NULL, "group %d never runs the %s of micro-batch %d", gi,
                    pass_name((sim_pass)ps), m);
  free(seen);
  const tpass *first[3] = {NULL, NULL, NULL};
  for (int k = 0; k < n && st == MP_OK; k++) {
    const tpass *x = &passes[k], *f = first[x->pass];
    if (!f) {
      first[x->pass] = x;
      continue;
    }
    int same = x->end - x->start == f->end - f->start;
    for (int i = 0; same && i < x->end - x->start; i++)
      same = same_step(&tg->actions[x->start + i], &tg->actions[f->start + i]);
    if (!same)
      st = err_at(err, MP_INPUT, tr->file, line_of(&tg->actions[x->start], where, sizeof where),
                  "the %s of micro-batch %d of group %d differs from micro-batch %d's (line %d): a replay runs the "
                  "same actions, in the same order, for every micro-batch",
                  pass_name(x->pass), x->mb, gi, f->mb, tg->actions[f->start].line);
  }
  return st;
}

/* Group gi's program from its first forward (segments, Recvs, Sends) and its order: the first phase of
 * compile_trace, before any Send knows its receiving group's Recv. */
static mp_status trace_forward(const trace *tr, int gi, const tpass *passes, tgroup *gr, mp_error *err) {
  const trace_group *tg = &tr->groups[gi];
  int M = tr->microbatches, n_steps = sim_schedule_steps(tr->train.schedule, M), n_segs = 0, n_sends = 0, n_recvs = 0;
  const tpass *f0 = NULL, *b0 = NULL;
  for (int k = 0; k < n_steps; k++) {
    if (passes[k].pass == SIM_PASS_F && !f0) f0 = &passes[k];
    if (passes[k].pass == SIM_PASS_B && !b0) b0 = &passes[k];
    if (passes[k].pass == SIM_PASS_W && !gr->split_w) { /* every W repeats the first (trace_passes) */
      gr->split_w = 1;
      gr->w_raw = tg->actions[passes[k].start].flops;
      gr->w_bytes = tg->actions[passes[k].start].bytes;
    }
  }
  int n_back = 0;
  for (int i = b0->start; i < b0->end; i++) n_back += tg->actions[i].kind == TRACE_BACKWARD;
  for (int i = f0->start; i < f0->end; i++) {
    trace_kind k = tg->actions[i].kind;
    n_segs += k == TRACE_COMPUTE;
    n_sends += k == TRACE_SEND;
    n_recvs += k == TRACE_RECV; /* at least the distinct ones */
  }
  char where[32];
  if (n_back != n_segs)
    return err_at(err, MP_INPUT, tr->file, line_of(&tg->actions[b0->start], where, sizeof where),
                  "group %d: %d backwards for %d computes: a backward runs each segment again, in reverse", gi, n_back,
                  n_segs);
  gr->first_core = tg->cores[0];
  gr->n_cores = tg->n_cores;
  gr->last_core = tg->cores[tg->n_cores - 1];
  gr->update_raw = tg->actions[tg->n_actions - 1].flops;
  if (sim_train_alloc_group(gr, M, n_segs, n_sends, n_recvs) != 0) return err_nomem(err);
  gr->n_fsends = gr->n_recvs = gr->n_segs = 0;
  for (int k = 0; k < n_steps; k++) gr->order[k] = (sim_schedule_step){passes[k].pass, passes[k].mb};
  gr->n_order = n_steps;
  int *pending = malloc(((size_t)n_recvs + 1) * sizeof *pending), n_pending = 0;
  if (!pending) return err_nomem(err);
  mp_status st = MP_OK;
  tseg *cur = NULL;
  for (int i = f0->start; i < f0->end && st == MP_OK; i++) {
    const trace_action *a = &tg->actions[i];
    const char *name = tr->names[a->name], *at = line_of(a, where, sizeof where);
    if (a->kind == TRACE_RECV) {
      int r = find_recv(gr, a->peer, name);
      if (r < 0) {
        r = gr->n_recvs++;
        gr->bsends[r] = (txfer){0, 0, name, gr->first_core, a->peer, a->peer_group, -1};
      }
      int dup = 0;
      for (int q = 0; q < n_pending; q++) dup |= pending[q] == r;
      if (!dup) pending[n_pending++] = r;
    } else if (a->kind == TRACE_COMPUTE) {
      cur = &gr->segs[gr->n_segs++];
      cur->f_raw = a->flops;
      cur->f_gather = a->bytes;
      cur->name = name;
      cur->first_post = gr->n_fsends;
      if (n_pending > 0) {
        if (!(cur->needs = malloc((size_t)n_pending * sizeof *cur->needs))) {
          st = err_nomem(err);
          break;
        }
        memcpy(cur->needs, pending, (size_t)n_pending * sizeof *pending);
        cur->n_needs = n_pending;
        n_pending = 0;
      }
    } else if (!cur) {
      st = err_at(err, MP_INPUT, tr->file, at, "group %d sends before its first compute: nothing produced it yet", gi);
    } else if (a->core != gr->last_core) {
      st = err_at(err, MP_INPUT, tr->file, at, "c%d sends, but a group sends from its last core (c%d)", a->core,
                  gr->last_core);
    } else {
      gr->fsends[gr->n_fsends++] = (txfer){0, a->bytes, name, gr->last_core, a->peer, a->peer_group, -1};
      cur->n_posts++;
    }
  }
  free(pending);
  if (st == MP_OK && n_pending > 0)
    st = err_at(err, MP_INPUT, tr->file, NULL, "group %d receives after its last compute: nothing would wait for it",
                gi);
  return st;
}

/* The second phase: the Sends' receiving Recvs, and the first backward (what each segment's backward waits
 * for and sends back).  bwd (room for the group's Recvs) receives the gradients sent, in order, for the model. */
static mp_status trace_backward(const trace *tr, int gi, const tpass *passes, tjob *j, cost_transfer *bwd, int *n_bwd,
                                mp_error *err) {
  const trace_group *tg = &tr->groups[gi];
  tgroup *gr = &j->groups[gi];
  char where[32];
  const tpass *b0 = NULL;
  for (int k = 0; !b0; k++)
    if (passes[k].pass == SIM_PASS_B) b0 = &passes[k];
  for (int i = 0; i < gr->n_fsends; i++) {
    txfer *x = &gr->fsends[i];
    tgroup *dg = &j->groups[x->group];
    x->slot = x->to == dg->first_core ? find_recv(dg, gr->last_core, x->name) : -1;
    if (x->slot < 0)
      return err_at(err, MP_INPUT, tr->file, NULL,
                    "group %d sends '%s' to c%d, but group %d receives it on its first core (c%d) in no forward", gi,
                    x->name, x->to, x->group, dg->first_core);
  }
  *n_bwd = 0;
  int q = -1, *pending = malloc(((size_t)gr->n_fsends + 1) * sizeof *pending), n_pending = 0;
  if (!pending) return err_nomem(err);
  mp_status st = MP_OK;
  for (int i = b0->start; i < b0->end && st == MP_OK; i++) {
    const trace_action *a = &tg->actions[i];
    const char *name = tr->names[a->name], *at = line_of(a, where, sizeof where);
    tseg *x = q >= 0 ? &gr->segs[gr->n_segs - 1 - q] : NULL;
    if (a->kind == TRACE_GRECV) {
      int f = a->core == gr->last_core ? find_send(gr, a->peer, name) : -1;
      int dup = 0; /* a second grecv of a gradient waits for the same arrival */
      for (int k = 0; k < n_pending; k++) dup |= pending[k] == f;
      if (f < 0)
        st = err_at(err, MP_INPUT, tr->file, at,
                    "c%d waits for the gradient of '%s' from c%d, but its group's last core (c%d) sends that tensor "
                    "there in no forward",
                    a->core, name, a->peer, gr->last_core);
      else if (!dup)
        pending[n_pending++] = f;
    } else if (a->kind == TRACE_BACKWARD) {
      x = &gr->segs[gr->n_segs - 1 - ++q];
      x->b_raw = a->flops;
      x->b_gather = a->bytes;
      for (int k = 0; k < n_pending && st == MP_OK; k++)
        if (sim_train_push(&x->bneeds, &x->n_bneeds, pending[k]) != 0) st = err_nomem(err);
      n_pending = 0;
    } else if (!x) {
      st = err_at(err, MP_INPUT, tr->file, at, "group %d sends a gradient before its first backward", gi);
    } else {
      int r = a->core == gr->first_core ? find_recv(gr, a->peer, name) : -1;
      tgroup *sg = &j->groups[a->peer_group];
      int slot = r >= 0 ? find_send(sg, gr->first_core, name) : -1;
      if (slot < 0) {
        st = err_at(err, MP_INPUT, tr->file, at,
                    "c%d sends the gradient of '%s' to c%d, but its group's first core (c%d) received that tensor from "
                    "there in no forward",
                    a->core, name, a->peer, gr->first_core);
        break;
      }
      gr->bsends[r].raw = a->bytes;
      gr->bsends[r].slot = slot;
      bwd[(*n_bwd)++] = (cost_transfer){a->bytes, a->peer};
      if (sim_train_push(&x->gposts, &x->n_gposts, r) != 0) st = err_nomem(err);
    }
  }
  free(pending);
  if (st == MP_OK && n_pending > 0)
    st = err_at(err, MP_INPUT, tr->file, NULL, "group %d waits for a gradient after its last backward", gi);
  return st;
}

/* The job of a training trace whose core ids are the sim chip's, with the model of its recorded figures on
 * that chip: what replaying it runs. */
static mp_status compile_trace(sim *s, const trace *tr, tjob *j, mp_error *err) {
  const chip *c = s->chip;
  int M = tr->microbatches, n = tr->n_groups, n_x = 0;
  size_t room = (size_t)sim_schedule_steps(tr->train.schedule, M); /* a group's passes */
  mp_status st = MP_OK;
  j->M = M;
  j->groups = calloc((size_t)n + 1, sizeof *j->groups);
  tpass *passes = malloc(room * (size_t)(n + 1) * sizeof *passes);
  train_stage_input *in = calloc((size_t)n + 1, sizeof *in);
  for (int gi = 0; gi < n; gi++) n_x += tr->groups[gi].n_actions; /* room for any group's transfers */
  cost_transfer *x = malloc(((size_t)n_x + 1) * sizeof *x), *next = x;
  if (!j->groups || !passes || !in || !x) {
    st = err_nomem(err);
    goto cleanup;
  }
  j->n_groups = n;
  for (int gi = 0; gi < n && st == MP_OK; gi++) {
    const trace_group *tg = &tr->groups[gi];
    for (int k = 1; k < tg->n_cores && st == MP_OK; k++)
      if (tg->cores[k] != tg->cores[0] + k)
        st = err_at(err, MP_INPUT, tr->file, NULL,
                    "group %d: its cores are not consecutive ids on chip '%s' (--map xy): the simulator runs a group "
                    "on a snake-ordered id range; use --map snake:K",
                    gi, c->name);
    if (st == MP_OK) st = trace_passes(tr, gi, passes + room * gi, err);
    if (st == MP_OK) st = trace_forward(tr, gi, passes + room * gi, &j->groups[gi], err);
  }
  for (int gi = 0; gi < n && st == MP_OK; gi++) {
    const trace_group *tg = &tr->groups[gi];
    tgroup *gr = &j->groups[gi];
    train_stage_input *s_in = &in[gi];
    *s_in = (train_stage_input){.r = tg->train,
                                .first_layer = tg->first_layer,
                                .n_layers = tg->n_layers,
                                .first_core = gr->first_core,
                                .n_cores = gr->n_cores,
                                .n_fwd = gr->n_fsends,
                                .fwd = next};
    for (int i = 0; i < gr->n_fsends; i++) *next++ = (cost_transfer){gr->fsends[i].raw, gr->fsends[i].to};
    for (int k = 0; k < gr->n_segs; k++) s_in->fwd_segments += gr->segs[k].f_gather > 0;
    s_in->bwd = next;
    st = trace_backward(tr, gi, passes + room * gi, j, next, &s_in->n_bwd, err);
    s_in->r.dw_flops = (uint64_t)llround(gr->w_raw); /* zb's W as recorded (the 'train' line has neither) */
    s_in->r.wstash_bytes = (uint64_t)llround(gr->w_bytes);
    next += s_in->n_bwd;
    for (int k = 0; k < gr->n_segs && st == MP_OK; k++) /* counted now that the backwards are known */
      s_in->bwd_segments += gr->segs[k].b_gather > 0;
  }
  if (st != MP_OK) goto cleanup;
  train_options o = tr->train;
  o.microbatches = M;
  if ((st = train_evaluate_stages(&o, tr->batch, c, n, in, &j->model, err)) != MP_OK) goto cleanup;
  for (int gi = 0; gi < n && st == MP_OK; gi++) {
    tgroup *gr = &j->groups[gi];
    gr->model = &j->model->stages[gi];
    double gamma = gr->model->cs.gamma;
    for (int i = 0; i < gr->n_fsends; i++) gr->fsends[i].bytes = gamma * gr->fsends[i].raw;
    for (int r = 0; r < gr->n_recvs; r++) gr->bsends[r].bytes = gamma * gr->bsends[r].raw;
    if (sim_train_finish_group(s, gr) != 0) st = err_nomem(err);
  }
cleanup:
  free(passes);
  free(in);
  free(x);
  return st;
}

mp_status sim_train_replay(sim *s, const trace *tr, sim_train_result *res, mp_error *err) {
  memset(res, 0, sizeof *res);
  if (!tr->training)
    return err_at(err, MP_USAGE, tr->file, NULL, "an inference trace (no 'training' line): sim_replay runs it");
  tjob j = {.s = s};
  mp_status st = trace_check(tr, s->chip->n_cores, err);
  if (st == MP_OK) st = compile_trace(s, tr, &j, err);
  train_options o = tr->train;
  o.microbatches = tr->microbatches;
  if (st == MP_OK) st = sim_train_run(s, &j, &o, tr->batch, tr->graph_hash, tr->plan_hash, res, err);
  sim_train_job_free(&j);
  return st;
}
