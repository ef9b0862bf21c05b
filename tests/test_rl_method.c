/* Tests of rl_method: the rl partitioner on the simulator (never worse than its start, the same plan
 * for the same seed, bad options, a lent simulator), and `meshpipe train`, the trainer's front end
 * (a resumed run and one under mpirun write what one uninterrupted process writes; bad usage).
 * MESHPIPE_TEST_LABELS: simgrid */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "method.h"
#include "rl_method.h"
#include "sim.h"
#include "testutil.h"

typedef struct rl_run {
  const char *init, *policy, *chip;
  int episodes;
  uint64_t seed;
  sim *sim; /* lent to the method, or NULL */
  void (*progress)(void *, const char *, long, long, double); /* method_options.progress, or NULL */
  void *progress_ctx;
  mp_status st;
  plan *p;
  method_report rep;
  mp_error err;
} rl_run;

/* Runs the rl method on tiny_resnet: r->st, r->err, r->p and r->rep say how it ended.  Returns 0 when
 * the inputs do not load or the method returns an invalid plan, so that it also serves in a child
 * process, where a failed CUnit assertion would go unseen. */
static int run_rl(rl_run *r) {
  graph *g = NULL;
  chip *c = NULL;
  r->p = NULL;
  int ok = graph_load(testutil_src("traces/tiny_resnet.json"), &g, &r->err) == MP_OK &&
           chip_load(testutil_src(r->chip ? r->chip : "platforms/mesh4x4.json"), &c, &r->err) == MP_OK;
  if (ok) {
    method_options o;
    method_options_default(&o);
    o.seed = r->seed ? r->seed : 1;
    o.init = r->init;
    o.policy = r->policy;
    o.episodes = r->episodes;
    o.sim = r->sim;
    o.progress = r->progress;
    o.progress_ctx = r->progress_ctx;
    r->st = method_run("rl", g, c, &o, &r->p, &r->rep, &r->err);
    mp_error verr;
    if (r->st == MP_OK) ok = plan_validate(r->p->arranged, c->n_cores, g->n_ops, "x", &verr) == MP_OK;
  }
  chip_free(c);
  graph_free(g);
  return ok;
}

/* The "best simulated B ... against S" figures of the method's note. */
static int note_figures(const method_report *rep, double *best, double *start) {
  const char *at = strstr(rep->notes, "best simulated ");
  return at && sscanf(at, "best simulated %lf samples/s against %lf", best, start) == 2;
}

static void the_rl_method_should_never_return_worse_than_its_initial_plan(void) {
  const char *inits[2] = {NULL, "optimal"};
  for (int k = 0; k < 2; k++) {
    rl_run r = {.init = inits[k], .episodes = 8};
    CU_ASSERT_TRUE_FATAL(run_rl(&r));
    CU_ASSERT_EQUAL_FATAL(r.st, MP_OK);
    double best = 0, start = 0;
    CU_ASSERT_TRUE(note_figures(&r.rep, &best, &start));
    CU_ASSERT(best >= start && start > 0);
    CU_ASSERT_PTR_NOT_NULL(strstr(r.rep.notes, k ? "from optimal's plan" : "from even's plan"));
    CU_ASSERT_PTR_NOT_NULL(strstr(r.rep.notes, "from the simulator's cache"));
    plan_free(r.p);
  }
}

static void the_rl_method_should_give_the_same_plan_for_the_same_seed(void) {
  rl_run a = {.episodes = 8, .seed = 3}, b = {.episodes = 8, .seed = 3};
  CU_ASSERT_TRUE_FATAL(run_rl(&a));
  CU_ASSERT_TRUE_FATAL(run_rl(&b));
  CU_ASSERT_EQUAL_FATAL(a.st, MP_OK);
  CU_ASSERT_EQUAL_FATAL(b.st, MP_OK);
  CU_ASSERT_TRUE(plan_equal(a.p, b.p));
  CU_ASSERT_STRING_EQUAL(a.rep.notes, b.rep.notes);
  plan_free(a.p);
  plan_free(b.p);
}

static void the_rl_method_should_reject_bad_options(void) {
  rl_run r = {.init = "rl", .episodes = 4};
  CU_ASSERT_TRUE_FATAL(run_rl(&r));
  CU_ASSERT_EQUAL(r.st, MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(r.err.msg, "cannot come from rl"));
  rl_run u = {.init = "nonsense", .episodes = 4};
  CU_ASSERT_TRUE_FATAL(run_rl(&u));
  CU_ASSERT_EQUAL(u.st, MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(u.err.msg, "no method 'nonsense'"));
  rl_run m = {.policy = testutil_temp_path("missing.pol"), .episodes = 4};
  CU_ASSERT_TRUE_FATAL(run_rl(&m));
  CU_ASSERT_EQUAL(m.st, MP_INPUT); /* the child's error comes back through the pipe */
  CU_ASSERT_PTR_NOT_NULL(strstr(m.err.msg, "missing.pol"));
}

/* In a child process (every failed check is a non-zero exit status): a lent simulator is used
 * in-process, and one of another chip is refused. */
static int lent_sim_child(void *arg) {
  (void)arg;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  if (chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err) != MP_OK || sim_new(c, NULL, &s, &err) != MP_OK)
    return 10;
  rl_run ok = {.episodes = 4, .sim = s};
  if (!run_rl(&ok)) return 11;
  sim_stats st;
  sim_get_stats(s, &st);
  if (ok.st != MP_OK || st.evaluations < 4) return 12; /* the search ran on the lent engine */
  plan_free(ok.p);
  rl_run other = {.episodes = 4, .chip = "platforms/mesh8x8.json", .sim = s};
  if (!run_rl(&other)) return 13;
  if (other.st != MP_RUN || !strstr(other.err.msg, "runs chip")) return 14;
  sim_free(s);
  chip_free(c);
  return 0;
}

static void the_rl_method_should_use_a_lent_simulator_of_the_same_chip_only(void) {
  CU_ASSERT_EQUAL(testutil_in_child(lent_sim_child, NULL), 0);
}

/* What the rl method's progress callback was told, in order. */
typedef struct progress_log {
  int n;
  struct {
    const char *phase;
    long done, total;
  } e[1024];
} progress_log;

static void log_progress(void *ctx, const char *phase, long done, long total, double best) {
  progress_log *l = ctx;
  (void)best;
  if (l->n < 1024) {
    l->e[l->n].phase = phase;
    l->e[l->n].done = done;
    l->e[l->n].total = total;
  }
  l->n++;
}

/* In a child (the method reports in-process on a lent simulator): the phases come in order, one
 * pointer each; the kicks are reported every RL_METHOD_KICKS_REPORTED of the 5 000 kicks on 16
 * cores, the searches' rounds one by one (0, 1, ..., then the maximum when they stop), the
 * simulator's phase with 0 episodes before any episode and all 16 at its end, then the final polish. */
static int progress_child(void *arg) {
  (void)arg;
  static progress_log log;
  enum { WARMUP, REGROUP, KICKS, REGROUP2, PAIRS, SIM, POLISH, N_PHASES };
  static const char *const names[N_PHASES] = {"episodes on the model",
                                              "rounds of regrouping on the model",
                                              "kicks of the model search",
                                              "rounds of regrouping after the kicks",
                                              "rounds of the model's pair polish",
                                              "episodes on the simulator",
                                              "rounds of the final polish on the simulator"};
  const long max_rounds[N_PHASES] = {[REGROUP] = RL_METHOD_MODEL_REGROUP_ROUNDS,
                                     [REGROUP2] = RL_METHOD_MODEL_REGROUP_ROUNDS,
                                     [PAIRS] = RL_METHOD_MODEL_PAIR_ROUNDS,
                                     [POLISH] = RL_METHOD_POLISH_ROUNDS};
  const char *ptr[N_PHASES] = {NULL};
  long seen[N_PHASES] = {0}, last_episodes = -1;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  if (chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err) != MP_OK || sim_new(c, NULL, &s, &err) != MP_OK)
    return 10;
  rl_run r = {.episodes = 16, .sim = s, .progress = log_progress, .progress_ctx = &log};
  if (!run_rl(&r) || r.st != MP_OK || log.n > 1024) return 11;
  int phase = 0;
  for (int i = 0; i < log.n; i++) {
    int k = 0;
    while (k < N_PHASES && strcmp(log.e[i].phase, names[k]) != 0) k++;
    if (k == N_PHASES || k < phase) return 12; /* an unknown phase, or one out of order */
    if (ptr[k] && ptr[k] != log.e[i].phase) return 13;
    ptr[k] = log.e[i].phase;
    phase = k;
    long done = log.e[i].done, n = seen[k]++;
    if (k == KICKS) {
      long want = n < RL_METHOD_MODEL_KICKS / RL_METHOD_KICKS_REPORTED ? n * RL_METHOD_KICKS_REPORTED
                                                                        : RL_METHOD_MODEL_KICKS;
      if (done != want || log.e[i].total != RL_METHOD_MODEL_KICKS) return 14;
    }
    if (max_rounds[k] > 0 && (log.e[i].total != max_rounds[k] || (done != n && done != max_rounds[k]))) return 18;
    if (k == SIM && (log.e[i].total != 16 || (n == 0 && done != 0))) return 15;
    if (k == SIM) last_episodes = done;
  }
  if (seen[KICKS] != RL_METHOD_MODEL_KICKS / RL_METHOD_KICKS_REPORTED + 1 || seen[SIM] < 2) return 16;
  if (seen[REGROUP] < 2 || seen[REGROUP2] < 2 || seen[PAIRS] < 2 || seen[POLISH] < 2) return 19; /* a round, the end */
  if (last_episodes != 16 || log.e[log.n - 1].done != RL_METHOD_POLISH_ROUNDS) return 17;
  plan_free(r.p);
  sim_free(s);
  chip_free(c);
  return 0;
}

static void the_rl_method_should_report_each_phase_in_order_and_the_kicks_every_few(void) {
  CU_ASSERT_EQUAL(testutil_in_child(progress_child, NULL), 0);
}

static char *slurp_file(const char *path, size_t *len) {
  char *data = NULL;
  mp_error err;
  if (fileio_read_all(path, &data, len, &err) != MP_OK) return NULL;
  return data;
}

/* 1 when both files can be read and hold the same bytes. */
static int same_bytes(const char *pa, const char *pb) {
  size_t la = 0, lb = 0;
  char *a = slurp_file(pa, &la), *b = slurp_file(pb, &lb);
  int same = a && b && la == lb && memcmp(a, b, la) == 0;
  free(a), free(b);
  return same;
}

/* The policies a and b are the same bytes, and so are their checkpoints (a.ckpt, b.ckpt). */
static void assert_same_policy_and_checkpoint(const char *a, const char *b) {
  for (int k = 0; k < 2; k++) {
    char pa[1100], pb[1100];
    snprintf(pa, sizeof pa, "%s%s", a, k ? ".ckpt" : "");
    snprintf(pb, sizeof pb, "%s%s", b, k ? ".ckpt" : "");
    CU_ASSERT_TRUE(same_bytes(pa, pb));
  }
}

static void train_should_write_a_policy_that_a_resumed_run_reproduces_byte_for_byte(void) {
  /* Copies: testutil's path buffers rotate, and testutil_meshpipe uses some of them. */
  char args[4096], *out = NULL, *errout = NULL, g[1024], c[1024], whole[1024], part[1024];
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(whole, sizeof whole, "%s", testutil_temp_path("whole.pol"));
  snprintf(part, sizeof part, "%s", testutil_temp_path("part.pol"));
  snprintf(args, sizeof args, "train -g '%s' -c '%s' --episodes 24 --checkpoint-every 8 -o '%s'", g, c, whole);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "policy written to"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "arranged_core ["));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "from the simulator's cache"));
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "train: episode 24/24 (100%)")); /* the progress line, not a tty */
  free(out), free(errout);
  snprintf(args, sizeof args, "train -q -g '%s' -c '%s' --episodes 8 --checkpoint-every 8 -o '%s'", g, c, part);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  CU_ASSERT_STRING_EQUAL(errout, ""); /* --quiet */
  free(out), free(errout);
  snprintf(args, sizeof args, "train -q -g '%s' -c '%s' --episodes 24 --checkpoint-every 8 --resume -o '%s' --json", g,
           c, part);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"cache_hit_rate\""));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"best_samples_per_s\""));
  free(out), free(errout);
  CU_ASSERT_TRUE(same_bytes(whole, part));
  /* The trained policy applies without training (--episodes 0) through the partition command. */
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m rl --policy '%s' --episodes 0", g, c, whole);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "fine-tuning the given policy"));
  free(out), free(errout);
}

/* mpirun -np 3: the same policy file, checkpoint and summary as one process with the same seed.  Ten
 * episodes are a batch of eight and a batch of two dealt over three processes (one with nothing to
 * play), and one polish round dealt over them too. */
static void train_under_mpirun_should_write_what_one_process_writes(void) {
  const char *why = NULL;
  if (!testutil_mpi_available(&why)) {
    printf("\n  SKIPPED: %s\n", why);
    return;
  }
  char args[4096], cmd[8192], *out = NULL, *errout = NULL, g[1024], c[1024], one[1024], three[1024], log[1024];
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(one, sizeof one, "%s", testutil_temp_path("one.pol"));
  snprintf(three, sizeof three, "%s", testutil_temp_path("three.pol"));
  snprintf(log, sizeof log, "%s", testutil_temp_path("mpirun.json"));
  /* --isolate: simulated figures that do not depend on what else each process simulated before */
  snprintf(args, sizeof args, "train -q --json --isolate -g '%s' -c '%s' --episodes 10 --polish 1 -o '%s'", g, c, one);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  snprintf(cmd, sizeof cmd,
           "mpirun --allow-run-as-root --oversubscribe -np 3 '%s' train -q --json --isolate -g '%s' -c '%s' "
           "--episodes 10 --polish 1 -o '%s' >'%s' 2>&1",
           MESHPIPE_BINARY, g, c, three, log);
  int rc = system(cmd);
  size_t ll = 0;
  char *printed = slurp_file(log, &ll);
  if (!(WIFEXITED(rc) && WEXITSTATUS(rc) == 0)) printf("\n  mpirun failed:\n%s\n", printed ? printed : "");
  CU_ASSERT_FATAL(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  assert_same_policy_and_checkpoint(one, three);
  /* One summary, from rank 0, with the same plans and figures. */
  cJSON *ra = cJSON_Parse(out), *rb = printed ? cJSON_Parse(printed) : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
  char *ga = cJSON_PrintUnformatted(cJSON_GetObjectItem(ra, "graphs"));
  char *gb = cJSON_PrintUnformatted(cJSON_GetObjectItem(rb, "graphs"));
  CU_ASSERT_STRING_EQUAL(ga, gb);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(ra, "evaluations")),
                  cJSON_GetNumberValue(cJSON_GetObjectItem(rb, "evaluations")));
  free(ga), free(gb);
  cJSON_Delete(ra);
  cJSON_Delete(rb);
  free(printed);
  free(out), free(errout);
}

/* --jobs 3: three forked processes write what one does, and only the first prints (one summary). */
static void train_with_jobs_should_write_what_one_process_writes(void) {
  char args[4096], *out1 = NULL, *err1 = NULL, *out3 = NULL, *err3 = NULL, g[1024], c[1024], one[1024], three[1024];
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(one, sizeof one, "%s", testutil_temp_path("jobs1.pol"));
  snprintf(three, sizeof three, "%s", testutil_temp_path("jobs3.pol"));
  snprintf(args, sizeof args, "train -q --json --isolate -g '%s' -c '%s' --episodes 10 --polish 1 -o '%s'", g, c, one);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out1, &err1), 0);
  snprintf(args, sizeof args, "train -q --json --isolate --jobs 3 -g '%s' -c '%s' --episodes 10 --polish 1 -o '%s'", g, c, three);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out3, &err3), 0);
  CU_ASSERT_STRING_EQUAL(err3, "");
  assert_same_policy_and_checkpoint(one, three);
  cJSON *ra = cJSON_Parse(out1), *rb = cJSON_Parse(out3); /* one JSON object each: one printer */
  CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
  char *ga = cJSON_PrintUnformatted(cJSON_GetObjectItem(ra, "graphs"));
  char *gb = cJSON_PrintUnformatted(cJSON_GetObjectItem(rb, "graphs"));
  CU_ASSERT_STRING_EQUAL(ga, gb);
  free(ga), free(gb);
  cJSON_Delete(ra);
  cJSON_Delete(rb);
  free(out1), free(err1), free(out3), free(err3);
}

/* partition -m rl reports each phase of its search on stderr, and nothing with --quiet. */
static void partition_rl_should_report_its_progress_unless_quiet(void) {
  char args[4096], *out = NULL, *errout = NULL, g[1024], c[1024];
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m rl --episodes 8", g, c);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  /* the phases in their order, each ended by its final line: the warm-up, the model search's kicks
   * (5 000 on 16 cores), the simulator's episodes */
  const char *warm = strstr(errout, "rl 400/400 (100%) episodes on the model ["),
             *kicks = strstr(errout, "rl 5000/5000 (100%) kicks of the model search ["),
             *simulated = strstr(errout, "rl 8/8 (100%) episodes on the simulator [");
  CU_ASSERT_PTR_NOT_NULL(warm);
  CU_ASSERT_PTR_NOT_NULL(kicks);
  CU_ASSERT_PTR_NOT_NULL(simulated);
  CU_ASSERT_TRUE(warm && kicks && simulated && warm < kicks && kicks < simulated);
  free(out), free(errout);
  snprintf(args, sizeof args, "partition -q -g '%s' -c '%s' -m rl --episodes 8", g, c);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  CU_ASSERT_STRING_EQUAL(errout, "");
  free(out), free(errout);
}

/* partition -m rl --jobs 2: the plan and the report of one process, printed once. */
static void partition_rl_with_jobs_should_give_the_plan_of_one_process(void) {
  char args[4096], *out1 = NULL, *err1 = NULL, *out2 = NULL, *err2 = NULL, g[1024], c[1024], one[1024], two[1024];
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(one, sizeof one, "%s", testutil_temp_path("rl1.plan.json"));
  snprintf(two, sizeof two, "%s", testutil_temp_path("rl2.plan.json"));
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m rl --episodes 16 --json -o '%s'", g, c, one);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out1, &err1), 0);
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m rl --episodes 16 --json --jobs 2 -o '%s'", g, c, two);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out2, &err2), 0);
  CU_ASSERT_TRUE(same_bytes(one, two));
  cJSON *ra = cJSON_Parse(out1), *rb = cJSON_Parse(out2); /* one object each: the second rank is silent */
  CU_ASSERT_PTR_NOT_NULL_FATAL(ra);
  CU_ASSERT_PTR_NOT_NULL_FATAL(rb);
  char *pa = cJSON_PrintUnformatted(cJSON_GetObjectItem(ra, "arranged_core"));
  char *pb = cJSON_PrintUnformatted(cJSON_GetObjectItem(rb, "arranged_core"));
  CU_ASSERT_STRING_EQUAL(pa, pb);
  free(pa), free(pb);
  cJSON_Delete(ra);
  cJSON_Delete(rb);
  free(out1), free(err1), free(out2), free(err2);
}

/* The "best simulated B" figure of a partition -m rl --json run's notes, or -1. */
static double best_figure(const char *out) {
  cJSON *o = cJSON_Parse(out);
  const char *notes = o ? cJSON_GetStringValue(cJSON_GetObjectItem(o, "notes")) : NULL;
  const char *at = notes ? strstr(notes, "best simulated ") : NULL;
  double x = -1;
  if (!at || sscanf(at, "best simulated %lf", &x) != 1) x = -1;
  cJSON_Delete(o);
  return x;
}

/* With --no-simulate partition lends rl no engine and rl starts its own: with the command's simulator
 * options (it used to take the defaults, so --fast-streams or -M were lost there).  At -M 2 the best
 * plan's figure is the same with and without --no-simulate, and not the steady one (641 791 against
 * 484 496 samples/s when measured). */
static void partition_rl_without_a_simulation_should_still_simulate_with_the_options_given(void) {
  char args[4096], g[1024], c[1024], *out = NULL, *err = NULL;
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  double fig[3];
  const char *extra[3] = {"-M 2", "-M 2 --no-simulate", "--no-simulate"};
  for (int k = 0; k < 3; k++) {
    snprintf(args, sizeof args, "partition -q -g '%s' -c '%s' -m rl --episodes 0 --json %s", g, c, extra[k]);
    CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &err), 0);
    fig[k] = best_figure(out);
    free(out), free(err);
  }
  CU_ASSERT(fig[0] > 0);
  CU_ASSERT_EQUAL(fig[0], fig[1]);
  CU_ASSERT(fabs(fig[0] - fig[2]) > 1e-3 * fig[2]); /* two micro-batches are not the steady state */
}

static void train_should_reject_bad_usage_with_exit_status_2(void) {
  char g[1024], c[1024], pol[1024], nograph[1024];
  snprintf(g, sizeof g, "%s", testutil_src("traces/tiny_resnet.json"));
  snprintf(c, sizeof c, "%s", testutil_src("platforms/mesh4x4.json"));
  snprintf(pol, sizeof pol, "%s", testutil_temp_path("u.pol"));
  snprintf(nograph, sizeof nograph, "%s", testutil_temp_path("nograph.json"));
  struct {
    int with_graph, with_output;
    const char *extra, *want;
  } cases[] = {
      {0, 1, "", "needs at least one graph"},
      {1, 0, "", "needs a file for the policy"},
      {1, 1, "--reward magic", "--reward must be"},
      {1, 1, "--init rl", "cannot be rl"},
      {1, 1, "--init nothing", "no method 'nothing'"},
      {1, 1, "--resume", "no checkpoint"},
      {1, 1, "--episodes-per-update 1", "--episodes-per-update"},
      {1, 1, "--batch 0", "--batch must be between 1"},
      {1, 1, "--jobs 0", "--jobs '0' is not a number of processes"},
      {1, 1, "--jobs many", "--jobs 'many' is not a number of processes"},
      {1, 1, "--episodes -3", "--episodes"},
      {1, 1, "extra", "unexpected argument"},
      {1, 1, "--bogus", "unknown option"},
      {1, 1, "-g", "needs a value"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char args[4096], gpart[1100] = "", opart[1100] = "", *out = NULL, *errout = NULL;
    if (cases[k].with_graph) snprintf(gpart, sizeof gpart, "-g '%s'", g);
    if (cases[k].with_output) snprintf(opart, sizeof opart, "-o '%s'", pol);
    snprintf(args, sizeof args, "train %s -c '%s' %s %s", gpart, c, opart, cases[k].extra);
    CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(errout, cases[k].want));
    if (!strstr(errout, cases[k].want)) fprintf(stderr, "\n  %s -> %s", args, errout);
    free(out), free(errout);
  }
  char args[4096], *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "train -g '%s' -c '%s' -o '%s'", nograph, c, pol);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "nograph.json"));
  free(out), free(errout);
  snprintf(args, sizeof args, "train -g '%s' -c '%s' -o /nonexistent-dir/p.pol --episodes 8", g, c);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 1);
  /* refused before any training: no progress line */
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "/nonexistent-dir/p.pol: cannot write the policy there"));
  CU_ASSERT_PTR_NULL(strstr(errout, "train: episode"));
  free(out), free(errout);
  CU_ASSERT_FALSE(testutil_exists(pol));
}

/* Up to 64 cores the defaults are the tuned ones; beyond, every count shrinks by 64 / cores (a
 * simulation, a move and a kick's ascent all cost more on a bigger mesh), down to its floor. */
static void the_rl_defaults_should_shrink_by_64_over_the_cores_beyond_64_cores(void) {
  CU_ASSERT_EQUAL(rl_method_default_episodes(64), RL_METHOD_EPISODES);
  CU_ASSERT_EQUAL(rl_method_warmup_episodes(64), RL_METHOD_WARMUP_EPISODES);
  CU_ASSERT_EQUAL(rl_method_model_kicks(16), RL_METHOD_MODEL_KICKS);
  CU_ASSERT_EQUAL(rl_method_model_kicks(64), RL_METHOD_MODEL_KICKS);
  CU_ASSERT_EQUAL(rl_method_default_episodes(256), RL_METHOD_EPISODES / 4);
  CU_ASSERT_EQUAL(rl_method_warmup_episodes(256), RL_METHOD_WARMUP_EPISODES / 4);
  CU_ASSERT_EQUAL(rl_method_model_kicks(256), RL_METHOD_MODEL_KICKS / 4);
  CU_ASSERT_EQUAL(rl_method_model_kicks(1024), RL_METHOD_MODEL_KICKS / 16);
  CU_ASSERT_EQUAL(rl_method_default_episodes(1024), 8); /* the floors */
  CU_ASSERT_EQUAL(rl_method_warmup_episodes(1024), 50);
  CU_ASSERT_EQUAL(rl_method_model_kicks(1 << 20), 50);
}

static CU_TestInfo tests[] = {
    {"the_rl_defaults_should_shrink_by_64_over_the_cores_beyond_64_cores",
     the_rl_defaults_should_shrink_by_64_over_the_cores_beyond_64_cores},
    {"the_rl_method_should_never_return_worse_than_its_initial_plan",
     the_rl_method_should_never_return_worse_than_its_initial_plan},
    {"the_rl_method_should_give_the_same_plan_for_the_same_seed",
     the_rl_method_should_give_the_same_plan_for_the_same_seed},
    {"the_rl_method_should_reject_bad_options", the_rl_method_should_reject_bad_options},
    {"the_rl_method_should_use_a_lent_simulator_of_the_same_chip_only",
     the_rl_method_should_use_a_lent_simulator_of_the_same_chip_only},
    {"the_rl_method_should_report_each_phase_in_order_and_the_kicks_every_few",
     the_rl_method_should_report_each_phase_in_order_and_the_kicks_every_few},
    {"train_should_write_a_policy_that_a_resumed_run_reproduces_byte_for_byte",
     train_should_write_a_policy_that_a_resumed_run_reproduces_byte_for_byte},
    {"train_with_jobs_should_write_what_one_process_writes", train_with_jobs_should_write_what_one_process_writes},
    {"partition_rl_with_jobs_should_give_the_plan_of_one_process", partition_rl_with_jobs_should_give_the_plan_of_one_process},
    {"partition_rl_without_a_simulation_should_still_simulate_with_the_options_given",
     partition_rl_without_a_simulation_should_still_simulate_with_the_options_given},
    {"partition_rl_should_report_its_progress_unless_quiet", partition_rl_should_report_its_progress_unless_quiet},
    {"train_under_mpirun_should_write_what_one_process_writes",
     train_under_mpirun_should_write_what_one_process_writes},
    {"train_should_reject_bad_usage_with_exit_status_2", train_should_reject_bad_usage_with_exit_status_2},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_method", tests, argc, argv); }
