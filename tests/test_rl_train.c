/* Tests of rl_train: configuration checks, REINFORCE learning a bandit posed through the decision
 * process, finding the brute-force optimum of a small partitioning instance, determinism, a batch,
 * the local searches' scoring and the searches' rounds spread over ranks, greedy play, and every
 * error path, with hand-made rewards. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rl_search.h"
#include "rl_train.h"
#include "test_rl_toy.h"
#include "testutil.h"

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
  int search; /* 0: play every episode; 1: the local searches instead (a polish, then kicks); 2: the
                 searches in rounds (regrouping, then the pair polish, `rounds` rounds each) */
  int rounds;
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
  if (r->search == 1) {
    r->st = rl_search_polish(r->t, 0, 1000, &err);
    if (r->st == MP_OK) r->st = rl_search_kick(r->t, 0, 6, 4, &err);
  } else if (r->search == 2) {
    r->st = rl_search_regroup(r->t, 0, r->rounds, &err);
    if (r->st == MP_OK) r->st = rl_search_polish_pairs(r->t, 0, r->rounds, &err);
  }
  while (!r->search && r->st == MP_OK && !rl_trainer_done(r->t)) r->st = rl_trainer_iterate(r->t, &err);
  return NULL;
}

/* Runs rank_main's search `search` (`rounds` rounds) with reward on the toy of 7 cores and 13 layers
 * (seed 5) over RANKS thread ranks, each with its own toy; free_ranks frees what they made. */
static void run_search_ranks(rank_run runs[RANKS], int search, int rounds, rl_reward_fn reward) {
  gather_room room;
  pthread_barrier_init(&room.bar, NULL, RANKS);
  pthread_t th[RANKS];
  for (int k = 0; k < RANKS; k++) {
    runs[k] = (rank_run){.room = &room, .rank = k, .search = search, .rounds = rounds};
    setup_toy(&runs[k].s, 7, 13, 5);
    runs[k].s.inst.reward = reward;
    runs[k].s.inst.ctx = &runs[k].s.t;
    CU_ASSERT_EQUAL_FATAL(pthread_create(&th[k], NULL, rank_main, &runs[k]), 0);
  }
  for (int k = 0; k < RANKS; k++) pthread_join(th[k], NULL);
  pthread_barrier_destroy(&room.bar);
}

/* Every rank ended with whole's best plan, reward and count, and scored fewer plans than one (whole's
 * toy) did; returns the plans they scored beyond the initial one, which every rank scores. */
static int check_ranks_keep(rl_trainer *whole, const setup *one, rank_run runs[RANKS]) {
  rl_train_stats a, b;
  rl_trainer_get_stats(whole, &a);
  rl_eval best_whole, best_rank;
  const int *bw = rl_trainer_best(whole, 0, &best_whole);
  int calls = 0;
  for (int k = 0; k < RANKS; k++) {
    CU_ASSERT_EQUAL_FATAL(runs[k].st, MP_OK);
    CU_ASSERT_EQUAL(memcmp(bw, rl_trainer_best(runs[k].t, 0, &best_rank), 7 * sizeof(int)), 0);
    CU_ASSERT_EQUAL(best_whole.reward, best_rank.reward);
    rl_trainer_get_stats(runs[k].t, &b);
    CU_ASSERT_EQUAL(a.evaluations, b.evaluations);
    CU_ASSERT(runs[k].s.t.calls < one->t.calls);
    calls += runs[k].s.t.calls - 1;
  }
  return calls;
}

static void free_ranks(rank_run runs[RANKS]) {
  for (int k = 0; k < RANKS; k++) {
    rl_trainer_free(runs[k].t);
    rl_env_free(runs[k].s.env);
  }
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
    runs[k].search = 0;
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

/* The steepest ascents of the polish and of the kicks score every action from a plan: spread over ranks
 * (each scores the actions a with a mod ranks == rank), every rank ends with the best plan, the counts
 * and the rng of one process that scored them all, having scored fewer plans itself. */
static void local_searches_spread_over_ranks_should_keep_what_one_process_keeps(void) {
  setup one;
  setup_toy(&one, 7, 13, 5);
  mp_error err;
  rl_trainer *whole = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&one.cfg, &one.inst, 1, NULL, &whole, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_polish(whole, 0, 1000, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_kick(whole, 0, 6, 4, &err), MP_OK);
  rank_run runs[RANKS];
  run_search_ranks(runs, 1, 0, toy_reward);
  rl_train_stats a;
  rl_trainer_get_stats(whole, &a);
  CU_ASSERT(a.evaluations > 3 * 24); /* several rounds of every action (4 x 6 of them) */
  check_ranks_keep(whole, &one, runs);
  for (int k = 0; k < RANKS; k++)
    CU_ASSERT(2 * runs[k].s.t.calls < one.t.calls); /* at most a third of the ascents' plans, and the kicks' */
  free_ranks(runs);
  rl_trainer_free(whole);
  rl_env_free(one.env);
}

/* The toy's reward in whole units (the slowest stage's time rounded down): most plans tie. */
static mp_status coarse_reward(void *ctx, const int *a, rl_eval *out, mp_error *err) {
  mp_status st = toy_reward(ctx, a, out, err);
  out->reward = floor(out->reward);
  return st;
}

/* A round of the regrouping or the pair polish scores a fixed list of candidates and keeps the best:
 * spread over ranks (the groups, the first moves), every rank must end with the plan one process
 * keeps, the first of the best in the round's order (ties: the toy's reward is its slowest stage, and
 * in whole units most plans tie), the same count, and each rank must have scored its share only. */
static void rounds_over_ranks(rl_reward_fn reward, int rounds) {
  setup one;
  setup_toy(&one, 7, 13, 5);
  one.inst.reward = reward;
  mp_error err;
  rl_trainer *whole = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&one.cfg, &one.inst, 1, NULL, &whole, &err), MP_OK);
  rl_eval init, best;
  rl_trainer_best(whole, 0, &init);
  CU_ASSERT_EQUAL_FATAL(rl_search_regroup(whole, 0, rounds, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_polish_pairs(whole, 0, rounds, &err), MP_OK);
  rl_trainer_best(whole, 0, &best);
  CU_ASSERT(best.reward > init.reward); /* the rounds moved the plan */
  rank_run runs[RANKS];
  run_search_ranks(runs, 2, rounds, reward);
  CU_ASSERT_EQUAL(check_ranks_keep(whole, &one, runs), one.t.calls - 1); /* each plan scored once */
  free_ranks(runs);
  rl_trainer_free(whole);
  rl_env_free(one.env);
}

static void search_rounds_spread_over_ranks_should_keep_what_one_process_keeps(void) {
  for (int rounds = 1; rounds <= 1000; rounds *= 1000) { /* one round each: its choice is what stays */
    rounds_over_ranks(toy_reward, rounds);
    rounds_over_ranks(coarse_reward, rounds);
  }
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

/* Gathers of a polish's scores or a round's parts for rank 0 of 2: mode 0 only mine (the other rank's are
 * missing), 1 mine twice, 2 mine and 4 bytes more. */
static mp_status bad_scores_fn(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err) {
  int mode = *(const int *)ctx;
  size_t n = mode == 0 ? len : mode == 1 ? 2 * len : len + 4;
  unsigned char *b = calloc(n ? n : 1, 1);
  if (!b) return err_nomem(err);
  memcpy(b, mine, len);
  if (mode == 1) memcpy(b + len, mine, len);
  *all = b;
  *all_len = n;
  return MP_OK;
}

/* The polish's scores (actions) and a regrouping round's parts go through such gathers: each must fail,
 * and a round keep nothing, rather than go on with part of the candidates. */
static void a_gather_that_loses_or_damages_scores_should_be_an_error(void) {
  const char *want[3] = {"scores miss action 1", "damaged (action 0)", "truncated"};
  const char *want_round[3] = {"round is damaged (", "round is damaged (rank 0)", "round is damaged ("};
  for (int mode = 0; mode < 3; mode++)
    for (int round = 0; round < 2; round++) {
      setup s;
      setup_toy(&s, 6, 11, 4);
      mp_error err;
      rl_trainer *t = NULL;
      CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
      rl_eval before, after;
      int plan[6];
      memcpy(plan, rl_trainer_best(t, 0, &before), sizeof plan);
      rl_trainer_distribute(t, 0, 2, bad_scores_fn, &mode);
      CU_ASSERT_EQUAL((round ? rl_search_regroup : rl_search_polish)(t, 0, 1, &err), MP_RUN);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, (round ? want_round : want)[mode]));
      if (round) { /* nothing kept */
        CU_ASSERT_EQUAL(memcmp(plan, rl_trainer_best(t, 0, &after), sizeof plan), 0);
        CU_ASSERT_EQUAL(before.reward, after.reward);
      }
      rl_trainer_free(t);
      rl_env_free(s.env);
    }
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
  CU_ASSERT_EQUAL(rl_search_polish(t, 0, 10, &err), MP_RUN);
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

static CU_TestInfo tests[] = {
    {"config_check_should_name_each_bad_field", config_check_should_name_each_bad_field},
    {"trainer_new_should_reject_inconsistent_instances_and_policies",
     trainer_new_should_reject_inconsistent_instances_and_policies},
    {"reinforce_should_learn_a_bandit", reinforce_should_learn_a_bandit},
    {"training_should_find_the_brute_force_optimum_of_a_small_instance",
     training_should_find_the_brute_force_optimum_of_a_small_instance},
    {"the_same_seed_should_give_the_same_policy_bit_for_bit", the_same_seed_should_give_the_same_policy_bit_for_bit},
    {"a_batch_spread_over_ranks_should_train_as_one_process_does",
     a_batch_spread_over_ranks_should_train_as_one_process_does},
    {"local_searches_spread_over_ranks_should_keep_what_one_process_keeps",
     local_searches_spread_over_ranks_should_keep_what_one_process_keeps},
    {"a_gather_that_loses_or_damages_records_should_be_an_error",
     a_gather_that_loses_or_damages_records_should_be_an_error},
    {"search_rounds_spread_over_ranks_should_keep_what_one_process_keeps",
     search_rounds_spread_over_ranks_should_keep_what_one_process_keeps},
    {"a_gather_that_loses_or_damages_scores_should_be_an_error",
     a_gather_that_loses_or_damages_scores_should_be_an_error},
    {"greedy_play_should_follow_a_trained_policy_without_changing_it",
     greedy_play_should_follow_a_trained_policy_without_changing_it},
    {"reward_errors_should_stop_training_with_their_message", reward_errors_should_stop_training_with_their_message},
    {"a_non_finite_reward_should_be_an_error", a_non_finite_reward_should_be_an_error},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_train", tests, argc, argv); }
