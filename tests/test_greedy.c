/* Tests of greedy.c: TensorFlow-style placement worked by hand on a chain and on two parallel
 * branches, the derivation of contiguous stages (runs, merging the lightest neighbours, cores by
 * flops), and determinism. */
#include <stdio.h>
#include <string.h>

#include "chip.h"
#include "graph.h"
#include "method.h"
#include "plan.h"
#include "testutil.h"

static chip *load_chip(int w, int h) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m\",\"mesh\":{\"width\":%d,\"height\":%d},"
           "\"core\":{\"flops\":1e9,\"sram_bytes\":1000000},\"noc\":{\"bandwidth\":1e6,\"latency\":1e-6}}",
           w, h);
  return testutil_chip_text(text);
}

static plan *run(const graph *g, const chip *c, method_report *rep) {
  method_options o;
  method_options_default(&o);
  plan *p = NULL;
  mp_error err;
  return method_run("greedy", g, c, &o, &p, rep, &err) == MP_OK ? p : NULL;
}

/* A chain: every layer finishes earliest on the core of its predecessor (another core would add a
 * transfer), so all land on core 0: one run, one stage on all four cores. */
static void greedy_should_keep_a_chain_on_one_core_and_spread_it_over_the_chip(void) {
  graph *g = testutil_graph_text(
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"chain\",\"inputs\":[],\"ops\":["
      "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,\"flops\":1000000,\"weight_bytes\":0},"
      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":1000}],\"macs\":0,\"flops\":1000000,\"weight_bytes\":0},"
      "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":10}],\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}");
  chip *c = load_chip(2, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  method_report rep;
  plan *p = run(g, c, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->n_stages, 1);
  CU_ASSERT_EQUAL(p->stages[0].n_cores, 4);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "on 1 core "));
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "1 runs"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* Two branches from one input: a (4 Mflop) and b (4 Mflop) both read the graph input, c (1 Mflop)
 * reads both.  a -> core 0, done at 4 ms.  b: core 0 is busy until 4 ms (done at 8 ms), core 1 is
 * free (done at 4 ms): core 1.  c: on core 0 it waits for b's 1000 B from core 1 (1 ms + 1 us), on
 * core 1 for a's: equal, so the lower id, core 0.  Placement a:0 b:1 c:0 gives three runs on a
 * two-core chip; the lighter neighbouring pair is b + c (5 Mflop < 8), so the stages are [a], [b, c]
 * with one core each: arranged [1, 2]. */
static void greedy_should_place_parallel_branches_apart_and_merge_runs_to_fit(void) {
  graph *g = testutil_graph_text(
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"fork\",\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
      "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,\"flops\":4000000,\"weight_bytes\":0},"
      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"y\",\"bytes\":1000}],\"macs\":0,\"flops\":4000000,\"weight_bytes\":0},"
      "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"x\",\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":10}],\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}");
  chip *c = load_chip(2, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  method_report rep, rep2;
  plan *p = run(g, c, &rep), *q = run(g, c, &rep2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(q);
  CU_ASSERT_EQUAL(p->arranged[0], 1);
  CU_ASSERT_EQUAL(p->arranged[1], 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "on 2 cores"));
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "3 runs"));
  CU_ASSERT_PTR_NOT_NULL(strstr(rep.notes, "merged"));
  CU_ASSERT(plan_equal(p, q));
  CU_ASSERT_STRING_EQUAL(rep.notes, rep2.notes);
  plan_free(p);
  plan_free(q);
  graph_free(g);
  chip_free(c);
}

/* With more cores (3 x 1) the three runs stay three stages, cores by flops: 4, 4, 1 Mflop over 3
 * cores is one each. */
static void greedy_should_keep_runs_as_stages_when_cores_suffice(void) {
  graph *g = testutil_graph_text(
      "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"fork\",\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
      "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,\"flops\":4000000,\"weight_bytes\":0},"
      "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"y\",\"bytes\":1000}],\"macs\":0,\"flops\":4000000,\"weight_bytes\":0},"
      "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"x\",\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":10}],\"macs\":0,\"flops\":1000000,\"weight_bytes\":0}]}");
  chip *c = load_chip(3, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  method_report rep;
  plan *p = run(g, c, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL(p->n_stages, 3);
  CU_ASSERT_PTR_NULL(strstr(rep.notes, "merged"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

static CU_TestInfo tests[] = {
    {"greedy_should_keep_a_chain_on_one_core_and_spread_it_over_the_chip",
     greedy_should_keep_a_chain_on_one_core_and_spread_it_over_the_chip},
    {"greedy_should_place_parallel_branches_apart_and_merge_runs_to_fit",
     greedy_should_place_parallel_branches_apart_and_merge_runs_to_fit},
    {"greedy_should_keep_runs_as_stages_when_cores_suffice", greedy_should_keep_runs_as_stages_when_cores_suffice},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("greedy", tests, argc, argv); }
