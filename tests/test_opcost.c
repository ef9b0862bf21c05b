/* Tests of opcost against closed forms: a GEMM that fills the array runs at peak; one reduction row or
 * output column more pads to the next tile (the time doubles exactly) while one streamed row more does
 * not pad; a depthwise convolution's efficiency is the hand count of its block-diagonal tiles; an
 * elementwise op runs at lanes x clock and a memory-bound one at the SRAM bandwidth; without a core
 * model every op is its flops at peak.  The split over cores is checked against a brute-force search of
 * every grid, and the time against monotonicity in the core count. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "graph.h"
#include "jsonio.h"
#include "opcost.h"
#include "testutil.h"

/* A chip of n x 1 cores with the given core object. */
static chip *chip_with(int n, const char *core) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"t\",\"mesh\":{\"width\":%d,\"height\":1},"
           "\"core\":%s,\"noc\":{\"bandwidth\":1e10,\"latency\":0}}",
           n, core);
  cJSON *root = cJSON_Parse(text);
  chip *c = NULL;
  mp_error err;
  if (chip_from_json(root, "t.json", &c, &err) != MP_OK) fprintf(stderr, "chip_with: %s\n", err.msg);
  cJSON_Delete(root);
  return c;
}

/* One op of the given type reading x (in_bytes) and writing y (out_bytes); dims when g > 0. */
static graph *one_op(const char *type, uint64_t in_bytes, uint64_t out_bytes, uint64_t macs, uint64_t flops,
                     uint64_t weights, uint64_t g, uint64_t m, uint64_t n, uint64_t k) {
  char dims[160] = "", text[1024];
  if (g > 0)
    snprintf(dims, sizeof dims, ",\"dims\":{\"g\":%llu,\"m\":%llu,\"n\":%llu,\"k\":%llu}", (unsigned long long)g,
             (unsigned long long)m, (unsigned long long)n, (unsigned long long)k);
  snprintf(text, sizeof text,
           "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[{\"name\":\"x\",\"bytes\":%llu}],"
           "\"ops\":[{\"name\":\"a\",\"type\":\"%s\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"y\",\"bytes\":%llu}],"
           "\"macs\":%llu,\"flops\":%llu,\"weight_bytes\":%llu%s}]}",
           (unsigned long long)in_bytes, type, (unsigned long long)out_bytes, (unsigned long long)macs,
           (unsigned long long)flops, (unsigned long long)weights, dims);
  cJSON *root = cJSON_Parse(text);
  graph *gr = NULL;
  mp_error err;
  if (graph_from_json(root, "t", &gr, &err) != MP_OK) fprintf(stderr, "one_op: %s\n", err.msg);
  cJSON_Delete(root);
  return gr;
}

/* A 32 x 16 array at 1 GHz (peak 1.024e12 flop/s), 64 lanes; no SRAM term unless given. */
#define ARRAY "\"sram_bytes\":1048576,\"clock_hz\":1e9,\"matrix\":{\"rows\":32,\"cols\":16},\"vector_lanes\":64"

static double work_of(const chip *c, uint64_t g, uint64_t m, uint64_t n, uint64_t k, int cores) {
  graph *gr = one_op("Gemm", 1000, 1000, g * m * n * k, 2 * g * m * n * k, 0, g, m, n, k);
  double w = (double)opcost_op_work(c, &gr->ops[0], cores);
  graph_free(gr);
  return w;
}

static void a_gemm_whose_dims_are_multiples_of_the_array_should_run_at_peak(void) {
  chip *c = chip_with(4, "{" ARRAY "}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->cores[0].flops, 1.024e12);
  /* k = 3 x 32 rows, n = 4 x 16 columns, m = 100 streamed rows: 3 x 4 x 100 cycles of 512 MACs each, on
   * 1, 2 or 4 cores that share the 4 column tiles evenly (3 cores cannot: 2 tiles or 34 rows each) */
  for (int cores = 1; cores <= 4; cores *= 2) {
    graph *gr = one_op("Gemm", 1000, 1000, 100 * 64 * 96, 2 * 100 * 64 * 96, 0, 1, 100, 64, 96);
    opcost_terms t;
    opcost_op_terms(c, &gr->ops[0], cores, &t);
    CU_ASSERT_EQUAL(opcost_op_work(c, &gr->ops[0], cores), gr->ops[0].flops); /* its flops at peak */
    CU_ASSERT_EQUAL(t.cycles, 1200.0 / cores);
    CU_ASSERT_DOUBLE_EQUAL(t.time_s, 1200e-9 / cores, 1e-21);
    graph_free(gr);
  }
  chip_free(c);
}

static void one_reduction_row_or_output_column_more_should_pad_to_the_next_tile(void) {
  chip *c = chip_with(1, "{" ARRAY "}");
  double base = work_of(c, 1, 100, 16, 32, 1); /* one tile, 100 cycles */
  CU_ASSERT_EQUAL(base, 100.0 * 1024);
  CU_ASSERT_EQUAL(work_of(c, 1, 100, 16, 33, 1), 2 * base); /* k = 33 rows: a second tile of 1 row */
  CU_ASSERT_EQUAL(work_of(c, 1, 100, 17, 32, 1), 2 * base); /* n = 17 columns: a second tile of 1 column */
  CU_ASSERT_EQUAL(work_of(c, 1, 101, 16, 32, 1), base * 101 / 100); /* m streams: one cycle more, no padding */
  chip_free(c);
}

/* Depthwise 3x3 over 32 channels, 56 x 56 outputs, on a 32 x 32 array: 9 rows and 1 column a group, so
 * min(32/9, 32/1) = 3 groups side by side per tile, ceil(32/3) = 11 tiles, each streaming 3136 rows.
 * Efficiency = MACs / (cycles x array) = 32 x 9 / (11 x 1024) by hand. */
static void a_depthwise_convolution_should_reach_the_efficiency_of_the_hand_count(void) {
  chip *c = chip_with(1, "{\"sram_bytes\":1048576,\"clock_hz\":1e9,\"matrix\":{\"rows\":32,\"cols\":32}}");
  uint64_t macs = 32ULL * 3136 * 9;
  graph *gr = one_op("Conv", 1000, 1000, macs, 2 * macs, 0, 32, 3136, 1, 9);
  opcost_terms t;
  opcost_op_terms(c, &gr->ops[0], 1, &t);
  CU_ASSERT_EQUAL(t.cycles, 11.0 * 3136);
  double efficiency = (double)gr->ops[0].flops / (double)opcost_op_work(c, &gr->ops[0], 1);
  CU_ASSERT_DOUBLE_EQUAL(efficiency, 32.0 * 9 / (11.0 * 1024), 1e-15);
  graph_free(gr);
  /* a grouped convolution of 4 groups, 16 inputs and 8 outputs each: 2 groups per tile, 2 tiles */
  gr = one_op("Conv", 1000, 1000, 4ULL * 100 * 8 * 16, 2ULL * 4 * 100 * 8 * 16, 0, 4, 100, 8, 16);
  opcost_op_terms(c, &gr->ops[0], 1, &t);
  CU_ASSERT_EQUAL(t.cycles, 2.0 * 100);
  graph_free(gr);
  chip_free(c);
}

static void an_elementwise_op_should_run_at_lanes_times_clock_and_a_memory_bound_one_at_the_sram_bandwidth(void) {
  chip *c = chip_with(2, "{" ARRAY "}");
  graph *add = one_op("Add", 2000000, 2000000, 0, 1000000, 0, 0, 0, 0, 0);
  opcost_terms t;
  opcost_op_terms(c, &add->ops[0], 1, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.time_s, 1e6 / (64 * 1e9), 1e-18); /* 15.625 us */
  opcost_op_terms(c, &add->ops[0], 2, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.time_s, 1e6 / (2 * 64 * 1e9), 1e-18);
  chip_free(c);
  /* 100 GB/s of SRAM: 4 MB moved takes 40 us, more than the 15.6 us of the lanes */
  c = chip_with(2, "{" ARRAY ",\"sram_bandwidth\":1e11}");
  opcost_op_terms(c, &add->ops[0], 1, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.sram_s, 4e6 / 1e11, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(t.time_s, 4e6 / 1e11, 1e-15);
  graph *reshape = one_op("Reshape", 2000000, 2000000, 0, 0, 0, 0, 0, 0, 0);
  opcost_op_terms(c, &reshape->ops[0], 1, &t);
  CU_ASSERT_EQUAL(t.time_s, 0); /* a view moves nothing */
  graph *copy = one_op("Transpose", 2000000, 2000000, 0, 0, 0, 0, 0, 0, 0);
  opcost_op_terms(c, &copy->ops[0], 1, &t);
  CU_ASSERT_DOUBLE_EQUAL(t.time_s, 4e6 / 1e11, 1e-15);
  graph_free(reshape);
  graph_free(copy);
  graph_free(add);
  chip_free(c);
}

static void without_a_core_model_or_for_a_measured_op_the_work_should_be_the_flops(void) {
  chip *plain = chip_with(4, "{\"flops\":1e12,\"sram_bytes\":1024}"), *arr = chip_with(4, "{" ARRAY "}");
  graph *gr = one_op("Conv", 1000, 1000, 32ULL * 3136 * 9, 2ULL * 32 * 3136 * 9 + 5, 0, 32, 3136, 1, 9);
  for (int n = 1; n <= 4; n++) CU_ASSERT_EQUAL(opcost_op_work(plain, &gr->ops[0], n), gr->ops[0].flops);
  CU_ASSERT_NOT_EQUAL(opcost_op_work(arr, &gr->ops[0], 1), gr->ops[0].flops);
  gr->ops[0].measured = 1;
  CU_ASSERT_EQUAL(opcost_op_work(arr, &gr->ops[0], 3), gr->ops[0].flops);
  opcost *o = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(opcost_new(gr, plain, &o, &err), MP_OK);
  CU_ASSERT(opcost_flat(o));
  CU_ASSERT_EQUAL(opcost_range(o, 0, 1, 3), gr->ops[0].flops);
  opcost_free(o);
  graph_free(gr);
  chip_free(plain);
  chip_free(arr);
}

/* The least over every grid of a column groups x floor(c/a) row groups, a = 1..c, by brute force. */
static double grid_brute(uint64_t u, uint64_t m, int cores) {
  double best = INFINITY;
  for (int a = 1; a <= cores; a++) {
    uint64_t rows = (uint64_t)(cores / a);
    double t = (double)((u + (uint64_t)a - 1) / (uint64_t)a) * (double)((m + rows - 1) / rows);
    if (t < best) best = t;
  }
  return best;
}

static void the_split_over_cores_should_be_the_best_grid_and_never_slower_with_more_cores(void) {
  chip *c = chip_with(64, "{" ARRAY "}");
  uint64_t s = 12345;
  for (int trial = 0; trial < 300; trial++) {
    uint64_t v[4];
    for (int i = 0; i < 4; i++) {
      s ^= s << 13, s ^= s >> 7, s ^= s << 17;
      v[i] = 1 + s % (i == 1 ? 500 : 70);
    }
    uint64_t g = v[0], m = v[1], n = v[2], k = v[3], macs = g * m * n * k;
    graph *gr = one_op("Conv", 1000, 1000, macs, 2 * macs, 0, g, m, n, k);
    uint64_t p = k <= 32 && n <= 16 ? (32 / k < 16 / n ? 32 / k : 16 / n) : 1;
    uint64_t u = (g + p - 1) / p * ((n + 15) / 16), tk = (k + 31) / 32;
    double prev = INFINITY;
    for (int cores = 1; cores <= 64; cores++) {
      opcost_terms t;
      opcost_op_terms(c, &gr->ops[0], cores, &t);
      CU_ASSERT_EQUAL(t.cycles, (double)tk * grid_brute(u, m, cores));
      CU_ASSERT(t.time_s <= prev * (1 + 1e-12));
      prev = t.time_s;
    }
    graph_free(gr);
  }
  chip_free(c);
}

static void ranges_should_sum_the_works_and_the_table_should_agree(void) {
  chip *c = chip_with(8, "{" ARRAY ",\"sram_bandwidth\":2e11}");
  graph *g = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/mobilenet_v2.json"), &g, &err), MP_OK);
  opcost *o = NULL, *t = NULL;
  CU_ASSERT_EQUAL_FATAL(opcost_new(g, c, &o, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(opcost_new(g, c, &t, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(opcost_tabulate(t, &err), MP_OK);
  for (int first = 0; first < g->n_ops; first += 7)
    for (int n = 1; first + n <= g->n_ops; n += 5)
      for (int cores = 1; cores <= 8; cores++) {
        uint64_t sum = 0;
        for (int l = first; l < first + n; l++) sum += opcost_op_work(c, &g->ops[l], cores);
        CU_ASSERT_EQUAL(opcost_range(o, first, n, cores), sum);
        CU_ASSERT_EQUAL(opcost_range(t, first, n, cores), sum);
      }
  opcost_free(o);
  opcost_free(t);
  graph_free(g);
  chip_free(c);
}

/* A core model far out of balance (a 65536 x 65536 array at 1 kHz over an SRAM port of 1 byte/s):
 * an op moving 1 GB would take 8.6e21 flop-equivalents, beyond what a work holds; it is capped at
 * 2^53 (the largest flops an op may have), while a small op of the same chip keeps its own work. */
static void an_op_beyond_the_largest_work_should_be_capped_at_it(void) {
  chip *c = chip_with(1, "{\"sram_bytes\":1048576,\"clock_hz\":1e3,\"matrix\":{\"rows\":65536,\"cols\":65536},"
                         "\"sram_bandwidth\":1}");
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  graph *big = one_op("Add", 500000000, 500000000, 0, 1000, 0, 0, 0, 0, 0);
  CU_ASSERT_EQUAL(opcost_op_work(c, &big->ops[0], 1), (uint64_t)OPCOST_MAX_WORK);
  CU_ASSERT_EQUAL(opcost_op_floor(c, &big->ops[0]), (uint64_t)OPCOST_MAX_WORK);
  graph *small = one_op("Add", 100, 100, 0, 10, 0, 0, 0, 0, 0);
  double f = 2.0 * 65536 * 65536 * 1e3; /* 200 bytes at 1 byte/s on a core of peak f */
  CU_ASSERT_EQUAL(opcost_op_work(c, &small->ops[0], 1), (uint64_t)llround(200 * f));
  graph_free(big);
  graph_free(small);
  chip_free(c);
}

static CU_TestInfo tests[] = {
    {"a_gemm_whose_dims_are_multiples_of_the_array_should_run_at_peak",
     a_gemm_whose_dims_are_multiples_of_the_array_should_run_at_peak},
    {"one_reduction_row_or_output_column_more_should_pad_to_the_next_tile",
     one_reduction_row_or_output_column_more_should_pad_to_the_next_tile},
    {"a_depthwise_convolution_should_reach_the_efficiency_of_the_hand_count",
     a_depthwise_convolution_should_reach_the_efficiency_of_the_hand_count},
    {"an_elementwise_op_should_run_at_lanes_times_clock_and_a_memory_bound_one_at_the_sram_bandwidth",
     an_elementwise_op_should_run_at_lanes_times_clock_and_a_memory_bound_one_at_the_sram_bandwidth},
    {"without_a_core_model_or_for_a_measured_op_the_work_should_be_the_flops",
     without_a_core_model_or_for_a_measured_op_the_work_should_be_the_flops},
    {"the_split_over_cores_should_be_the_best_grid_and_never_slower_with_more_cores",
     the_split_over_cores_should_be_the_best_grid_and_never_slower_with_more_cores},
    {"ranges_should_sum_the_works_and_the_table_should_agree", ranges_should_sum_the_works_and_the_table_should_agree},
    {"an_op_beyond_the_largest_work_should_be_capped_at_it", an_op_beyond_the_largest_work_should_be_capped_at_it},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("opcost", tests, argc, argv); }
