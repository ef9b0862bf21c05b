/* Tests of cost.c: hand counts of the stage-local terms (a three-layer graph with a skip connection on a
 * uniform and a heterogeneous chip, DRAM streams limited by a NoC link or a port, spilled activations),
 * of the plan terms (a Send per destination group, a hop's latency per all-gather segment, every
 * link's load), of contention (the fixed point of T = a + b T / (T - c) solved by hand), cost_model_period
 * against cost_evaluate on random plans of ResNet-50, the lower bounds, names, JSON and errors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "cost.h"
#include "cost_int.h"
#include "graph.h"
#include "jsonio.h"
#include "plan.h"
#include "testutil.h"

/* in (100 B) -> a -> x (1000 B) -> b -> y (500 B); c reads x and y (x skips b) -> z (10 B, output).
 * flops a 4e9, b 2e9, c 1e9; weights a 100 B, b 200 B, c 0. */
static const char *GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"skip\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,"
    "\"flops\":4000000000,\"weight_bytes\":100},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":500}],\"macs\":0,"
    "\"flops\":2000000000,\"weight_bytes\":200},"
    "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"x\",\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":10}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0}]}";

/* Two cores of 1 Gflop/s and 10000 B; links of 1000 B/s. */
static const char *CHIP2_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"two\",\"mesh\":{\"width\":2,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":10000},\"noc\":{\"bandwidth\":1000,\"latency\":0}}";

/* Three cores; core 2 is twice as fast, has 500 B and a transfer factor of 3. */
static const char *CHIP3_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"three\",\"mesh\":{\"width\":3,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":10000},\"noc\":{\"bandwidth\":1000,\"latency\":0},"
    "\"overrides\":[{\"core\":2,\"flops\":2e9,\"sram_bytes\":500,\"transfer_factor\":3}]}";

static cost_result *evaluate(const graph *g, const chip *c, const int *arranged) {
  plan *p = NULL;
  cost_result *r = NULL;
  mp_error err;
  if (plan_new(arranged, c->n_cores, g->n_ops, &p, &err) == MP_OK) cost_evaluate(g, c, p, &r, &err);
  plan_free(p);
  return r;
}

#define NEAR(a, b) CU_ASSERT_DOUBLE_EQUAL((a), (b), 1e-12 * fabs((double)(b)) + 1e-15)

/* [1, 2]: stage 0 = a on core 0: compute 4e9 / 1e9 = 4 s (one core: no all-gather); x is read
 * later (by b and c), X = 1000 B, send = 1000 / 1000 = 1 s; t = 4 s; s = 100 / 1 + 1000 = 1100 B.
 * Stage 1 = b, c on core 1: compute 3e9 / 1e9 = 3 s; nothing leaves (z is an output), t = 3 s;
 * s = 200 + max(500, 10) = 700 B.  Bottleneck 4 s at stage 0, feasible. */
static void cost_should_match_the_hand_count_of_a_two_stage_plan(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->n_stages, 2);
  NEAR(r->stages[0].compute_s, 4.0);
  NEAR(r->stages[0].send_bytes, 1000);
  NEAR(r->stages[0].send_s, 1.0);
  NEAR(r->stages[0].time_s, 4.0);
  NEAR(r->stages[0].mem_bytes, 1100);
  NEAR(r->stages[1].compute_s, 3.0);
  NEAR(r->stages[1].send_bytes, 0);
  NEAR(r->stages[1].time_s, 3.0);
  NEAR(r->stages[1].mem_bytes, 700);
  NEAR(r->bottleneck_s, 4.0);
  CU_ASSERT_EQUAL(r->bottleneck_stage, 0);
  CU_ASSERT_EQUAL(r->feasible, 1);
  NEAR(r->mem_ratio, 1100.0 / 10000);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* [0, 3]: one stage on both cores: 7e9 / 2e9 = 3.5 s of work plus the all-gathers
 * (1/2) * (1000 + 500 + 10) / 1000 = 0.755 s: 4.255 s; s = 300 / 2 + 1000 = 1150 B.
 * [1, 0, 2] on the three-core chip: stage 1 = b, c on cores 1-2: speed 3e9, 3e9 / 3e9 = 1 s plus
 * (1/2) * 510 / 1000 = 0.255 s; gamma = 3 but nothing leaves; s = 200 / 2 + 500 = 600 B > the
 * 500 B of core 2: not feasible, ratio 1.2. */
static void cost_should_include_all_gathers_and_heterogeneous_groups(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c2 = testutil_chip_text(CHIP2_TEXT), *c3 = testutil_chip_text(CHIP3_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c3);
  cost_result *r = evaluate(g, c2, (int[]){0, 3});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->n_stages, 1);
  NEAR(r->stages[0].gather_bytes, 1510);
  NEAR(r->stages[0].time_s, 4.255);
  NEAR(r->stages[0].mem_bytes, 1150);
  cost_result_free(r);
  r = evaluate(g, c3, (int[]){1, 0, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->n_stages, 2);
  NEAR(r->stages[1].speed, 3e9);
  NEAR(r->stages[1].gamma, 3);
  NEAR(r->stages[1].sram_bytes, 500);
  NEAR(r->stages[1].compute_s, 1.255);
  NEAR(r->stages[1].mem_bytes, 600);
  CU_ASSERT_EQUAL(r->stages[1].fits, 0);
  CU_ASSERT_EQUAL(r->feasible, 0);
  NEAR(r->mem_ratio, 1.2);
  NEAR(r->bottleneck_s, 4.0); /* stage 0: a alone on core 0 */
  cost_result_free(r);
  graph_free(g);
  chip_free(c2);
  chip_free(c3);
}

/* a, b as one stage: x (read by c) and y leave, X = 1500 B.  On core 0 (gamma 1) send = 1500 / 1000
 * = 1.5 s; on cores 1-2 (core 2 has gamma 3) send = 4.5 s, above its compute 6e9 / 3e9 + 0.5 * 1500
 * / 1000 = 2.75 s, so the stage takes 4.5 s. */
static void cost_should_weigh_sends_by_the_groups_largest_transfer_factor(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c3 = testutil_chip_text(CHIP3_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c3);
  cost_model *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c3, &m, &err), MP_OK);
  cost_stage s;
  cost_model_stage(m, 0, 2, 0, 1, &s); /* a, b on core 0: x and y leave for c */
  NEAR(s.send_bytes, 1500);
  NEAR(s.send_s, 1.5);
  cost_model_stage(m, 0, 2, 1, 2, &s); /* the same on cores 1-2: gamma 3 */
  NEAR(s.gamma, 3);
  NEAR(s.send_s, 4.5);
  NEAR(s.compute_s, 6e9 / 3e9 + 0.5 * 1500 / 1000);
  NEAR(s.time_s, 4.5);
  cost_model_free(m);
  graph_free(g);
  chip_free(c3);
}

/* Bounds on the two-core chip: flops 7e9 / 2e9 = 3.5 s.  Per layer, the better of one core and two:
 * a: min(4, 2 + 0.5) = 2.5 s; b: min(2, 1 + 0.25) = 1.25 s; c: min(1, 0.5 + 0.005) = 0.505 s;
 * so layer_s = 2.5 s (layer 0) and the bound is 3.5 s — below the best plan's 4 s. */
static void lower_bound_should_match_the_hand_count(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_bound b;
  cost_lower_bound(g, c, &b);
  NEAR(b.flops_s, 3.5);
  NEAR(b.layer_s, 2.5);
  CU_ASSERT_EQUAL(b.layer, 0);
  NEAR(b.bound_s, 3.5);
  cJSON *j = cost_bound_to_json(&b);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "bound_s")), 3.5, 1e-12);
  cJSON_Delete(j);
  graph_free(g);
  chip_free(c);
}

static void cost_result_json_should_carry_the_stage_figures(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  cJSON *j = cost_result_to_json(r, c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "bottleneck_s")), 4.0, 1e-12);
  CU_ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(j, "feasible")));
  cJSON *stages = cJSON_GetObjectItem(j, "stages");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(stages), 2);
  cJSON *s1 = cJSON_GetArrayItem(stages, 1);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "t_s")), 3.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "s_bytes")), 700, 1e-9);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(s1, "first_layer")), 1);
  cJSON_Delete(j);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* ---- plan terms: Sends per destination, segment latency --------------------------------------- */

/* Six cores on a 3 x 2 mesh, snake order: 0 (0,0), 1 (1,0), 2 (2,0), 3 (2,1), 4 (1,1), 5 (0,1);
 * 1 Gflop/s, transfer factor 2, links of 1000 B/s with 0.01 s a hop. */
static const char *CHIP6_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"six\",\"mesh\":{\"width\":3,\"height\":2},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":10000,\"transfer_factor\":2},"
    "\"noc\":{\"bandwidth\":1000,\"latency\":0.01}}";

/* The skip graph on six cores, [1, 0, 1, 0, 0, 1]: a on core 0, b on cores 1-2, c on cores 3-5.  x is
 * read by b (stage 1, first core 1 at (1,0): 1 hop from core 0) and by c (stage 2, first core 3 at
 * (2,1): 2 + 1 = 3 hops), so stage 0 makes two Sends of 1000 B: send = 2 x (2 x 1000 / 1000) +
 * (1 + 3) x 0.01 = 4.04 s, above its compute of 4 s; counted once (cost_model_stage) it is 2 s.
 * Stage 1 sends y (500 B) to core 3, 1 hop from its last core 2: 2 x 500 / 1000 + 0.01 = 1.01 s.
 * With [1, 0, 0, 0, 0, 2] b and c share stage 1 and x crosses once: 2 + 1 x 0.01 = 2.01 s. */
static void a_tensor_read_by_two_later_groups_should_cost_two_sends(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP6_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 0, 1, 0, 0, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL_FATAL(r->n_stages, 3);
  const cost_stage *s0 = &r->stages[0], *s1 = &r->stages[1];
  CU_ASSERT_EQUAL(s0->n_transfers, 2);
  NEAR(s0->sent_bytes, 2000);
  CU_ASSERT_EQUAL(s0->send_hops, 4);
  NEAR(s0->send_s, 4.04);
  NEAR(s0->compute_s, 4.0);
  NEAR(s0->time_s, 4.04);
  NEAR(s0->send_bytes, 1000); /* X, the distinct tensors: x once */
  CU_ASSERT_EQUAL(s1->n_transfers, 1);
  NEAR(s1->sent_bytes, 500);
  CU_ASSERT_EQUAL(s1->send_hops, 1);
  NEAR(s1->send_s, 1.01);
  CU_ASSERT_EQUAL(r->stages[2].n_transfers, 0);
  NEAR(r->stages[2].send_s, 0);
  cost_result_free(r);

  cost_model *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c, &m, &err), MP_OK);
  cost_stage s;
  cost_model_stage(m, 0, 1, 0, 1, &s);
  NEAR(s.send_s, 2.0);
  CU_ASSERT_EQUAL(s.n_transfers, 0);
  cost_model_free(m);

  r = evaluate(g, c, (int[]){1, 0, 0, 0, 0, 2});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->stages[0].n_transfers, 1);
  NEAR(r->stages[0].sent_bytes, 1000);
  CU_ASSERT_EQUAL(r->stages[0].send_hops, 1);
  NEAR(r->stages[0].send_s, 2.01);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* a: in -> x (1000 B, 1e9 flops); b: x -> y (800 B, 2e9); c: y -> z (600 B, 1e9); d: y, z -> o (10 B,
 * 1e9); no weights. */
static const char *SEG_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"seg\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":800}],\"macs\":0,"
    "\"flops\":2000000000,\"weight_bytes\":0},"
    "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"y\"],\"outputs\":[{\"name\":\"z\",\"bytes\":600}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0},"
    "{\"name\":\"d\",\"type\":\"X\",\"inputs\":[\"y\",\"z\"],\"outputs\":[{\"name\":\"o\",\"bytes\":10}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0}]}";

/* Four cores in a row: 1 Gflop/s, links of 1000 B/s, 0.01 s a hop. */
static const char *ROW4_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"row\",\"mesh\":{\"width\":4,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":100000},\"noc\":{\"bandwidth\":1000,\"latency\":0.01}}";

/* [1, 0, 2, 1]: b, c on cores 1-2.  b's y is read by d in the next stage, so b's segment ends there
 * and c starts another: two all-gathers with bytes, compute = 3e9 / 2e9 + (1/2) 1400 / 1000 + 2 x 0.01
 * = 2.22 s, 0.02 s above the stage-local 2.2 s.  [1, 0, 0, 3]: b, c, d on cores 1-3 wait for x alone
 * and post nothing: one segment, 4e9 / 3e9 + (2/3) 1410 / 1000 + 0.01 s.  Stage 0 (one core) pays
 * none. */
static void each_gathering_segment_should_add_one_hops_latency(void) {
  graph *g = testutil_graph_text(SEG_GRAPH_TEXT);
  chip *c = testutil_chip_text(ROW4_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_model *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c, &m, &err), MP_OK);
  cost_stage local;
  cost_model_stage(m, 1, 2, 1, 2, &local);
  NEAR(local.compute_s, 2.2);
  CU_ASSERT_EQUAL(local.n_segments, 0);
  cost_result *r = evaluate(g, c, (int[]){1, 0, 2, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->stages[1].n_segments, 2);
  NEAR(r->stages[1].compute_s, 2.22);
  NEAR(r->stages[1].compute_s - local.compute_s, 2 * 0.01);
  CU_ASSERT_EQUAL(r->stages[0].n_segments, 0);
  NEAR(r->stages[0].compute_s, 1.0);
  cost_result_free(r);
  r = evaluate(g, c, (int[]){1, 0, 0, 3});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->stages[1].n_segments, 1);
  NEAR(r->stages[1].compute_s, 4.0 / 3.0 + 2.0 / 3.0 * 1.41 + 0.01);
  cost_result_free(r);
  cost_model_free(m);
  graph_free(g);
  chip_free(c);
}

/* ---- DRAM streams -------------------------------------------------------------------------------- */

/* w: in -> y (500 B), 1e9 flops, 4000 B of weights. */
static const char *WEIGHTS_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"w\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"w\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"y\",\"bytes\":500}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":4000}]}";

/* Four cores in a row with 1000 B of SRAM and DRAM ports (a JSON list of positions) of the given
 * bandwidth. */
static chip *row_with_ports(double port_bandwidth, const char *ports) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"row\",\"mesh\":{\"width\":4,\"height\":1},"
           "\"core\":{\"flops\":1e9,\"sram_bytes\":1000},\"noc\":{\"bandwidth\":1000,\"latency\":0.01},"
           "\"dram\":{\"bandwidth\":%.17g,\"ports\":%s}}",
           port_bandwidth, ports);
  return testutil_chip_text(text);
}

/* w on all four cores: mem = 4000 / 4 + 500 = 1500 B, so each core reads e = 500 B of weights (e <=
 * W/c = 1000: nothing spilled).  Routes from the port: its down link carries 4 x 500 = 2000 B, the link
 * x0>x1 carries the reads of cores 1-3 (1500 B), x1>x2 1000 B, x2>x3 500 B; the longest is 3 hops.
 * A port of 1e6 B/s: the link x0>x1 limits, in = 3 x 500 / 1000 + 3 x 0.01 = 1.53 s.  A port of
 * 100 B/s: its link limits, in = 2000 / 100 + 0.03 = 20.03 s.  compute = 1e9 / 4e9 + (3/4) 500 / 1000
 * = 0.625 s, and t = compute + in.  With a second port at (3,0) each core reads from the nearer: cores
 * 0, 1 from (0,0), cores 2, 3 from (3,0); x0>x1 and x3>x2 carry 500 B each, the ports' links 1000 B:
 * in = 500 / 1000 + 1 hop = 0.51 s. */
static void a_dram_stream_should_be_limited_by_its_busiest_link(void) {
  graph *g = testutil_graph_text(WEIGHTS_GRAPH_TEXT);
  chip *fast = row_with_ports(1e6, "[[0,0]]"), *slow = row_with_ports(100, "[[0,0]]");
  chip *two = row_with_ports(1e6, "[[0,0],[3,0]]");
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(fast);
  CU_ASSERT_PTR_NOT_NULL_FATAL(slow);
  CU_ASSERT_PTR_NOT_NULL_FATAL(two);
  cost_model *m = NULL;
  mp_error err;
  cost_stage s;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, fast, &m, &err), MP_OK);
  cost_model_stage(m, 0, 1, 0, 4, &s);
  CU_ASSERT_EQUAL(s.fits, 0);
  NEAR(s.mem_bytes, 1500);
  NEAR(s.dram_in_bytes, 2000);
  NEAR(s.dram_out_bytes, 0);
  NEAR(s.dram_in_s, 3 * 500 / 1000.0 + 3 * 0.01);
  NEAR(s.dram_out_s, 0);
  NEAR(s.compute_s, 0.625);
  NEAR(s.time_s, 0.625 + 1.53);
  cost_model_free(m);
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, slow, &m, &err), MP_OK);
  cost_model_stage(m, 0, 1, 0, 4, &s);
  NEAR(s.dram_in_s, 2000 / 100.0 + 3 * 0.01);
  NEAR(s.dram_s, 20.03);
  CU_ASSERT_STRING_EQUAL(cost_stage_limiter(&s), "dram");
  cost_model_free(m);
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, two, &m, &err), MP_OK);
  cost_model_stage(m, 0, 1, 0, 4, &s);
  NEAR(s.dram_in_bytes, 2000);
  NEAR(s.dram_in_s, 500 / 1000.0 + 0.01);
  cost_model_free(m);
  graph_free(g);
  chip_free(fast);
  chip_free(slow);
  chip_free(two);
}

/* s: in -> y (2000 B), 4e9 flops, 600 B of weights. */
static const char *SPILL_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"s\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"s\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"y\",\"bytes\":2000}],\"macs\":0,"
    "\"flops\":4000000000,\"weight_bytes\":600}]}";

/* 2 x 2 mesh: 0 (0,0), 1 (1,0), 2 (1,1), 3 (0,1); 1000 B of SRAM; a port of 2500 B/s at (0,0). */
static const char *MESH2_PORT_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m2\",\"mesh\":{\"width\":2,\"height\":2},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":1000},\"noc\":{\"bandwidth\":1000,\"latency\":0.01},"
    "\"dram\":{\"bandwidth\":2500,\"ports\":[[0,0]]}}";

/* s on the four cores: mem = 600 / 4 + 2000 = 2150 B, e = 1150 B a core, of which W/c = 150 B are
 * weights and Y - S = 1000 B spilled activation: in = 4 x 1150 = 4600 B, out = 4 x 1000 = 4000 B.
 * Reads (XY from (0,0)): port down 4600 B, x0y0>x1y0 2300 (cores 1, 2), x1y0>x1y1 1150 (core 2),
 * x0y0>x0y1 1150 (core 3): max(4600 / 2500, 2300 / 1000) = 2.3 s, plus 2 hops = 2.32 s.  Writes: core
 * 2 goes x first, x1y1>x0y1 then x0y1>x0y0: port up 4000 B, x0y1>x0y0 2000 (cores 2, 3), x1y0>x0y0
 * 1000, x1y1>x0y1 1000: max(1.6, 2.0) + 0.02 = 2.02 s.  compute = 4e9 / 4e9 + (3/4) 2000 / 1000 = 2.5 s;
 * t = 2.5 + 2.32 + 2.02 = 6.84 s. */
static void a_stage_whose_activation_exceeds_sram_should_pay_the_spill(void) {
  graph *g = testutil_graph_text(SPILL_GRAPH_TEXT);
  chip *c = testutil_chip_text(MESH2_PORT_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_model *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c, &m, &err), MP_OK);
  cost_stage s;
  cost_model_stage(m, 0, 1, 0, 4, &s);
  CU_ASSERT_EQUAL(s.fits, 0);
  NEAR(s.dram_in_bytes, 4 * (600 / 4.0 + 2000 - 1000));
  NEAR(s.dram_out_bytes, 4 * (2000 - 1000));
  NEAR(s.dram_in_s, 2.32);
  NEAR(s.dram_out_s, 2.02);
  NEAR(s.dram_s, 4.34);
  NEAR(s.compute_s, 2.5);
  NEAR(s.time_s, 6.84);
  double in, out;
  cost_core_dram(&s, 1000, &in, &out);
  NEAR(in, 1150);
  NEAR(out, 1000);
  cost_core_dram(&s, 5000, &in, &out); /* a core that holds it streams nothing */
  NEAR(in, 0);
  NEAR(out, 0);
  cost_model_free(m);
  graph_free(g);
  chip_free(c);
}

/* ---- link loads ---------------------------------------------------------------------------------- */

/* a: in -> x (900 B), 1500 B of weights; b: x -> y (10 B, an output). */
static const char *LOADS_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"l\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":900}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":1500},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":10}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0}]}";

/* 2 x 2 mesh, 700 B of SRAM, transfer factor 1.5, a port at (0,1) (core 3). */
static const char *MESH2_LOADS_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"m2\",\"mesh\":{\"width\":2,\"height\":2},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":700,\"transfer_factor\":1.5},\"noc\":{\"bandwidth\":1000,\"latency\":0},"
    "\"dram\":{\"bandwidth\":1000,\"ports\":[[0,1]]}}";

/* [0, 0, 1, 1]: a on cores 0-2 ((0,0), (1,0), (1,1)), b on core 3 (0,1).
 * All-gather of A = 900 B along 0 -> 1 -> 2: x0y0>x1y0 1/3 A = 300, x1y0>x0y0 2/3 A = 600, x1y0>x1y1
 * 600, x1y1>x1y0 300.  Send of x from core 2 to core 3: x1y1>x0y1, gamma 1.5 x 900 = 1350.
 * DRAM: mem = 1500 / 3 + 900 = 1400 B, e = 700 B a core, 200 B of it spilled (e - W/c).  Reads from
 * (0,1): the port's down link 2100; core 0 over x0y1>x0y0 (700); core 1 over x0y1>x1y1, x1y1>x1y0
 * (700 each); core 2 over x0y1>x1y1 (700).  Writes to (0,1): the port's up link 600; core 0 over
 * x0y0>x0y1; core 1 over x1y0>x0y0, x0y0>x0y1; core 2 over x1y1>x0y1 (200 each).  b fits and sends
 * nothing.  Sums per link below; every other link carries nothing. */
static void link_loads_should_equal_the_hand_summed_table(void) {
  graph *g = testutil_graph_text(LOADS_GRAPH_TEXT);
  chip *c = testutil_chip_text(MESH2_LOADS_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){0, 0, 1, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL_FATAL(r->n_links, 4 * 4 + 2);
  double want[18] = {0};
  want[chip_link_index(c, 0, 0, CHIP_XPLUS)] = 300;
  want[chip_link_index(c, 1, 0, CHIP_XMINUS)] = 600 + 200;
  want[chip_link_index(c, 1, 0, CHIP_YPLUS)] = 600;
  want[chip_link_index(c, 1, 1, CHIP_YMINUS)] = 300 + 700;
  want[chip_link_index(c, 1, 1, CHIP_XMINUS)] = 1350 + 200;
  want[chip_link_index(c, 0, 1, CHIP_YMINUS)] = 700;
  want[chip_link_index(c, 0, 1, CHIP_XPLUS)] = 700 + 700;
  want[chip_link_index(c, 0, 0, CHIP_YPLUS)] = 200 + 200;
  want[chip_port_link(c, 0, 0)] = 2100;
  want[chip_port_link(c, 0, 1)] = 600;
  for (int k = 0; k < r->n_links; k++) {
    char name[48];
    chip_link_name(c, k, name, sizeof name);
    if (fabs(r->link_bytes[k] - want[k]) > 1e-12 * want[k])
      fprintf(stderr, "\n  %s: %g, want %g", name, r->link_bytes[k], want[k]);
    NEAR(r->link_bytes[k], want[k]);
  }
  /* the busiest per bandwidth is the port's down link, 2100 / 1000 */
  NEAR(r->link_bound_s, 2.1);
  CU_ASSERT_EQUAL(r->busiest_link, chip_port_link(c, 0, 0));
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* ---- contention ---------------------------------------------------------------------------------- */

/* a: in -> x (1000 B, 1e9 flops); b: in -> y (1000 B, an output; 2.4e9 flops); c: x -> z (10 B, 1e9). */
static const char *CONTEND_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"k\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":1000}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"y\",\"bytes\":1000}],\"macs\":0,"
    "\"flops\":2400000000,\"weight_bytes\":0},"
    "{\"name\":\"c\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"z\",\"bytes\":10}],\"macs\":0,"
    "\"flops\":1000000000,\"weight_bytes\":0}]}";

/* Four cores in a row, 1 Gflop/s, links of 1000 B/s, 0.05 s a hop. */
static const char *ROW4_SLOW_TEXT =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"row\",\"mesh\":{\"width\":4,\"height\":1},"
    "\"core\":{\"flops\":1e9,\"sram_bytes\":100000},\"noc\":{\"bandwidth\":1000,\"latency\":0.05}}";

/* [1, 0, 1, 1]: a on core 0, b on cores 1-2, c on core 3.  a's Send of x (1000 B) to core 3 crosses
 * x0>x1, x1>x2, x2>x3; b's all-gather puts A/2 = 500 B on x1>x2 and on x2>x1.  x1>x2 thus carries 1500
 * B: link bound 1.5 s.  Without contention: stage 0 max(1, 1 + 3 x 0.05) = 1.15 s, stage 1 2.4e9 / 2e9
 * + 0.05 (one segment) + 500 / 1000 = 1.75 s, stage 2 1 s: 1.75 s.
 * With contention at period T, each link a processor-sharing queue: on x1>x2 the gather's 500 B meet
 * the Send's 1000 B, busy 1 s a micro-batch, and take (500 / 1000) T / (T - 1) (x2>x1 carries nothing
 * else: 0.5), so stage 1 takes 1.25 + 0.5 T / (T - 1).  T = 1.25 + 0.5 T / (T - 1) is
 * T^2 - 2.75 T + 1.25 = 0: T = (2.75 + sqrt(2.75^2 - 5)) / 2 = 2.17539 s.  There the others stay
 * below: stage 0's Send takes T / (T - 0.5) + 0.15 = 1.44836 s (its 1000 B meet 500 B on x1>x2),
 * stage 2 1 s, the link bound 1.5 s is 69 % of the period; so the period is stage 1's compute.
 * [1, 1, 0, 1]: a on core 0, b on core 1, c on cores 2-3: x goes x0>x1>x2, c's gather uses x2>x3 and
 * x3>x2, no link is shared, and the period is the uncontended 2.4 s of stage 1 (b on one core). */
static void contention_should_stretch_a_shared_link_to_the_hand_solved_fixed_point(void) {
  graph *g = testutil_graph_text(CONTEND_GRAPH_TEXT);
  chip *c = testutil_chip_text(ROW4_SLOW_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 0, 1, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL_FATAL(r->n_stages, 3);
  NEAR(r->link_bytes[chip_link_index(c, 1, 0, CHIP_XPLUS)], 1500);
  NEAR(r->link_bound_s, 1.5);
  NEAR(r->stages[0].time_s, 1.15);
  NEAR(r->stages[1].time_s, 1.75);
  NEAR(r->uncontended_s, 1.75);
  double T = (2.75 + sqrt(2.75 * 2.75 - 5)) / 2;
  CU_ASSERT(fabs(T - 2.17539) < 1e-5);
  CU_ASSERT(r->period_s > r->uncontended_s);
  NEAR(r->period_s, T);
  NEAR(r->stages[1].contended_s, T);
  NEAR(r->stages[0].contended_s, T / (T - 0.5) + 3 * 0.05);
  NEAR(r->stages[2].contended_s, 1.0);
  CU_ASSERT_EQUAL(r->bottleneck_stage, 1);
  CU_ASSERT_EQUAL(r->binding, COST_BIND_COMPUTE);
  cost_result_free(r);

  r = evaluate(g, c, (int[]){1, 1, 0, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  NEAR(r->uncontended_s, 2.4);
  NEAR(r->period_s, r->uncontended_s);
  for (int i = 0; i < r->n_stages; i++) NEAR(r->stages[i].contended_s, r->stages[i].time_s);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* a, b: 1e6 flops, 2000 B of weights, 100 B out (x, read by b; y, an output). */
static const char *TWO_STREAMS_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":100}],\"macs\":0,"
    "\"flops\":1000000,\"weight_bytes\":2000},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":100}],\"macs\":0,"
    "\"flops\":1000000,\"weight_bytes\":2000}]}";

/* Two cores of 1 Gflop/s and 1000 B, a port at (0,0); links and port of the given bandwidths. */
static chip *pair_with_port(double noc_bandwidth, double port_bandwidth) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"pair\",\"mesh\":{\"width\":2,\"height\":1},"
           "\"core\":{\"flops\":1e9,\"sram_bytes\":1000},\"noc\":{\"bandwidth\":%.17g,\"latency\":0},"
           "\"dram\":{\"bandwidth\":%.17g,\"ports\":[[0,0]]}}",
           noc_bandwidth, port_bandwidth);
  return testutil_chip_text(text);
}

/* a: 5e8 flops, b: 2e9, each 2000 B of weights and a 100 B output, on the pair with a port of 1000 B/s
 * (links of 1e6), [1, 1]: each core reads 1100 B per micro-batch over the port's link, 1.1 s alone.
 * b is the slower stage (1.1 + 2 s alone against 0.6 + 1.1); a, faster, fills the window of
 * micro-batches in flight and then starts one whenever b completes one, which is when b starts its
 * next: their reads start together and share the port for their whole length, (1100 + 1100) / 1000 =
 * 2.2 s, so b takes 4.2 s and a 2.7.  The simulator measures the same 4.2 s (test_sim). */
static const char *STAGGERED_GRAPH_TEXT =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t2\","
    "\"inputs\":[{\"name\":\"in\",\"bytes\":100}],\"ops\":["
    "{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"in\"],\"outputs\":[{\"name\":\"x\",\"bytes\":100}],\"macs\":0,"
    "\"flops\":500000000,\"weight_bytes\":2000},"
    "{\"name\":\"b\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":100}],\"macs\":0,"
    "\"flops\":2000000000,\"weight_bytes\":2000}]}";

static void reads_that_start_together_should_share_the_port_for_their_whole_length(void) {
  graph *g = testutil_graph_text(STAGGERED_GRAPH_TEXT);
  chip *c = pair_with_port(1e6, 1000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  cost_result *r = evaluate(g, c, (int[]){1, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  NEAR(r->stages[0].time_s, 0.5 + 1.1);
  NEAR(r->stages[1].time_s, 2 + 1.1);
  CU_ASSERT(fabs(r->period_s - 4.2) <= 1e-9 * 4.2);
  CU_ASSERT(fabs(r->stages[1].contended_s - 4.2) <= 1e-9 * 4.2);
  CU_ASSERT(fabs(r->stages[0].contended_s - 2.7) <= 1e-9 * 2.7);
  CU_ASSERT_EQUAL(r->binding, COST_BIND_COMPUTE);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* [1, 1]: a on core 0, b on core 1, each needing 2000 + 100 B of its 1000: each reads e = 1100 B from
 * the port at (0,0), b's over x0>x1 too; a sends x (100 B) over x0>x1.  Work 1 ms each.
 * Port of 1000 B/s, links of 1e6: the port's down link carries 2200 B, 2.2 s; each stage takes 1 ms
 * + 1.1 s alone.  At random phases (the first pass: the other stream keeps the port busy 1.1 s) 1 ms +
 * 1.1 T / (T - 1.1), T^2 - 2.201 T + 0.0011 = 0, T1 = 2.2005 s, where a's reads last r = 1.1 T1 /
 * (T1 - 1.1) = T1 - 1 ms and its Send of x (100 B on x0>x1, which b's reads keep busy 1.1 ms) d = 1e-4
 * T1 / (T1 - 0.0011): b starts at 1 ms + r + d = T1 + d, i.e. d into the period.  The reads are placed
 * there: a's [0, r) and b's [d, d + r) share r - d, in which b moves 1100 (r - d) / r of its bytes
 * through the port while a reads, and the same of a's while b reads; no other traffic is left on the
 * port.  So each stage's reads take (1100 + 1100 (r - d) / r) / 1000 s and the period is 1 ms more,
 * 2.20095 s.  The reads are placed again at that period until it holds still, at the T where the reads
 * last r = T - 1 ms, the Send d(T) = 1e-4 T / (T - 0.0011) and T = 1 ms + 1.1 + 1.1 (r - d) / r
 * (solved here by bisection), with the port busy 99.96 % of it while no stage alone takes 95 %: the
 * port binds.  Port of 1e9, links of 1000 B/s: x0>x1 carries 1100 + 100
 * B, 1.2 s; b takes 1 ms + 1.1 s alone, 1 ms + 1.1 T / (T - 0.1) under contention: T^2 - 1.201 T +
 * 0.0001 = 0, T = 1.20092 s, a's Send 0.1 T / (T - 1.1) = 1.19 s (its 100 B meet b's 1100):
 * the link binds, period 1.2 s.  In the test of two Sends above stage 0's Sends set the period
 * ("send"), in the table of link loads stage 0's streams ("dram"). */
static void binding_should_name_what_sets_the_period(void) {
  graph *g = testutil_graph_text(TWO_STREAMS_GRAPH_TEXT);
  chip *port = pair_with_port(1e6, 1000), *link = pair_with_port(1000, 1e9);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(port);
  CU_ASSERT_PTR_NOT_NULL_FATAL(link);
  cost_result *r = evaluate(g, port, (int[]){1, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  NEAR(r->stages[1].dram_in_s, 1.1);
  NEAR(r->link_bound_s, 2.2);
  CU_ASSERT_EQUAL(r->busiest_link, chip_port_link(port, 0, 0));
  double T1 = (2.201 + sqrt(2.201 * 2.201 - 4 * 0.0011)) / 2, rd = 1.1 * T1 / (T1 - 1.1),
         d = 1e-4 * T1 / (T1 - 0.0011), T = 0.001 + (1100 + 1100 * (rd - d) / rd) / 1000;
  CU_ASSERT(fabs(T - 2.20095) < 1e-5); /* the first placement */
  double lo = 2.2, hi = 2.202;
  for (int it = 0; it < 200; it++) {
    double mid = (lo + hi) / 2, dm = 1e-4 * mid / (mid - 0.0011), rm = mid - 0.001;
    if (0.001 + 1.1 + 1.1 * (rm - dm) / rm > mid)
      lo = mid;
    else
      hi = mid;
  }
  T = hi;
  CU_ASSERT(fabs(r->period_s - T) <= 1e-8 * T);
  CU_ASSERT(fabs(r->stages[0].contended_s - T) <= 1e-8 * T);
  CU_ASSERT(fabs(r->stages[1].contended_s - T) <= 1e-8 * T);
  CU_ASSERT_EQUAL(r->binding, COST_BIND_PORT);
  cost_result_free(r);
  r = evaluate(g, link, (int[]){1, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  NEAR(r->link_bound_s, 1.2);
  CU_ASSERT_EQUAL(r->busiest_link, chip_link_index(link, 0, 0, CHIP_XPLUS));
  T = (1.201 + sqrt(1.201 * 1.201 - 4 * 0.0001)) / 2;
  CU_ASSERT(fabs(T - 1.20092) < 1e-5);
  NEAR(r->period_s, T);
  NEAR(r->stages[1].contended_s, 0.001 + 1.1 * T / (T - 0.1));
  CU_ASSERT_EQUAL(r->binding, COST_BIND_LINK);
  cost_result_free(r);
  graph_free(g);
  chip_free(port);
  chip_free(link);

  g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP6_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  r = evaluate(g, c, (int[]){1, 0, 1, 0, 0, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->binding, COST_BIND_SEND);
  CU_ASSERT_EQUAL(r->bottleneck_stage, 0);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
  g = testutil_graph_text(LOADS_GRAPH_TEXT);
  c = testutil_chip_text(MESH2_LOADS_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  r = evaluate(g, c, (int[]){0, 0, 1, 1});
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_EQUAL(r->binding, COST_BIND_DRAM);
  cost_result_free(r);
  graph_free(g);
  chip_free(c);
}

/* ---- the search loop's period and cost_evaluate ----------------------------------------------------- */

static uint64_t rng_state;

static int below(int n) { /* xorshift64*, fixed seed per test */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return (int)((rng_state * UINT64_C(2685821657736338717)) >> 33) % n;
}

/* n - 1 distinct cuts of 1..total-1, as n counts summing to total (n <= total). */
static void random_counts(int total, int n, int *counts) {
  int cut[CHIP_MAX_CORES], pos[CHIP_MAX_CORES];
  for (int i = 1; i < total; i++) pos[i - 1] = i;
  for (int i = 0; i < n - 1; i++) { /* partial Fisher-Yates */
    int j = i + below(total - 1 - i), t = pos[i];
    pos[i] = pos[j];
    pos[j] = t;
  }
  int k = 0;
  cut[k++] = 0;
  for (int v = 1; v < total; v++)
    for (int i = 0; i < n - 1; i++)
      if (pos[i] == v) cut[k++] = v;
  cut[k] = total;
  for (int i = 0; i < n; i++) counts[i] = cut[i + 1] - cut[i];
}

/* 200 random plans of ResNet-50 on the chip: cost_model_period, run on one model in a loop, gives
 * cost_evaluate's period, stage times (contended), memory verdict and ratio bit for bit. */
static void check_period_equals_evaluate(const char *chip_file) {
  graph *g = NULL;
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/resnet50.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src(chip_file), &c, &err), MP_OK);
  cost_model *m = NULL;
  CU_ASSERT_EQUAL_FATAL(cost_model_new(g, c, &m, &err), MP_OK);
  int L = g->n_ops, C = c->n_cores, most = L < C ? L : C;
  int *layers = malloc((size_t)most * sizeof *layers), *cores = malloc((size_t)most * sizeof *cores);
  double *stage_s = malloc((size_t)most * sizeof *stage_s), *stage_mem = malloc((size_t)most * sizeof *stage_mem);
  CU_ASSERT_FATAL(layers && cores && stage_s && stage_mem);
  int mismatches = 0, infeasible = 0, contended = 0;
  for (int trial = 0; trial < 200; trial++) {
    int n = 1 + below(1 + below(most)); /* fewer stages more often: larger groups, some fit */
    random_counts(L, n, layers);
    random_counts(C, n, cores);
    plan *p = NULL;
    cost_result *r = NULL;
    CU_ASSERT_EQUAL_FATAL(plan_from_stages(layers, cores, n, &p, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(cost_evaluate(g, c, p, &r, &err), MP_OK);
    int fits = -1;
    double ratio = -1;
    double period = cost_model_period(m, p, stage_s, stage_mem, &fits, &ratio);
    int same = period == r->period_s && fits == r->feasible && ratio == r->mem_ratio;
    for (int i = 0; i < n; i++)
      same &= stage_s[i] == r->stages[i].contended_s &&
              stage_mem[i] == r->stages[i].mem_bytes / r->stages[i].sram_bytes;
    if (!same) {
      mismatches++;
      fprintf(stderr, "\n  %s plan %d (%d stages): period %.17g, cost_evaluate %.17g", chip_file, trial, n, period,
              r->period_s);
    }
    infeasible += !r->feasible;
    contended += r->period_s > r->uncontended_s;
    cost_result_free(r);
    plan_free(p);
  }
  fprintf(stderr, "  (%s: %d of 200 plans stream from DRAM, %d contended) ", chip_file, infeasible, contended);
  CU_ASSERT_EQUAL(mismatches, 0);
  CU_ASSERT(infeasible > 0); /* the DRAM streams took part */
  CU_ASSERT(contended > 0);  /* and contention */
  free(layers);
  free(cores);
  free(stage_s);
  free(stage_mem);
  cost_model_free(m);
  graph_free(g);
  chip_free(c);
}

static void cost_model_period_should_equal_cost_evaluate_bit_for_bit_on_random_plans(void) {
  rng_state = UINT64_C(0x2545f4914f6cdd1d);
  check_period_equals_evaluate("platforms/mesh8x8.json");
  check_period_equals_evaluate("platforms/mesh4x4.json");
}

/* ---- names ------------------------------------------------------------------------------------- */

static void bindings_and_limiters_should_have_their_documented_names(void) {
  CU_ASSERT_STRING_EQUAL(cost_binding_name(COST_BIND_COMPUTE), "compute");
  CU_ASSERT_STRING_EQUAL(cost_binding_name(COST_BIND_DRAM), "dram");
  CU_ASSERT_STRING_EQUAL(cost_binding_name(COST_BIND_SEND), "send");
  CU_ASSERT_STRING_EQUAL(cost_binding_name(COST_BIND_LINK), "link");
  CU_ASSERT_STRING_EQUAL(cost_binding_name(COST_BIND_PORT), "port");
  /* work F / speed = 1 s in each; the all-gathers are compute_s - 1 */
  cost_stage s = {.flops = 1e9, .work = 1e9, .speed = 1e9};
  s.compute_s = 1.2, s.dram_s = 0.5, s.send_s = 1.8; /* send 1.8 > 1.7: the Sends */
  CU_ASSERT_STRING_EQUAL(cost_stage_limiter(&s), "send");
  s.send_s = 1.7; /* not above the rest: work 1 > dram 0.5 > gather 0.2 */
  CU_ASSERT_STRING_EQUAL(cost_stage_limiter(&s), "compute");
  s.compute_s = 2.5; /* gather 1.5 > work 1 > dram 0.5 */
  CU_ASSERT_STRING_EQUAL(cost_stage_limiter(&s), "gather");
  s.dram_s = 1.6; /* dram 1.6 > gather 1.5 > work 1 */
  CU_ASSERT_STRING_EQUAL(cost_stage_limiter(&s), "dram");
  s.compute_s = 1.1, s.dram_s = 0.9; /* dram 0.9 below the work: compute */
  CU_ASSERT_STRING_EQUAL(cost_stage_limiter(&s), "compute");
}

/* ---- errors ------------------------------------------------------------------------------------ */

static void cost_evaluate_should_refuse_a_plan_for_another_graph(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP2_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new((int[]){1, 1}, 2, 2, &p, &err), MP_OK); /* two layers, not three */
  cost_result *r = NULL;
  CU_ASSERT_EQUAL(cost_evaluate(g, c, p, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "g.json: plan: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "3 layers"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

static void cost_evaluate_should_refuse_a_plan_for_another_chip(void) {
  graph *g = testutil_graph_text(GRAPH_TEXT);
  chip *c = testutil_chip_text(CHIP3_TEXT);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new((int[]){1, 2}, 2, 3, &p, &err), MP_OK); /* two cores, not three */
  cost_result *r = NULL;
  CU_ASSERT_EQUAL(cost_evaluate(g, c, p, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(r);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "g.json: plan: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "on 2 cores"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "the chip 3 cores"));
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* The reads' phases wrap by cost_wrap instead of fmod: the same bits on a million draws of periods from
 * 1 ns to 1 ms and multiples of them up to 2 000 periods, exact multiples and their neighbours included,
 * where the division rounds the quotient one off. */
static void cost_wrap_should_equal_fmod_to_the_last_bit(void) {
  uint64_t z = 0x9e3779b97f4a7c15u;
  long differ = 0;
  for (int i = 0; i < 1000000; i++) {
    double u[3];
    for (int k = 0; k < 3; k++) {
      z ^= z << 13, z ^= z >> 7, z ^= z << 17;
      u[k] = (double)(z >> 11) / 9007199254740992.0;
    }
    double T = 1e-3 * exp(-13.8 * u[0]), k = floor(2000 * u[1]), x = k * T;
    switch (i % 4) {
    case 1: x = nextafter(x, 0); break;
    case 2: x = nextafter(x, INFINITY); break;
    case 3: x = (k + u[2]) * T; break;
    }
    if (!(x >= 0)) x = 0;
    if (cost_wrap(x, T) != fmod(x, T) && differ++ < 3) fprintf(stderr, "  x %.17g T %.17g\n", x, T);
  }
  CU_ASSERT_EQUAL(differ, 0);
}

static CU_TestInfo tests[] = {
    {"cost_wrap_should_equal_fmod_to_the_last_bit", cost_wrap_should_equal_fmod_to_the_last_bit},
    {"cost_should_match_the_hand_count_of_a_two_stage_plan", cost_should_match_the_hand_count_of_a_two_stage_plan},
    {"cost_should_include_all_gathers_and_heterogeneous_groups",
     cost_should_include_all_gathers_and_heterogeneous_groups},
    {"cost_should_weigh_sends_by_the_groups_largest_transfer_factor",
     cost_should_weigh_sends_by_the_groups_largest_transfer_factor},
    {"lower_bound_should_match_the_hand_count", lower_bound_should_match_the_hand_count},
    {"cost_result_json_should_carry_the_stage_figures", cost_result_json_should_carry_the_stage_figures},
    {"a_tensor_read_by_two_later_groups_should_cost_two_sends",
     a_tensor_read_by_two_later_groups_should_cost_two_sends},
    {"each_gathering_segment_should_add_one_hops_latency", each_gathering_segment_should_add_one_hops_latency},
    {"a_dram_stream_should_be_limited_by_its_busiest_link", a_dram_stream_should_be_limited_by_its_busiest_link},
    {"a_stage_whose_activation_exceeds_sram_should_pay_the_spill",
     a_stage_whose_activation_exceeds_sram_should_pay_the_spill},
    {"link_loads_should_equal_the_hand_summed_table", link_loads_should_equal_the_hand_summed_table},
    {"contention_should_stretch_a_shared_link_to_the_hand_solved_fixed_point",
     contention_should_stretch_a_shared_link_to_the_hand_solved_fixed_point},
    {"binding_should_name_what_sets_the_period", binding_should_name_what_sets_the_period},
    {"reads_that_start_together_should_share_the_port_for_their_whole_length",
     reads_that_start_together_should_share_the_port_for_their_whole_length},
    {"cost_model_period_should_equal_cost_evaluate_bit_for_bit_on_random_plans",
     cost_model_period_should_equal_cost_evaluate_bit_for_bit_on_random_plans},
    {"bindings_and_limiters_should_have_their_documented_names",
     bindings_and_limiters_should_have_their_documented_names},
    {"cost_evaluate_should_refuse_a_plan_for_another_graph", cost_evaluate_should_refuse_a_plan_for_another_graph},
    {"cost_evaluate_should_refuse_a_plan_for_another_chip", cost_evaluate_should_refuse_a_plan_for_another_chip},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("cost", tests, argc, argv); }
