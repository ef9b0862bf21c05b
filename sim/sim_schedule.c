/* sim_schedule: stage orders of the training schedules.  See sim_schedule.h. */
#include "sim_schedule.h"

int sim_schedule_steps(train_schedule s, int M) { return s == TRAIN_ZB ? 3 * M : 2 * M; }

int sim_schedule_order(train_schedule s, int stage, int n_stages, int M, sim_schedule_step *out) {
  int n = 0;
  if (s == TRAIN_GPIPE) {
    for (int m = 0; m < M; m++) out[n++] = (sim_schedule_step){SIM_PASS_F, m};
    for (int m = 0; m < M; m++) out[n++] = (sim_schedule_step){SIM_PASS_B, m};
    return n;
  }
  int w = n_stages - stage - 1 < M ? n_stages - stage - 1 : M, zb = s == TRAIN_ZB, d = stage, next_w = 0;
  for (int m = 0; m < w; m++) out[n++] = (sim_schedule_step){SIM_PASS_F, m};
  for (int k = 0; k < M; k++) {
    if (w + k < M) out[n++] = (sim_schedule_step){SIM_PASS_F, w + k};
    out[n++] = (sim_schedule_step){SIM_PASS_B, k};
    if (zb && k >= d) out[n++] = (sim_schedule_step){SIM_PASS_W, next_w++};
  }
  while (zb && next_w < M) out[n++] = (sim_schedule_step){SIM_PASS_W, next_w++};
  return n;
}

void sim_schedule_peak(const sim_schedule_step *order, int n, double stash, double wstash, int *stashes,
                       int *w_pending) {
  int has_w = 0, s = 0, w = 0;
  double peak = -1;
  *stashes = *w_pending = 0;
  for (int i = 0; i < n; i++) has_w |= order[i].pass == SIM_PASS_W;
  for (int i = 0; i < n; i++) {
    sim_pass p = order[i].pass;
    s += p == SIM_PASS_F ? 1 : p == SIM_PASS_B ? -1 : 0;
    w += has_w && p == SIM_PASS_B ? 1 : p == SIM_PASS_W ? -1 : 0;
    double bytes = (s > 1 ? s - 1 : 0) * stash + w * wstash;
    if (bytes > peak || (bytes == peak && s + w > *stashes + *w_pending)) { /* ties: the most held */
      peak = bytes;
      *stashes = s;
      *w_pending = w;
    }
  }
}
