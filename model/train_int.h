/* train_int: what train.c and train_cost.c share - the scratch a train keeps for evaluating plans (its
 * cost model of the chip last evaluated on, link loads, stage inputs and transfers), so that the training
 * model's hottest caller, a learning method's reward, allocates none of it per plan.  It belongs to its
 * train (train_free frees it) and, like the memo, to one thread at a time. */
#ifndef MESHPIPE_TRAIN_INT_H
#define MESHPIPE_TRAIN_INT_H

#include <stdint.h>

#include "train.h"

typedef struct train_scratch train_scratch;

struct train_scratch {
  const chip *c;      /* the chip m was built for, with its hash (a chip freed and another at the same */
  uint64_t chip_hash; /* address is rebuilt for unless it is the same chip) */
  cost_model *m;      /* owned, built without the graph: the training model uses no per-op core model */
  double *link;       /* chip_n_links(c) entries */
  train_stage_input *in;
  int cap_in;
  cost_transfer *x;
  int cap_x;
};

/* Frees x; NULL is a no-op. */
void train_scratch_free(train_scratch *x);

#endif
