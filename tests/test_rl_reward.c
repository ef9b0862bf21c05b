/* Tests of rl_reward: the analytical model's reward of the reference plan, the weights (no memory
 * penalty by default: both backends charge DRAM streams in time) and the balance tie-break against
 * their formulas; the training model's reward scores a mini-batch's time over its micro-batches; the
 * energy objectives score energy (or energy x period) over the reference plan's; the model's memo
 * answers a repeated plan with the score evaluating gives. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "graph.h"
#include "plan.h"
#include "rl_reward.h"
#include "testutil.h"
#include "train.h"

/* tiny_resnet's graph on the bundled 4x4 chip and its cost model (each owned by the caller). */
static void load_tiny_model(graph **g, chip **c, cost_model **m) {
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh4x4.json"), c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(cost_model_new(*g, *c, m, &err), MP_OK);
}

static void the_cost_reward_should_score_the_reference_plan_minus_one(void) {
  graph *g = NULL;
  chip *c = NULL;
  cost_model *m = NULL;
  mp_error err;
  load_tiny_model(&g, &c, &m);
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
  rl_reward_clear(&r);
  CU_ASSERT_PTR_NULL(r.stages); /* cleared: a second clear is harmless */
  rl_reward_clear(&r);
  plan_free(p);
  free(ref);
  cost_model_free(m);
  chip_free(c);
  graph_free(g);
}

/* Every field of two scores equal, bit for bit. */
static int same_eval(const rl_eval *x, const rl_eval *y) {
  return memcmp(&x->reward, &y->reward, sizeof x->reward) == 0 &&
         memcmp(&x->balance, &y->balance, sizeof x->balance) == 0 &&
         memcmp(&x->figure, &y->figure, sizeof x->figure) == 0 && x->feasible == y->feasible;
}

/* The model's memo: a repeated plan is answered from it with the very score evaluating gives, and two
 * plans with the same group ends but other layer counts are told apart; a plan that is not valid is
 * still refused after valid plans were kept. */
static void the_model_reward_should_answer_a_repeated_plan_from_its_memo(void) {
  graph *g = NULL;
  chip *c = NULL;
  cost_model *m = NULL;
  mp_error err;
  load_tiny_model(&g, &c, &m);
  int n = c->n_cores, a[16] = {0}, b[16] = {0};
  CU_ASSERT_FATAL(n == 16 && g->n_ops >= 4);
  a[7] = 2, a[15] = g->n_ops - 2; /* two groups of 8 cores */
  b[7] = 3, b[15] = g->n_ops - 3; /* the same ends, one layer moved */
  rl_reward r, fresh;
  CU_ASSERT_EQUAL_FATAL(rl_reward_init_model(&r, m, n, g->n_ops, a, NULL, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_reward_init_model(&fresh, m, n, g->n_ops, a, NULL, &err), MP_OK);
  rl_eval ea, eb, ea2, eb2, eb_fresh;
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, a, &ea, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, b, &eb, &err), MP_OK);
  CU_ASSERT_EQUAL(r.memo_hits, 0);
  CU_ASSERT(ea.figure != eb.figure);
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, a, &ea2, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, b, &eb2, &err), MP_OK);
  CU_ASSERT_EQUAL(r.memo_hits, 2);
  CU_ASSERT(same_eval(&ea, &ea2));
  CU_ASSERT(same_eval(&eb, &eb2));
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&fresh, b, &eb_fresh, &err), MP_OK); /* evaluated, not remembered */
  CU_ASSERT_EQUAL(fresh.memo_hits, 0);
  CU_ASSERT(same_eval(&eb, &eb_fresh));
  int bad[16] = {0};
  bad[15] = g->n_ops + 1; /* one layer too many */
  CU_ASSERT_EQUAL(rl_reward_eval(&r, bad, &ea2, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_reward_eval(&r, bad, &ea2, &err), MP_INPUT);
  CU_ASSERT_EQUAL(r.memo_hits, 2);
  rl_reward_clear(&r);
  rl_reward_clear(&fresh);
  cost_model_free(m);
  chip_free(c);
  graph_free(g);
}

/* --mode train: the figure is M over the training model's mini-batch (not its steady period), the
 * reference plan scores -1, and a plan whose mini-batch takes longer scores lower. */
static void the_training_reward_should_score_the_minibatch_over_its_microbatches(void) {
  graph *g = NULL;
  chip *c = NULL;
  train *t = NULL;
  mp_error err;
  train_options o;
  train_options_default(&o);
  o.schedule = TRAIN_GPIPE;
  o.microbatches = 4;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh4x4.json"), &c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(train_new(g, &o, &t, &err), MP_OK);
  int n = c->n_cores, *ref = calloc((size_t)n, sizeof *ref), *two = calloc((size_t)n, sizeof *two);
  ref[n - 1] = g->n_ops;
  two[n / 2 - 1] = g->n_ops / 2, two[n - 1] = g->n_ops - g->n_ops / 2;
  rl_reward r;
  CU_ASSERT_EQUAL_FATAL(rl_reward_init_train_model(&r, t, c, g->n_ops, ref, NULL, &err), MP_OK);
  rl_eval e1, e2;
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, ref, &e1, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, two, &e2, &err), MP_OK);
  plan *p1 = NULL, *p2 = NULL;
  train_result *r1 = NULL, *r2 = NULL;
  CU_ASSERT_EQUAL_FATAL(plan_new(ref, n, g->n_ops, &p1, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_new(two, n, g->n_ops, &p2, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(train_evaluate(t, c, p1, &r1, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(train_evaluate(t, c, p2, &r2, &err), MP_OK);
  CU_ASSERT_DOUBLE_EQUAL(e1.figure, 4 / r1->minibatch_s, 1e-9 * e1.figure);
  CU_ASSERT_DOUBLE_EQUAL(e2.figure, 4 / r2->minibatch_s, 1e-9 * e2.figure);
  CU_ASSERT(e1.figure != 1 / r1->period_s); /* a mini-batch is more than M periods: the fill and the update */
  CU_ASSERT_DOUBLE_EQUAL(e1.reward, -1.0, 1e-12);
  CU_ASSERT_EQUAL((e2.reward > e1.reward), (r2->minibatch_s < r1->minibatch_s));
  CU_ASSERT_EQUAL(e1.feasible, r1->feasible);
  rl_reward_clear(&r);
  train_result_free(r1);
  train_result_free(r2);
  plan_free(p1);
  plan_free(p2);
  free(ref);
  free(two);
  train_free(t);
  chip_free(c);
  graph_free(g);
}

/* --objective energy and edp: the reward is minus the plan's energy (or energy x period) over the
 * reference plan's, from the model's own figures; the training backends, which have no energy, refuse
 * them, and so does a chip without energy figures (whose energy is 0). */
static void the_energy_reward_should_score_energy_over_the_reference_plans(void) {
  graph *g = NULL;
  chip *c = NULL, *bare = NULL;
  cost_model *m = NULL, *mb = NULL;
  train *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh8x8_fp16.json"), &c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh8x8.json"), &bare, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c, &m, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, bare, &mb, &err), MP_OK);
  int n = c->n_cores, *ref = calloc((size_t)n, sizeof *ref), *two = calloc((size_t)n, sizeof *two);
  ref[n - 1] = g->n_ops;
  two[n / 2 - 1] = g->n_ops / 2, two[n - 1] = g->n_ops - g->n_ops / 2;
  double e[2], T[2];
  for (int k = 0; k < 2; k++) {
    plan *p = NULL;
    CU_ASSERT_EQUAL_FATAL(plan_new(k ? two : ref, n, g->n_ops, &p, &err), MP_OK);
    T[k] = cost_model_period(m, p, NULL, NULL, NULL, NULL);
    e[k] = cost_model_energy(m, T[k]);
    plan_free(p);
  }
  CU_ASSERT(e[0] > 0 && e[1] > 0 && e[0] != e[1]);
  for (objective obj = OBJECTIVE_ENERGY; obj <= OBJECTIVE_EDP; obj++) {
    rl_reward r;
    rl_reward_weights w;
    rl_reward_weights_default(&w, 0);
    w.objective = obj;
    CU_ASSERT_EQUAL_FATAL(rl_reward_init_model(&r, m, n, g->n_ops, ref, &w, &err), MP_OK);
    rl_eval e1, e2;
    CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, ref, &e1, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(rl_reward_eval(&r, two, &e2, &err), MP_OK);
    double want = obj == OBJECTIVE_ENERGY ? e[1] / e[0] : e[1] * T[1] / (e[0] * T[0]);
    CU_ASSERT_DOUBLE_EQUAL(e1.reward, -1.0, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(e2.reward, -want, 1e-12 * want);
    CU_ASSERT_DOUBLE_EQUAL(e2.figure, 1 / T[1], 1e-12 / T[1]); /* the figure stays the throughput */
    rl_reward_clear(&r);
    err_clear(&err);
    CU_ASSERT_EQUAL(rl_reward_init_model(&r, mb, n, g->n_ops, ref, &w, &err), MP_USAGE);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "needs a chip with energy figures"));
  }
  train_options o;
  train_options_default(&o);
  CU_ASSERT_EQUAL_FATAL(train_new(g, &o, &t, &err), MP_OK);
  rl_reward r;
  rl_reward_weights w;
  rl_reward_weights_default(&w, 0);
  w.objective = OBJECTIVE_ENERGY;
  err_clear(&err);
  CU_ASSERT_EQUAL(rl_reward_init_train_model(&r, t, c, g->n_ops, ref, &w, &err), MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the training model has no energy"));
  free(ref);
  free(two);
  train_free(t);
  cost_model_free(m);
  cost_model_free(mb);
  chip_free(c);
  chip_free(bare);
  graph_free(g);
}

static CU_TestInfo tests[] = {
    {"the_cost_reward_should_score_the_reference_plan_minus_one",
     the_cost_reward_should_score_the_reference_plan_minus_one},
    {"the_model_reward_should_answer_a_repeated_plan_from_its_memo",
     the_model_reward_should_answer_a_repeated_plan_from_its_memo},
    {"the_training_reward_should_score_the_minibatch_over_its_microbatches",
     the_training_reward_should_score_the_minibatch_over_its_microbatches},
    {"the_energy_reward_should_score_energy_over_the_reference_plans",
     the_energy_reward_should_score_energy_over_the_reference_plans},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_reward", tests, argc, argv); }
