/* sim_schedule: stage orders of the training schedules.  See sim_schedule.h. */
#include "sim_schedule.h"

int sim_schedule_order(train_schedule s, int stage, int n_stages, int M, sim_schedule_step *out) {
  int n = 0;
  if (s == TRAIN_GPIPE) {
    for (int m = 0; m < M; m++) out[n++] = (sim_schedule_step){0, m};
    for (int m = 0; m < M; m++) out[n++] = (sim_schedule_step){1, m};
    return n;
  }
  int w = n_stages - stage - 1 < M ? n_stages - stage - 1 : M;
  for (int m = 0; m < w; m++) out[n++] = (sim_schedule_step){0, m};
  for (int k = 0; w + k < M; k++) {
    out[n++] = (sim_schedule_step){0, w + k};
    out[n++] = (sim_schedule_step){1, k};
  }
  for (int m = M - w; m < M; m++) out[n++] = (sim_schedule_step){1, m};
  return n;
}

int sim_schedule_peak(const sim_schedule_step *order, int n) {
  int held = 0, peak = 0;
  for (int i = 0; i < n; i++) {
    held += order[i].backward ? -1 : 1;
    if (held > peak) peak = held;
  }
  return peak;
}
