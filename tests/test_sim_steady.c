/* test_sim_steady: when a steady run stops (sim_steady.c), on hand-made schedules fed to
 * sim_steady_check completion by completion, as the engine would: one group, one segment, a
 * micro-batch m entering at m and taken ten periods later, so that eleven are in flight and the
 * completions' own rule (a span as long as those in flight) would stop later than the state's. */
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"
#include "testutil.h"

#define N_MB 40

/* When event e of micro-batch m happens in the periodic schedule (period 1): taken at m + 10, its
 * reads done then, its execution at m + 11.1, its all-gather (and the micro-batch) at m + 11.3. */
static double periodic_at(int m, int e) {
  static const double at[6] = {10.0, 10.0, 11.1, 11.3, 11.3, 11.3};
  return m + at[e];
}

/* A steady job *j of one group *gr of one segment, before its first completion, over arrays of M
 * micro-batches (t: 6 events each), counting cap at most, its window the widest (the state's rule
 * then needs no busy server), micro-batch m completing at m + 11.3. */
static void one_group_job(job *j, jgroup *gr, double (*t)[6], double *c, double *start, int M, int cap) {
  memset(j, 0, sizeof *j);
  memset(gr, 0, sizeof *gr);
  gr->n_segs = 1;
  gr->n_ev = sim_group_events(gr);
  CU_ASSERT_EQUAL_FATAL(gr->n_ev, 6);
  gr->ev_t = &t[0][0];
  j->groups = gr;
  j->n_groups = 1;
  j->M = j->limit = M;
  j->cap = j->cap_now = cap;
  j->window = sim_job_wmax(j);
  j->warmup = -1;
  j->c = c;
  j->start_t = start;
  for (int m = 0; m < M; m++) c[m] = periodic_at(m, 5);
}

/* Feeds the schedule, with event (shift_m, shift_e) at shift_to instead (shift_m < 0: none), to a
 * steady job completion by completion; returns the job's limit once it stopped, or 0. */
static int stops_at(int shift_m, int shift_e, double shift_to) {
  job j;
  jgroup gr;
  double t[N_MB][6], c[N_MB], start[N_MB];
  one_group_job(&j, &gr, t, c, start, N_MB, N_MB);
  for (int L = 0; L < N_MB && j.limit == N_MB; L++) {
    double now = c[L];
    for (int m = 0; m < N_MB; m++) { /* what has happened by now */
      start[m] = m <= now ? m : -1;
      for (int e = 0; e < 6; e++) {
        double x = m == shift_m && e == shift_e ? shift_to : periodic_at(m, e);
        t[m][e] = x <= now ? x : -1;
      }
    }
    j.n_complete = L + 1;
    sim_steady_check(&j, now);
  }
  CU_ASSERT_EQUAL(j.cycle, j.limit < N_MB ? 1 : 0);
  return j.limit < N_MB ? j.limit : 0;
}

/* Warm-up W = 12 (the first to enter after the first completion at 11.3); at L = 12 the last
 * interval equals the one before and the state repeats.  The completions' rule needs a span of the
 * eleven in flight: L = 24. */
static void a_periodic_schedule_should_stop_once_its_state_repeats(void) {
  CU_ASSERT_EQUAL(stops_at(-1, 0, 0), 13);
}

/* At L = 12 (now 23.3) the earliest activity in flight began at 23.0 (micro-batch 13 taken).  Micro-
 * batch 12's execution, due at 23.1, ended at 22.5 instead: before 23.0, so only that it happened
 * counts now; but its counterpart, micro-batch 11's at 22.1, came after 22.0 and still acted on what
 * was in flight a cycle earlier.  The states differ (at L = 13, micro-batch 13's execution follows
 * 12's by 1.6), and the run goes on until both are done before the earliest activity in flight, at
 * L = 14. */
static void an_event_done_now_but_live_a_cycle_earlier_should_not_match(void) {
  CU_ASSERT_EQUAL(stops_at(12, 2, 22.5), 15);
}

/* The same execution late instead, at 23.5: at L = 12 it has not happened, while its counterpart had
 * by 22.3 (now less a cycle).  No stop until L = 14 either. */
static void an_event_still_to_come_whose_counterpart_had_come_should_not_match(void) {
  CU_ASSERT_EQUAL(stops_at(12, 2, 23.5), 15);
}

/* An event off the schedule but done before the earliest activity in flight, its counterpart before
 * that less a cycle (micro-batch 10's execution at 20.9 instead of 21.1; at L = 12, 23.0 and 22.0):
 * only that it happened can act on what follows, so the run stops at L = 12 as if it were on time. */
static void an_event_long_done_should_not_delay_the_stop(void) {
  CU_ASSERT_EQUAL(stops_at(10, 2, 20.9), 13);
}

/* Micro-batch 12's execution 1e-7 of a cycle late (23.1000001): at L = 12 the state is the one a
 * cycle earlier but for that, which a tolerance of 1e-6 of the cycle would let pass; a state nearly met
 * again is not the state met again (sim_int.h, SIM_STEADY_STATE_TOLERANCE), so no stop until L = 14,
 * when the late execution is done before the earliest activity in flight. */
static void a_state_met_again_only_nearly_should_not_stop_the_run(void) {
  CU_ASSERT_EQUAL(stops_at(12, 2, 23.1 + 1e-7), 15);
}

/* Completions one period apart (micro-batch m done at m + 11.3) while micro-batches enter, taken at
 * once, every 0.9 of one: the pipeline ahead of the bottleneck is still filling.  At L = 29 (now
 * 40.3) the 45 entered leave 15 in flight, and the completions have been periodic over those 15 since
 * the warm-up (13, the first to enter after 11.3); as they entered faster than they left, the window
 * closes to the 15 in flight, and the run, whose cap is 40, may now count up to 30 + 20: the regime
 * after the closing gets half a cap of its own (sim_int.h, "Steady state"). */
static void a_window_closed_near_the_cap_should_give_the_run_half_a_cap_more(void) {
  enum { M = 80, CAP = 40 };
  job j;
  jgroup gr;
  double t[M][6], c[M], start[M];
  one_group_job(&j, &gr, t, c, start, M, CAP);
  for (int L = 0; L < CAP && j.closed_at == 0 && j.limit == M; L++) {
    double now = c[L];
    for (int m = 0; m < M; m++) {
      start[m] = 0.9 * m <= now ? 0.9 * m : -1;
      for (int e = 0; e < 6; e++) {
        double x = e < 2 ? 0.9 * m : periodic_at(m, e); /* taken, and its reads done, as it enters */
        t[m][e] = x <= now ? x : -1;
      }
    }
    j.n_complete = L + 1;
    sim_steady_check(&j, now);
  }
  CU_ASSERT_EQUAL(j.warmup, 13);
  CU_ASSERT_EQUAL(j.closed_at, 29);
  CU_ASSERT_EQUAL(j.window, 15);
  CU_ASSERT_EQUAL(j.cycle, 0);
  CU_ASSERT_EQUAL(j.cap_now, 50);
  CU_ASSERT_EQUAL(j.limit, M); /* not stopped */
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"a_periodic_schedule_should_stop_once_its_state_repeats", a_periodic_schedule_should_stop_once_its_state_repeats},
      {"an_event_done_now_but_live_a_cycle_earlier_should_not_match",
       an_event_done_now_but_live_a_cycle_earlier_should_not_match},
      {"an_event_still_to_come_whose_counterpart_had_come_should_not_match",
       an_event_still_to_come_whose_counterpart_had_come_should_not_match},
      {"a_state_met_again_only_nearly_should_not_stop_the_run", a_state_met_again_only_nearly_should_not_stop_the_run},
      {"an_event_long_done_should_not_delay_the_stop", an_event_long_done_should_not_delay_the_stop},
      {"a_window_closed_near_the_cap_should_give_the_run_half_a_cap_more",
       a_window_closed_near_the_cap_should_give_the_run_half_a_cap_more},
      CU_TEST_INFO_NULL};
  return testutil_run("sim_steady", tests, argc, argv);
}
