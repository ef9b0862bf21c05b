/* cost_int: the cost model's insides, shared by cost.c (stage and plan terms) and cost_contend.c
 * (contention); not part of cost.h.
 *
 * A cost_model borrows its graph and chip; every array is owned and sized at cost_model_new or grown on
 * demand; the per-link scratch arrays (scratch, side) are left zeroed after every use. */
#ifndef MESHPIPE_COST_INT_H
#define MESHPIPE_COST_INT_H

#include <stddef.h>
#include <stdint.h>

#include "cost.h"
#include "opcost.h"

/* Segment counts by stage range: open addressing on (first << 32 | n). */
typedef struct seg_memo {
  uint64_t *keys; /* 0: empty (no range has n == 0) */
  int *counts;
  size_t cap, used;
} seg_memo;

/* Writes the Sends of stage i of plan p (one per tensor per later reading stage, in split.h's order: by
 * producer layer, tensor, then receiving stage; stage_of maps p's layers to stages) from out on, each as
 * the tensor's bytes and the receiving stage's first core; returns the end.  out has room for one per
 * reader of every tensor the stage makes. */
cost_transfer *cost_stage_sends(const graph *g, const plan *p, const int *stage_of, int i, cost_transfer *out);

struct cost_model {
  const graph *g;
  const chip *c;
  opcost *oc;           /* the ops' works on the chip's core model; NULL without a graph */
  int n_links;
  int *port_of;         /* per core: its nearest DRAM port, -1 on a chip without */
  double *scratch;      /* per link: one stream's loads (left zeroed) */
  int *touched;         /* links with a load in scratch */
  double *plan_load;    /* per link: a plan's loads (cost_model_period) */
  double *side;         /* per link: one side of one stage's own load (cost_contended), left zeroed */
  int *side_touched;
  int *stage_of;        /* per layer: its stage in the plan being costed */
  int *seg_of;          /* per layer of a stage: its segment (split_segments) */
  unsigned char *has_a; /* per segment: it all-gathers bytes */
  cost_transfer *xfer;  /* the plan's Sends, stage i's at xfer_off[i] .. xfer_off[i+1] (cost_model_period) */
  int xfer_cap;
  int *xfer_off;        /* per stage + 1 */
  cost_stage *stg;      /* the plan's stages (cost_model_period) */
  int cap_stages;
  int n_stg;            /* how many of them the last cost_model_period filled */
  seg_memo memo;
  /* contention (cost_contended) */
  struct term *terms;
  int n_terms, cap_terms, terms_oom;
  struct stage_acts *acts;
  int cap_acts;
  int *send_ranges; /* per Send: [first pair, end pair, hops] */
  int cap_ranges;
  /* the streams' phases (cost_contend.c) */
  struct stream_bytes *sb; /* every stage's DRAM reads per link, in stage order */
  int n_sb, cap_sb;
  struct stream_bytes *sb_sorted; /* the same by link */
  int cap_sb_sorted;
  int *sb_first;           /* per link + 1: its first entry in sb */
  double *phase;           /* per stage: when its reads start within the period, and how long they take */
  int cap_phase;
};

#endif
