/* test_train: training figures against hand counts - the backward work per operator type, the bytes per
 * parameter of each optimizer, a hand-drawn graph's planned activation memory (every lifetime and block
 * derived in the comments), and the analytical model of a trained plan against its closed forms. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chip.h"
#include "jsonio.h"
#include "plan.h"
#include "testutil.h"
#include "train.h"

/* x -> A (Conv) -> a -> B (Relu) -> b -> C (Conv) -> c;  D = Add(b, c) -> d -> E (Gemm) -> y */
static const char hand_graph[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"hand\",\"inputs\":[{\"name\":\"x\",\"bytes\":100}],"
    "\"ops\":["
    "{\"name\":\"A\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"a\",\"bytes\":400}],"
    "\"macs\":1000,\"flops\":2100,\"weight_bytes\":64},"
    "{\"name\":\"B\",\"type\":\"Relu\",\"inputs\":[\"a\"],\"outputs\":[{\"name\":\"b\",\"bytes\":400}],"
    "\"macs\":0,\"flops\":200,\"weight_bytes\":0},"
    "{\"name\":\"C\",\"type\":\"Conv\",\"inputs\":[\"b\"],\"outputs\":[{\"name\":\"c\",\"bytes\":400}],"
    "\"macs\":500,\"flops\":1000,\"weight_bytes\":32},"
    "{\"name\":\"D\",\"type\":\"Add\",\"inputs\":[\"b\",\"c\"],\"outputs\":[{\"name\":\"d\",\"bytes\":400}],"
    "\"macs\":0,\"flops\":200,\"weight_bytes\":0},"
    "{\"name\":\"E\",\"type\":\"Gemm\",\"inputs\":[\"d\"],\"outputs\":[{\"name\":\"y\",\"bytes\":40}],"
    "\"macs\":300,\"flops\":600,\"weight_bytes\":128}]}";

static void train_layers_should_charge_backward_work_by_operator_type(void) {
  graph *g = testutil_graph_text(hand_graph);
  train *t = NULL;
  mp_error err;
  CU_ASSERT_FATAL(g && train_new(g, NULL, &t, &err) == MP_OK);
  /* A reads the graph input only: no input-gradient; its weight-gradient is 2 x MACs */
  static const uint64_t dx[5] = {0, 200, 1000, 200, 600}, dw[5] = {2000, 0, 1000, 0, 600};
  static const uint64_t params[5] = {32, 0, 16, 0, 64}, grad[5] = {0, 400, 400, 800, 400};
  static const int inplace[5] = {0, 1, 0, 1, 0};
  for (int j = 0; j < 5; j++) {
    CU_ASSERT_EQUAL(t->layers[j].dx_flops, dx[j]);
    CU_ASSERT_EQUAL(t->layers[j].dw_flops, dw[j]);
    CU_ASSERT_EQUAL(t->layers[j].params, params[j]);
    CU_ASSERT_EQUAL(t->layers[j].grad_bytes, grad[j]);
    CU_ASSERT_EQUAL(t->layers[j].inplace, inplace[j]);
  }
  CU_ASSERT_EQUAL(t->elem_bytes, 2); /* no dtype in the file: fp16 */
  CU_ASSERT_EQUAL(t->master, 1);
  train_free(t);
  graph_free(g);
}

static void train_should_hold_weights_gradients_master_and_optimizer_states(void) {
  static const char *const dtype[3] = {"fp16", "fp32", "int8"};
  static const uint64_t per_param[3][3] = {{8, 12, 16}, {8, 12, 16}, {6, 10, 14}}; /* sgd, momentum, adam */
  static const int update[3][3] = {{3, 5, 13}, {2, 4, 12}, {3, 5, 13}};
  for (int d = 0; d < 3; d++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"w\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
             "\"ops\":[{\"name\":\"L\",\"type\":\"Gemm\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":8}],"
             "\"macs\":4,\"flops\":8,\"weight_bytes\":64}],\"source\":{\"dtype\":\"%s\"}}",
             dtype[d]);
    graph *g = testutil_graph_text(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    for (int o = 0; o < 3; o++) {
      train_options opt;
      train_options_default(&opt);
      opt.optimizer = (train_optimizer)o;
      train *t = NULL;
      train_range r;
      mp_error err;
      CU_ASSERT_FATAL(train_new(g, &opt, &t, &err) == MP_OK && train_range_of(t, 0, 1, &r, &err) == MP_OK);
      CU_ASSERT_EQUAL(t->bytes_per_param, per_param[d][o]);
      CU_ASSERT_EQUAL(t->update_flops_per_param, update[d][o]);
      CU_ASSERT_EQUAL(r.params, 64 / (uint64_t)t->elem_bytes);
      CU_ASSERT_EQUAL(r.static_bytes, r.params * per_param[d][o]);
      CU_ASSERT_EQUAL(r.update_flops, r.params * (uint64_t)update[d][o]);
      train_free(t);
    }
    graph_free(g);
  }
}

static void train_planner_should_match_the_hand_count(void) {
  graph *g = testutil_graph_text(hand_graph);
  train_options o;
  train_options_default(&o);
  train *t = NULL, *rc = NULL;
  mp_error err;
  CU_ASSERT_FATAL(g && train_new(g, &o, &t, &err) == MP_OK);
  o.recompute = 1;
  CU_ASSERT_FATAL(train_new(g, &o, &rc, &err) == MP_OK);
  train_range r;
  /* The whole graph, steps F(A..E) = 0..4, B(E..A) = 5..9; bytes [birth, death]:
   *   x 100 [0,9], a 400 [0,8], b 400 [1,7], c 400 [2,6], d 400 [3,5], y 40 [4,4];
   *   dy 40 [5,5], dd 400 [5,6], dc 400 [6,7], db 400 [6,8] over dd in place (Add), da 400 [8,9] over db (Relu).
   * Blocks: x; a; b; c; d; y's 40 (then dy's); dd's 400 (then db, da in place); dc takes d's freed block:
   * 100 + 4 x 400 + 40 + 400 = 2140.  The stash (alive across the end of the forward): x a b c d = 1700. */
  CU_ASSERT_EQUAL_FATAL(train_range_of(t, 0, 5, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.stash_bytes, 1700);
  CU_ASSERT_EQUAL(r.peak_bytes, 2140);
  CU_ASSERT_EQUAL(r.naive_bytes, 3380);
  CU_ASSERT_EQUAL(r.live_bytes, 2140);
  CU_ASSERT_EQUAL(r.inplace, 2);
  CU_ASSERT_EQUAL(r.fwd_flops, 4100);
  CU_ASSERT_EQUAL(r.bwd_flops, 5600);
  CU_ASSERT_EQUAL(r.recompute_flops, 0);
  CU_ASSERT_EQUAL(r.fwd_gather, 1640);
  CU_ASSERT_EQUAL(r.bwd_gather, 2000);
  CU_ASSERT_EQUAL(r.send_bytes, 0);
  CU_ASSERT_EQUAL(r.recv_bytes, 0);
  /* Recompute: F 0..4, RF 5..9, B 10..14.  The first forward frees as it goes and works in place (b over
   * a, d over b); the recomputed a b c d live [5..9 from RF, until their lowest reader's backward]; only x
   * is stashed.  The same 2140 at the backward's start (x, RF a b c d... less d freed, dy, dd), 4980 naive. */
  CU_ASSERT_EQUAL_FATAL(train_range_of(rc, 0, 5, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.stash_bytes, 100);
  CU_ASSERT_EQUAL(r.peak_bytes, 2140);
  CU_ASSERT_EQUAL(r.naive_bytes, 4980);
  CU_ASSERT_EQUAL(r.inplace, 4);
  CU_ASSERT_EQUAL(r.recompute_flops, 4100);
  /* Stage A..B: x [0,3], a [0,2], b [1,1] (sent), db [2,2] (received), da [2,3] over db: 900; stash x a. */
  CU_ASSERT_EQUAL_FATAL(train_range_of(t, 0, 2, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.stash_bytes, 500);
  CU_ASSERT_EQUAL(r.peak_bytes, 900);
  CU_ASSERT_EQUAL(r.naive_bytes, 1700);
  CU_ASSERT_EQUAL(r.send_bytes, 400);
  CU_ASSERT_EQUAL(r.recv_bytes, 0);
  /* Stage C..E receives b and sends its gradient back; stashes b c d. */
  CU_ASSERT_EQUAL_FATAL(train_range_of(t, 2, 3, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.stash_bytes, 1200);
  CU_ASSERT_EQUAL(r.recv_bytes, 400);
  CU_ASSERT_EQUAL(r.send_bytes, 0);
  train_range again;
  CU_ASSERT_EQUAL(train_range_of(t, 2, 3, &again, &err), MP_OK); /* from the memo: the same */
  CU_ASSERT_EQUAL(memcmp(&again, &r, sizeof r), 0);
  train_free(t);
  train_free(rc);
  graph_free(g);
}

static void train_should_reject_an_empty_minibatch_and_parse_names(void) {
  graph *g = testutil_graph_text(hand_graph);
  train_options o;
  train_options_default(&o);
  o.microbatches = 0;
  train *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(train_new(g, &o, &t, &err), MP_USAGE);
  CU_ASSERT_PTR_NULL(t);
  CU_ASSERT_EQUAL(train_optimizer_parse("momentum"), TRAIN_MOMENTUM);
  CU_ASSERT_EQUAL(train_optimizer_parse("lamb"), -1);
  CU_ASSERT_EQUAL(train_schedule_parse("gpipe"), TRAIN_GPIPE);
  CU_ASSERT_EQUAL(train_schedule_parse("1f1b"), TRAIN_1F1B);
  CU_ASSERT_EQUAL(train_schedule_parse("zb"), TRAIN_ZB);
  CU_ASSERT_EQUAL(train_schedule_parse("zb-h1"), -1);
  CU_ASSERT_STRING_EQUAL(train_schedule_name(TRAIN_1F1B), "1f1b");
  CU_ASSERT_STRING_EQUAL(train_schedule_name(TRAIN_ZB), "zb");
  o.schedule = TRAIN_1F1B;
  CU_ASSERT_EQUAL(train_hold_of(&o, 0, 2).passes, 2);
  o.schedule = TRAIN_ZB;
  CU_ASSERT_EQUAL(train_hold_of(&o, 0, 2).passes, 3); /* W streams on its own */
  graph_free(g);
}

/* A chain of p equal stages on a line of p cores, one core each: a zero-work stem (its input is the
 * graph's, so it makes no input-gradient) and p equal layers, the stem in the first stage. */
static graph *equal_chain(int p) {
  char text[8192];
  int n = snprintf(text, sizeof text,
                   "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"chain\","
                   "\"inputs\":[{\"name\":\"x\",\"bytes\":1000}],\"ops\":[{\"name\":\"stem\",\"type\":\"Identity\","
                   "\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t0\",\"bytes\":1000}],\"macs\":0,\"flops\":0,"
                   "\"weight_bytes\":0}");
  for (int i = 0; i < p; i++)
    n += snprintf(text + n, sizeof text - (size_t)n,
                  ",{\"name\":\"L%d\",\"type\":\"Gemm\",\"inputs\":[\"t%d\"],\"outputs\":[{\"name\":\"t%d\","
                  "\"bytes\":1000}],\"macs\":500000,\"flops\":1000000,\"weight_bytes\":2000}",
                  i, i, i + 1);
  snprintf(text + n, sizeof text - (size_t)n, "]}");
  return testutil_graph_text(text);
}

static void train_model_should_give_the_closed_forms_on_an_equal_chain(void) {
  enum { P = 4 };
  graph *g = equal_chain(P);
  chip *c = testutil_chip_text("{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line\",\"mesh\":{\"width\":4,"
                      "\"height\":1},\"core\":{\"flops\":1e9,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e15,"
                      "\"latency\":0}}");
  CU_ASSERT_FATAL(g && c);
  int arr[P] = {2, 1, 1, 1};
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_FATAL(plan_new(arr, P, P + 1, &p, &err) == MP_OK);
  for (int sched = 0; sched < 3; sched++) {
    train_options o;
    train_options_default(&o);
    o.schedule = (train_schedule)sched;
    o.microbatches = 6;
    train *t = NULL;
    train_result *r = NULL;
    CU_ASSERT_FATAL(train_new(g, &o, &t, &err) == MP_OK && train_evaluate(t, c, p, &r, &err) == MP_OK);
    /* t_f = 1e6 flops / 1e9 flop/s, t_b twice that (input and weight gradients, 1e-3 each); the update
     * 1000 parameters x 13 flops (adam, fp16).  zb's fill and drain: (p - 1)(t_f + max(t_B - t_W, 0)). */
    double tf = 1e-3, tb = 2e-3, tu = 1000 * 13 / 1e9, M = 6;
    double fb = sched == TRAIN_ZB ? M * (tf + tb) + (P - 1) * tf : (M + P - 1) * (tf + tb);
    for (int i = 0; i < P; i++) {
      CU_ASSERT_DOUBLE_EQUAL(r->stages[i].fwd_s, tf, 1e-15);
      CU_ASSERT_DOUBLE_EQUAL(r->stages[i].bwd_s, tb, 1e-15);
      CU_ASSERT_DOUBLE_EQUAL(r->stages[i].w_s, sched == TRAIN_ZB ? tb / 2 : 0, 1e-15);
    }
    CU_ASSERT_DOUBLE_EQUAL(r->period_s, tf + tb, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(r->minibatch_s, fb + tu, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r->bubble, 1 - M * P * (tf + tb) / (P * fb), 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r->samples_per_s, M / (fb + tu), 1e-6);
    for (int i = 0; i < P; i++) {
      /* zb: each layer's W reads its input and its output's gradient (2 x 1000 bytes), stage 0 stashes
       * t0 and t1 (2000), the others their input (1000).  By hand from sim_schedule.h's orders: stage 0
       * peaks after F3 with 4 stashes (3 x 2000, against 2 x 2000 + 2000 after B0), stage 1 after B1 with
       * 2 + 2 (1000 + 4000), stage 2 after B2 with 1 + 3, stage 3 after B3 with 0 + 4 (8000 bytes) */
      static const int zb_held[P][2] = {{4, 0}, {2, 2}, {1, 3}, {0, 4}};
      int held = sched == TRAIN_GPIPE ? 6 : sched == TRAIN_ZB ? zb_held[i][0] : P - i;
      int w = sched == TRAIN_ZB ? zb_held[i][1] : 0;
      CU_ASSERT_EQUAL(r->stages[i].in_flight, held);
      CU_ASSERT_EQUAL(r->stages[i].w_pending, w);
      const train_range *rg = &r->stages[i].r;
      CU_ASSERT_EQUAL(rg->wstash_bytes, 2000);
      CU_ASSERT_DOUBLE_EQUAL(r->stages[i].cs.mem_bytes,
                             (double)rg->static_bytes + (held > 1 ? held - 1 : 0) * (double)rg->stash_bytes +
                                 w * (double)rg->wstash_bytes + (double)rg->peak_bytes,
                             1e-6);
    }
    cJSON *j = train_result_to_json(t, r);
    CU_ASSERT_PTR_NOT_NULL(j);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "schedule")->valuestring, train_schedule_name((train_schedule)sched));
    cJSON_Delete(j);
    train_result_free(r);
    train_free(t);
  }
  plan_free(p);
  chip_free(c);
  graph_free(g);
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"train_layers_should_charge_backward_work_by_operator_type", train_layers_should_charge_backward_work_by_operator_type},
      {"train_should_hold_weights_gradients_master_and_optimizer_states",
       train_should_hold_weights_gradients_master_and_optimizer_states},
      {"train_planner_should_match_the_hand_count", train_planner_should_match_the_hand_count},
      {"train_should_reject_an_empty_minibatch_and_parse_names", train_should_reject_an_empty_minibatch_and_parse_names},
      {"train_model_should_give_the_closed_forms_on_an_equal_chain",
       train_model_should_give_the_closed_forms_on_an_equal_chain},
      CU_TEST_INFO_NULL};
  return testutil_run("train", tests, argc, argv);
}
