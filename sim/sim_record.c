/* sim_record: the simulator's program as a time-independent trace, and the replay of one.
 *
 * A recorded trace is the job of sim_program.c written out: per group and micro-batch, each segment as
 * its receives (the segment's needs), the DRAM reads (before the first segment), one compute (the
 * segment's flops before the first core's share is taken, and its all-gather bytes) and the sends it
 * posts (tensor bytes before the transfer factor), and per group the analytical model's sums.
 * Replaying compiles the same job from those actions (sim_job_from_trace) with the replay chip's
 * speeds, transfer factors and DRAM ports, so on the chip it was recorded on it is the very job
 * sim_evaluate ran and the figures are identical.  A steady-state recording is marked steady and holds
 * as many micro-batches as the run's cap: its replay looks for the steady state within them by the same
 * rule, and on the recording chip stops at the same completion. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

mp_status sim_record(sim *s, const graph *g, const plan *p, int M, trace **out, mp_error *err) {
  *out = NULL;
  const chip *c = s->chip;
  if (M < 0)
    return err_set(err, MP_USAGE, "sim: the number of micro-batches must be at least 1, or 0 for steady state (got %d)",
                   M);
  if (p->n_cores != c->n_cores || p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan (%d cores, %d layers) does not fit chip '%s' (%d) and graph '%s' (%d)",
                   p->n_cores, p->n_layers, c->name, c->n_cores, g->name, g->n_ops);
  job *j = NULL;
  trace *t = NULL;
  int steady = M == 0;
  mp_status st = sim_check_op_times(s, g, err);
  if (st == MP_OK) st = sim_job_from_plan(s, g, p, M, &j, err);
  if (st == MP_OK) M = j->cap; /* a steady run's cap: its replay looks for the steady state within as many */
  if (st == MP_OK)
    st = trace_new(MESHPIPE_VERSION, g->name, g->hash, g->n_ops, p->arranged, p->n_cores, plan_hash(p), c->name,
                   c->hash, c->width, c->height, M, &t, err);
  if (st == MP_OK) {
    t->steady = steady;
    t->batch = graph_batch(g);
  }
  for (int gi = 0; st == MP_OK && gi < j->n_groups; gi++) {
    const jgroup *gr = &j->groups[gi];
    const cost_stage *cs = &gr->model;
    trace_group fig = {.first_layer = cs->first_layer,
                       .n_layers = cs->n_layers,
                       .flops = cs->work, /* the work on this chip's core model: what a replay runs */
                       .gather_bytes = cs->gather_bytes,
                       .send_bytes = cs->send_bytes,
                       .weight_bytes = cs->weight_bytes,
                       .max_act_bytes = cs->max_act_bytes,
                       .sram_bytes = (uint64_t)ceil(cs->mem_bytes),
                       .n_sends = gr->n_sends,
                       .n_recvs = gr->n_recvs};
    fig.dram_bytes = (uint64_t)llround(cs->dram_in_bytes + cs->dram_out_bytes);
    for (int k = 0; k < gr->n_segs; k++) { /* the arithmetic and SRAM bytes its energy is made of */
      fig.macs += gr->segs[k].macs;
      fig.ops += gr->segs[k].ops;
      fig.traffic += gr->segs[k].traffic;
    }
    int *cores = malloc((size_t)gr->n_cores * sizeof *cores);
    if (!cores) {
      st = err_nomem(err);
      break;
    }
    for (int k = 0; k < gr->n_cores; k++) cores[k] = gr->first_core + k;
    st = trace_add_group(t, cores, gr->n_cores, &fig, NULL, err);
    free(cores);
  }
  /* Per group and micro-batch, each segment in index order: the receives it waits for, the DRAM
   * reads (before the first), its compute (after the segments it reads) and the sends it posts. */
  for (int gi = 0; st == MP_OK && gi < j->n_groups; gi++) {
    const jgroup *gr = &j->groups[gi];
    for (int m = 0; st == MP_OK && m < M; m++)
      for (int k = 0; st == MP_OK && k < gr->n_segs; k++) {
        const seg *x = &gr->segs[k];
        for (int q = 0; st == MP_OK && q < x->n_needs; q++) {
          const jrecv *rv = &gr->recvs[x->needs[q]];
          trace_action a = {.kind = TRACE_RECV,
                            .microbatch = m,
                            .core = gr->first_core,
                            .peer = j->groups[rv->src_group].last_core,
                            .peer_group = rv->src_group};
          st = trace_add_action(t, gi, &a, rv->name, NULL, 0, err);
        }
        if (k == 0 && gr->dram_in) /* what each core reads; the replay recomputes it for its chip */
          for (int q = 0; st == MP_OK && q < gr->n_cores; q++) {
            trace_action a = {.kind = TRACE_DRAM,
                              .microbatch = m,
                              .core = gr->first_core + q,
                              .peer = -1,
                              .peer_group = -1,
                              .bytes = gr->dram_in[q]};
            if (a.bytes > 0) st = trace_add_action(t, gi, &a, "weights", NULL, 0, err);
          }
        trace_action a = {.kind = TRACE_COMPUTE,
                          .microbatch = m,
                          .core = gr->first_core,
                          .peer = -1,
                          .peer_group = -1,
                          .flops = x->raw_flops,
                          .bytes = x->gather};
        if (st == MP_OK) st = trace_add_action(t, gi, &a, x->name, x->deps, x->n_deps, err);
        for (int q = x->first_post; st == MP_OK && q < x->first_post + x->n_posts; q++) {
          const jsend *sd = &gr->sends[q];
          trace_action b = {.kind = TRACE_SEND,
                            .microbatch = m,
                            .core = gr->last_core,
                            .peer = sd->dst_core,
                            .peer_group = sd->dst_group,
                            .bytes = sd->raw_bytes};
          st = trace_add_action(t, gi, &b, sd->name, NULL, 0, err);
        }
      }
  }
  if (st == MP_OK) st = trace_check(t, c->n_cores, err);
  sim_job_free(j);
  if (st != MP_OK) {
    trace_free(t);
    return st;
  }
  *out = t;
  return MP_OK;
}

mp_status sim_replay(sim *s, const trace *t, sim_result *res, mp_error *err) {
  memset(res, 0, sizeof *res);
  job *j = NULL;
  if (t->training)
    return err_at(err, MP_USAGE, t->file, NULL,
                  "a training trace (recorded with --mode train): sim_train_replay runs it");
  mp_status st = trace_check(t, s->chip->n_cores, err);
  if (st == MP_OK) st = sim_job_from_trace(s, t, t->steady, &j, err);
  if (st == MP_OK) st = sim_engine_run(s, j, err);
  if (st == MP_OK) st = sim_job_result(s, j, res, err);
  if (st == MP_OK) {
    sim_result_set_batch(res, t->batch);
    s->stats.evaluations++;
    s->stats.activities += res->activities;
  }
  sim_job_free(j);
  return st;
}
