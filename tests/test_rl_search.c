/* Tests of rl_search: the single-move polish stops at a local optimum; regrouping, kicks and the
 * pair polish reach the brute-force optimum of a toy instance, repeat for a seed (kicks also when
 * run in chunks) and stop on a reward error; a round of the pair polish scores the plans of the plain
 * double loop, each pair once. */
#include <stdlib.h>
#include <string.h>

#include "rl_search.h"
#include "rl_train.h"
#include "test_rl_toy.h"
#include "testutil.h"

static void polish_should_stop_at_a_plan_no_single_action_improves(void) {
  setup s;
  setup_toy(&s, 6, 12, 4);
  s.cfg.episodes = 0;
  mp_error err;
  rl_trainer *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  rl_eval before, after;
  rl_trainer_best(t, 0, &before);
  CU_ASSERT_EQUAL_FATAL(rl_search_polish(t, 0, 1000, &err), MP_OK);
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
  CU_ASSERT_EQUAL_FATAL(rl_search_regroup(t, 0, 100, &err), MP_OK);
  rl_trainer_best(t, 0, &ev);
  CU_ASSERT(ev.reward > start.reward);
  CU_ASSERT_EQUAL_FATAL(rl_search_kick(t, 0, 200, 3, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_regroup(t, 0, 100, &err), MP_OK);
  rl_trainer_best(t, 0, &ev);
  CU_ASSERT_DOUBLE_EQUAL(ev.reward, opt, 1e-12);
  /* the pair polish from the even split: at least as good as the single-move polish */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &u, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &v, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_polish_pairs(u, 0, 1000, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_polish(v, 0, 1000, &err), MP_OK);
  rl_trainer_best(u, 0, &ev);
  rl_trainer_best(v, 0, &ev2);
  CU_ASSERT(ev.reward >= ev2.reward);
  CU_ASSERT(ev.reward > start.reward);
  rl_trainer_free(u);
  rl_trainer_free(v);
  /* kicks: the same seed gives the same plan */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &u, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &v, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_kick(u, 0, 20, 2, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_kick(v, 0, 20, 2, &err), MP_OK);
  CU_ASSERT_EQUAL(memcmp(rl_trainer_best(u, 0, NULL), rl_trainer_best(v, 0, NULL), 6 * sizeof(int)), 0);
  rl_trainer_free(u);
  rl_trainer_free(v);
  /* kicks in chunks are the kicks of one call (the rl method reports its progress between chunks):
   * the same plans scored, the same best */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &u, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &v, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_kick(u, 0, 30, 4, &err), MP_OK);
  for (int chunk = 0; chunk < 4; chunk++) /* 9 + 9 + 9 + 3 */
    CU_ASSERT_EQUAL_FATAL(rl_search_kick(v, 0, chunk == 3 ? 3 : 9, 4, &err), MP_OK);
  rl_train_stats su, sv;
  rl_trainer_get_stats(u, &su);
  rl_trainer_get_stats(v, &sv);
  CU_ASSERT_EQUAL(su.evaluations, sv.evaluations);
  CU_ASSERT_EQUAL(memcmp(rl_trainer_best(u, 0, NULL), rl_trainer_best(v, 0, NULL), 6 * sizeof(int)), 0);
  rl_trainer_free(v); /* one kick fewer scores fewer plans: the count tells the runs apart */
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &v, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_search_kick(v, 0, 29, 4, &err), MP_OK);
  rl_trainer_get_stats(v, &sv);
  CU_ASSERT(sv.evaluations < su.evaluations);
  rl_trainer_free(u);
  rl_trainer_free(v);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

/* A reward that records every plan it scores (the toy's, on 6 cores). */
typedef struct recorder {
  toy t;
  int n, plans[4096][6];
} recorder;

static mp_status record_reward(void *ctx, const int *a, rl_eval *out, mp_error *err) {
  recorder *r = ctx;
  if (r->n < 4096) memcpy(r->plans[r->n], a, sizeof r->plans[0]);
  r->n++;
  return toy_reward(&r->t, a, out, err);
}

static int plan_in(const recorder *r, const int *a) {
  for (int k = 0; k < r->n && k < 4096; k++)
    if (memcmp(r->plans[k], a, sizeof r->plans[0]) == 0) return 1;
  return 0;
}

/* Differential: one round of the pair polish against every first move and every second move after it in
 * both orders (the plain double loop): the same plans scored, fewer times, and the same best plan, ties
 * kept by the earlier plan as in the loop. */
static void pair_polish_should_score_every_pair_once_and_keep_the_double_loops_best(void) {
  setup s;
  setup_toy(&s, 6, 12, 4);
  s.cfg.episodes = 0;
  static recorder rec;
  memset(&rec, 0, sizeof rec);
  rec.t = s.t;
  s.inst.reward = record_reward;
  s.inst.ctx = &rec;
  mp_error err;
  rl_trainer *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  int from[6], mid[6], cand[6], best[6];
  rl_eval best_ev, ev;
  memcpy(from, rl_trainer_best(t, 0, &best_ev), sizeof from);
  memcpy(best, from, sizeof best);
  int first = rec.n; /* the plans the trainer scored before the round */
  /* the reference: the double loop, scored through the toy directly */
  int loop_scores = 0;
  for (int a = 0; a < s.env->n_actions; a++) {
    if (!rl_env_apply(s.env, from, a, mid)) continue;
    for (int b = -1; b < s.env->n_actions; b++) {
      if (b >= 0 && (!rl_env_apply(s.env, mid, b, cand) || memcmp(cand, from, sizeof from) == 0)) continue;
      const int *p = b < 0 ? mid : cand;
      CU_ASSERT_EQUAL_FATAL(toy_reward(&s.t, p, &ev, &err), MP_OK);
      loop_scores++;
      if (rl_trainer_better(t, &ev, &best_ev)) {
        best_ev = ev;
        memcpy(best, p, sizeof best);
      }
    }
  }
  CU_ASSERT_EQUAL_FATAL(rl_search_polish_pairs(t, 0, 1, &err), MP_OK);
  rl_eval got;
  CU_ASSERT_EQUAL(memcmp(rl_trainer_best(t, 0, &got), best, sizeof best), 0);
  CU_ASSERT_EQUAL(got.reward, best_ev.reward);
  int scored = rec.n - first;
  CU_ASSERT_FATAL(scored <= 4096 - first);
  CU_ASSERT(scored < loop_scores); /* the pairs in both orders are gone */
  CU_ASSERT(scored > loop_scores / 2);
  /* every plan of the double loop was scored by the round */
  int missing = 0;
  for (int a = 0; a < s.env->n_actions; a++) {
    if (!rl_env_apply(s.env, from, a, mid)) continue;
    missing += !plan_in(&rec, mid);
    for (int b = 0; b < s.env->n_actions; b++)
      if (rl_env_apply(s.env, mid, b, cand) && memcmp(cand, from, sizeof from) != 0) missing += !plan_in(&rec, cand);
  }
  CU_ASSERT_EQUAL(missing, 0);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

static void the_model_side_searches_should_stop_on_a_reward_error(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.cfg.episodes = 0;
  mp_error err;
  rl_trainer *t = NULL;
  mp_status (*calls[])(rl_trainer *, int, int, mp_error *) = {rl_search_regroup, rl_search_polish_pairs};
  for (int k = 0; k < 3; k++) {
    s.t.calls = 0;
    s.t.fail_after = 1; /* the initial plan only */
    CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
    mp_status st = k < 2 ? calls[k](t, 0, 10, &err) : rl_search_kick(t, 0, 10, 2, &err);
    CU_ASSERT_EQUAL(st, MP_RUN);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "refusing call 2"));
    rl_trainer_free(t);
  }
  rl_env_free(s.env);
}

static CU_TestInfo tests[] = {
    {"polish_should_stop_at_a_plan_no_single_action_improves", polish_should_stop_at_a_plan_no_single_action_improves},
    {"regroup_kick_and_pair_polish_should_reach_the_toy_optimum",
     regroup_kick_and_pair_polish_should_reach_the_toy_optimum},
    {"pair_polish_should_score_every_pair_once_and_keep_the_double_loops_best",
     pair_polish_should_score_every_pair_once_and_keep_the_double_loops_best},
    {"the_model_side_searches_should_stop_on_a_reward_error", the_model_side_searches_should_stop_on_a_reward_error},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_search", tests, argc, argv); }
