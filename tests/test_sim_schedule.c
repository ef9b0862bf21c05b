/* test_sim_schedule: the stage orders of GPipe, 1F1B and zb - every micro-batch's forward once, its
 * backward once after it (and under zb its weight-gradient pass once after that), the memory peak's state
 * (stashes, W-stashes) as train_hold_peak says, and the exact orders of small cases written out by hand. */
#include <stdio.h>
#include <string.h>

#include "sim_schedule.h"
#include "testutil.h"

static void schedules_should_run_each_pass_once_and_hold_what_the_model_says(void) {
  sim_schedule_step order[3 * 40];
  for (int sched = 0; sched < 3; sched++)
    for (int p = 1; p <= 9; p++)
      for (int M = 1; M <= 40; M += 3)
        for (int i = 0; i < p; i++) {
          int n = sim_schedule_order((train_schedule)sched, i, p, M, order);
          CU_ASSERT_EQUAL(n, sim_schedule_steps((train_schedule)sched, M));
          CU_ASSERT_EQUAL(n, (sched == TRAIN_ZB ? 3 : 2) * M);
          int seen[3][40] = {{0}}, ok = 1;
          for (int k = 0; k < n; k++) {
            int m = order[k].mb, ps = (int)order[k].pass;
            if (m < 0 || m >= M || ps < 0 || ps > 2 || (ps == SIM_PASS_W && sched != TRAIN_ZB)) {
              ok = 0;
              continue;
            }
            ok &= seen[ps][m] == 0 && (ps == 0 || seen[ps - 1][m] == 1); /* once, after the pass before it */
            seen[ps][m]++;
          }
          CU_ASSERT(ok);
          train_options o;
          train_options_default(&o);
          o.schedule = (train_schedule)sched;
          o.microbatches = M;
          train_hold h = train_hold_of(&o, i, p);
          /* equal stash and W-stash bytes, either much larger, no W-stash: the model's peak state is the
           * order's (the W-stashes pile up in zb's drain when M < p, so it is not always after a forward) */
          static const uint64_t sizes[][2] = {{100, 100}, {100, 1}, {1, 100}, {100, 0}};
          for (int z = 0; z < 4; z++) {
            train_range r = {.stash_bytes = sizes[z][0], .wstash_bytes = sizes[z][1]};
            int held, w_held, m_held, m_w;
            sim_schedule_peak(order, n, (double)r.stash_bytes, (double)r.wstash_bytes, &held, &w_held);
            train_hold_peak(&r, &h, &m_held, &m_w);
            CU_ASSERT(held == m_held && w_held == m_w);
            CU_ASSERT_EQUAL(train_mem_bytes(&r, 1, held, w_held), train_hold_mem_bytes(&r, 1, &h));
            if (z == 3) CU_ASSERT_EQUAL(held, train_in_flight(&o, i, p)); /* stashes alone: the most held */
            if (sched != TRAIN_ZB) CU_ASSERT_EQUAL(w_held, 0);
          }
        }
}

/* "F0 F1 B0 ..." */
static void spell(const sim_schedule_step *order, int n, char *got, size_t room) {
  got[0] = 0;
  for (int k = 0; k < n; k++) {
    size_t len = strlen(got);
    snprintf(got + len, room - len, "%s%c%d", k ? " " : "", "FBW"[order[k].pass], order[k].mb);
  }
}

static void one_f_one_b_should_warm_up_alternate_and_drain(void) {
  /* p = 3, M = 4: stage 0 warms up with 2 forwards, stage 1 with 1, stage 2 alternates at once */
  static const char *const want[3] = {"F0 F1 F2 B0 F3 B1 B2 B3", "F0 F1 B0 F2 B1 F3 B2 B3", "F0 B0 F1 B1 F2 B2 F3 B3"};
  sim_schedule_step order[8];
  char got[64];
  for (int i = 0; i < 3; i++) {
    int n = sim_schedule_order(TRAIN_1F1B, i, 3, 4, order);
    spell(order, n, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, want[i]);
  }
  int n = sim_schedule_order(TRAIN_GPIPE, 1, 3, 2, order);
  spell(order, n, got, sizeof got);
  CU_ASSERT_STRING_EQUAL(got, "F0 F1 B0 B1");
}

static void zb_should_run_1f1b_with_each_w_delayed_by_the_stage_index(void) {
  /* p = 3, M = 4: 1F1B's F and B order; stage i runs W(k - i) after B(k), the W's still due at the end */
  static const char *const want[3] = {"F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3",
                                      "F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3",
                                      "F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3"};
  sim_schedule_step order[12];
  char got[80];
  for (int i = 0; i < 3; i++) {
    int n = sim_schedule_order(TRAIN_ZB, i, 3, 4, order);
    spell(order, n, got, sizeof got);
    CU_ASSERT_STRING_EQUAL(got, want[i]);
    /* with stashes and W-stashes of 100 bytes each: stage 0 peaks at 3 stashes (after F2: 200 bytes with the
     * running pass's own counted in its arena), stage 1 at 2 + 1 (after F2), stage 2 at 0 + 3 (after B2:
     * three micro-batches wait for their W, 300 bytes) */
    static const int want_held[3][2] = {{3, 0}, {2, 1}, {0, 3}};
    int held, w_held;
    sim_schedule_peak(order, n, 100, 100, &held, &w_held);
    CU_ASSERT(held == want_held[i][0] && w_held == want_held[i][1]);
  }
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"schedules_should_run_each_pass_once_and_hold_what_the_model_says",
       schedules_should_run_each_pass_once_and_hold_what_the_model_says},
      {"one_f_one_b_should_warm_up_alternate_and_drain", one_f_one_b_should_warm_up_alternate_and_drain},
      {"zb_should_run_1f1b_with_each_w_delayed_by_the_stage_index",
       zb_should_run_1f1b_with_each_w_delayed_by_the_stage_index},
      CU_TEST_INFO_NULL};
  return testutil_run("sim_schedule", tests, argc, argv);
}
