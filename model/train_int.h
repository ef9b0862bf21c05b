/* train_int: what train.c and train_cost.c share - the scratch a train keeps for evaluating plans (its
 * cost model of the chip last evaluated on, link loads, stage inputs and transfers, the plan's stage of
 * every layer, the gathering segments of the ranges seen), so that the training model's hottest callers,
 * a learning method's reward and optimal's searches, allocate none of it per plan.  It belongs to its
 * train (train_free frees it) and, like the memo, to one thread at a time. */
#ifndef MESHPIPE_TRAIN_INT_H
#define MESHPIPE_TRAIN_INT_H

#include <stdint.h>

#include "cost_int.h"
#include "train.h"

typedef struct train_scratch train_scratch;

struct train_scratch {
  const chip *c;      /* the chip m was built for, with its hash (a chip freed and another at the same */
  uint64_t chip_hash; /* address is rebuilt for unless it is the same chip) */
  cost_model *m;      /* owned, built without the graph: the training model uses no per-op core model */
  double *link;       /* chip_n_links(c) entries */
  train_stage_input *in;
  int cap_in;
  cost_transfer *x;    /* room for every Send and gradient of any plan: 2 x the graph's input references */
  int *stage_of;       /* per layer, its stage in the plan being evaluated */
  unsigned *seen;      /* per tensor: the epoch of the stage that last recorded it as received */
  unsigned epoch;      /* one per stage evaluated; seen is cleared when it wraps */
  int *pending;        /* the received tensors of one layer, sorted (at most its inputs) */
  seg_memo segs;       /* per stage range: its forward and backward gathering segments (width 2) */
};

/* Frees x; NULL is a no-op. */
void train_scratch_free(train_scratch *x);

#endif
