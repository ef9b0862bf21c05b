/* Tests of rl_train: configuration checks, REINFORCE learning a bandit posed through the decision
 * process, finding the brute-force optimum of a small partitioning instance, determinism, resuming
 * from a checkpoint bit for bit, the greedy and polish steps, and every error path, with hand-made
 * rewards and the analytical model's; then the rl method and `meshpipe train` on the simulator.
 * MESHPIPE_TEST_LABELS: simgrid */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "cost.h"
#include "fileio.h"
#include "graph.h"
#include "method.h"
#include "rl_train.h"
#include "sim.h"
#include "testutil.h"

/* ---- a synthetic partitioning cost: stage time = F / c + 0.3 · layers · (c − 1) / c ---- */

typedef struct toy {
  int n_cores, n_layers;
  double flops[16];
  int fail_at_sum_first; /* when >= 0: fail for plans whose arranged[0] equals it */
  int fail_after; /* when > 0: fail every call after that many */
  int calls;
} toy;

static double toy_period(const toy *t, const int *a) {
  double worst = 0;
  int layer = 0, first_core = 0;
  for (int c = 0; c < t->n_cores; c++) {
    if (a[c] == 0) continue;
    int cores = c - first_core + 1;
    double f = 0;
    for (int l = layer; l < layer + a[c]; l++) f += t->flops[l];
    double time = f / cores + 0.3 * a[c] * (cores - 1) / cores;
    worst = time > worst ? time : worst;
    layer += a[c];
    first_core = c + 1;
  }
  return worst;
}

static mp_status toy_reward(void *ctx, const int *a, rl_eval *out, mp_error *err) {
  toy *t = ctx;
  t->calls++;
  if (t->fail_after > 0 && t->calls > t->fail_after) return err_set(err, MP_RUN, "toy: refusing call %d", t->calls);
  if (t->fail_at_sum_first >= 0 && a[0] == t->fail_at_sum_first)
    return err_set(err, MP_RUN, "toy: refusing plans with %d layers on core 0", a[0]);
  double p = toy_period(t, a);
  out->reward = -p;
  out->balance = 0;
  out->figure = 1.0 / p;
  out->feasible = 1;
  return MP_OK;
}

static toy make_toy(int n_cores, int n_layers) {
  toy t;
  memset(&t, 0, sizeof t);
  t.n_cores = n_cores;
  t.n_layers = n_layers;
  for (int l = 0; l < n_layers; l++) t.flops[l] = 1.0 + (double)((l * 7) % 5) + (l == 2 ? 6.0 : 0.0);
  t.fail_at_sum_first = -1;
  return t;
}

/* Best reward over every plan of the toy, by enumeration. */
static double toy_brute_force(const toy *t) {
  int cur[16] = {0}, n = t->n_cores, L = t->n_layers;
  double best = -INFINITY;
  for (;;) {
    int sum = 0;
    for (int i = 0; i < n; i++) sum += cur[i];
    if (sum == L && cur[n - 1] > 0) {
      double r = -toy_period(t, cur);
      best = r > best ? r : best;
    }
    int i = 0;
    while (i < n && ++cur[i] > L) cur[i++] = 0;
    if (i == n) return best;
  }
}

typedef struct setup {
  toy t;
  rl_env *env;
  int init[16];
  rl_instance inst;
  rl_train_config cfg;
} setup;

static void setup_toy(setup *s, int n_cores, int n_layers, uint64_t seed) {
  memset(s, 0, sizeof *s);
  s->t = make_toy(n_cores, n_layers);
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_env_new(n_cores, n_layers, NULL, NULL, &s->env, &err), MP_OK);
  for (int i = 0; i < n_cores; i++) s->init[i] = n_layers / n_cores + (i >= n_cores - n_layers % n_cores);
  s->inst = (rl_instance){s->env, s->init, toy_reward, &s->t, 0x1234};
  rl_train_config_default(&s->cfg, n_cores);
  s->cfg.seed = seed;
  s->cfg.hidden = 16;
}

static void run_all(rl_trainer *t) {
  mp_error err;
  while (!rl_trainer_done(t)) CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(t, &err), MP_OK);
}

static void config_check_should_name_each_bad_field(void) {
  rl_train_config c;
  mp_error err;
  rl_train_config_default(&c, 16);
  CU_ASSERT_EQUAL(rl_train_config_check(&c, &err), MP_OK);
  CU_ASSERT_EQUAL(c.max_steps, 16);
#define BAD(stmt, what)                                              \
  do {                                                               \
    rl_train_config_default(&c, 16);                                 \
    stmt;                                                            \
    CU_ASSERT_EQUAL(rl_train_config_check(&c, &err), MP_USAGE);      \
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));                   \
  } while (0)
  BAD(c.episodes = -1, "episodes");
  BAD(c.batch = 1, "at least 2 episodes");
  BAD(c.max_steps = 0, "max_steps");
  BAD(c.n_hidden = RL_POLICY_MAX_HIDDEN + 1, "policy shape");
  BAD(c.hidden = 0, "policy shape");
  BAD(c.lr = 0, "learning rate");
  BAD(c.entropy = -1, "entropy");
  BAD(c.gamma = 1.5, "gamma");
  BAD(c.clip_norm = NAN, "clip_norm");
  BAD(c.restart_best = 2, "restart_best");
  BAD(c.balance_weight = -1, "balance_weight");
  BAD(c.samples = 0, "samples");
  BAD(c.target_reward = NAN, "target");
#undef BAD
}

static void trainer_new_should_reject_inconsistent_instances_and_policies(void) {
  setup s;
  setup_toy(&s, 4, 6, 1);
  rl_trainer *t = NULL;
  mp_error err;
  s.cfg.episodes = 8;
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, &s.inst, 0, NULL, &t, &err), MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no instances"));
  rl_env *e3 = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_env_new(3, 6, NULL, NULL, &e3, &err), MP_OK);
  int init3[3] = {2, 2, 2};
  rl_instance two[2] = {s.inst, {e3, init3, toy_reward, &s.t, 1}};
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, two, 2, NULL, &t, &err), MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "one core count"));
  int bad_init[4] = {1, 1, 1, 0};
  rl_instance bad = s.inst;
  bad.init = bad_init;
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, &bad, 1, NULL, &t, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a valid arranged_core"));
  rng r;
  rng_seed(&r, 3);
  rl_policy *p = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_policy_new(6, 8, 1, 4, 1e-3, &r, &p, &err), MP_OK); /* not a pair policy */
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, &s.inst, 1, p, &t, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "features per row"));
  s.cfg.batch = 1;
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_USAGE);
  CU_ASSERT_PTR_NULL(t);
  rl_policy_free(p);
  rl_env_free(e3);
  rl_env_free(s.env);
}

/* A bandit posed through the decision process: 3 cores, 3 layers, one step from [1,1,1].  Only
 * [2,0,1] (actions 1 and 3) pays; the policy must learn to prefer those two actions. */
static mp_status bandit_reward(void *ctx, const int *a, rl_eval *out, mp_error *err) {
  (void)ctx;
  (void)err;
  out->reward = a[0] == 2 && a[1] == 0 ? 1.0 : 0.0;
  out->balance = 0;
  out->figure = out->reward;
  out->feasible = 1;
  return MP_OK;
}

static void reinforce_should_learn_a_bandit(void) {
  for (int samples = 1; samples <= 4; samples += 3) { /* one action per state, and 4 with leave-one-out */
    rl_env *e = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(rl_env_new(3, 3, NULL, NULL, &e, &err), MP_OK);
    int init[3] = {1, 1, 1};
    rl_instance in = {e, init, bandit_reward, NULL, 7};
    rl_train_config cfg;
    rl_train_config_default(&cfg, 3);
    cfg.max_steps = 1;
    cfg.samples = samples;
    cfg.restart_best = 0;
    cfg.hidden = 16;
    cfg.lr = 1e-2;
    cfg.batch = 16;
    cfg.episodes = 16 * 150;
    rl_trainer *t = NULL;
    CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&cfg, &in, 1, NULL, &t, &err), MP_OK);
    double x[2 * RL_PAIR_FEATURES], probs[8];
    unsigned char mask[8];
    rl_policy_ws ws = {0};
    rl_env_features(e, init, x);
    rl_env_mask(e, init, mask);
    rl_policy_probs((rl_policy *)rl_trainer_policy(t), &ws, x, 2, mask, probs);
    CU_ASSERT(probs[1] + probs[3] < 0.5); /* 2 of 6 allowed actions at the start */
    run_all(t);
    rl_policy_probs((rl_policy *)rl_trainer_policy(t), &ws, x, 2, mask, probs);
    CU_ASSERT(probs[1] + probs[3] > 0.9);
    rl_train_stats st;
    rl_trainer_get_stats(t, &st);
    CU_ASSERT_EQUAL(st.episodes, 2400);
    CU_ASSERT_EQUAL(st.iterations, 150);
    CU_ASSERT_EQUAL(st.steps, 2400);
    CU_ASSERT_EQUAL(st.evaluations, 1 + 2400 * samples);
    CU_ASSERT(st.mean_final_reward > 0.8);
    rl_policy_ws_free(&ws);
    rl_trainer_free(t);
    rl_env_free(e);
  }
}

static void training_should_find_the_brute_force_optimum_of_a_small_instance(void) {
  for (uint64_t seed = 1; seed <= 3; seed++) {
    setup s;
    setup_toy(&s, 5, 8, seed);
    s.cfg.episodes = 400;
    rl_trainer *t = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
    run_all(t);
    rl_eval best, init;
    const int *b = rl_trainer_best(t, 0, &best);
    rl_trainer_init_eval(t, 0, &init);
    double opt = toy_brute_force(&s.t);
    CU_ASSERT(opt > init.reward); /* the even start is not already optimal */
    CU_ASSERT_DOUBLE_EQUAL(best.reward, opt, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(-toy_period(&s.t, b), best.reward, 0);
    rl_trainer_free(t);
    rl_env_free(s.env);
  }
}

static void the_same_seed_should_give_the_same_policy_bit_for_bit(void) {
  rl_trainer *t[3] = {NULL, NULL, NULL};
  setup s[3];
  mp_error err;
  for (int k = 0; k < 3; k++) {
    setup_toy(&s[k], 6, 11, k < 2 ? 5 : 6);
    s[k].cfg.episodes = 64;
    CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s[k].cfg, &s[k].inst, 1, NULL, &t[k], &err), MP_OK);
    run_all(t[k]);
  }
  CU_ASSERT_TRUE(rl_policy_identical(rl_trainer_policy(t[0]), rl_trainer_policy(t[1]), 1));
  CU_ASSERT_FALSE(rl_policy_identical(rl_trainer_policy(t[0]), rl_trainer_policy(t[2]), 0));
  CU_ASSERT_EQUAL(memcmp(rl_trainer_best(t[0], 0, NULL), rl_trainer_best(t[1], 0, NULL), 6 * sizeof(int)), 0);
  for (int k = 0; k < 3; k++) {
    rl_trainer_free(t[k]);
    rl_env_free(s[k].env);
  }
}

static void a_resumed_run_should_end_bit_identical_to_an_uninterrupted_one(void) {
  setup s;
  setup_toy(&s, 6, 11, 9);
  s.cfg.episodes = 80; /* 10 iterations of 8 */
  mp_error err;
  rl_trainer *whole = NULL, *part = NULL, *resumed = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &whole, &err), MP_OK);
  run_all(whole);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &part, &err), MP_OK);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(part, &err), MP_OK);
  const char *ck = testutil_temp_path("resume.ckpt");
  CU_ASSERT_EQUAL_FATAL(rl_trainer_save(part, ck, &err), MP_OK);
  rl_trainer_free(part); /* the "kill" */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_resume(&s.cfg, &s.inst, 1, ck, &resumed, &err), MP_OK);
  rl_train_stats a, b;
  rl_trainer_get_stats(resumed, &b);
  CU_ASSERT_EQUAL(b.episodes, 32);
  run_all(resumed);
  CU_ASSERT_TRUE(rl_policy_identical(rl_trainer_policy(whole), rl_trainer_policy(resumed), 1));
  rl_eval ea, eb;
  const int *ba = rl_trainer_best(whole, 0, &ea), *bb = rl_trainer_best(resumed, 0, &eb);
  CU_ASSERT_EQUAL(memcmp(ba, bb, 6 * sizeof(int)), 0);
  CU_ASSERT_EQUAL(ea.reward, eb.reward);
  rl_trainer_get_stats(whole, &a);
  rl_trainer_get_stats(resumed, &b);
  CU_ASSERT_EQUAL(a.episodes, b.episodes);
  CU_ASSERT_EQUAL(a.steps, b.steps);
  CU_ASSERT_EQUAL(a.evaluations, b.evaluations); /* counters come back from the checkpoint too */
  /* The saved policies are byte-identical files. */
  const char *pa = testutil_temp_path("whole.pol"), *pb = testutil_temp_path("resumed.pol");
  CU_ASSERT_EQUAL(rl_policy_save(rl_trainer_policy(whole), 0, pa, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_policy_save(rl_trainer_policy(resumed), 0, pb, &err), MP_OK);
  char *da = NULL, *db = NULL;
  size_t la = 0, lb = 0;
  fileio_read_all(pa, &da, &la, &err);
  fileio_read_all(pb, &db, &lb, &err);
  CU_ASSERT_TRUE(da && db && la == lb && memcmp(da, db, la) == 0);
  free(da);
  free(db);
  rl_trainer_free(whole);
  rl_trainer_free(resumed);
  rl_env_free(s.env);
}

/* ---- a batch spread over processes, played here by threads that gather like MPI_Allgatherv ---- */

#define RANKS 3

typedef struct gather_room {
  pthread_barrier_t bar;
  const void *buf[RANKS];
  size_t len[RANKS];
} gather_room;

typedef struct rank_run {
  gather_room *room;
  int rank;
  setup s;
  rl_trainer *t;
  mp_status st;
} rank_run;

/* Every rank's bytes, last rank first (the trainer must not depend on the order). */
static mp_status room_gather(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err) {
  rank_run *r = ctx;
  r->room->buf[r->rank] = mine;
  r->room->len[r->rank] = len;
  pthread_barrier_wait(&r->room->bar);
  size_t n = 0;
  for (int k = 0; k < RANKS; k++) n += r->room->len[k];
  unsigned char *b = malloc(n ? n : 1);
  if (!b) return err_nomem(err);
  *all = b;
  *all_len = n;
  for (int k = RANKS - 1; k >= 0; k--) {
    memcpy(b, r->room->buf[k], r->room->len[k]);
    b += r->room->len[k];
  }
  pthread_barrier_wait(&r->room->bar); /* nobody plays on (and reuses its buffer) before all have copied */
  return MP_OK;
}

static void *rank_main(void *arg) {
  rank_run *r = arg;
  mp_error err;
  r->st = rl_trainer_new(&r->s.cfg, &r->s.inst, 1, NULL, &r->t, &err);
  if (r->st != MP_OK) return NULL;
  rl_trainer_distribute(r->t, r->rank, RANKS, room_gather, r);
  while (r->st == MP_OK && !rl_trainer_done(r->t)) r->st = rl_trainer_iterate(r->t, &err);
  return NULL;
}

static void a_batch_spread_over_ranks_should_train_as_one_process_does(void) {
  setup one;
  setup_toy(&one, 6, 11, 21);
  one.cfg.episodes = 37; /* batches of 8 over 3 ranks, and a last batch of 5 */
  mp_error err;
  rl_trainer *whole = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&one.cfg, &one.inst, 1, NULL, &whole, &err), MP_OK);
  run_all(whole);
  gather_room room;
  pthread_barrier_init(&room.bar, NULL, RANKS);
  rank_run runs[RANKS];
  pthread_t th[RANKS];
  for (int k = 0; k < RANKS; k++) {
    runs[k].room = &room;
    runs[k].rank = k;
    runs[k].t = NULL;
    setup_toy(&runs[k].s, 6, 11, 21);
    runs[k].s.cfg.episodes = 37;
    runs[k].s.inst.ctx = &runs[k].s.t; /* each rank its own reward state and env */
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[k], NULL, rank_main, &runs[k]), 0);
  }
  for (int k = 0; k < RANKS; k++) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&room.bar);
  rl_train_stats a, b;
  rl_trainer_get_stats(whole, &a);
  for (int k = 0; k < RANKS; k++) {
    CU_ASSERT_EQUAL_FATAL(runs[k].st, MP_OK);
    CU_ASSERT_TRUE(rl_policy_identical(rl_trainer_policy(whole), rl_trainer_policy(runs[k].t), 1));
    CU_ASSERT_EQUAL(memcmp(rl_trainer_best(whole, 0, NULL), rl_trainer_best(runs[k].t, 0, NULL), 6 * sizeof(int)), 0);
    rl_trainer_get_stats(runs[k].t, &b);
    CU_ASSERT_EQUAL(a.episodes, b.episodes);
    CU_ASSERT_EQUAL(a.steps, b.steps);
    CU_ASSERT_EQUAL(a.evaluations, b.evaluations);
    CU_ASSERT_EQUAL(a.mean_final_reward, b.mean_final_reward);
  }
  /* Each rank scored only its share of the plans: the work was spread, not repeated. */
  int calls = 0;
  for (int k = 0; k < RANKS; k++) {
    CU_ASSERT(runs[k].s.t.calls < one.t.calls);
    calls += runs[k].s.t.calls - 1; /* the initial plan is scored by every rank */
  }
  CU_ASSERT_EQUAL(calls, one.t.calls - 1);
  for (int k = 0; k < RANKS; k++) {
    rl_trainer_free(runs[k].t);
    rl_env_free(runs[k].s.env);
  }
  rl_trainer_free(whole);
  rl_env_free(one.env);
}

/* Gathers for rank 0 of 2 that lose, repeat or damage records.  A record is a header of two int32
 * (episode, steps) and steps x samples moves of 32 bytes, the first field of a move its action. */
typedef struct bad_gather {
  int mode; /* 0: only mine; 1: mine twice; 2: mine, then mine as episodes e + 1, the first action 9999 */
  int samples;
} bad_gather;

static mp_status bad_gather_fn(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err) {
  const bad_gather *g = ctx;
  size_t n = g->mode == 0 ? len : 2 * len;
  unsigned char *b = malloc(n ? n : 1);
  if (!b) return err_nomem(err);
  memcpy(b, mine, len);
  if (g->mode > 0) memcpy(b + len, mine, len);
  if (g->mode == 2) {
    for (size_t at = len; at < n;) { /* the copies stand in for the other rank's odd episodes */
      int32_t h[2];
      memcpy(h, b + at, sizeof h);
      h[0]++;
      memcpy(b + at, h, sizeof h);
      at += sizeof h + (size_t)h[1] * (size_t)g->samples * 32;
    }
    int32_t bad = 9999;
    memcpy(b + 8, &bad, sizeof bad); /* episode 0, the first applied: its first action */
  }
  *all = b;
  *all_len = n;
  return MP_OK;
}

static void a_gather_that_loses_or_damages_records_should_be_an_error(void) {
  const char *want[3] = {"no process played episode 1", "damaged (episode 0)", "action 9999 where it is not allowed"};
  for (int mode = 0; mode < 3; mode++) {
    setup s;
    setup_toy(&s, 6, 11, 4);
    s.cfg.episodes = 16;
    mp_error err;
    rl_trainer *t = NULL;
    CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
    bad_gather g = {mode, s.cfg.samples};
    rl_trainer_distribute(t, 0, 2, bad_gather_fn, &g);
    CU_ASSERT_EQUAL(rl_trainer_iterate(t, &err), MP_RUN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want[mode]));
    rl_trainer_free(t);
    rl_env_free(s.env);
  }
}

static void resume_should_reject_foreign_or_damaged_checkpoints(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.cfg.episodes = 16;
  mp_error err;
  rl_trainer *t = NULL, *r = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(t, &err), MP_OK);
  const char *ck = testutil_temp_path("bad.ckpt");
  CU_ASSERT_EQUAL_FATAL(rl_trainer_save(t, ck, &err), MP_OK);
  rl_train_config other = s.cfg;
  other.seed = 3;
  CU_ASSERT_EQUAL(rl_trainer_resume(&other, &s.inst, 1, ck, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "another configuration"));
  other = s.cfg;
  other.episodes = 40; /* extending a run is allowed */
  CU_ASSERT_EQUAL(rl_trainer_resume(&other, &s.inst, 1, ck, &r, &err), MP_OK);
  rl_trainer_free(r);
  r = NULL;
  rl_instance moved = s.inst;
  moved.key = 99;
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, &moved, 1, ck, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "differs from the one"));
  rl_instance two[2] = {s.inst, s.inst};
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, two, 2, ck, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "graphs on"));
  char *data = NULL;
  size_t len = 0;
  fileio_read_all(ck, &data, &len, &err);
  const char *dmg = testutil_temp_path("damaged.ckpt");
  data[len / 2] ^= 0x10;
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, &s.inst, 1, dmg, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "checksum"));
  data[len / 2] ^= 0x10;
  data[0] = 'Z';
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, &s.inst, 1, dmg, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a meshpipe RL checkpoint"));
  data[0] = 'M';
  data[8] = 7; /* version 7, resealed */
  uint64_t h = fileio_hash(FILEIO_HASH_INIT, data, len - 8);
  for (int i = 0; i < 8; i++) data[len - 8 + i] = (char)(h >> (8 * i));
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, &s.inst, 1, dmg, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "version 7"));
  data[8] = 2; /* the current version; a truncated body, resealed: the policy image no longer fits */
  size_t cut = len - 100;
  h = fileio_hash(FILEIO_HASH_INIT, data, cut - 8);
  for (int i = 0; i < 8; i++) data[cut - 8 + i] = (char)(h >> (8 * i));
  fileio_write_atomic(dmg, data, cut, &err);
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, &s.inst, 1, dmg, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
  CU_ASSERT_EQUAL(rl_trainer_resume(&s.cfg, &s.inst, 1, testutil_temp_path("none.ckpt"), &r, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_trainer_save(t, "/nonexistent-dir/x.ckpt", &err), MP_OUTPUT);
  CU_ASSERT_PTR_NULL(r);
  free(data);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

static void greedy_play_should_follow_a_trained_policy_without_changing_it(void) {
  rl_env *e = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_env_new(3, 3, NULL, NULL, &e, &err), MP_OK);
  int init[3] = {1, 1, 1};
  rl_instance in = {e, init, bandit_reward, NULL, 7};
  rl_train_config cfg;
  rl_train_config_default(&cfg, 3);
  cfg.max_steps = 1;
  cfg.restart_best = 0;
  cfg.hidden = 16;
  cfg.lr = 1e-2;
  cfg.batch = 16;
  cfg.episodes = 16 * 100;
  rl_trainer *t = NULL, *apply = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&cfg, &in, 1, NULL, &t, &err), MP_OK);
  run_all(t);
  /* A fresh trainer with the trained policy and no episodes: greedy play finds the paying plan. */
  cfg.episodes = 0;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&cfg, &in, 1, rl_trainer_policy(t), &apply, &err), MP_OK);
  CU_ASSERT_TRUE(rl_trainer_done(apply));
  rl_eval ev;
  rl_trainer_best(apply, 0, &ev);
  CU_ASSERT_EQUAL(ev.reward, 0.0);
  CU_ASSERT_EQUAL(rl_trainer_greedy(apply, 0, 1, &err), MP_OK);
  const int *b = rl_trainer_best(apply, 0, &ev);
  CU_ASSERT_EQUAL(ev.reward, 1.0);
  CU_ASSERT_TRUE(b[0] == 2 && b[1] == 0 && b[2] == 1);
  CU_ASSERT_TRUE(rl_policy_identical(rl_trainer_policy(t), rl_trainer_policy(apply), 0));
  rl_trainer_free(t);
  rl_trainer_free(apply);
  rl_env_free(e);
}

static void polish_should_stop_at_a_plan_no_single_action_improves(void) {
  setup s;
  setup_toy(&s, 6, 12, 4);
  s.cfg.episodes = 0;
  mp_error err;
  rl_trainer *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  rl_eval before, after;
  rl_trainer_best(t, 0, &before);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_polish(t, 0, 1000, &err), MP_OK);
  const int *b = rl_trainer_best(t, 0, &after);
  CU_ASSERT(after.reward > before.reward);
  int next[6];
  for (int a = 0; a < s.env->n_actions; a++)
    if (rl_env_apply(s.env, b, a, next)) CU_ASSERT(-toy_period(&s.t, next) <= after.reward);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

/* The model-side searches of the rl method: each never loses the best plan, the regrouping and the
 * kicks reach the brute-force optimum of the toy from its even split, and the kicks repeat for a seed. */
static void regroup_kick_and_pair_polish_should_reach_the_toy_optimum(void) {
  setup s;
  setup_toy(&s, 6, 12, 4);
  s.cfg.episodes = 0;
  double opt = toy_brute_force(&s.t);
  mp_error err;
  rl_trainer *t = NULL, *u = NULL, *v = NULL;
  rl_eval start, ev, ev2;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  rl_trainer_best(t, 0, &start);
  CU_ASSERT(start.reward < opt);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_regroup(t, 0, 100, &err), MP_OK);
  rl_trainer_best(t, 0, &ev);
  CU_ASSERT(ev.reward > start.reward);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_kick(t, 0, 200, 3, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_regroup(t, 0, 100, &err), MP_OK);
  rl_trainer_best(t, 0, &ev);
  CU_ASSERT_DOUBLE_EQUAL(ev.reward, opt, 1e-12);
  /* the pair polish from the even split: at least as good as the single-move polish */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &u, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &v, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_polish_pairs(u, 0, 1000, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_polish(v, 0, 1000, &err), MP_OK);
  rl_trainer_best(u, 0, &ev);
  rl_trainer_best(v, 0, &ev2);
  CU_ASSERT(ev.reward >= ev2.reward);
  CU_ASSERT(ev.reward > start.reward);
  rl_trainer_free(u);
  rl_trainer_free(v);
  /* kicks: the same seed gives the same plan */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &u, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &v, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_kick(u, 0, 20, 2, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_kick(v, 0, 20, 2, &err), MP_OK);
  CU_ASSERT_EQUAL(memcmp(rl_trainer_best(u, 0, NULL), rl_trainer_best(v, 0, NULL), 6 * sizeof(int)), 0);
  rl_trainer_free(u);
  rl_trainer_free(v);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

static void the_model_side_searches_should_stop_on_a_reward_error(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.cfg.episodes = 0;
  mp_error err;
  rl_trainer *t = NULL;
  mp_status (*calls[])(rl_trainer *, int, int, mp_error *) = {rl_trainer_regroup, rl_trainer_polish_pairs};
  for (int k = 0; k < 3; k++) {
    s.t.calls = 0;
    s.t.fail_after = 1; /* the initial plan only */
    CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
    mp_status st = k < 2 ? calls[k](t, 0, 10, &err) : rl_trainer_kick(t, 0, 10, 2, &err);
    CU_ASSERT_EQUAL(st, MP_RUN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refusing call 2"));
    rl_trainer_free(t);
  }
  rl_env_free(s.env);
}

static void reward_errors_should_stop_training_with_their_message(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.cfg.episodes = 400;
  mp_error err;
  rl_trainer *t = NULL;
  s.t.fail_at_sum_first = 1; /* the even split [1,1,2,2] itself */
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_RUN);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refusing plans"));
  CU_ASSERT_PTR_NULL(t);
  s.t.fail_at_sum_first = -1;
  s.t.calls = 0;
  s.t.fail_after = 50; /* in the middle of the first batch */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  mp_status st = MP_OK;
  while (!rl_trainer_done(t) && st == MP_OK) st = rl_trainer_iterate(t, &err);
  CU_ASSERT_EQUAL(st, MP_RUN);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refusing call 51"));
  rl_trainer_free(t);
  s.t.fail_after = 0;
  s.t.fail_at_sum_first = 2; /* one move from the even split [1,1,2,2] */
  s.cfg.episodes = 0;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_trainer_polish(t, 0, 10, &err), MP_RUN);
  rl_trainer_free(t);
  s.t.fail_at_sum_first = -1;
  s.t.calls = 0;
  s.t.fail_after = 1; /* the initial plan only */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_trainer_greedy(t, 0, 10, &err), MP_RUN);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refusing call 2"));
  rl_trainer_free(t);
  rl_env_free(s.env);
}

static mp_status nan_reward(void *ctx, const int *a, rl_eval *out, mp_error *err) {
  (void)ctx, (void)a, (void)err;
  out->reward = NAN;
  out->balance = 0;
  out->figure = 0;
  out->feasible = 1;
  return MP_OK;
}

static void a_non_finite_reward_should_be_an_error(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.inst.reward = nan_reward;
  mp_error err;
  rl_trainer *t = NULL;
  CU_ASSERT_EQUAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_RUN);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a finite number"));
  rl_env_free(s.env);
}

static void the_cost_reward_should_score_the_reference_plan_minus_one(void) {
  graph *g = NULL;
  chip *c = NULL;
  cost_model *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c, &m, &err), MP_OK);
  int n = c->n_cores, *ref = calloc((size_t)n, sizeof *ref);
  ref[n - 1] = g->n_ops; /* everything on one group of all cores */
  rl_cost_reward r;
  rl_reward_weights w;
  rl_reward_weights_default(&w, 0);
  CU_ASSERT_EQUAL_FATAL(rl_cost_reward_init(&r, m, n, g->n_ops, ref, &w, &err), MP_OK);
  rl_eval ev;
  CU_ASSERT_EQUAL_FATAL(rl_cost_reward_fn(&r, ref, &ev, &err), MP_OK);
  plan *p = NULL;
  plan_new(ref, n, g->n_ops, &p, &err);
  int feasible;
  double mem, bn = cost_model_bottleneck(m, p, &feasible, &mem);
  CU_ASSERT_DOUBLE_EQUAL(ev.figure, 1.0 / bn, 0);
  CU_ASSERT_EQUAL(ev.feasible, feasible);
  CU_ASSERT_DOUBLE_EQUAL(ev.reward, -1.0 - (mem > 1 ? mem - 1 : 0), 1e-12);
  /* mem_limit: counting only a share of SRAM as usable scales the memory ratio and can refuse a fit */
  CU_ASSERT_EQUAL(r.mem_limit, 1.0);
  if (mem > 0) {
    r.mem_limit = mem / 2;
    rl_eval tight;
    CU_ASSERT_EQUAL_FATAL(rl_cost_reward_fn(&r, ref, &tight, &err), MP_OK);
    CU_ASSERT_EQUAL(tight.feasible, 0);
    CU_ASSERT_DOUBLE_EQUAL(tight.reward, -1.0 - 1.0, 1e-9); /* the ratio is now 2: one unit over */
    CU_ASSERT_DOUBLE_EQUAL(tight.figure, ev.figure, 0);
    r.mem_limit = 1.0;
  }
  rl_reward_weights ws;
  rl_reward_weights_default(&ws, 1);
  CU_ASSERT_EQUAL(ws.memory, 0.0); /* the simulator charges streaming itself */
  /* The memory term: the same figures with twice the SRAM needed cost one more unit. */
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_combine(&w, 2.0, 1.0, 2.0, 0.5), -3.0, 0);
  w.storage = 0.5, w.routing = 2;
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_combine(&w, 2.0, 1.0, 2.0, 0.5), -5.0, 0);
  int bad[16] = {0};
  CU_ASSERT_EQUAL(rl_cost_reward_fn(&r, bad, &ev, &err), MP_INPUT); /* sums to 0 layers */
  /* The balance: an 8-norm of the stage times plus every stage's memory excess. */
  const double t2[2] = {1, 1}, t3[2] = {1, 0.5}, m2[2] = {1.5, 0.5};
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_balance(t2, NULL, 2, 1.0), -pow(2, 1.0 / 8), 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_balance(t3, NULL, 2, 2.0), -pow(1 + pow(0.5, 8), 1.0 / 8) / 2, 1e-15);
  CU_ASSERT(rl_reward_balance(t3, NULL, 2, 1.0) > rl_reward_balance(t2, NULL, 2, 1.0));
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_balance(t2, m2, 2, 1.0), -pow(2, 1.0 / 8) - 0.5, 1e-15);
  plan_free(p);
  free(ref);
  cost_model_free(m);
  chip_free(c);
  graph_free(g);
}

/* ---- the rl method and `meshpipe train`, on the simulator ---- */

typedef struct rl_run {
  const char *init, *policy, *chip;
  int episodes;
  uint64_t seed;
  sim *sim; /* lent to the method, or NULL */
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

static char *slurp_file(const char *path, size_t *len) {
  char *data = NULL;
  mp_error err;
  if (fileio_read_all(path, &data, len, &err) != MP_OK) return NULL;
  return data;
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
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"best_per_s\""));
  free(out), free(errout);
  size_t la = 0, lb = 0;
  char *a = slurp_file(whole, &la), *b = slurp_file(part, &lb);
  CU_ASSERT_TRUE(a && b && la == lb && memcmp(a, b, la) == 0);
  free(a), free(b);
  /* The trained policy applies without training (--episodes 0) through the partition command. */
  snprintf(args, sizeof args, "partition -g '%s' -c '%s' -m rl --policy '%s' --episodes 0", g, c, whole);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "fine-tuning the given policy"));
  free(out), free(errout);
}

/* mpirun -np 3: the same policy file, checkpoint and summary as one process with the same seed. */
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
  snprintf(args, sizeof args, "train -q --json --isolate -g '%s' -c '%s' --episodes 20 -o '%s'", g, c, one);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &errout), 0);
  snprintf(cmd, sizeof cmd,
           "mpirun --allow-run-as-root --oversubscribe -np 3 '%s' train -q --json --isolate -g '%s' -c '%s' "
           "--episodes 20 -o '%s' >'%s' 2>&1",
           MESHPIPE_BINARY, g, c, three, log);
  int rc = system(cmd);
  size_t ll = 0;
  char *printed = slurp_file(log, &ll);
  if (!(WIFEXITED(rc) && WEXITSTATUS(rc) == 0)) printf("\n  mpirun failed:\n%s\n", printed ? printed : "");
  CU_ASSERT_FATAL(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  for (int k = 0; k < 2; k++) { /* the policy, then the checkpoint */
    char pa[1100], pb[1100];
    snprintf(pa, sizeof pa, "%s%s", one, k ? ".ckpt" : "");
    snprintf(pb, sizeof pb, "%s%s", three, k ? ".ckpt" : "");
    size_t la = 0, lb = 0;
    char *a = slurp_file(pa, &la), *b = slurp_file(pb, &lb);
    CU_ASSERT_TRUE(a && b && la == lb && memcmp(a, b, la) == 0);
    free(a), free(b);
  }
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
      {1, 1, "--batch 1", "--batch"},
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

static CU_TestInfo tests[] = {
    {"config_check_should_name_each_bad_field", config_check_should_name_each_bad_field},
    {"trainer_new_should_reject_inconsistent_instances_and_policies",
     trainer_new_should_reject_inconsistent_instances_and_policies},
    {"reinforce_should_learn_a_bandit", reinforce_should_learn_a_bandit},
    {"training_should_find_the_brute_force_optimum_of_a_small_instance",
     training_should_find_the_brute_force_optimum_of_a_small_instance},
    {"the_same_seed_should_give_the_same_policy_bit_for_bit", the_same_seed_should_give_the_same_policy_bit_for_bit},
    {"a_resumed_run_should_end_bit_identical_to_an_uninterrupted_one",
     a_resumed_run_should_end_bit_identical_to_an_uninterrupted_one},
    {"a_batch_spread_over_ranks_should_train_as_one_process_does",
     a_batch_spread_over_ranks_should_train_as_one_process_does},
    {"a_gather_that_loses_or_damages_records_should_be_an_error",
     a_gather_that_loses_or_damages_records_should_be_an_error},
    {"resume_should_reject_foreign_or_damaged_checkpoints", resume_should_reject_foreign_or_damaged_checkpoints},
    {"greedy_play_should_follow_a_trained_policy_without_changing_it",
     greedy_play_should_follow_a_trained_policy_without_changing_it},
    {"polish_should_stop_at_a_plan_no_single_action_improves", polish_should_stop_at_a_plan_no_single_action_improves},
    {"regroup_kick_and_pair_polish_should_reach_the_toy_optimum",
     regroup_kick_and_pair_polish_should_reach_the_toy_optimum},
    {"the_model_side_searches_should_stop_on_a_reward_error", the_model_side_searches_should_stop_on_a_reward_error},
    {"reward_errors_should_stop_training_with_their_message", reward_errors_should_stop_training_with_their_message},
    {"a_non_finite_reward_should_be_an_error", a_non_finite_reward_should_be_an_error},
    {"the_cost_reward_should_score_the_reference_plan_minus_one",
     the_cost_reward_should_score_the_reference_plan_minus_one},
    {"the_rl_method_should_never_return_worse_than_its_initial_plan",
     the_rl_method_should_never_return_worse_than_its_initial_plan},
    {"the_rl_method_should_give_the_same_plan_for_the_same_seed",
     the_rl_method_should_give_the_same_plan_for_the_same_seed},
    {"the_rl_method_should_reject_bad_options", the_rl_method_should_reject_bad_options},
    {"the_rl_method_should_use_a_lent_simulator_of_the_same_chip_only",
     the_rl_method_should_use_a_lent_simulator_of_the_same_chip_only},
    {"train_should_write_a_policy_that_a_resumed_run_reproduces_byte_for_byte",
     train_should_write_a_policy_that_a_resumed_run_reproduces_byte_for_byte},
    {"train_under_mpirun_should_write_what_one_process_writes",
     train_under_mpirun_should_write_what_one_process_writes},
    {"train_should_reject_bad_usage_with_exit_status_2", train_should_reject_bad_usage_with_exit_status_2},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_train", tests, argc, argv); }
