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

int sim_schedule_peak(const sim_schedule_step *order, int n) {
  int has_w = 0, held = 0, peak = 0;
  for (int i = 0; i < n; i++) has_w |= order[i].pass == SIM_PASS_W;
  sim_pass frees = has_w ? SIM_PASS_W : SIM_PASS_B;
  for (int i = 0; i < n; i++) {
    held += order[i].pass == SIM_PASS_F ? 1 : order[i].pass == frees ? -1 : 0;
    if (held > peak) peak = held;
  }
  return peak;
}
