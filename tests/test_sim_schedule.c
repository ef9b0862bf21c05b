/* test_sim_schedule: the stage orders of GPipe and 1F1B - every micro-batch's forward once and backward
 * once, the forward first, the stashes held at once as train_in_flight says, and the exact orders of a
 * small case written out by hand. */
#include <stdio.h>
#include <string.h>

#include "sim_schedule.h"
#include "testutil.h"

static void schedules_should_run_each_pass_once_and_hold_what_the_model_says(void) {
  sim_schedule_step order[2 * 40];
  for (int sched = 0; sched < 2; sched++)
    for (int p = 1; p <= 9; p++)
      for (int M = 1; M <= 40; M += 3)
        for (int i = 0; i < p; i++) {
          int n = sim_schedule_order((train_schedule)sched, i, p, M, order);
          CU_ASSERT_EQUAL(n, 2 * M);
          int seen_f[40] = {0}, seen_b[40] = {0}, ok = 1;
          for (int k = 0; k < n; k++) {
            int m = order[k].mb;
            if (m < 0 || m >= M) {
              ok = 0;
              continue;
            }
            if (order[k].backward) {
              ok &= seen_f[m] == 1 && seen_b[m] == 0; /* its own forward came first */
              seen_b[m]++;
            } else {
              ok &= seen_f[m] == 0;
              seen_f[m]++;
            }
          }
          CU_ASSERT(ok);
          train_options o;
          train_options_default(&o);
          o.schedule = (train_schedule)sched;
          o.microbatches = M;
          CU_ASSERT_EQUAL(sim_schedule_peak(order, n), train_in_flight(&o, i, p));
        }
}

static void one_f_one_b_should_warm_up_alternate_and_drain(void) {
  /* p = 3, M = 4: stage 0 warms up with 2 forwards, stage 1 with 1, stage 2 alternates at once */
  static const char *const want[3] = {"F0 F1 F2 B0 F3 B1 B2 B3", "F0 F1 B0 F2 B1 F3 B2 B3", "F0 B0 F1 B1 F2 B2 F3 B3"};
  sim_schedule_step order[8];
  for (int i = 0; i < 3; i++) {
    int n = sim_schedule_order(TRAIN_1F1B, i, 3, 4, order);
    char got[64] = "";
    for (int k = 0; k < n; k++) {
      size_t len = strlen(got);
      snprintf(got + len, sizeof got - len, "%s%c%d", k ? " " : "", order[k].backward ? 'B' : 'F', order[k].mb);
    }
    CU_ASSERT_STRING_EQUAL(got, want[i]);
  }
  int n = sim_schedule_order(TRAIN_GPIPE, 1, 3, 2, order);
  CU_ASSERT_EQUAL(n, 4);
  CU_ASSERT(!order[0].backward && !order[1].backward && order[2].backward && order[3].backward);
  CU_ASSERT(order[2].mb == 0 && order[3].mb == 1);
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"schedules_should_run_each_pass_once_and_hold_what_the_model_says",
       schedules_should_run_each_pass_once_and_hold_what_the_model_says},
      {"one_f_one_b_should_warm_up_alternate_and_drain", one_f_one_b_should_warm_up_alternate_and_drain},
      CU_TEST_INFO_NULL};
  return testutil_run("sim_schedule", tests, argc, argv);
}
