/* memplan: a static storage plan for tensors of known lifetimes, in the spirit of MXNet's graph memory
 * planner (nnvm's PlanMemory, "co-share" and "in-place").
 *
 * Each tensor has its bytes and its lifetime, the inclusive range of steps [birth, death] during which
 * it must be held, and may name an in-place source: a tensor that dies at the step this one is born,
 * whose storage the step's op may write this one into (an elementwise op reading its input for the last
 * time).  The planner visits the steps in order; at a step it first places the tensors born there (in
 * index order), then takes back the storage of the tensors that die there.  A tensor is placed, in this
 * order of preference, in its in-place source's block (when no other tensor took it); in the smallest
 * free block at least its size and at most MEMPLAN_MATCH times it; in the largest free block at least
 * 1/MEMPLAN_MATCH of its size, grown to fit (MXNet's match range); or in a new block.  A block's size is
 * that of its largest tenant and the blocks lie one after another, so the planned bytes, the arena, are
 * the sum of the block sizes.  Zero-byte tensors take no storage (offset 0).
 *
 * Invariant (tests/test_memplan.c checks it on random inputs): two tensors whose byte ranges overlap
 * have disjoint lifetimes, or one is the other's in-place source, dying at the step the other is born.
 * Hence live <= planned <= naive. */
#ifndef MESHPIPE_MEMPLAN_H
#define MESHPIPE_MEMPLAN_H

#include <stdint.h>

#include "err.h"

#define MEMPLAN_MATCH 16

typedef struct memplan_tensor {
  uint64_t bytes;
  int birth, death; /* steps, 0 <= birth <= death < n_steps */
  int inplace;      /* index of the tensor whose storage it may take (that tensor dies at this one's birth), or -1 */
} memplan_tensor;

typedef struct memplan_result {
  uint64_t planned; /* the arena: sum of the block sizes */
  uint64_t naive;   /* every tensor its own storage: the sum of the bytes */
  uint64_t live;    /* the largest sum of bytes alive at one step, a tensor written over in place counted
                       until the step before: no plan with the same in-place choices needs less */
  int blocks;       /* storage blocks of the plan */
  int inplace;      /* tensors placed over their in-place source */
} memplan_result;

/* Plans n tensors (borrowed) over n_steps steps into *out; when offset is not NULL it receives each
 * tensor's byte offset in the arena (n entries).  MP_INPUT (naming the tensor) for a lifetime outside
 * the steps or an in-place source that is not a tensor dying at this one's birth; MP_NOMEM. */
mp_status memplan_run(const memplan_tensor *t, int n, int n_steps, uint64_t *offset, memplan_result *out,
                      mp_error *err);

#endif
