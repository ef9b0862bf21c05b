/* rl_ckpt: checkpoints of an RL trainer — the whole trainer state (configuration, rng, counters,
 * policy with Adam's state, best plans) in one little-endian binary file, written atomically and
 * sealed with a checksum.  The format is in partitioner/README.md ("RL policy and checkpoint files").
 * A trainer resumed from a checkpoint taken between iterations continues exactly as the trainer that
 * wrote it would have. */
#ifndef MESHPIPE_RL_CKPT_H
#define MESHPIPE_RL_CKPT_H

#include "err.h"
#include "rl_train.h"

/* The simulator's clock a checkpoint may hold, in seconds (no run gets near it). */
#define RL_CKPT_CLOCK_MAX 1e9

/* Writes t's state (t borrowed) to path, with sim_clock: the clock of the simulator that rewards the
 * run, taken with sim_checkpoint (0 when the model rewards it), which a resumed run restores so that
 * its figures are the interrupted run's bit for bit.  MP_NOMEM or MP_OUTPUT. */
mp_status rl_ckpt_save(const rl_trainer *t, double sim_clock, const char *path, mp_error *err);

/* Resume: builds a trainer like rl_trainer_new (same cfg and instances, borrowed) and restores the
 * state saved at path, and the simulator's clock into *sim_clock unless it is NULL (for sim_restore).
 * A checkpoint of another configuration (seed, batch, steps, shape, rates) or other instances is
 * MP_INPUT; cfg.episodes may differ (to extend a run).  *out is owned (rl_trainer_free). */
mp_status rl_ckpt_resume(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const char *path,
                         rl_trainer **out, double *sim_clock, mp_error *err);

/* rl_ckpt_resume of a checkpoint already in memory (len bytes, borrowed); path labels the messages.
 * Besides the checksum and the configuration, the state is checked before it is trusted: counters
 * at most 2^53 that a run can reach (1 to batch episodes per iteration, at most max_steps steps per
 * episode), a clock in 0 .. RL_CKPT_CLOCK_MAX, a random generator that is not all zero, finite figures, valid best plans, and the
 * policy as rl_policy_from_bytes checks it. */
mp_status rl_ckpt_resume_mem(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const char *path,
                             const unsigned char *data, size_t len, rl_trainer **out, double *sim_clock,
                             mp_error *err);

#endif
