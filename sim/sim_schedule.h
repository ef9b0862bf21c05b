/* sim_schedule: the order in which one pipeline stage runs the passes of a mini-batch under a training
 * schedule (train.h).
 *
 * A stage's order lists each micro-batch's forward once and its backward once, the forward first:
 *   GPipe: F0 F1 .. F(M-1), then B0 B1 .. B(M-1);
 *   1F1B (PipeDream-flush): stage i of p first runs w = min(p - i - 1, M) forwards, then alternates
 *     F(w + k), B(k) while forwards are left, then the remaining backwards in order.  After a forward the
 *     stage holds at most w + 1 = p - i stashes (min(p - i, M)).
 * The weight update follows the last step of every order.  Each order is a valid pipeline: a stage's
 * backward of micro-batch m follows its own forward of m, and (for 1F1B) the forwards a later stage
 * needs before its backward of m are among the ones an earlier stage runs before its own, so the stages
 * never wait on each other in a cycle. */
#ifndef MESHPIPE_SIM_SCHEDULE_H
#define MESHPIPE_SIM_SCHEDULE_H

#include "train.h"

typedef struct sim_schedule_step {
  int backward; /* 0: the forward of mb, 1: its backward */
  int mb;
} sim_schedule_step;

/* Writes the 2M steps of stage `stage` (0 .. n_stages - 1) into out (room for 2M) and returns 2M. */
int sim_schedule_order(train_schedule s, int stage, int n_stages, int M, sim_schedule_step *out);

/* The most micro-batches whose stash the stage holds at once in its order (a forward done, its backward
 * not yet): what train_in_flight says. */
int sim_schedule_peak(const sim_schedule_step *order, int n);

#endif
