/* sim_engine: SimGrid's engine in a thread of its own, and the actors that run a job (see sim.h).
 *
 * sim_engine_start writes the chip's platform (sim_int.h) to a temporary file and starts a pthread
 * that initialises SimGrid (host model ptask_L07, surf/precision 1e-15, 64 KiB raw-context stacks
 * without guard pages, logs silenced unless verbose), loads the platform, deletes the file and runs a
 * controller actor.  The controller waits on a pthread condition variable for requests from the
 * caller's thread; while it waits, nothing else exists in the simulation, so blocking the engine's
 * thread is harmless.  For each job it creates the plan's actors, joins them, and hands back times
 * measured as differences of the engine's clock.  sim_engine_stop makes the controller return,
 * simgrid_run ends and the thread is joined.  SimGrid aborts on any error, so everything is
 * validated before it runs.
 *
 * Actors.  Each group has one actor that runs its (micro-batch, segment) pairs from a ready queue, as
 * TensorFlow's executor does: the lowest micro-batch, then segment, whose received tensors have
 * arrived and whose segments it reads from are done.  A segment is one execution of its flops on the
 * group's first core (scaled to that core's share) followed by one all-gather over the group's snake
 * chain (sim_transfer.c).  Sends are handed, in order, to the group's sender actor, which runs one
 * transfer at a time (FIFO, overlapping the group's next compute: double buffering) and then signals the
 * receiver (a counter and a semaphore: the transfer is in flight from the moment it is posted, as with a
 * permanent receiver).  A group whose share does not fit its cores' SRAM streams, every micro-batch,
 * before its first segment each over-full core's reads from its nearest DRAM port and after its last
 * segment each core's spill back, every core's transfer its own (sim_program.c, "DRAM").  A private
 * transfer (sim_int.h) runs as above once; then a segment's all-gather is timed within its execution,
 * and a Send or a micro-batch's DRAM streams are a sleep of the time they took.  Executions and those
 * sleeps wait on the job's timer actor (sim_int.h, "Timer"; sim_timer.c), the one actor that sleeps
 * in SimGrid for them, unless sim_options.simgrid_waits or a Paje trace asks for SimGrid's own.
 *
 * Where the time goes (perf on bench/sim_speed, ResNet-50, random plans of 1..16 stages run to steady
 * state, 16x16 mesh): 99 % in SimGrid and the C/C++ runtime beneath it, under 1 % in meshpipe's own
 * code.  An activity's cost grows with the links it touches.  All-gathers over every link of their chain
 * made an activity on 16x16 cost four times one on 4x4 (33-57 k activities/s against 215 k); since they
 * keep only the links that can bind (sim_int.h, "All-gathers"), 16x16 runs 218 k/s, 8x8 261 k/s and
 * 4x4 290 k/s, and the profile on 16x16 is flat: the ptask solver (FairBottleneck::do_solve 10 %),
 * malloc/free (9 %), activity reference counting (4.5 %), the engine's loop.  What is left is the number
 * of activities: about 65 per micro-batch, over 15 micro-batches per evaluation on 8x8 since steady runs
 * start with a narrow window (36 before; sim_int.h, "Steady state").  Of those on 8x8, 31 % were
 * executions, 26 % all-gathers, 24 % Sends (92 % of them to the next group) and 21 % DRAM streams;
 * running private transfers once (sim_int.h) leaves 51 per micro-batch on 8x8 (65 before) and 44 on
 * 16x16 (58), and callgrind counts 1.24x (4x4), 1.49x (8x8) and 1.50x (16x16) fewer instructions per
 * evaluation (60 random plans each, start-up included).  On 32x32 the per-core DRAM streams of
 * over-full groups (hundreds at once over the ports' links) put 48-53 % of the time in the solver,
 * which shares the links again among every activity in flight at each event; sim_options.fast_streams,
 * one task per port and group (sim_int.h, "DRAM streams"), cuts the activities per evaluation from
 * 9 055 to 559 and evaluates 5.6-6.3x faster, at a cost in fidelity.  The full route table
 * (SIM_ROUTING_MANY for learning methods) removes most route look-up time: 1.34x the evaluations per
 * CPU-second on 16x16 (measured before the all-gathers were pruned); the torus platform (sim_int.h)
 * removes the searches without a table: one Dijkstra per core a transfer starts from was 63 % of
 * `simulate -M 8` of a 493-stage plan on 32x32.  SimGrid's solver and update walk
 * every running action at each step, so each busy group's execution cost something at every event: a
 * 503-stage plan of a ResNet-152-like graph on 32x32 ran to its cap in 168 s, with the timer in 65.5 s;
 * rl on 16x16 (41-stage plans) took 123.6 s instead of 173.1 s.
 *
 * Stacks.  SimGrid protects a page below each actor's stack by default: two mprotect calls per actor,
 * about 35 per evaluation on 8x8, and since the engine has a thread of its own each one flushes the
 * TLBs of the other core too (300 evaluations on 8x8: 0.15 s of system time, 0.06 s without).
 * Without guard pages the stacks are plain heap blocks.  What the guard would catch, an actor
 * overflowing 64 KiB, has a measured margin: with 32 KiB stacks and guard pages every suite passes
 * (stacks of 16 KiB crash). */
#define _GNU_SOURCE /* mkstemps */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/semaphore.h>
#include <xbt/dynar.h>

#include "bytes.h"
#include "proc.h"
#include "sim_int.h"

enum { SIM_ST_STARTING, SIM_ST_IDLE, SIM_ST_REQUEST, SIM_ST_DONE, SIM_ST_STOP, SIM_ST_ENDED };

/* One request to the engine thread: a job to run, a function to call (sim_engine_call), or a route to
 * look up. */
struct sim_request {
  job *j; /* NULL: a call when fn is set, else a route query */
  void (*fn)(sim *, void *);
  void *ctx;
  int ra, rb, r_max, r_count;
  char (*r_names)[48];
  int clock;        /* with j NULL: a clock request (sleep until `until` if later, then read `now`) */
  double until, now;
};

static atomic_int engine_claimed; /* SimGrid starts once per process */

/* ---- actors (engine thread) ------------------------------------------------------------------ */

typedef struct actor_arg {
  sim *s;
  job *j;
  int g;
} actor_arg;

/* Timeline events (only when the job has a timeline; times relative to the job's start). */

static void tl_add(job *j, const timeline_event *e) {
  if (timeline_add(j->tl, e, NULL) != MP_OK) j->tl_failed = 1;
}

static void timeline_exec(job *j, int g, int mb, const seg *x, double t0, double tg, double t1) {
  const jgroup *gr = &j->groups[g];
  timeline_event e = {.kind = TIMELINE_EXEC,
                      .start_s = t0 - j->t0,
                      .end_s = t1 - j->t0,
                      .name = x->name,
                      .microbatch = mb,
                      .first_core = gr->first_core,
                      .n_cores = gr->n_cores,
                      .flops = x->raw_flops,
                      .gather_s = tg > t0 && tg < t1 ? tg - j->t0 : 0,
                      .bytes = (uint64_t)llround(x->gather),
                      .dram_port = -1};
  tl_add(j, &e);
}

static void timeline_dram(job *j, int g, int mb, int write, double t0, double t1) {
  const jgroup *gr = &j->groups[g];
  for (int k = 0; k < gr->n_cores; k++) {
    double bytes = write ? gr->dram_out[k] : gr->dram_in[k];
    timeline_event e = {.kind = TIMELINE_TRANSFER,
                        .start_s = t0 - j->t0,
                        .end_s = t1 - j->t0,
                        .name = write ? "spilled activations" : "weights and spilled activations",
                        .microbatch = mb,
                        .src_core = gr->first_core + k,
                        .dst_core = gr->first_core + k,
                        .dram_port = gr->dram_port[k],
                        .to_dram = write,
                        .src_group = write ? g : -1,
                        .dst_group = write ? -1 : g,
                        .bytes = (uint64_t)llround(bytes)};
    if (bytes > 0) tl_add(j, &e);
  }
}

static void timeline_send(job *j, int g, int mb, const jsend *sd, double t0, double t1) {
  const jgroup *gr = &j->groups[g];
  timeline_event e = {.kind = TIMELINE_TRANSFER,
                      .start_s = t0 - j->t0,
                      .end_s = t1 - j->t0,
                      .name = sd->name,
                      .microbatch = mb,
                      .src_core = gr->last_core,
                      .dst_core = sd->dst_core,
                      .dram_port = -1,
                      .src_group = g,
                      .dst_group = sd->dst_group,
                      .is_send = 1,
                      .bytes = (uint64_t)llround(sd->bytes)};
  tl_add(j, &e);
}

static int seg_ready(const jgroup *gr, int mb, int sg) {
  const seg *x = &gr->segs[sg];
  const unsigned char *done = gr->done + (size_t)mb * (size_t)gr->n_segs;
  if (done[sg]) return 0;
  for (int k = 0; k < x->n_deps; k++)
    if (!done[x->deps[k]]) return 0;
  for (int k = 0; k < x->n_needs; k++)
    if (gr->arrived[x->needs[k]] <= mb) return 0;
  return 1;
}

/* Server k (0: the actor, 1: the sender) of group gr waits on sem: a wait longer than a tolerance of
 * the last completion interval ends its busy stretch. */
static void wait_sem(const job *j, jgroup *gr, int k, sg_sem_t sem) {
  double t0 = gr->wait_from[k] = simgrid_get_clock();
  sg_sem_acquire(sem);
  double t1 = simgrid_get_clock();
  int n = j->n_complete;
  gr->wait_from[k] = -1;
  if (t1 - t0 > (n >= 2 ? SIM_STEADY_TOLERANCE * (j->c[n - 1] - j->c[n - 2]) : 0)) gr->busy_since[k] = t1;
}

/* Group g has finished everything of micro-batch mb (segments and sends) at time t. */
static void group_done(job *j, int mb, double t) {
  if (++j->groups_done[mb] < j->n_groups) return;
  j->c[mb] = t;
  int limit = j->limit;
  while (j->n_complete < j->cap_now && j->n_complete < j->limit && j->groups_done[j->n_complete] == j->n_groups) {
    j->n_complete++;
    if (!j->fixed) sim_steady_check(j, simgrid_get_clock());
  }
  if (j->n_complete == j->cap_now) j->limit = j->cap_now; /* the cap: stop here, settled or not */
  /* The window may have opened for a waiting group, or the run may have ended.  Only a segment that
   * receives nothing can wait for the window: a received tensor's micro-batch started within it, and
   * the window's end never moves back. */
  int ended = j->limit != limit;
  for (int g = 0; g < j->n_groups; g++)
    if (j->groups[g].waiting && (ended || j->groups[g].window_bound)) {
      j->groups[g].waiting = 0;
      sg_sem_release(j->groups[g].ev);
    }
}

static void started(job *j, int mb) {
  if (j->start_t[mb] < 0) j->start_t[mb] = simgrid_get_clock();
}

/* Event e of micro-batch mb in group gr happened at t (steady runs; jgroup.ev_t). */
static void event(jgroup *gr, int mb, int e, double t) {
  if (gr->ev_t) gr->ev_t[(size_t)mb * (size_t)gr->n_ev + (size_t)e] = t;
}

/* Group gr's DRAM reads (write 0) or writes (1) of one micro-batch, waited for: its streams, or once
 * private ones have run, a sleep of the time they took (sim_int.h, "Private transfers"). */
static void dram_batch(job *j, jgroup *gr, int write) {
  double *solo = &gr->dram_solo_s[write];
  if (*solo >= 0) {
    sim_timer_sleep(&j->timer, gr->tm[0], *solo);
    gr->acts++;
    return;
  }
  double t = simgrid_get_clock();
  gr->acts += sim_dram_streams(&gr->streams, write ? gr->dram_out : gr->dram_in, write);
  if (gr->private_dram) *solo = simgrid_get_clock() - t;
}

static void group_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  actor_arg *a = sg_actor_self_get_data();
  sim *s = a->s;
  job *j = a->j;
  jgroup *gr = &j->groups[a->g];
  int lo = 0; /* micro-batches below lo are done */
  double speed = sg_host_get_speed(s->hosts[gr->first_core]);
  for (;;) {
    while (lo < j->limit && gr->left[lo] == 0) lo++;
    if (lo >= j->limit) break;
    /* the ready queue: the lowest micro-batch, then segment, whose inputs are all there, within the
     * window of micro-batches in flight */
    int top = j->n_complete + j->window < j->limit ? j->n_complete + j->window : j->limit;
    int mb = -1, sg = -1;
    for (int m = lo; m < top && mb < 0; m++)
      for (int q = 0; q < gr->n_segs; q++)
        if (seg_ready(gr, m, q)) {
          mb = m;
          sg = q;
          break;
        }
    if (mb < 0) {
      gr->waiting = 1;
      wait_sem(j, gr, 0, gr->ev);
      continue;
    }
    seg *x = &gr->segs[sg];
    started(j, mb);
    event(gr, mb, 4 * sg, simgrid_get_clock());
    if (gr->left[mb] == gr->n_segs && gr->model.dram_in_bytes > 0) { /* the micro-batch's first segment */
      double t = simgrid_get_clock();
      dram_batch(j, gr, 0);
      gr->mb_dram[mb] += simgrid_get_clock() - t;
      if (j->tl) timeline_dram(j, a->g, mb, 0, t, simgrid_get_clock());
    }
    double t = simgrid_get_clock(), tg;
    event(gr, mb, 4 * sg + 1, t);
    if (x->solo_s >= 0) { /* a private all-gather's time, within the execution */
      sim_timer_execute(&j->timer, gr->tm[0], x->flops + x->solo_s * speed, speed);
      gr->acts++;
      tg = t + x->flops / speed;
      event(gr, mb, 4 * sg + 2, simgrid_get_clock()); /* one activity: its end */
    } else {
      if (x->flops > 0) {
        sim_timer_execute(&j->timer, gr->tm[0], x->flops, speed);
        gr->acts++;
      }
      tg = simgrid_get_clock();
      event(gr, mb, 4 * sg + 2, tg);
      if (gr->n_cores > 1 && x->gather > 0) {
        sim_all_gather(s, &gr->gather, x->gather);
        gr->acts++;
        if (gr->private_gather) x->solo_s = simgrid_get_clock() - tg;
      }
    }
    double t1 = simgrid_get_clock();
    gr->mb_compute[mb] += t1 - t;
    event(gr, mb, 4 * sg + 3, t1);
    if (j->tl) timeline_exec(j, a->g, mb, x, t, tg, t1);
    for (int k = 0; k < x->n_posts; k++) {
      gr->queue[gr->q_tail++] = (qitem){x->first_post + k, mb};
      sg_sem_release(gr->q);
    }
    gr->done[(size_t)mb * (size_t)gr->n_segs + (size_t)sg] = 1;
    if (gr->left[mb] == 1 && gr->model.dram_out_bytes > 0) { /* its last segment: write the spill back */
      dram_batch(j, gr, 1);
      double t2 = simgrid_get_clock();
      gr->mb_dram[mb] += t2 - t1;
      if (j->tl) timeline_dram(j, a->g, mb, 1, t1, t2);
      t1 = t2;
    }
    if (--gr->left[mb] == 0) {
      event(gr, mb, 4 * gr->n_segs, t1);
      if (gr->sends_left[mb] == 0) {
        event(gr, mb, gr->n_ev - 1, t1);
        group_done(j, mb, t1);
      }
    }
  }
  if (gr->n_sends > 0) { /* nothing more to send: the sender ends after what is queued */
    gr->queue[gr->q_tail++] = (qitem){-1, -1};
    sg_sem_release(gr->q);
  }
  sim_timer_leave(&j->timer);
}

static void sender_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  actor_arg *a = sg_actor_self_get_data();
  sim *s = a->s;
  job *j = a->j;
  jgroup *gr = &j->groups[a->g];
  for (;;) {
    wait_sem(j, gr, 1, gr->q);
    qitem it = gr->queue[gr->q_head++];
    if (it.send < 0) break;
    if (it.mb >= j->limit) continue; /* the run has ended before this micro-batch counts */
    jsend *sd = &gr->sends[it.send];
    double t = simgrid_get_clock();
    event(gr, it.mb, 4 * gr->n_segs + 1 + 2 * it.send, t);
    if (sd->bytes > 0) {
      if (sd->solo_s >= 0) /* private: the time it took (sim_int.h, "Private transfers") */
        sim_timer_sleep(&j->timer, gr->tm[1], sd->solo_s);
      else
        sim_ptask2(s->hosts[gr->last_core], s->hosts[sd->dst_core], sd->bytes);
      gr->acts++;
    }
    double t1 = simgrid_get_clock();
    if (sd->private && sd->solo_s < 0 && sd->bytes > 0) sd->solo_s = t1 - t;
    event(gr, it.mb, 4 * gr->n_segs + 2 + 2 * it.send, t1);
    gr->mb_comm[it.mb] += t1 - t;
    if (j->tl) timeline_send(j, a->g, it.mb, sd, t, t1);
    jgroup *dg = &j->groups[sd->dst_group];
    dg->arrived[sd->dst_recv]++;
    sg_sem_release(dg->ev);
    if (--gr->sends_left[it.mb] == 0 && gr->left[it.mb] == 0) {
      event(gr, it.mb, gr->n_ev - 1, t1);
      group_done(j, it.mb, t1);
    }
  }
  sim_timer_leave(&j->timer);
}

/* The completion after which an unsettled steady run's mean interval counts (n >= 2 complete): the
 * last half of the run after the warm-up and the window's closing. */
static int unsettled_from(const job *j) {
  int L = j->n_complete - 1, from = L / 2 > j->warmup ? L / 2 : j->warmup;
  if (from < j->closed_at) from = j->closed_at;
  return from < L ? from : L - 1;
}

/* Whether a steady run ended at its cap with a mean interval below its link floor, the busiest link's
 * bytes per micro-batch / bandwidth on chip c (a transient, sim_int.h "Steady state"), and may double
 * its cap.  The floor walks every link, so it is taken only for such a run. */
static int below_link_floor(const chip *c, const job *j) {
  int n = j->n_complete, L = n - 1;
  if (j->cycle > 0 || j->doublings == 0 || n < 2) return 0; /* fixed runs have no doublings */
  int from = unsettled_from(j);
  double mean = (j->c[L] - j->c[from]) / (double)(L - from), floor = 0;
  for (int k = 0, nl = chip_n_links(c); k < nl; k++) floor = fmax(floor, j->link_bytes[k] / chip_link_bandwidth(c, k));
  return mean < floor * (1 - SIM_STEADY_TOLERANCE);
}

/* The run's figures from its completions (see sim_int.h, job_run). */
static void measure(job *j) {
  job_run *r = &j->run;
  int n = j->n_complete;
  memset(r, 0, sizeof *r);
  r->warmup = j->fixed ? 0 : j->warmup;
  r->cycle = j->cycle;
  r->settled = !j->fixed && j->cycle > 0;
  if (n < 1) return; /* nothing completed: the engine stopped (reported as a failed run) */
  int L = n - 1, from; /* per-micro-batch figures average micro-batches from+1 .. L */
  if (j->fixed || n == 1) {
    from = -1;
    r->period_s = n > 1 ? (j->c[L] - j->c[0]) / (double)L : j->c[0] - j->t0;
  } else if (r->settled) {
    from = j->warmup - 1; /* W, the first micro-batch of a full pipeline, counts (sim_int.h) */
    r->period_s = (j->c[L] - j->c[L - j->cycle]) / (double)j->cycle;
  } else { /* the cap was hit: the mean interval of the last half of the run after the warm-up */
    from = unsettled_from(j);
    r->period_s = (j->c[L] - j->c[from]) / (double)(L - from);
  }
  r->microbatches = n;
  r->fill_s = j->c[0] - j->t0;
  r->makespan_s = j->c[L] - j->t0;
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    double c = 0, d = 0, m = 0;
    for (int k = from + 1; k <= L; k++) {
      c += gr->mb_compute[k];
      d += gr->mb_dram[k];
      m += gr->mb_comm[k];
    }
    gr->compute_s = c / (double)(L - from);
    gr->dram_s = d / (double)(L - from);
    gr->comm_s = m / (double)(L - from);
  }
}

static void run_eval(sim *s, job *j) {
  int n = j->n_groups;
  actor_arg *args = malloc((size_t)n * sizeof *args);
  sg_actor_t *actors = malloc((size_t)2 * (size_t)n * sizeof *actors);
  if (!args || !actors) {
    free(args);
    free(actors);
    j->failed = MP_NOMEM;
    return;
  }
  size_t tl_base = j->tl ? timeline_count(j->tl) : 0;
  sim_timer *tm = &j->timer;
again:;
  int n_actors = 0;
  if (sim_timer_open(tm, s, 2 * n) != 0) {
    free(args);
    free(actors);
    j->failed = MP_NOMEM;
    return;
  }
  j->t0 = simgrid_get_clock();
  for (int g = 0; g < n; g++) {
    jgroup *gr = &j->groups[g];
    gr->ev = sg_sem_init(0);
    gr->q = sg_sem_init(0);
    gr->tm[0] = sg_sem_init(0);
    gr->tm[1] = sg_sem_init(0);
  }
  for (int g = 0; g < n; g++) {
    jgroup *gr = &j->groups[g];
    args[g] = (actor_arg){s, j, g};
    char name[32];
    snprintf(name, sizeof name, "group%d", g);
    sg_actor_t a = sg_actor_init(name, s->hosts[gr->first_core]);
    sg_actor_set_data(a, &args[g]);
    sg_actor_ref(a);
    actors[n_actors++] = a;
    sg_actor_start(a, group_actor, 0, NULL);
    if (gr->n_sends > 0) {
      snprintf(name, sizeof name, "sender%d", g);
      sg_actor_t b = sg_actor_init(name, s->hosts[gr->last_core]);
      sg_actor_set_data(b, &args[g]);
      sg_actor_ref(b);
      actors[n_actors++] = b;
      sg_actor_start(b, sender_actor, 0, NULL);
    }
  }
  sim_timer_run(tm, s->hosts[0], n_actors); /* every actor and sender may wait on it */
  for (int k = 0; k < n_actors; k++) {
    sg_actor_join(actors[k], -1);
    sg_actor_unref(actors[k]);
  }
  sim_timer_join(tm);
  j->t_end = simgrid_get_clock();
  for (int g = 0; g < n; g++) {
    sg_sem_destroy(j->groups[g].ev);
    sg_sem_destroy(j->groups[g].q);
    sg_sem_destroy(j->groups[g].tm[0]);
    sg_sem_destroy(j->groups[g].tm[1]);
  }
  if (j->retry && j->cycle == 0 && !j->failed) { /* a narrow window that never settled: again at 2p + 2 (sim_int.h) */
    sim_job_restart(j);
    if (j->tl) timeline_truncate(j->tl, tl_base);
    goto again;
  }
  if (!j->failed && below_link_floor(s->chip, j)) { /* a transient: again with the cap doubled (sim_int.h) */
    if (sim_job_double_cap(j) != 0) {
      j->failed = MP_NOMEM;
    } else {
      if (j->tl) timeline_truncate(j->tl, tl_base);
      goto again;
    }
  }
  sim_timer_free(tm);
  free(actors);
  free(args);
  measure(j);
}

/* sim_options.isolate: the evaluation runs in a fork of the idle engine, which sends back what the
 * run measured; this engine's clock never moves, so every evaluation starts from the same state and
 * gives bit-identical figures. */
typedef struct isolated {
  sim *s;
  job *j;
} isolated;

static mp_status run_in_child(void *ctx, strbuf *answer, mp_error *err) {
  isolated *x = ctx;
  job *j = x->j;
  run_eval(x->s, j);
  if (j->failed) return err_nomem(err); /* run_eval fails only for lack of memory */
  const job_run *r = &j->run;
  bytes_put_f64(answer, j->t0);
  bytes_put_f64(answer, j->t_end);
  bytes_put_u32(answer, (uint32_t)r->microbatches);
  bytes_put_u32(answer, (uint32_t)(r->warmup + 1));
  bytes_put_u32(answer, (uint32_t)r->cycle);
  bytes_put_u32(answer, (uint32_t)r->settled);
  bytes_put_f64(answer, r->period_s);
  bytes_put_f64(answer, r->fill_s);
  bytes_put_f64(answer, r->makespan_s);
  for (int g = 0; g < j->n_groups; g++) {
    const jgroup *gr = &j->groups[g];
    bytes_put_f64(answer, gr->compute_s);
    bytes_put_f64(answer, gr->dram_s);
    bytes_put_f64(answer, gr->comm_s);
    bytes_put_u64(answer, (uint64_t)gr->acts);
  }
  return MP_OK;
}

static void run_eval_isolated(sim *s, job *j) {
  isolated x = {s, j};
  strbuf answer = {0};
  mp_status st = proc_run_child(run_in_child, &x, &answer, NULL);
  if (st != MP_OK) {
    strbuf_clear(&answer);
    j->failed = st == MP_NOMEM ? MP_NOMEM : MP_RUN; /* the child's lack of memory, or this side's */
    return;
  }
  bytes_reader r = bytes_reader_of(answer.s, answer.len);
  job_run *run = &j->run;
  j->t0 = bytes_get_f64(&r);
  j->t_end = bytes_get_f64(&r);
  run->microbatches = (int)bytes_get_u32(&r);
  run->warmup = (int)bytes_get_u32(&r) - 1;
  run->cycle = (int)bytes_get_u32(&r);
  run->settled = (int)bytes_get_u32(&r);
  run->period_s = bytes_get_f64(&r);
  run->fill_s = bytes_get_f64(&r);
  run->makespan_s = bytes_get_f64(&r);
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    gr->compute_s = bytes_get_f64(&r);
    gr->dram_s = bytes_get_f64(&r);
    gr->comm_s = bytes_get_f64(&r);
    gr->acts = (long)bytes_get_u64(&r);
  }
  if (r.short_read || bytes_left(&r) != 0) j->failed = MP_RUN;
  strbuf_clear(&answer);
}

static void run_route(sim *s, sim_request *q) {
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(s->hosts[q->ra], s->hosts[q->rb], links);
  unsigned i;
  sg_link_t l;
  q->r_count = 0;
  xbt_dynar_foreach(links, i, l) {
    const char *name = sg_link_get_name(l);
    int k = s->platform == SIM_PLATFORM_TORUS ? sim_platform_torus_link(s->chip, name) : -1;
    char own[48];
    if (k >= 0) { /* the torus's name of a NoC link: the chip's instead */
      chip_link_name(s->chip, k, own, sizeof own);
      name = own;
    }
    if (strncmp(name, "turn", 4) == 0 || strncmp(name, "out", 3) == 0) continue; /* the zero-cost links */
    if (q->r_count < q->r_max) snprintf(q->r_names[q->r_count], 48, "%s", name);
    q->r_count++;
  }
  xbt_dynar_free(&links);
}

/* The controller alone exists while it serves this, so sleeping moves the clock and nothing else. */
static void run_clock(sim_request *q) {
  if (q->until > simgrid_get_clock()) sg_actor_sleep_until(q->until);
  q->now = simgrid_get_clock();
}

static void controller(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim *s = sg_actor_self_get_data();
  pthread_mutex_lock(&s->mu);
  s->state = SIM_ST_IDLE;
  pthread_cond_broadcast(&s->cv);
  for (;;) {
    while (s->state != SIM_ST_REQUEST && s->state != SIM_ST_STOP) pthread_cond_wait(&s->cv, &s->mu);
    if (s->state == SIM_ST_STOP) break;
    sim_request *q = s->req;
    pthread_mutex_unlock(&s->mu);
    if (q->fn)
      q->fn(s, q->ctx);
    else if (q->j && s->opt.isolate && !q->j->tl)
      run_eval_isolated(s, q->j);
    else if (q->j)
      run_eval(s, q->j);
    else if (q->clock)
      run_clock(q);
    else
      run_route(s, q);
    pthread_mutex_lock(&s->mu);
    s->state = SIM_ST_DONE;
    pthread_cond_broadcast(&s->cv);
  }
  pthread_mutex_unlock(&s->mu);
}

static void *engine_main(void *arg) {
  sim *s = arg;
  char *argv[16], paje[600];
  int argc = 0;
  argv[argc++] = "meshpipe";
  argv[argc++] = "--cfg=host/model:ptask_L07";
  argv[argc++] = "--cfg=surf/precision:1e-15";
  argv[argc++] = "--cfg=contexts/stack-size:64";
  argv[argc++] = "--cfg=contexts/guard-size:0"; /* no mprotect per actor (header comment) */
  if (!s->opt.verbose) argv[argc++] = "--log=root.thres:critical";
  if (s->opt.paje_file) { /* SimGrid's own tracing, configured before the engine starts */
    snprintf(paje, sizeof paje, "--cfg=tracing/filename:%s", s->paje_part);
    argv[argc++] = "--cfg=tracing:yes";
    argv[argc++] = paje;
    argv[argc++] = "--cfg=tracing/uncategorized:yes";
    argv[argc++] = "--cfg=tracing/actor:yes";
    argv[argc++] = "--cfg=tracing/platform/topology:no";
  }
  argv[argc] = NULL;
  simgrid_init(&argc, argv);
  simgrid_load_platform(s->xml_path);
  unlink(s->xml_path);
  char name[32];
  for (int i = 0; i < s->chip->n_cores; i++) {
    sim_platform_host_name(s->chip, s->platform, i, name, sizeof name);
    s->hosts[i] = sg_host_by_name(name);
  }
  for (int i = 0; i < s->chip->n_dram; i++) {
    snprintf(name, sizeof name, "dram%d", i);
    s->dram_hosts[i] = sg_host_by_name(name);
  }
  sg_actor_t ctl = sg_actor_init("controller", s->hosts[0]);
  sg_actor_set_data(ctl, s);
  sg_actor_start(ctl, controller, 0, NULL);
  simgrid_run();
  pthread_mutex_lock(&s->mu); /* whoever waits learns that nothing will answer any more */
  s->state = SIM_ST_ENDED;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* ---- the caller's side -------------------------------------------------------------------------- */

mp_status sim_engine_start(sim *s, mp_error *err) {
  int expected = 0;
  if (!atomic_compare_exchange_strong(&engine_claimed, &expected, 1))
    return err_set(err, MP_RUN,
                   "sim: SimGrid's engine was already started in this process; it starts once per process, so "
                   "keep one sim for all evaluations (or run another process)");
  const char *tmp = getenv("TMPDIR");
  mp_status st = MP_OK;
  snprintf(s->xml_path, sizeof s->xml_path, "%s/meshpipe-platform-XXXXXX.xml", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemps(s->xml_path, 4);
  if (fd < 0) {
    st = err_set(err, MP_RUN, "sim: cannot create a temporary platform file in %s: %s", tmp && *tmp ? tmp : "/tmp",
                 strerror(errno));
    goto fail;
  }
  close(fd);
  st = sim_platform_write_routed(s->chip, s->platform, s->xml_path, err);
  if (st != MP_OK) {
    unlink(s->xml_path);
    goto fail;
  }
  s->state = SIM_ST_STARTING;
  if (pthread_create(&s->thread, NULL, engine_main, s) != 0) {
    unlink(s->xml_path);
    st = err_set(err, MP_RUN, "sim: cannot start the simulation thread");
    goto fail;
  }
  s->thread_started = 1;
  pthread_mutex_lock(&s->mu);
  while (s->state == SIM_ST_STARTING) pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  return MP_OK;
fail:
  atomic_store(&engine_claimed, 0); /* SimGrid never started: a later sim_new may try again */
  return st;
}

/* Hands q to the controller and waits for it; MP_RUN if the engine has stopped. */
static mp_status serve(sim *s, sim_request *q, mp_error *err) {
  pthread_mutex_lock(&s->mu);
  if (s->state == SIM_ST_ENDED) {
    pthread_mutex_unlock(&s->mu);
    return err_set(err, MP_RUN, "sim: the SimGrid engine has stopped; start another process");
  }
  s->req = q;
  s->state = SIM_ST_REQUEST;
  pthread_cond_broadcast(&s->cv);
  while (s->state != SIM_ST_DONE && s->state != SIM_ST_ENDED) pthread_cond_wait(&s->cv, &s->mu);
  int ended = s->state == SIM_ST_ENDED;
  if (!ended) s->state = SIM_ST_IDLE;
  s->req = NULL;
  pthread_mutex_unlock(&s->mu);
  if (ended)
    return err_set(err, MP_RUN, "sim: the SimGrid engine stopped during an evaluation (a deadlock in the plan?)");
  return MP_OK;
}

mp_status sim_engine_run(sim *s, job *j, mp_error *err) {
  sim_request q = {.j = j};
  double t = proc_now_s();
  mp_status st = serve(s, &q, err);
  s->stats.engine_s += proc_now_s() - t;
  if (st == MP_OK && j->failed)
    st = j->failed == MP_NOMEM ? err_nomem(err)
                               : err_set(err, MP_RUN, "sim: the isolated evaluation could not run (no process or pipe "
                                                      "for it, or its answer was incomplete)");
  return st;
}

mp_status sim_engine_call(sim *s, void (*fn)(sim *, void *), void *ctx, mp_error *err) {
  sim_request q = {.fn = fn, .ctx = ctx};
  double t = proc_now_s();
  mp_status st = serve(s, &q, err);
  s->stats.engine_s += proc_now_s() - t;
  return st;
}

int sim_engine_route(sim *s, int a, int b, char (*names)[48], int max) {
  sim_request q = {.j = NULL, .ra = a, .rb = b, .r_max = max, .r_names = names};
  if (serve(s, &q, NULL) != MP_OK) return -1;
  return q.r_count;
}

mp_status sim_engine_clock(sim *s, double until, double *now, mp_error *err) {
  sim_request q = {.j = NULL, .clock = 1, .until = until};
  mp_status st = serve(s, &q, err);
  *now = q.now;
  return st;
}

void sim_engine_stop(sim *s) {
  if (!s->thread_started) return;
  pthread_mutex_lock(&s->mu);
  s->state = SIM_ST_STOP;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->thread, NULL);
  s->thread_started = 0;
}
