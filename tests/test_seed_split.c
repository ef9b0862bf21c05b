/* Tests of seed_split.c: a hand-worked run of the two-phase algorithm in both branches of
 * split_compare (tau small: standard deviation decides; tau large: the mean decides), determinism,
 * and max_step 0 stopping after phase 1. */
#include <string.h>

#include "chip.h"
#include "graph.h"
#include "jsonio.h"
#include "method.h"
#include "plan.h"
#include "testutil.h"

/* A chain of five layers of 2, 3, 5, 5, 3 Gflop whose tensors have no bytes, so device times are pure
 * compute; three cores: core 0 at 1 Gflop/s, cores 1 and 2 at 2 Gflop/s. */
static const char *GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"chain5\",\"inputs\":[],\"ops\":["
    "{\"name\":\"l0\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"t0\",\"bytes\":0}],\"macs\":0,\"flops\":2000000000,\"weight_bytes\":0},"
    "{\"name\":\"l1\",\"type\":\"X\",\"inputs\":[\"t0\"],\"outputs\":[{\"name\":\"t1\",\"bytes\":0}],\"macs\":0,\"flops\":3000000000,\"weight_bytes\":0},"
    "{\"name\":\"l2\",\"type\":\"X\",\"inputs\":[\"t1\"],\"outputs\":[{\"name\":\"t2\",\"bytes\":0}],\"macs\":0,\"flops\":5000000000,\"weight_bytes\":0},"
    "{\"name\":\"l3\",\"type\":\"X\",\"inputs\":[\"t2\"],\"outputs\":[{\"name\":\"t3\",\"bytes\":0}],\"macs\":0,\"flops\":5000000000,\"weight_bytes\":0},"
    "{\"name\":\"l4\",\"type\":\"X\",\"inputs\":[\"t3\"],\"outputs\":[{\"name\":\"t4\",\"bytes\":0}],\"macs\":0,\"flops\":3000000000,\"weight_bytes\":0}]}";

static const char *CHIP_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"three\",\"mesh\":{\"width\":3,\"height\":1},"
    "\"core\":{\"flops\":2e9,\"sram_bytes\":1000000},\"noc\":{\"bandwidth\":1e9,\"latency\":0},"
    "\"overrides\":[{\"core\":0,\"flops\":1e9}]}";

static int load(graph **g, chip **c) {
  cJSON *root = NULL;
  mp_error err;
  *g = NULL;
  *c = NULL;
  if (jsonio_parse("g", GRAPH_TEXT, strlen(GRAPH_TEXT), &root, &err) == MP_OK) graph_from_json(root, "g", g, &err);
  cJSON_Delete(root);
  root = NULL;
  if (jsonio_parse("c", CHIP_TEXT, strlen(CHIP_TEXT), &root, &err) == MP_OK) chip_from_json(root, "c", c, &err);
  cJSON_Delete(root);
  return *g && *c;
}

static plan *run(const graph *g, const chip *c, double tau, int max_step, method_report *rep) {
  method_options o;
  method_options_default(&o);
  o.tau = tau;
  o.max_step = max_step;
  plan *p = NULL;
  mp_error err;
  if (method_run("seed-split", g, c, &o, &p, rep, &err) != MP_OK) return NULL;
  return p;
}

/* F = 18 Gflop, speeds 1, 2, 2 (total 5): targets E0 = 18 * 1/5 = 3.6, E1 = 18 * 3/5 = 10.8 Gflop.
 * Times in seconds; "rest" is the flops not yet given out over the speed of the devices left.
 *
 * tau = 1e-9 (the standard deviation decides):
 *  device 0: cumulative flops 2, 5: layer 1 crosses 3.6.  A (keep l1): dev0 = 5/1 = 5, rest = 13/4 =
 *    3.25 -> [5, 3.25] sd 0.875.  B (l1 to the next): dev0 = 2, rest = 16/4 = 4 -> [2, 4] sd 1.0.
 *    A has the lower sd: device 0 takes l0, l1.
 *  device 1: from 5: 10, 15: layer 3 crosses 10.8.  A: dev1 = (5+5)/2 = 5, rest = 3/2 = 1.5 ->
 *    [5, 5, 1.5] sd 1.650.  B: dev1 = 5/2 = 2.5, rest = 8/2 = 4 -> [5, 2.5, 4] sd 1.027.  B: device 1
 *    takes l2 only; device 2 takes l3, l4.  Initial plan [2, 1, 2], stage times [5, 2.5, 4].
 *  finetune: the slowest is stage 0 (5 s); it is the first, so its end moves: by one layer ->
 *    [1, 2, 2], times [2, 4, 4]; by two -> it would be emptied, not allowed.  4 < 5: kept.
 *    Next the slowest is stage 1 (4 s, lowest index of the tie): one layer to stage 0 -> [2, 1, 2],
 *    5 s, no better; two layers would empty it.  Stop.  Result [1, 2, 2], bottleneck 4 s.
 *
 * tau = 10 s (the means decide, since the sds differ by less):
 *  device 0: A mean 4.125, B mean 3.0: B, device 0 takes l0 only.
 *  device 1: from 2: 5, 10, 15: layer 3 crosses 10.8.  A: dev1 = 13/2 = 6.5, rest = 3/2 = 1.5 ->
 *    [2, 6.5, 1.5] mean 3.333.  B: dev1 = 8/2 = 4, rest = 8/2 = 4 -> [2, 4, 4] mean 3.333: equal, A.
 *    Initial plan [1, 3, 1], times [2, 6.5, 1.5].
 *  finetune: slowest stage 1; its start moves by one -> [2, 2, 1], times [5, 5, 1.5], mean 3.833; by
 *    two -> [3, 1, 1], times [10, 2.5, 1.5], mean 4.667: the first (sds 1.65 and 3.80 differ by less
 *    than 10).  5 < 6.5: kept.  Next the slowest is stage 0 (5 s, lowest index): its end moves by
 *    one -> [1, 3, 1], 6.5 s, no better (two would empty it).  Stop.  Result [2, 2, 1], 5 s. */
static void seed_split_should_reproduce_the_hand_worked_example(void) {
  graph *g;
  chip *c;
  CU_ASSERT_FATAL(load(&g, &c));
  method_report rep;
  plan *p = run(g, c, 1e-9, 100, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->arranged[0], 1);
  CU_ASSERT_EQUAL(p->arranged[1], 2);
  CU_ASSERT_EQUAL(p->arranged[2], 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "initial split 5 s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "1 move to 4 s"));
  plan_free(p);
  p = run(g, c, 10, 100, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->arranged[0], 2);
  CU_ASSERT_EQUAL(p->arranged[1], 2);
  CU_ASSERT_EQUAL(p->arranged[2], 1);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "initial split 6.5 s"));
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "1 move to 5 s"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

static void seed_split_with_max_step_0_should_return_the_initial_split(void) {
  graph *g;
  chip *c;
  CU_ASSERT_FATAL(load(&g, &c));
  method_report rep;
  plan *p = run(g, c, 1e-9, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->arranged[0], 2);
  CU_ASSERT_EQUAL(p->arranged[1], 1);
  CU_ASSERT_EQUAL(p->arranged[2], 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "0 moves"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* More cores than layers: devices past the end of the layers get none, and the last core still
 * holds a layer (the canonical form requires it). */
static void seed_split_should_give_the_last_core_a_layer_when_cores_outnumber_layers(void) {
  const char *chip_text =
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"eight\",\"mesh\":{\"width\":4,\"height\":2},"
      "\"core\":{\"flops\":1e9,\"sram_bytes\":1000000},\"noc\":{\"bandwidth\":1e9,\"latency\":0}}";
  graph *g;
  chip *c3, *c = NULL;
  CU_ASSERT_FATAL(load(&g, &c3));
  cJSON *root = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("c", chip_text, strlen(chip_text), &root, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_from_json(root, "c", &c, &err), MP_OK);
  cJSON_Delete(root);
  method_report rep, rep2;
  plan *p = run(g, c, 1e-9, 100, &rep), *q = run(g, c, 1e-9, 100, &rep2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(q);
  CU_ASSERT(p->arranged[7] > 0);
  CU_ASSERT(plan_equal(p, q)); /* deterministic */
  plan_free(p);
  plan_free(q);
  graph_free(g);
  chip_free(c3);
  chip_free(c);
}

static CU_TestInfo tests[] = {
    {"seed_split_should_reproduce_the_hand_worked_example", seed_split_should_reproduce_the_hand_worked_example},
    {"seed_split_with_max_step_0_should_return_the_initial_split", seed_split_with_max_step_0_should_return_the_initial_split},
    {"seed_split_should_give_the_last_core_a_layer_when_cores_outnumber_layers",
     seed_split_should_give_the_last_core_a_layer_when_cores_outnumber_layers},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("seed_split", tests, argc, argv); }
