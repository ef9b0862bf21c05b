/* Tests of binds: what binds a stage (by hand-made stage figures: each word, and the ties), what binds
 * a run (a stage's word, or a NoC link or DRAM port when its load sets the period), the counts per word,
 * and the JSON. */
#include <string.h>

#include "binds.h"
#include "testutil.h"

/* A stage of F flops on a group of speed 1e12 whose compute adds gather_s of all-gathers. */
static cost_stage stage(double flops, double gather_s, double dram_s, double send_s) {
  cost_stage s;
  memset(&s, 0, sizeof s);
  s.n_cores = 2;
  s.speed = 1e12;
  s.flops = s.work = flops; /* no core model: the work is the flops */
  s.compute_s = flops / 1e12 + gather_s;
  s.dram_s = dram_s;
  s.send_s = send_s;
  s.time_s = s.compute_s + s.dram_s > send_s ? s.compute_s + s.dram_s : send_s;
  return s;
}

static void each_stage_should_be_bound_by_the_largest_part_of_its_time(void) {
  static const struct {
    double flops, gather, dram, send;
    binds_kind want;
  } cases[] = {
      {3e6, 1e-6, 1e-6, 1e-6, BINDS_COMPUTE}, /* work 3 us */
      {1e6, 3e-6, 1e-6, 1e-6, BINDS_GATHER},  /* all-gathers 3 us */
      {1e6, 1e-6, 3e-6, 1e-6, BINDS_SRAM},    /* DRAM waits 3 us */
      {1e6, 1e-6, 1e-6, 4e-6, BINDS_SEND},    /* Sends 4 us > 3 us of the rest */
      {1e6, 1e-6, 1e-6, 3e-6, BINDS_COMPUTE}, /* Sends equal to the rest: not the Sends; work ties: compute */
      {1e6, 1e-6, 0, 0, BINDS_COMPUTE},       /* work and all-gathers tie: compute */
      {1e6, 0, 1e-6, 0, BINDS_COMPUTE},       /* work and DRAM tie: compute */
      {0, 2e-6, 2e-6, 0, BINDS_GATHER},       /* all-gathers and DRAM tie: all-gather */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    cost_stage s = stage(cases[i].flops, cases[i].gather, cases[i].dram, cases[i].send);
    CU_ASSERT_EQUAL(binds_stage(&s), cases[i].want);
    binds_parts p;
    binds_stage_parts(&s, &p);
    CU_ASSERT_DOUBLE_EQUAL(p.work_s, cases[i].flops / 1e12, 1e-18);
    CU_ASSERT_DOUBLE_EQUAL(p.gather_s, cases[i].gather, 1e-15);
    CU_ASSERT_DOUBLE_EQUAL(p.dram_s, cases[i].dram, 0);
    CU_ASSERT_DOUBLE_EQUAL(p.send_s, cases[i].send, 0);
  }
  CU_ASSERT_STRING_EQUAL(binds_name(BINDS_GATHER), "all-gather");
  CU_ASSERT_STRING_EQUAL(binds_name(BINDS_SRAM), "sram");
  CU_ASSERT_STRING_EQUAL(binds_name(BINDS_NOC), "noc");
  CU_ASSERT_STRING_EQUAL(binds_name(BINDS_DRAM), "dram");
  CU_ASSERT_STRING_EQUAL(binds_name((binds_kind)99), "?");
}

static void a_run_should_be_bound_by_its_slowest_stage_or_the_link_that_sets_the_period(void) {
  cost_stage st[3] = {stage(3e6, 0, 0, 0), stage(1e6, 0, 5e-6, 0), stage(1e6, 0, 0, 2e-6)};
  cost_result r;
  memset(&r, 0, sizeof r);
  r.n_stages = 3;
  r.stages = st;
  r.bottleneck_stage = 1;
  r.binding = COST_BIND_DRAM;
  r.busiest_link = 7;
  binds_verdict v;
  binds_run(&r, &v);
  CU_ASSERT(v.kind == BINDS_SRAM && v.stage == 1 && v.link == -1);
  r.binding = COST_BIND_LINK;
  binds_run(&r, &v);
  CU_ASSERT(v.kind == BINDS_NOC && v.stage == -1 && v.link == 7);
  r.binding = COST_BIND_PORT;
  binds_run(&r, &v);
  CU_ASSERT(v.kind == BINDS_DRAM && v.stage == -1 && v.link == 7);
  int counts[BINDS_KINDS];
  binds_count(&r, counts);
  CU_ASSERT(counts[BINDS_COMPUTE] == 1 && counts[BINDS_SRAM] == 1 && counts[BINDS_SEND] == 1);
  CU_ASSERT(counts[BINDS_GATHER] == 0 && counts[BINDS_NOC] == 0 && counts[BINDS_DRAM] == 0);
  /* the JSON of a stage and of the run (bound by its stage 1: no link to name, so no chip needed) */
  r.binding = COST_BIND_DRAM;
  cJSON *o = cJSON_CreateObject();
  CU_ASSERT_FATAL(binds_add_stage_json(o, &st[2]));
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(o, "binds")), "send");
  CU_ASSERT_DOUBLE_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "binds_parts"), "send_s")), 2e-6,
                         0);
  cJSON_Delete(o);
  o = cJSON_CreateObject();
  CU_ASSERT_FATAL(binds_add_run_json(o, &r, NULL));
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(o, "binds")), "sram");
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "binds_stage")), 1);
  CU_ASSERT(cJSON_IsNull(cJSON_GetObjectItem(o, "binds_link")));
  const cJSON *by = cJSON_GetObjectItem(o, "stages_binding");
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(by, "compute")), 1);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(by, "all-gather")), 0);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(by, "sram")), 1);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(by, "noc")); /* a run word, never a stage's */
  cJSON_Delete(o);
}

static CU_TestInfo tests[] = {
    {"each_stage_should_be_bound_by_the_largest_part_of_its_time",
     each_stage_should_be_bound_by_the_largest_part_of_its_time},
    {"a_run_should_be_bound_by_its_slowest_stage_or_the_link_that_sets_the_period",
     a_run_should_be_bound_by_its_slowest_stage_or_the_link_that_sets_the_period},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("binds", tests, argc, argv); }
