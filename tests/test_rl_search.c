/* Tests of rl_search: the single-move polish stops at a local optimum; regrouping, kicks and the
 * pair polish reach the brute-force optimum of a toy instance, repeat for a seed (kicks also when
 * run in chunks) and stop on a reward error. */
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
    {"the_model_side_searches_should_stop_on_a_reward_error", the_model_side_searches_should_stop_on_a_reward_error},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_search", tests, argc, argv); }
