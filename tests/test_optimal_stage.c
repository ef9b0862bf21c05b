/* Tests of optimal_stage.c: S(l,r), the counts of cores on which a stage is within a threshold, against
 * a scan of every count with optimal_time_at, on real graphs whose stages overflow SRAM (the DRAM term
 * decides count by count there, and optimal_stage_counts skips and takes whole ranges of counts by
 * bounds), in both relaxations, on a chip without and one with a core model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "optimal_int.h"
#include "testgen.h"
#include "testutil.h"

/* Every stage l..r of g (up to max_len layers, every step-th start) in both relaxations, at thresholds
 * taken from the stage's own times at random counts (exactly, a hair either side, and far off) and
 * random rooms: the runs must be exactly the counts up to the room whose time is within T, and -1 only
 * when no count at all is.  Returns how many stages had counts that overflow within T, for the caller
 * to check that the bounds were exercised. */
static long check_against_a_scan(const graph *g, const chip *c, int max_len, int step) {
  opt o;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(optimal_opt_init(&o, g, c, &err), MP_OK);
  int C = o.C, *want = malloc(((size_t)C + 2) * sizeof *want);
  CU_ASSERT_PTR_NOT_NULL_FATAL(want);
  long streamed = 0, mismatches = 0;
  static const double factor[] = {1, 1 - 1e-12, 1 + 1e-12, 0.5, 2, 1.1};
  for (int kind = OPT_LOW; kind <= OPT_HIGH; kind++) {
    o.kind = kind;
    for (int l = 0; l < o.L; l += step) {
      figs s = {0};
      for (int r = l; r < o.L && r < l + max_len; r++) {
        optimal_figs_add(&o, &s, l, r);
        for (int q = 0; q < 6; q++) {
          double T = optimal_time_at(&o, &s, 1 + testgen_below(C)) * factor[q];
          int room = q == 5 ? testgen_below(C + 1) : C, any = 0;
          for (int k = 1; k <= C; k++) {
            want[k] = optimal_time_at(&o, &s, k) <= T;
            any |= want[k];
          }
          int n = optimal_stage_counts(&o, &s, T, room), at = 1, ok = 1;
          if (n < 0) {
            ok = !any;
          } else {
            for (int i = 0; i < n; i++) {
              for (; at < o.runs[2 * i]; at++) ok &= !want[at] || at > room;
              for (; at <= o.runs[2 * i + 1]; at++) ok &= want[at] && at <= room;
            }
            for (; at <= C; at++) ok &= !want[at] || at > room;
            for (int i = 0; i < n && ok; i++)
              if (cost_mem_bytes((double)s.weights, (double)s.max_act, o.runs[2 * i]) > o.S) streamed++;
          }
          if (!ok && mismatches++ < 5)
            fprintf(stderr, "  kind %d, layers %d..%d, T %.17g, room %d: %d runs, not the scan's\n", kind, l, r, T,
                    room, n);
        }
      }
    }
  }
  CU_ASSERT_EQUAL(mismatches, 0);
  free(want);
  optimal_opt_free(&o);
  return streamed;
}

static void stage_counts_should_equal_a_scan_of_every_count_on_a_32x32_chip_whose_stages_stream(void) {
  graph *g = NULL;
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/resnet50.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh32x32.json"), &c, &err), MP_OK);
  testgen_seed(7);
  CU_ASSERT(check_against_a_scan(g, c, 12, 3) > 100);
  graph_free(g);
  chip_free(c);
}

/* The same on a chip with a core model (the counts within T in compute come in runs there), its SRAM cut
 * to 256 KiB so that the transformer's stages stream. */
static void stage_counts_should_equal_a_scan_of_every_count_on_a_chip_with_a_core_model(void) {
  char *text = NULL;
  size_t len = 0;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(testutil_src("platforms/mesh8x8_fp16.json"), &text, &len, &err), MP_OK);
  char *at = strstr(text, "\"sram_bytes\": 2097152");
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  memcpy(at, "\"sram_bytes\":  262144", strlen("\"sram_bytes\":  262144"));
  chip *c = testutil_chip_text(text);
  graph *g = NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/transformer_encoder.json"), &g, &err), MP_OK);
  testgen_seed(8);
  CU_ASSERT(check_against_a_scan(g, c, 10, 1) > 100);
  graph_free(g);
  chip_free(c);
  free(text);
}

static CU_TestInfo tests[] = {
    {"stage_counts_should_equal_a_scan_of_every_count_on_a_32x32_chip_whose_stages_stream",
     stage_counts_should_equal_a_scan_of_every_count_on_a_32x32_chip_whose_stages_stream},
    {"stage_counts_should_equal_a_scan_of_every_count_on_a_chip_with_a_core_model",
     stage_counts_should_equal_a_scan_of_every_count_on_a_chip_with_a_core_model},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("optimal_stage", tests, argc, argv); }
