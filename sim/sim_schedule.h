/* sim_schedule: the order in which one pipeline stage runs the passes of a mini-batch under a training
 * schedule (train.h).
 *
 * A stage's order lists each micro-batch's forward once and its backward once, the forward first:
 *   GPipe: F0 F1 .. F(M-1), then B0 B1 .. B(M-1);
 *   1F1B (PipeDream-flush): stage i of p first runs w = min(p - i - 1, M) forwards, then alternates
 *     F(w + k), B(k) while forwards are left, then the remaining backwards in order.  After a forward the
 *     stage holds at most w + 1 = p - i stashes (min(p - i, M)).
 *   zb (ZB-H1 of the zero-bubble paper): 1F1B's forwards and backwards, each backward B now only the
 *     input-gradient part (what the stage before waits for), and the weight-gradient part W(m) of each
 *     micro-batch run d = i steps later: after B(k) comes W(k - d) when k >= d, and the W's still due
 *     follow the last B.  The backward chain through the stages moves at B's pace and the W's fill the
 *     time a stage would wait.  Between its B and its W a micro-batch keeps what W reads (a W-stash,
 *     train.h), so a stage holds at most min(p, M) micro-batches past their forward, stashes and
 *     W-stashes together (w + 1 + d = p).
 * The weight update follows the last step of every order.  Each order is a valid pipeline: a stage's
 * backward of micro-batch m follows its own forward of m (and W(m) its B(m)), and (for 1F1B and zb) the
 * forwards a later stage needs before its backward of m are among the ones an earlier stage runs before
 * its own, so the stages never wait on each other in a cycle (a W waits on nothing of another stage). */
#ifndef MESHPIPE_SIM_SCHEDULE_H
#define MESHPIPE_SIM_SCHEDULE_H

#include "train.h"

typedef enum sim_pass {
  SIM_PASS_F, /* a forward */
  SIM_PASS_B, /* a backward: under zb its input-gradient part only */
  SIM_PASS_W  /* zb: the weight-gradient part of a backward */
} sim_pass;

typedef struct sim_schedule_step {
  sim_pass pass;
  int mb;
} sim_schedule_step;

/* The steps of a stage's order under s for M micro-batches: 2M, or 3M under zb. */
int sim_schedule_steps(train_schedule s, int M);

/* Writes the steps of stage `stage` (0 .. n_stages - 1) into out (room for sim_schedule_steps) and returns
 * their number. */
int sim_schedule_order(train_schedule s, int stage, int n_stages, int M, sim_schedule_step *out);

/* The state of the stage's memory at its peak in its order: after the step where max(stashes - 1, 0) x
 * stash + w_pending x wstash is largest (the first such, or the one holding most), *stashes the micro-batches past their forward
 * and not their backward (B), *w_pending those past B and not W (zb).  What train_hold_of and
 * train_hold_mem_bytes say. */
void sim_schedule_peak(const sim_schedule_step *order, int n, double stash, double wstash, int *stashes,
                       int *w_pending);

#endif
