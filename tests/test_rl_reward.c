/* Tests of rl_reward: the analytical model's reward of the reference plan, the weights (no memory
 * penalty by default: both backends charge DRAM streams in time) and the balance tie-break against
 * their formulas. */
#include <math.h>
#include <stdlib.h>

#include "chip.h"
#include "cost.h"
#include "graph.h"
#include "plan.h"
#include "rl_reward.h"
#include "testutil.h"

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
  rl_reward r;
  rl_reward_weights w;
  rl_reward_weights_default(&w, 0);
  CU_ASSERT_EQUAL_FATAL(rl_reward_init_model(&r, m, n, g->n_ops, ref, &w, &err), MP_OK);
  rl_eval ev;
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, ref, &ev, &err), MP_OK);
  plan *p = NULL;
  plan_new(ref, n, g->n_ops, &p, &err);
  int feasible;
  double mem, bn = cost_model_period(m, p, NULL, NULL, &feasible, &mem);
  CU_ASSERT_DOUBLE_EQUAL(ev.figure, 1.0 / bn, 0);
  CU_ASSERT_EQUAL(ev.feasible, feasible);
  CU_ASSERT_DOUBLE_EQUAL(ev.reward, -1.0, 1e-12); /* the reference plan itself, no memory penalty */
  CU_ASSERT_EQUAL(w.memory, 0.0);                 /* the model charges DRAM streams in time */
  rl_reward_weights ws;
  rl_reward_weights_default(&ws, 1);
  CU_ASSERT_EQUAL(ws.memory, 0.0); /* and so does the simulator */
  w.memory = 1.0;
  /* The memory term: the same figures with twice the SRAM needed cost one more unit. */
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_combine(&w, 2.0, 1.0, 2.0, 0.5), -3.0, 0);
  w.storage = 0.5, w.routing = 2;
  CU_ASSERT_DOUBLE_EQUAL(rl_reward_combine(&w, 2.0, 1.0, 2.0, 0.5), -5.0, 0);
  int bad[16] = {0};
  CU_ASSERT_EQUAL(rl_reward_eval(&r, bad, &ev, &err), MP_INPUT); /* sums to 0 layers */
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

static CU_TestInfo tests[] = {
    {"the_cost_reward_should_score_the_reference_plan_minus_one",
     the_cost_reward_should_score_the_reference_plan_minus_one},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_reward", tests, argc, argv); }
