/* sim: the SimGrid pipeline simulator (see sim.h).
 *
 * Engine.  sim_new writes the chip's platform (sim_int.h) to a temporary file and starts a pthread
 * that initialises SimGrid (host model ptask_L07, surf/precision 1e-15, 64 KiB raw-context stacks,
 * logs silenced unless verbose), loads the platform, deletes the file and runs a controller actor.
 * The controller waits on a pthread condition variable for requests from sim_evaluate; while it
 * waits, nothing else exists in the simulation, so blocking the engine's thread is harmless.  For
 * each request it creates the plan's actors, joins them, and hands back times measured as
 * differences of the engine's clock.  sim_free makes the controller return, simgrid_run ends and
 * the thread is joined.  SimGrid aborts on any error, so everything is validated before it runs.
 *
 * Work model (the analytical model of model/cost.h, refined).  The plan is rewritten with
 * Send/Recv nodes (split.h).  Each group's layers are cut into segments: runs of consecutive
 * layers that wait for the same received tensors (directly or through earlier layers of the
 * group), cut after a layer whose output is sent, so within a segment nothing waits.  A segment
 * runs as one execution of its total flops at the group's total speed (on the group's first core,
 * scaled by that core's share) followed by one all-gather of the total output bytes A of its
 * layers (a ptask over the group's cores along the snake chain: link k->k+1 carries (k+1)/c of A
 * and k+1->k the rest, so the busiest link carries (c-1)/c * A), none in a one-core group; with no
 * contention that is exactly the model's per-layer sum.  Each group has one actor that runs its
 * (micro-batch, segment) pairs from a ready queue, as TensorFlow's executor does: the lowest
 * micro-batch, then segment, whose received tensors have arrived and whose segments it reads from
 * are done.  Sends are handed, in order, to the group's sender actor, which runs one transfer at a
 * time (FIFO, overlapping the group's next compute: double buffering), a ptask of gamma * bytes
 * from the group's last core to the destination group's first core on the XY route, and then
 * signals the receiver (a counter and a semaphore: the transfer is in flight from the moment it is
 * posted, as with a permanent receiver).  When a group's per-core share s_i = W_i/c_i + max a_j
 * exceeds a core's SRAM, that core's excess weights (at most W_i/c_i) are streamed every
 * micro-batch, before its first segment, from the DRAM port nearest the group's first core to the
 * cores that need them, all at once (one ptask sharing the port's link), through the NoC; the plan
 * is flagged infeasible.  A chip without DRAM ports streams nothing.  Graph inputs are fed by the
 * host to every group that reads them and cost nothing.  A tensor read by several later groups is
 * sent once to each (one Send/Recv pair per destination group), whereas the analytical model counts
 * its bytes once in X_i: with skip connections spanning groups the simulated sends take longer.  L07 shares a link fairly between the
 * transfers that use it; every transfer and all-gather also pays its route's latency (hops x
 * per-hop latency).
 *
 * Figures.  c[m] is the time micro-batch m is complete (every group's segments and sends for it);
 * latency = c[0], makespan = c[M-1], period = (c[M-1] - c[0]) / (M - 1), throughput = 1 / period.
 * All times are rounded to 12 significant digits.  The clock keeps growing from one evaluation to
 * the next, which moves the last bits: after a few hundred evaluations a figure may differ from a
 * fresh process's in its 12th digit (about 1e-11 relative after 10^3 to 10^4 evaluations).  With
 * sim_options.isolate every evaluation runs in a fork() of the idle engine (whose clock therefore
 * never moves) and the figures are bit-identical to a fresh process's, at some cost in speed.
 * Link traffic is accounted on the XY routes by the simulator itself (exactly what it handed
 * SimGrid), utilisation = bytes / (bandwidth * makespan). */
#define _GNU_SOURCE /* mkstemps */
#include "sim.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/link.h>
#include <simgrid/semaphore.h>
#include <xbt/dynar.h>

#include "cost.h"
#include "fileio.h"
#include "jsonio.h"
#include "sim_int.h"
#include "split.h"

/* ---- the compiled program of one evaluation --------------------------------------------------- */

typedef struct seg {
  double flops;            /* on the group's first core: F * speed(first) / speed(group) */
  double raw_flops;        /* F: the layers' work on the whole group (as recorded in traces) */
  const char *name;        /* its first op (borrowed from the graph or trace) */
  double gather;           /* A: output bytes of its layers, all-gathered */
  int n_needs, *needs;     /* recvs of the group it waits for */
  int n_deps, *deps;       /* earlier segments of the group whose outputs it reads */
  int first_post, n_posts; /* sends of the group it posts when done (a contiguous range) */
} seg;

typedef struct jsend {
  double bytes;     /* gamma * tensor bytes */
  double raw_bytes; /* the tensor's bytes */
  const char *name; /* the tensor (borrowed) */
  int dst_group, dst_recv, dst_core;
} jsend;

typedef struct qitem {
  int send, mb;
} qitem;

typedef struct jgroup {
  int first_core, n_cores, last_core;
  int n_segs;
  seg *segs;
  int n_sends;
  jsend *sends;
  int n_recvs;
  double *dram; /* per core of the group: weight bytes streamed per micro-batch (NULL when it fits) */
  int dram_port;
  sg_host_t *dram_hosts; /* the port, then the group's cores */
  double *dram_matrix;   /* (n_cores+1)^2 bytes (row 0: port to core k+1), then n_cores+1 zero flops */
  /* run state */
  double *gather_matrix; /* scratch for the all-gather ptask: n_cores^2 bytes, then n_cores flops */
  unsigned char *done;   /* per (micro-batch, segment): ran */
  int *left;             /* per micro-batch: segments still to run */
  int *arrived;          /* per recv: micro-batches arrived */
  double *done_t;        /* per micro-batch: when its last segment / last send ended (absolute clock) */
  sg_sem_t ev, q;
  qitem *queue;
  int q_head, q_tail;
  double compute_s, dram_s, comm_s;
  long acts;
} jgroup;

typedef struct job {
  int kind;   /* JOB_EVAL or JOB_ROUTE */
  int failed; /* set by the engine thread: the evaluation could not run (out of memory, fork) */
  /* eval */
  int M, n_groups;
  jgroup *groups;
  double t0, t_end;
  timeline *tl;  /* NULL, or where the run's events go */
  int tl_failed; /* an event could not be added (out of memory) */
  /* route query */
  int ra, rb, r_max, r_count;
  char (*r_names)[48];
} job;

enum { JOB_EVAL, JOB_ROUTE };

/* ---- the sim object --------------------------------------------------------------------------- */

enum { ST_STARTING, ST_IDLE, ST_REQUEST, ST_DONE, ST_STOP, ST_ENDED };

typedef struct cache_entry {
  int valid;
  long stamp; /* insertion number, to evict the oldest of a set */
  uint64_t graph_hash, plan_hash;
  int M, n_arranged;
  int *arranged;
  sim_result res;
} cache_entry;

struct sim {
  const chip *chip;
  sim_options opt;
  pthread_t thread;
  int thread_started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;
  job *job;
  char xml_path[256];
  char paje_part[560];   /* where SimGrid writes the Paje trace until sim_free renames it */
  sg_host_t *hosts;      /* per core */
  sg_host_t *dram_hosts; /* per port */
  sim_stats stats;
  cache_entry *cache;
  long cache_stamp;
  double *link_bytes; /* scratch: per link index */
  timeline *next_tl;  /* the timeline of the evaluation under way (sim_evaluate_timeline), else NULL */
  int *link_order;    /* scratch */
};

static atomic_int engine_claimed; /* SimGrid starts once per process */

static double now_wall(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* 12 significant digits. */
static double round12(double x) {
  if (x == 0 || !isfinite(x)) return x;
  char buf[32];
  snprintf(buf, sizeof buf, "%.11e", x);
  return strtod(buf, NULL);
}

void sim_options_init(sim_options *o) {
  memset(o, 0, sizeof *o);
  o->microbatches = 8;
  o->verbose = 0;
  o->top_links = 8;
  o->cache_size = 4096;
}

const chip *sim_chip(const sim *s) { return s->chip; }

void sim_get_stats(const sim *s, sim_stats *out) { *out = s->stats; }

/* ---- actors (engine thread) ------------------------------------------------------------------ */

static void ptask2(sg_host_t from, sg_host_t to, double bytes) {
  sg_host_t h[2] = {from, to};
  double flops[2] = {0, 0};
  double b[4] = {0, bytes, 0, 0};
  sg_actor_parallel_execute(2, h, flops, b);
}

typedef struct actor_arg {
  sim *s;
  job *j;
  int g;
} actor_arg;

static void all_gather(sim *s, jgroup *gr, double bytes, double *matrix) {
  int c = gr->n_cores;
  memset(matrix, 0, (size_t)c * (size_t)c * sizeof *matrix);
  if (s->opt.fast_gather) { /* the two busiest links of the chain: (c-2)->(c-1) and 1->0 */
    matrix[(c - 2) * c + c - 1] = bytes * (double)(c - 1) / (double)c;
    matrix[1 * c + 0] = bytes * (double)(c - 1) / (double)c;
  } else {
    for (int k = 0; k + 1 < c; k++) {
      matrix[k * c + k + 1] = bytes * (double)(k + 1) / (double)c;
      matrix[(k + 1) * c + k] = bytes * (double)(c - 1 - k) / (double)c;
    }
  }
  double *flops = matrix + (size_t)c * (size_t)c;
  memset(flops, 0, (size_t)c * sizeof *flops);
  sg_actor_parallel_execute(c, s->hosts + gr->first_core, flops, matrix);
}

/* One ptask from the DRAM port to every core of the group that needs weights, all at once (they
 * share the port's link); its host list and matrix were prepared by job_build. */
static void stream_weights(jgroup *gr) {
  int n = gr->n_cores + 1;
  sg_actor_parallel_execute(n, gr->dram_hosts, gr->dram_matrix + (size_t)n * (size_t)n, gr->dram_matrix);
}

/* Timeline events (only when the job has a timeline; times relative to the job's start). */
static void tl_add(job *j, const timeline_event *e) {
  if (timeline_add(j->tl, e, NULL) != MP_OK) j->tl_failed = 1;
}

static void timeline_exec(job *j, int g, int mb, const seg *x, double t0, double t1) {
  const jgroup *gr = &j->groups[g];
  timeline_event e = {.kind = TIMELINE_EXEC,
                      .start_s = t0 - j->t0,
                      .end_s = t1 - j->t0,
                      .name = x->name,
                      .microbatch = mb,
                      .first_core = gr->first_core,
                      .n_cores = gr->n_cores,
                      .flops = x->raw_flops,
                      .dram_port = -1};
  tl_add(j, &e);
}

static void timeline_dram(job *j, int g, int mb, double t0, double t1) {
  const jgroup *gr = &j->groups[g];
  for (int k = 0; k < gr->n_cores; k++) {
    timeline_event e = {.kind = TIMELINE_TRANSFER,
                        .start_s = t0 - j->t0,
                        .end_s = t1 - j->t0,
                        .name = "weights",
                        .microbatch = mb,
                        .dst_core = gr->first_core + k,
                        .dram_port = gr->dram_port,
                        .src_group = -1,
                        .dst_group = g,
                        .bytes = (uint64_t)llround(gr->dram[k])};
    if (gr->dram[k] > 0) tl_add(j, &e);
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

static void group_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  actor_arg *a = sg_actor_self_get_data();
  sim *s = a->s;
  job *j = a->j;
  jgroup *gr = &j->groups[a->g];
  int M = j->M;
  int left = M * gr->n_segs, lo = 0;
  while (left > 0) {
    /* the ready queue: the lowest micro-batch, then segment, whose inputs are all there */
    int mb = -1, sg = -1;
    for (int m = lo; m < M && mb < 0; m++)
      for (int q = 0; q < gr->n_segs; q++)
        if (seg_ready(gr, m, q)) {
          mb = m;
          sg = q;
          break;
        }
    if (mb < 0) {
      sg_sem_acquire(gr->ev);
      continue;
    }
    const seg *x = &gr->segs[sg];
    if (gr->left[mb] == gr->n_segs && gr->dram) { /* the micro-batch's first segment */
      double t = simgrid_get_clock();
      stream_weights(gr);
      gr->acts++;
      gr->dram_s += simgrid_get_clock() - t;
      if (j->tl) timeline_dram(j, a->g, mb, t, simgrid_get_clock());
    }
    double t = simgrid_get_clock();
    if (x->flops > 0) {
      sg_actor_execute(x->flops);
      gr->acts++;
    }
    if (gr->n_cores > 1 && x->gather > 0) {
      all_gather(s, gr, x->gather, gr->gather_matrix);
      gr->acts++;
    }
    double t1 = simgrid_get_clock();
    gr->compute_s += t1 - t;
    if (j->tl) timeline_exec(j, a->g, mb, x, t, t1);
    for (int k = 0; k < x->n_posts; k++) {
      gr->queue[gr->q_tail++] = (qitem){x->first_post + k, mb};
      sg_sem_release(gr->q);
    }
    gr->done[(size_t)mb * (size_t)gr->n_segs + (size_t)sg] = 1;
    if (--gr->left[mb] == 0 && t1 > gr->done_t[mb]) gr->done_t[mb] = t1;
    left--;
    while (lo < M && gr->left[lo] == 0) lo++;
  }
}

static void sender_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  actor_arg *a = sg_actor_self_get_data();
  sim *s = a->s;
  job *j = a->j;
  jgroup *gr = &j->groups[a->g];
  int left = gr->n_sends * j->M;
  while (left-- > 0) {
    sg_sem_acquire(gr->q);
    qitem it = gr->queue[gr->q_head++];
    const jsend *sd = &gr->sends[it.send];
    double t = simgrid_get_clock();
    if (sd->bytes > 0) {
      ptask2(s->hosts[gr->last_core], s->hosts[sd->dst_core], sd->bytes);
      gr->acts++;
    }
    double t1 = simgrid_get_clock();
    gr->comm_s += t1 - t;
    if (j->tl) timeline_send(j, a->g, it.mb, sd, t, t1);
    if (t1 > gr->done_t[it.mb]) gr->done_t[it.mb] = t1;
    jgroup *dg = &j->groups[sd->dst_group];
    dg->arrived[sd->dst_recv]++;
    sg_sem_release(dg->ev);
  }
}

static void run_eval(sim *s, job *j) {
  int n = j->n_groups;
  actor_arg *args = malloc((size_t)n * sizeof *args);
  sg_actor_t *actors = malloc((size_t)2 * (size_t)n * sizeof *actors);
  if (!args || !actors) {
    free(args);
    free(actors);
    j->failed = 1;
    return;
  }
  int n_actors = 0;
  j->t0 = simgrid_get_clock();
  for (int g = 0; g < n; g++) {
    jgroup *gr = &j->groups[g];
    for (int m = 0; m < j->M; m++) gr->done_t[m] = j->t0;
    gr->ev = sg_sem_init(0);
    gr->q = sg_sem_init(0);
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
  for (int k = 0; k < n_actors; k++) {
    sg_actor_join(actors[k], -1);
    sg_actor_unref(actors[k]);
  }
  j->t_end = simgrid_get_clock();
  for (int g = 0; g < n; g++) {
    sg_sem_destroy(j->groups[g].ev);
    sg_sem_destroy(j->groups[g].q);
  }
  free(actors);
  free(args);
}

static int write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static int read_all(int fd, char *p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* sim_options.isolate: the evaluation runs in a fork of the idle engine, which sends back what the
 * actors measured; this engine's clock never moves, so every evaluation starts from the same state
 * and gives bit-identical figures. */
static void run_eval_isolated(sim *s, job *j) {
  int n = j->n_groups, M = j->M;
  size_t per = 4 + (size_t)M, count = 2 + (size_t)n * per;
  double *buf = malloc(count * sizeof *buf);
  int fds[2];
  if (!buf || pipe(fds) != 0) {
    free(buf);
    j->failed = 1;
    return;
  }
  pid_t pid = fork();
  if (pid == 0) { /* the child: only this thread exists; it never returns */
    close(fds[0]);
    run_eval(s, j);
    if (j->failed) _exit(1);
    buf[0] = j->t0;
    buf[1] = j->t_end;
    for (int g = 0; g < n; g++) {
      double *x = buf + 2 + (size_t)g * per;
      const jgroup *gr = &j->groups[g];
      x[0] = gr->compute_s;
      x[1] = gr->dram_s;
      x[2] = gr->comm_s;
      x[3] = (double)gr->acts;
      memcpy(x + 4, gr->done_t, (size_t)M * sizeof *x);
    }
    _exit(write_all(fds[1], (const char *)buf, count * sizeof *buf) == 0 ? 0 : 1);
  }
  close(fds[1]);
  int ok = pid > 0 && read_all(fds[0], (char *)buf, count * sizeof *buf) == 0;
  close(fds[0]);
  int status = 0;
  if (pid > 0)
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  if (!ok || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    free(buf);
    j->failed = 1;
    return;
  }
  j->t0 = buf[0];
  j->t_end = buf[1];
  for (int g = 0; g < n; g++) {
    const double *x = buf + 2 + (size_t)g * per;
    jgroup *gr = &j->groups[g];
    gr->compute_s = x[0];
    gr->dram_s = x[1];
    gr->comm_s = x[2];
    gr->acts = (long)x[3];
    memcpy(gr->done_t, x + 4, (size_t)M * sizeof *x);
  }
  free(buf);
}

static void run_route(sim *s, job *j) {
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(s->hosts[j->ra], s->hosts[j->rb], links);
  unsigned i;
  sg_link_t l;
  j->r_count = 0;
  xbt_dynar_foreach(links, i, l) {
    const char *name = sg_link_get_name(l);
    if (name[0] != 'x' && strncmp(name, "dram", 4) != 0) continue; /* the zero-cost in/turn/out links */
    if (j->r_count < j->r_max) snprintf(j->r_names[j->r_count], 48, "%s", name);
    j->r_count++;
  }
  xbt_dynar_free(&links);
}

static void controller(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim *s = sg_actor_self_get_data();
  pthread_mutex_lock(&s->mu);
  s->state = ST_IDLE;
  pthread_cond_broadcast(&s->cv);
  for (;;) {
    while (s->state != ST_REQUEST && s->state != ST_STOP) pthread_cond_wait(&s->cv, &s->mu);
    if (s->state == ST_STOP) break;
    job *j = s->job;
    pthread_mutex_unlock(&s->mu);
    if (j->kind == JOB_EVAL && s->opt.isolate && !j->tl)
      run_eval_isolated(s, j);
    else if (j->kind == JOB_EVAL)
      run_eval(s, j);
    else
      run_route(s, j);
    pthread_mutex_lock(&s->mu);
    s->state = ST_DONE;
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
    snprintf(name, sizeof name, "c%d", i);
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
  s->state = ST_ENDED;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* ---- public API ------------------------------------------------------------------------------- */

mp_status sim_new(const chip *c, const sim_options *o, sim **out, mp_error *err) {
  *out = NULL;
  sim_options defaults;
  if (!o) {
    sim_options_init(&defaults);
    o = &defaults;
  }
  if (o->microbatches < 1)
    return err_set(err, MP_USAGE, "sim: the number of micro-batches must be at least 1 (got %d)", o->microbatches);
  if (o->top_links < 0 || o->cache_size < 0)
    return err_set(err, MP_USAGE, "sim: top_links and cache_size must not be negative");
  if (o->routing != SIM_ROUTING_AUTO && o->routing != SIM_ROUTING_FULL && o->routing != SIM_ROUTING_DIJKSTRA)
    return err_set(err, MP_USAGE, "sim: unknown routing %d (SIM_ROUTING_AUTO, _FULL or _DIJKSTRA)", o->routing);
  if (c->n_cores < 1 || c->noc_bandwidth <= 0 || !isfinite(c->noc_bandwidth) || c->noc_latency < 0 ||
      (c->n_dram > 0 && !(c->dram_bandwidth > 0)))
    return err_set(err, MP_INPUT, "%s: the chip has no cores or a non-positive NoC/DRAM bandwidth", c->file);
  for (int i = 0; i < c->n_cores; i++)
    if (!(c->cores[i].flops > 0) || !isfinite(c->cores[i].flops) || !(c->cores[i].transfer_factor >= 1))
      return err_set(err, MP_INPUT, "%s: core %d has a non-positive speed or a transfer factor below 1", c->file, i);
  int expected = 0;
  if (!atomic_compare_exchange_strong(&engine_claimed, &expected, 1))
    return err_set(err, MP_RUN,
                   "sim: SimGrid's engine was already started in this process; it starts once per process, so "
                   "keep one sim for all evaluations (or run another process)");
  double t_start = now_wall();
  mp_status st = MP_OK;
  sim *s = calloc(1, sizeof *s);
  if (!s) {
    st = err_nomem(err);
    goto fail;
  }
  s->chip = c;
  s->opt = *o;
  if (o->paje_file) {
    if (strlen(o->paje_file) + 6 > sizeof s->paje_part || strchr(o->paje_file, ' ')) {
      st = err_set(err, MP_USAGE, "sim: the Paje file name '%s' is too long or has a blank", o->paje_file);
      goto fail;
    }
    snprintf(s->paje_part, sizeof s->paje_part, "%s.part", o->paje_file);
  }
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->hosts = calloc((size_t)c->n_cores, sizeof *s->hosts);
  s->dram_hosts = calloc((size_t)c->n_dram + 1, sizeof *s->dram_hosts);
  s->link_bytes = calloc((size_t)sim_n_links(c), sizeof *s->link_bytes);
  s->link_order = calloc((size_t)sim_n_links(c), sizeof *s->link_order);
  if (o->cache_size > 0) s->cache = calloc((size_t)o->cache_size, sizeof *s->cache);
  if (!s->hosts || !s->dram_hosts || !s->link_bytes || !s->link_order || (o->cache_size > 0 && !s->cache)) {
    st = err_nomem(err);
    goto fail;
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(s->xml_path, sizeof s->xml_path, "%s/meshpipe-platform-XXXXXX.xml", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemps(s->xml_path, 4);
  if (fd < 0) {
    st = err_set(err, MP_RUN, "sim: cannot create a temporary platform file in %s: %s", tmp && *tmp ? tmp : "/tmp",
                 strerror(errno));
    goto fail;
  }
  close(fd);
  st = sim_platform_write_routed(c, o->routing, s->xml_path, err);
  if (st != MP_OK) {
    unlink(s->xml_path);
    goto fail;
  }
  if (pthread_create(&s->thread, NULL, engine_main, s) != 0) {
    unlink(s->xml_path);
    st = err_set(err, MP_RUN, "sim: cannot start the simulation thread");
    goto fail;
  }
  s->thread_started = 1;
  pthread_mutex_lock(&s->mu);
  while (s->state == ST_STARTING) pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
  s->stats.startup_s = now_wall() - t_start;
  *out = s;
  return MP_OK;
fail:
  atomic_store(&engine_claimed, 0); /* SimGrid never started: a later sim_new may try again */
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

/* Hands j to the controller and waits for it; MP_RUN if the engine has stopped. */
static mp_status run_job(sim *s, job *j, mp_error *err) {
  pthread_mutex_lock(&s->mu);
  if (s->state == ST_ENDED) {
    pthread_mutex_unlock(&s->mu);
    return err_set(err, MP_RUN, "sim: the SimGrid engine has stopped; start another process");
  }
  s->job = j;
  s->state = ST_REQUEST;
  pthread_cond_broadcast(&s->cv);
  while (s->state != ST_DONE && s->state != ST_ENDED) pthread_cond_wait(&s->cv, &s->mu);
  int ended = s->state == ST_ENDED;
  if (!ended) s->state = ST_IDLE;
  s->job = NULL;
  pthread_mutex_unlock(&s->mu);
  if (ended)
    return err_set(err, MP_RUN, "sim: the SimGrid engine stopped during an evaluation (a deadlock in the plan?)");
  return MP_OK;
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

static void job_free(job *j) {
  if (!j) return;
  for (int g = 0; g < j->n_groups; g++) {
    jgroup *gr = &j->groups[g];
    for (int k = 0; gr->segs && k < gr->n_segs; k++) {
      free(gr->segs[k].needs);
      free(gr->segs[k].deps);
    }
    free(gr->segs);
    free(gr->sends);
    free(gr->dram);
    free(gr->dram_hosts);
    free(gr->dram_matrix);
    free(gr->gather_matrix);
    free(gr->done);
    free(gr->left);
    free(gr->arrived);
    free(gr->done_t);
    free(gr->queue);
  }
  free(j->groups);
  free(j);
}

/* Builds the program of plan p: segments, sends, DRAM streams (see the comment at the top). */
static mp_status job_build(const sim *s, const graph *g, const split *sp, const cost_result *cr, int M, job **out,
                           mp_error *err) {
  const chip *c = s->chip;
  const optimes *ot = s->opt.op_times;
  double core_flops = ot ? chip_typical_core(c).flops : 0;
  job *j = calloc(1, sizeof *j);
  int *recv_of = malloc((size_t)g->n_tensors * sizeof *recv_of);
  int *seg_of = malloc((size_t)g->n_ops * sizeof *seg_of); /* per layer of the current group */
  if (!j || !recv_of || !seg_of) goto nomem;
  for (int t = 0; t < g->n_tensors; t++) recv_of[t] = -1;
  j->kind = JOB_EVAL;
  j->M = M;
  j->n_groups = sp->n_groups;
  j->groups = calloc((size_t)sp->n_groups, sizeof *j->groups);
  if (!j->groups) goto nomem;
  for (int gi = 0; gi < sp->n_groups; gi++) {
    const split_group *sg = &sp->groups[gi];
    jgroup *gr = &j->groups[gi];
    gr->first_core = sg->first_core;
    gr->n_cores = sg->n_cores;
    gr->last_core = sg->first_core + sg->n_cores - 1;
    gr->n_recvs = sg->n_recvs;
    gr->n_sends = sg->n_sends;
    double speed = 0, gamma = 1;
    for (int k = gr->first_core; k <= gr->last_core; k++) {
      speed += c->cores[k].flops;
      if (c->cores[k].transfer_factor > gamma) gamma = c->cores[k].transfer_factor;
    }
    double share = c->cores[gr->first_core].flops / speed;
    gr->segs = calloc((size_t)sg->n_layers, sizeof *gr->segs);
    gr->sends = calloc((size_t)sg->n_sends + 1, sizeof *gr->sends);
    gr->left = calloc((size_t)M, sizeof *gr->left);
    gr->arrived = calloc((size_t)sg->n_recvs + 1, sizeof *gr->arrived);
    gr->done_t = calloc((size_t)M, sizeof *gr->done_t);
    gr->queue = calloc((size_t)sg->n_sends * (size_t)M + 1, sizeof *gr->queue);
    if (!gr->segs || !gr->sends || !gr->left || !gr->arrived || !gr->done_t || !gr->queue) goto nomem;
    for (int k = 0; k < sg->n_sends; k++) {
      const split_send *sd = &sg->sends[k];
      gr->sends[k].raw_bytes = (double)g->tensors[sd->tensor].bytes;
      gr->sends[k].bytes = gamma * gr->sends[k].raw_bytes;
      gr->sends[k].name = g->tensors[sd->tensor].name;
      gr->sends[k].dst_group = sd->dst_group;
      gr->sends[k].dst_recv = sd->dst_recv;
      gr->sends[k].dst_core = sp->groups[sd->dst_group].first_core;
    }
    for (int r = 0; r < sg->n_recvs; r++) recv_of[sg->recvs[r].tensor] = r;
    /* R(l): the recvs layer l waits for, directly or through earlier layers of the group (a bitset
     * of `words` words per layer).  A segment is a run of consecutive layers with the same R, cut
     * after a layer whose output is sent: its layers are ready together and run back to back. */
    int words = (sg->n_recvs + 63) / 64 + 1;
    uint64_t *R = calloc((size_t)sg->n_layers * (size_t)words, sizeof *R);
    if (!R) goto nomem;
    int next_send = 0;
    seg *cur = NULL;
    for (int l = sg->first_layer; l < sg->first_layer + sg->n_layers; l++) {
      const graph_op *op = &g->ops[l];
      uint64_t *mine = R + (size_t)(l - sg->first_layer) * (size_t)words;
      for (int k = 0; k < op->n_inputs; k++) {
        int t = op->inputs[k], r = recv_of[t], prod = g->tensors[t].producer;
        if (r >= 0) mine[r / 64] |= UINT64_C(1) << (r % 64);
        if (prod >= sg->first_layer)
          for (int w = 0; w < words; w++) mine[w] |= R[(size_t)(prod - sg->first_layer) * (size_t)words + (size_t)w];
      }
      if (!cur || memcmp(mine, mine - words, (size_t)words * sizeof *mine) != 0) {
        cur = &gr->segs[gr->n_segs++];
        cur->first_post = next_send;
      }
      for (int k = 0; k < op->n_inputs; k++) {
        int r = recv_of[op->inputs[k]], dup = 0;
        if (r < 0) continue;
        for (int q = 0; q < cur->n_needs; q++) dup |= cur->needs[q] == r;
        if (dup) continue;
        int *nn = realloc(cur->needs, ((size_t)cur->n_needs + 1) * sizeof *nn);
        if (!nn) {
          free(R);
          goto nomem;
        }
        cur->needs = nn;
        cur->needs[cur->n_needs++] = r;
      }
      seg_of[l] = (int)(cur - gr->segs);
      cur->raw_flops += ot ? optimes_flops(ot, g, core_flops, l) : (double)op->flops;
      if (!cur->name) cur->name = op->name;
      cur->gather += (double)op->out_bytes;
      int posted = 0;
      while (next_send < sg->n_sends && sg->sends[next_send].layer == l) {
        next_send++;
        posted = 1;
      }
      if (posted) {
        cur->n_posts = next_send - cur->first_post;
        cur = NULL;
      }
    }
    free(R);
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
    gr->done = calloc((size_t)M * (size_t)gr->n_segs, sizeof *gr->done);
    if (!gr->done) goto nomem;
    for (int m = 0; m < M; m++) gr->left[m] = gr->n_segs;
    if (gr->n_cores > 1) {
      gr->gather_matrix =
          malloc(((size_t)gr->n_cores * (size_t)gr->n_cores + (size_t)gr->n_cores) * sizeof *gr->gather_matrix);
      if (!gr->gather_matrix) goto nomem;
    }
    /* weights that do not fit */
    const cost_stage *cs = &cr->stages[gi];
    if (!cs->fits && c->n_dram > 0) {
      gr->dram = calloc((size_t)gr->n_cores, sizeof *gr->dram);
      if (!gr->dram) goto nomem;
      double share_w = cs->weight_bytes / gr->n_cores;
      for (int k = 0; k < gr->n_cores; k++) {
        double excess = cs->mem_bytes - (double)c->cores[gr->first_core + k].sram_bytes;
        if (excess > share_w) excess = share_w;
        gr->dram[k] = excess > 0 ? excess : 0;
      }
      gr->dram_port = chip_nearest_dram(c, gr->first_core);
      size_t n = (size_t)gr->n_cores + 1;
      gr->dram_hosts = malloc(n * sizeof *gr->dram_hosts);
      gr->dram_matrix = calloc(n * n + n, sizeof *gr->dram_matrix);
      if (!gr->dram_hosts || !gr->dram_matrix) goto nomem;
      gr->dram_hosts[0] = s->dram_hosts[gr->dram_port];
      for (int k = 0; k < gr->n_cores; k++) {
        gr->dram_hosts[k + 1] = s->hosts[gr->first_core + k];
        gr->dram_matrix[k + 1] = gr->dram[k];
      }
    }
  }
  free(recv_of);
  free(seg_of);
  *out = j;
  return MP_OK;
nomem:
  free(recv_of);
  free(seg_of);
  job_free(j);
  return err_nomem(err);
}

static void add_bytes(void *ctx, int link, double bytes) { ((double *)ctx)[link] += bytes; }

static const sim *sort_sim; /* qsort context (the caller's thread only) */
static int link_cmp(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  double bx = sort_sim->link_bytes[x], by = sort_sim->link_bytes[y];
  if (bx != by) return bx > by ? -1 : 1;
  return (x > y) - (x < y);
}

static mp_status make_result(sim *s, uint64_t graph_hash, uint64_t plan_hash_v, const split *sp, const cost_result *cr,
                             const job *j, sim_result *res, mp_error *err) {
  const chip *c = s->chip;
  int M = j->M;
  memset(res, 0, sizeof *res);
  res->microbatches = M;
  res->graph_hash = graph_hash;
  res->plan_hash = plan_hash_v;
  res->chip_hash = c->hash;
  res->n_stages = sp->n_groups;
  res->n_cores = c->n_cores;
  res->stages = calloc((size_t)sp->n_groups, sizeof *res->stages);
  res->cores = calloc((size_t)c->n_cores, sizeof *res->cores);
  int top = s->opt.top_links;
  res->links = calloc((size_t)top + 1, sizeof *res->links);
  if (!res->stages || !res->cores || !res->links) {
    sim_result_clear(res);
    return err_nomem(err);
  }
  /* completion of each micro-batch */
  double c0 = 0, clast = 0;
  for (int m = 0; m < M; m++) {
    double cm = j->t0;
    for (int gi = 0; gi < j->n_groups; gi++)
      if (j->groups[gi].done_t[m] > cm) cm = j->groups[gi].done_t[m];
    if (m == 0) c0 = cm;
    if (m == M - 1) clast = cm;
  }
  double makespan = j->t_end - j->t0;
  res->makespan_s = round12(makespan);
  res->latency_s = round12(c0 - j->t0);
  res->period_s = M > 1 ? round12((clast - c0) / (M - 1)) : res->makespan_s;
  res->throughput_per_s = res->period_s > 0 ? round12(1.0 / res->period_s) : 0;
  res->analytical_bottleneck_s = cr->bottleneck_s;
  res->feasible = cr->feasible;
  double best = -1;
  for (int gi = 0; gi < sp->n_groups; gi++) {
    const jgroup *gr = &j->groups[gi];
    const cost_stage *cs = &cr->stages[gi];
    sim_stage_result *st = &res->stages[gi];
    st->first_layer = sp->groups[gi].first_layer;
    st->n_layers = sp->groups[gi].n_layers;
    st->first_core = gr->first_core;
    st->n_cores = gr->n_cores;
    st->compute_s = round12(gr->compute_s);
    st->comm_s = round12(gr->comm_s);
    st->dram_s = round12(gr->dram_s);
    double idle = makespan - gr->compute_s - gr->dram_s;
    st->idle_s = idle > 0 ? round12(idle) : 0;
    st->analytical_t_s = cs->time_s;
    st->sram_bytes = (uint64_t)ceil(cs->mem_bytes);
    st->fits = cs->fits;
    st->n_sends = sp->groups[gi].n_sends;
    st->n_recvs = sp->groups[gi].n_recvs;
    double dram = 0;
    if (gr->dram)
      for (int k = 0; k < gr->n_cores; k++) dram += gr->dram[k];
    st->dram_bytes = (uint64_t)llround(dram);
    res->dram_bytes += st->dram_bytes * (uint64_t)M;
    double busy = gr->compute_s + gr->dram_s > gr->comm_s ? gr->compute_s + gr->dram_s : gr->comm_s;
    if (busy > best) {
      best = busy;
      res->bottleneck_stage = gi;
    }
    res->activities += gr->acts;
  }
  fill_cores(c, res);
  /* link traffic on the XY routes */
  int nl = sim_n_links(c);
  memset(s->link_bytes, 0, (size_t)nl * sizeof *s->link_bytes);
  for (int gi = 0; gi < j->n_groups; gi++) {
    const jgroup *gr = &j->groups[gi];
    double A = 0;
    for (int k = 0; k < gr->n_segs; k++) A += gr->segs[k].gather;
    for (int k = 0; k + 1 < gr->n_cores && A > 0; k++) {
      int a = gr->first_core + k;
      sim_route_visit(c, -1, a, a + 1, add_bytes, s->link_bytes, M * A * (double)(k + 1) / gr->n_cores);
      sim_route_visit(c, -1, a + 1, a, add_bytes, s->link_bytes, M * A * (double)(gr->n_cores - 1 - k) / gr->n_cores);
    }
    for (int k = 0; k < gr->n_sends; k++)
      sim_route_visit(c, -1, gr->last_core, gr->sends[k].dst_core, add_bytes, s->link_bytes, M * gr->sends[k].bytes);
    if (gr->dram)
      for (int k = 0; k < gr->n_cores; k++)
        if (gr->dram[k] > 0)
          sim_route_visit(c, gr->dram_port, -1, gr->first_core + k, add_bytes, s->link_bytes, M * gr->dram[k]);
  }
  int used = 0;
  for (int k = 0; k < nl; k++)
    if (s->link_bytes[k] > 0) s->link_order[used++] = k;
  sort_sim = s;
  qsort(s->link_order, (size_t)used, sizeof *s->link_order, link_cmp);
  for (int k = 0; k < used && k < top; k++) {
    int l = s->link_order[k];
    sim_link_result *lr = &res->links[res->n_links++];
    sim_link_name(c, l, lr->name, sizeof lr->name);
    lr->bytes = (uint64_t)llround(s->link_bytes[l]);
    double bw = l >= 4 * c->width * c->height ? c->dram_bandwidth : c->noc_bandwidth;
    lr->utilisation = makespan > 0 ? round12(s->link_bytes[l] / (bw * makespan)) : 0;
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

static cache_entry *cache_find(sim *s, const graph *g, const plan *p, uint64_t ph, int M) {
  if (!s->cache) return NULL;
  int sets = s->opt.cache_size / CACHE_WAYS > 0 ? s->opt.cache_size / CACHE_WAYS : 1;
  int ways = s->opt.cache_size < CACHE_WAYS ? s->opt.cache_size : CACHE_WAYS;
  cache_entry *set = &s->cache[(cache_key(g->hash, ph, M) % (uint64_t)sets) * (uint64_t)ways];
  for (int w = 0; w < ways; w++) {
    cache_entry *ce = &set[w];
    if (ce->valid && ce->graph_hash == g->hash && ce->plan_hash == ph && ce->M == M && ce->n_arranged == p->n_cores &&
        memcmp(ce->arranged, p->arranged, (size_t)p->n_cores * sizeof(int)) == 0)
      return ce;
  }
  return NULL;
}

static cache_entry *cache_victim(sim *s, uint64_t gh, uint64_t ph, int M) {
  if (!s->cache) return NULL;
  int sets = s->opt.cache_size / CACHE_WAYS > 0 ? s->opt.cache_size / CACHE_WAYS : 1;
  int ways = s->opt.cache_size < CACHE_WAYS ? s->opt.cache_size : CACHE_WAYS;
  cache_entry *set = &s->cache[(cache_key(gh, ph, M) % (uint64_t)sets) * (uint64_t)ways], *best = &set[0];
  for (int w = 0; w < ways; w++) {
    if (!set[w].valid) return &set[w];
    if (set[w].stamp < best->stamp) best = &set[w];
  }
  return best;
}

/* Measured op times apply to the graph they were loaded for only. */
static mp_status check_op_times(const sim *s, const graph *g, mp_error *err) {
  const optimes *ot = s->opt.op_times;
  if (ot && (ot->graph_hash != g->hash || ot->n_layers != g->n_ops))
    return err_at(err, MP_INPUT, ot->file, NULL, "the op times were loaded for another graph than '%s'", g->name);
  return MP_OK;
}

mp_status sim_evaluate_m(sim *s, const graph *g, const plan *p, int M, sim_result *res, mp_error *err) {
  memset(res, 0, sizeof *res);
  const chip *c = s->chip;
  if (M < 1) return err_set(err, MP_USAGE, "sim: the number of micro-batches must be at least 1 (got %d)", M);
  if (p->n_cores != c->n_cores)
    return err_set(err, MP_INPUT, "sim: the plan is for %d cores but chip '%s' has %d", p->n_cores, c->name,
                   c->n_cores);
  if (p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan covers %d layers but graph '%s' has %d", p->n_layers, g->name,
                   g->n_ops);
  mp_status ck = check_op_times(s, g, err);
  if (ck != MP_OK) return ck;
  uint64_t ph = plan_hash(p);
  cache_entry *ce = s->next_tl ? NULL : cache_find(s, g, p, ph, M);
  if (ce) {
    mp_status st = result_copy(&ce->res, res, s->chip, err);
    if (st != MP_OK) return st;
    res->cached = 1;
    s->stats.evaluations++;
    s->stats.cache_hits++;
    return MP_OK;
  }
  split *sp = NULL;
  cost_result *cr = NULL;
  job *j = NULL;
  mp_status st = split_new(g, p, &sp, err);
  if (st == MP_OK) st = cost_evaluate(g, c, p, &cr, err);
  if (st == MP_OK) st = job_build(s, g, sp, cr, M, &j, err);
  if (st == MP_OK) {
    j->tl = s->next_tl;
    double t = now_wall();
    st = run_job(s, j, err);
    s->stats.engine_s += now_wall() - t;
    if (st == MP_OK && j->failed)
      st = err_set(err, MP_RUN, "sim: the evaluation could not run (out of memory%s)",
                   s->opt.isolate ? ", or no process or pipe for the isolated run" : "");
  }
  if (st == MP_OK) {
    st = make_result(s, g->hash, plan_hash(p), sp, cr, j, res, err);
    if (st == MP_OK && j->tl_failed) st = err_nomem(err);
    if (st == MP_OK && s->opt.op_times) res->op_times_overridden = s->opt.op_times->n_overridden;
  }
  if (st == MP_OK) {
    s->stats.evaluations++;
    s->stats.activities += res->activities;
    ce = s->next_tl ? NULL : cache_victim(s, g->hash, ph, M);
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
  job_free(j);
  cost_result_free(cr);
  split_free(sp);
  return st;
}

mp_status sim_evaluate(sim *s, const graph *g, const plan *p, sim_result *res, mp_error *err) {
  return sim_evaluate_m(s, g, p, s->opt.microbatches, res, err);
}

int sim_route_links(sim *s, int a, int b, char (*names)[48], int max) {
  if (a < 0 || b < 0 || a >= s->chip->n_cores || b >= s->chip->n_cores || a == b || max < 0) return -1;
  job j;
  memset(&j, 0, sizeof j);
  j.kind = JOB_ROUTE;
  j.ra = a;
  j.rb = b;
  j.r_max = max;
  j.r_names = names;
  if (run_job(s, &j, NULL) != MP_OK) return -1;
  return j.r_count;
}

void sim_free(sim *s) {
  if (!s) return;
  if (s->thread_started) {
    pthread_mutex_lock(&s->mu);
    s->state = ST_STOP;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    pthread_join(s->thread, NULL);
    if (s->opt.paje_file && rename(s->paje_part, s->opt.paje_file) != 0) unlink(s->paje_part);
  }
  if (s->cache)
    for (int i = 0; i < s->opt.cache_size; i++)
      if (s->cache[i].valid) {
        free(s->cache[i].arranged);
        sim_result_clear(&s->cache[i].res);
      }
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

static int add_pair(cJSON *o, const char *key, int first, int n) {
  int v[2] = {first, first + n - 1};
  cJSON *a = cJSON_CreateIntArray(v, 2);
  if (!a) return -1;
  cJSON_AddItemToObject(o, key, a);
  return 0;
}

cJSON *sim_result_to_json(const sim_result *r) {
  char hex[17];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddNumberToObject(o, "throughput_per_s", r->throughput_per_s) ||
      !cJSON_AddNumberToObject(o, "period_s", r->period_s) ||
      !cJSON_AddNumberToObject(o, "makespan_s", r->makespan_s) ||
      !cJSON_AddNumberToObject(o, "latency_s", r->latency_s) ||
      !cJSON_AddNumberToObject(o, "microbatches", r->microbatches) ||
      !cJSON_AddNumberToObject(o, "bottleneck_stage", r->bottleneck_stage) ||
      !cJSON_AddNumberToObject(o, "analytical_bottleneck_s", r->analytical_bottleneck_s) ||
      !cJSON_AddBoolToObject(o, "feasible", r->feasible) || !jsonio_add_u64(o, "dram_bytes", r->dram_bytes) ||
      !cJSON_AddNumberToObject(o, "activities", (double)r->activities) ||
      !cJSON_AddStringToObject(o, "graph_hash", fileio_hash_hex(r->graph_hash, hex)) ||
      !cJSON_AddStringToObject(o, "plan_hash", fileio_hash_hex(r->plan_hash, hex)) ||
      !cJSON_AddStringToObject(o, "chip_hash", fileio_hash_hex(r->chip_hash, hex)))
    goto fail;
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
        !cJSON_AddNumberToObject(x, "recvs", st->n_recvs))
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

/* ---- traces: recording the program, replaying a recorded one, timelines --------------------------
 *
 * A recorded trace is the job above written out: per group and micro-batch, each segment as its
 * receives (the segment's needs), the DRAM reads (before the first segment), one compute (the
 * segment's flops before the first core's share is taken, and its all-gather bytes) and the sends
 * it posts (tensor bytes before the transfer factor).  Replaying rebuilds the same job from those
 * actions with the replay chip's speeds, transfer factors and DRAM ports, so on the recorded chip it
 * is the very job sim_evaluate ran and the figures are identical; the analytical figures come from
 * each group's recorded model inputs through the model's own formulas. */

mp_status sim_record(sim *s, const graph *g, const plan *p, int M, trace **out, mp_error *err) {
  *out = NULL;
  const chip *c = s->chip;
  if (M < 1) return err_set(err, MP_USAGE, "sim: the number of micro-batches must be at least 1 (got %d)", M);
  if (p->n_cores != c->n_cores || p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "sim: the plan (%d cores, %d layers) does not fit chip '%s' (%d) and graph '%s' (%d)",
                   p->n_cores, p->n_layers, c->name, c->n_cores, g->name, g->n_ops);
  split *sp = NULL;
  cost_result *cr = NULL;
  job *j = NULL;
  trace *t = NULL;
  mp_status st = check_op_times(s, g, err);
  if (st == MP_OK) st = split_new(g, p, &sp, err);
  if (st == MP_OK) st = cost_evaluate(g, c, p, &cr, err);
  if (st == MP_OK) st = job_build(s, g, sp, cr, M, &j, err);
  if (st == MP_OK)
    st = trace_new(MESHPIPE_VERSION, g->name, g->hash, g->n_ops, p->arranged, p->n_cores, plan_hash(p), c->name,
                   c->hash, c->width, c->height, M, &t, err);
  for (int gi = 0; st == MP_OK && gi < j->n_groups; gi++) {
    const jgroup *gr = &j->groups[gi];
    const cost_stage *cs = &cr->stages[gi];
    const split_group *sg = &sp->groups[gi];
    trace_group fig = {.first_layer = sg->first_layer,
                       .n_layers = sg->n_layers,
                       .flops = cs->flops,
                       .gather_bytes = cs->gather_bytes,
                       .send_bytes = cs->send_bytes,
                       .weight_bytes = cs->weight_bytes,
                       .max_act_bytes = cs->max_act_bytes,
                       .sram_bytes = (uint64_t)ceil(cs->mem_bytes),
                       .n_sends = sg->n_sends,
                       .n_recvs = sg->n_recvs};
    double dram = 0;
    if (gr->dram)
      for (int k = 0; k < gr->n_cores; k++) dram += gr->dram[k];
    fig.dram_bytes = (uint64_t)llround(dram);
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
    const split_group *sg = &sp->groups[gi];
    for (int m = 0; st == MP_OK && m < M; m++)
      for (int k = 0; st == MP_OK && k < gr->n_segs; k++) {
        const seg *x = &gr->segs[k];
        for (int q = 0; st == MP_OK && q < x->n_needs; q++) {
          const split_recv *rv = &sg->recvs[x->needs[q]];
          trace_action a = {.kind = TRACE_RECV,
                            .microbatch = m,
                            .core = gr->first_core,
                            .peer = j->groups[rv->src_group].last_core,
                            .peer_group = rv->src_group};
          st = trace_add_action(t, gi, &a, g->tensors[rv->tensor].name, NULL, 0, err);
        }
        if (k == 0 && gr->dram)
          for (int q = 0; st == MP_OK && q < gr->n_cores; q++) {
            trace_action a = {.kind = TRACE_DRAM,
                              .microbatch = m,
                              .core = gr->first_core + q,
                              .peer = -1,
                              .peer_group = -1,
                              .bytes = gr->dram[q]};
            st = trace_add_action(t, gi, &a, "weights", NULL, 0, err);
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
  job_free(j);
  cost_result_free(cr);
  split_free(sp);
  if (st != MP_OK) {
    trace_free(t);
    return st;
  }
  *out = t;
  return MP_OK;
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
  int *src, *name;
} recv_list;

static int recv_index(const recv_list *l, int src, int name) {
  for (int r = 0; r < l->n; r++)
    if (l->src[r] == src && l->name[r] == name) return r;
  return -1;
}

/* The job of a trace whose core ids are the sim chip's: see the comment above this section. */
static mp_status job_from_trace(const sim *s, const trace *t, job **out, mp_error *err) {
  const chip *c = s->chip;
  int M = t->microbatches;
  mp_status st = MP_OK;
  char where[32];
  job *j = calloc(1, sizeof *j);
  recv_list *rl = calloc((size_t)t->n_groups, sizeof *rl);
  int *n0 = calloc((size_t)t->n_groups, sizeof *n0);
  if (!j || !rl || !n0) goto nomem;
  j->kind = JOB_EVAL;
  j->M = M;
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
    if (!rl[gi].src || !rl[gi].name) goto nomem;
    for (int i = 0; i < n; i++) {
      const trace_action *a = &tg->actions[i];
      if (a->kind != TRACE_RECV || recv_index(&rl[gi], a->peer, a->name) >= 0) continue;
      rl[gi].src[rl[gi].n] = a->peer;
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
    double speed = 0, gamma = 1;
    for (int k = gr->first_core; k <= gr->last_core; k++) {
      speed += c->cores[k].flops;
      if (c->cores[k].transfer_factor > gamma) gamma = c->cores[k].transfer_factor;
    }
    double share = c->cores[gr->first_core].flops / speed;
    int n_segs = 0, n_sends = 0, n_dram = 0;
    for (int i = 0; i < n; i++) {
      trace_kind k = tg->actions[i].kind;
      n_segs += k == TRACE_COMPUTE;
      n_sends += k == TRACE_SEND;
      n_dram += k == TRACE_DRAM;
    }
    gr->n_sends = n_sends;
    gr->n_recvs = rl[gi].n;
    gr->segs = calloc((size_t)n_segs + 1, sizeof *gr->segs);
    gr->sends = calloc((size_t)n_sends + 1, sizeof *gr->sends);
    gr->left = calloc((size_t)M, sizeof *gr->left);
    gr->arrived = calloc((size_t)rl[gi].n + 1, sizeof *gr->arrived);
    gr->done_t = calloc((size_t)M, sizeof *gr->done_t);
    gr->queue = calloc((size_t)n_sends * (size_t)M + 1, sizeof *gr->queue);
    gr->done = calloc((size_t)M * (size_t)(n_segs + 1), sizeof *gr->done);
    if (!gr->segs || !gr->sends || !gr->left || !gr->arrived || !gr->done_t || !gr->queue || !gr->done) goto nomem;
    if (gr->n_cores > 1) {
      gr->gather_matrix =
          malloc(((size_t)gr->n_cores * (size_t)gr->n_cores + (size_t)gr->n_cores) * sizeof *gr->gather_matrix);
      if (!gr->gather_matrix) goto nomem;
    }
    if (n_dram > 0) {
      if (c->n_dram == 0) {
        st = err_at(err, MP_INPUT, t->file, NULL, "group %d streams weights from DRAM, but chip '%s' has no DRAM port",
                    gi, c->name);
        goto fail;
      }
      gr->dram = calloc((size_t)gr->n_cores, sizeof *gr->dram);
      if (!gr->dram) goto nomem;
    }
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
        else
          gr->dram[a->core - gr->first_core] = a->bytes;
        break;
      case TRACE_COMPUTE:
        cur = &gr->segs[gr->n_segs++];
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
      }
    }
    free(pending);
    if (st != MP_OK) goto fail;
    if (n_pending > 0) {
      st = err_at(err, MP_INPUT, t->file, NULL, "group %d receives after its last compute: nothing would wait for it",
                  gi);
      goto fail;
    }
    for (int m = 0; m < M; m++) gr->left[m] = gr->n_segs;
    if (gr->dram) {
      gr->dram_port = chip_nearest_dram(c, gr->first_core);
      size_t nh = (size_t)gr->n_cores + 1;
      gr->dram_hosts = malloc(nh * sizeof *gr->dram_hosts);
      gr->dram_matrix = calloc(nh * nh + nh, sizeof *gr->dram_matrix);
      if (!gr->dram_hosts || !gr->dram_matrix) goto nomem;
      gr->dram_hosts[0] = s->dram_hosts[gr->dram_port];
      for (int k = 0; k < gr->n_cores; k++) {
        gr->dram_hosts[k + 1] = s->hosts[gr->first_core + k];
        gr->dram_matrix[k + 1] = gr->dram[k];
      }
    }
  }
  for (int gi = 0; gi < t->n_groups; gi++) {
    free(rl[gi].src);
    free(rl[gi].name);
  }
  free(rl);
  free(n0);
  *out = j;
  return MP_OK;
nomem:
  st = err_nomem(err);
fail:
  if (rl)
    for (int gi = 0; gi < t->n_groups; gi++) {
      free(rl[gi].src);
      free(rl[gi].name);
    }
  free(rl);
  free(n0);
  job_free(j);
  return st;
}

/* Frees the split trace_meta made (its groups own no Send/Recv lists). */
static void meta_split_free(split *sp) {
  if (sp) free(sp->groups);
  free(sp);
}

static mp_status trace_meta(const sim *s, const trace *t, split **sp_out, cost_result **cr_out, mp_error *err) {
  const chip *c = s->chip;
  split *sp = calloc(1, sizeof *sp);
  cost_result *cr = calloc(1, sizeof *cr);
  if (sp) sp->groups = calloc((size_t)t->n_groups, sizeof *sp->groups);
  if (cr) cr->stages = calloc((size_t)t->n_groups, sizeof *cr->stages);
  if (!sp || !cr || !sp->groups || !cr->stages) {
    meta_split_free(sp);
    cost_result_free(cr);
    return err_nomem(err);
  }
  int uniform = 1;
  for (int i = 1; i < c->n_cores; i++)
    if (c->cores[i].flops != c->cores[0].flops || c->cores[i].sram_bytes != c->cores[0].sram_bytes ||
        c->cores[i].transfer_factor != c->cores[0].transfer_factor)
      uniform = 0;
  sp->n_groups = cr->n_stages = t->n_groups;
  cr->feasible = 1;
  for (int gi = 0; gi < t->n_groups; gi++) {
    const trace_group *tg = &t->groups[gi];
    split_group *sg = &sp->groups[gi];
    sg->first_layer = tg->first_layer;
    sg->n_layers = tg->n_layers;
    sg->first_core = tg->cores[0];
    sg->n_cores = tg->n_cores;
    sg->n_sends = tg->n_sends;
    sg->n_recvs = tg->n_recvs;
    cost_stage *cs = &cr->stages[gi];
    double speed = 0, gamma = 0, sram = 0;
    if (uniform) {
      speed = (double)tg->n_cores * c->cores[0].flops;
      gamma = c->cores[0].transfer_factor;
      sram = (double)c->cores[0].sram_bytes;
    } else {
      sram = (double)c->cores[tg->cores[0]].sram_bytes;
      for (int k = 0; k < tg->n_cores; k++) {
        const chip_core *core = &c->cores[tg->cores[k]];
        speed += core->flops;
        if (core->transfer_factor > gamma) gamma = core->transfer_factor;
        if ((double)core->sram_bytes < sram) sram = (double)core->sram_bytes;
      }
    }
    *cs = (cost_stage){.first_layer = tg->first_layer,
                       .n_layers = tg->n_layers,
                       .first_core = tg->cores[0],
                       .n_cores = tg->n_cores,
                       .flops = tg->flops,
                       .weight_bytes = tg->weight_bytes,
                       .gather_bytes = tg->gather_bytes,
                       .max_act_bytes = tg->max_act_bytes,
                       .send_bytes = tg->send_bytes,
                       .speed = speed,
                       .gamma = gamma,
                       .sram_bytes = sram};
    cs->compute_s = cost_compute_s(cs->flops, speed, cs->gather_bytes, tg->n_cores, c->noc_bandwidth);
    cs->send_s = cost_send_s(cs->send_bytes, gamma, c->noc_bandwidth);
    cs->time_s = cs->compute_s > cs->send_s ? cs->compute_s : cs->send_s;
    cs->mem_bytes = cost_mem_bytes(cs->weight_bytes, cs->max_act_bytes, tg->n_cores);
    cs->fits = cs->mem_bytes <= sram;
    if (gi == 0 || cs->time_s > cr->bottleneck_s) {
      cr->bottleneck_s = cs->time_s;
      cr->bottleneck_stage = gi;
    }
    if (!cs->fits) cr->feasible = 0;
  }
  *sp_out = sp;
  *cr_out = cr;
  return MP_OK;
}

mp_status sim_replay(sim *s, const trace *t, sim_result *res, mp_error *err) {
  memset(res, 0, sizeof *res);
  const chip *c = s->chip;
  mp_status st = trace_check(t, c->n_cores, err);
  if (st != MP_OK) return st;
  split *sp = NULL;
  cost_result *cr = NULL;
  job *j = NULL;
  st = trace_meta(s, t, &sp, &cr, err);
  if (st == MP_OK) st = job_from_trace(s, t, &j, err);
  if (st == MP_OK) {
    double w = now_wall();
    st = run_job(s, j, err);
    s->stats.engine_s += now_wall() - w;
  }
  if (st == MP_OK) st = make_result(s, t->graph_hash, t->plan_hash, sp, cr, j, res, err);
  if (st == MP_OK) {
    s->stats.evaluations++;
    s->stats.activities += res->activities;
  }
  job_free(j);
  cost_result_free(cr);
  meta_split_free(sp);
  return st;
}

mp_status sim_evaluate_timeline(sim *s, const graph *g, const plan *p, int microbatches, timeline *tl, sim_result *res,
                                mp_error *err) {
  s->next_tl = tl;
  mp_status st = sim_evaluate_m(s, g, p, microbatches, res, err);
  s->next_tl = NULL;
  for (int k = 0; st == MP_OK && k < res->n_cores; k++) {
    timeline_event e = {.kind = TIMELINE_SRAM, .first_core = k, .dram_port = -1, .bytes = res->cores[k].sram_bytes};
    if (res->cores[k].sram_bytes > 0) st = timeline_add(tl, &e, err);
  }
  return st;
}
