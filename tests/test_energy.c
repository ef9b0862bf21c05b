/* Tests of energy against hand sums: the dynamic energy of counts is each count times its figure; a
 * stage of the model spends its arithmetic, SRAM bytes, byte-hops (all-gather along its chain, Sends,
 * DRAM streams) and DRAM bytes, and its cores leak over the period; the summary divides by the batch. */
#include <math.h>

#include "chip.h"
#include "cost.h"
#include "energy.h"
#include "testutil.h"

static const chip_energy figures = {.mac_pj = 0.5,
                                    .vector_op_pj = 0.25,
                                    .sram_pj_per_byte = 0.125,
                                    .noc_pj_per_byte_hop = 2,
                                    .dram_pj_per_byte = 16,
                                    .static_w_per_core = 0.01};

static int close_rel(double a, double b) { return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b)); }

static void the_dynamic_energy_should_be_each_count_times_its_figure(void) {
  energy_parts e;
  energy_dynamic(&figures, 1000, 300, 4000, 50, 8, &e);
  CU_ASSERT(close_rel(e.compute, (1000 * 0.5 + 300 * 0.25) * 1e-12));
  CU_ASSERT(close_rel(e.sram, 500e-12));
  CU_ASSERT(close_rel(e.noc, 100e-12));
  CU_ASSERT(close_rel(e.dram, 128e-12));
  CU_ASSERT_EQUAL(e.leak, 0);
  CU_ASSERT(close_rel(energy_sum(&e), (575 + 500 + 100 + 128) * 1e-12));
  /* negative other work (more MACs than flops / 2, as in a hand-written graph) costs nothing */
  energy_dynamic(&figures, 1000, -10, 0, 0, 0, &e);
  CU_ASSERT(close_rel(e.compute, 500e-12));
}

static void a_stage_should_spend_its_counts_and_leak_over_the_period(void) {
  chip c = {.energy = figures, .has_energy = 1};
  cost_stage s = {.n_cores = 3,
                  .macs = 2000,
                  .flops = 4100, /* 100 flops off the array */
                  .sram_traffic = 800,
                  .gather_bytes = 40, /* all-gathered over 3 cores: 80 byte-hops */
                  .send_byte_hops = 60,
                  .dram_byte_hops = 10,
                  .dram_in_bytes = 5,
                  .dram_out_bytes = 3};
  energy_parts e;
  energy_of_stage(&c, &s, 1e-6, &e);
  CU_ASSERT(close_rel(e.compute, (2000 * 0.5 + 100 * 0.25) * 1e-12));
  CU_ASSERT(close_rel(e.sram, 100e-12));
  CU_ASSERT(close_rel(e.noc, (80 + 60 + 10) * 2e-12));
  CU_ASSERT(close_rel(e.dram, 8 * 16e-12));
  CU_ASSERT(close_rel(e.leak, 0.01 * 3 * 1e-6));
  /* one core gathers nothing */
  s.n_cores = 1;
  energy_of_stage(&c, &s, 1e-6, &e);
  CU_ASSERT(close_rel(e.noc, (60 + 10) * 2e-12));
  CU_ASSERT(close_rel(e.leak, 0.01 * 1e-6));
}

static void the_summary_should_divide_a_micro_batch_by_its_samples(void) {
  energy_parts mb = {.compute = 4e-6, .sram = 2e-6, .noc = 1e-6, .dram = 0.5e-6, .leak = 0.5e-6};
  energy_summary s;
  energy_summarise(&mb, 2e-3, 4, 8e6, &s);
  CU_ASSERT(close_rel(s.j_per_sample, 2e-6));
  CU_ASSERT(close_rel(s.per_sample.compute, 1e-6));
  CU_ASSERT(close_rel(s.per_sample.leak, 0.125e-6));
  CU_ASSERT(close_rel(s.power_w, 8e-6 / 2e-3));
  CU_ASSERT(close_rel(s.samples_per_j, 4 / 8e-6));
  CU_ASSERT(close_rel(s.tops_per_w, 8e6 / 8e-6 / 1e12));
  /* nothing spent: no division by zero */
  energy_parts none = {0, 0, 0, 0, 0};
  energy_summarise(&none, 0, 1, 8e6, &s);
  CU_ASSERT(s.j_per_sample == 0 && s.power_w == 0 && s.samples_per_j == 0 && s.tops_per_w == 0);
}

static CU_TestInfo tests[] = {
    {"the_dynamic_energy_should_be_each_count_times_its_figure", the_dynamic_energy_should_be_each_count_times_its_figure},
    {"a_stage_should_spend_its_counts_and_leak_over_the_period", a_stage_should_spend_its_counts_and_leak_over_the_period},
    {"the_summary_should_divide_a_micro_batch_by_its_samples", the_summary_should_divide_a_micro_batch_by_its_samples},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("energy", tests, argc, argv); }
