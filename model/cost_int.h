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

/* Counts kept per stage range (the gathering segments of layers [first, first + n)): open addressing on
 * first << 32 | n, `width` ints per range, at most half full.  Zeroed but for width, it is empty. */
typedef struct seg_memo {
  uint64_t *keys; /* 0: empty (no range has n == 0) */
  int *counts;    /* width per key */
  size_t cap, used;
  int width;
} seg_memo;

/* 1 and the range's counts in out (width ints) when t holds them, else 0. */
int seg_memo_get(const seg_memo *t, int first, int n, int *out);

/* Keeps the range's counts (width ints, borrowed); a table that cannot grow just does not keep them. */
void seg_memo_put(seg_memo *t, int first, int n, const int *counts);

/* Frees t's arrays; t is then empty. */
void seg_memo_clear(seg_memo *t);

/* Writes the Sends of stage i of plan p (one per tensor per later reading stage, in split.h's order: by
 * producer layer, tensor, then receiving stage; stage_of maps p's layers to stages) from out on, each as
 * the tensor's bytes and the receiving stage's first core; returns the end.  out has room for one per
 * reader of every tensor the stage makes. */
cost_transfer *cost_stage_sends(const graph *g, const plan *p, const int *stage_of, int i, cost_transfer *out);

/* The links of chip_route's route from `from` to `to` (same ends, same order) into *links, borrowed until
 * the next call; returns how many.  A snake neighbour's link and a core's routes to and from its nearest
 * port come from m's table, any other route is walked into m->route_buf. */
int cost_route(cost_model *m, int from, int to, const int **links);

/* cost_load_route (cost.h) over cost_route's links; returns the route's NoC hops. */
int cost_model_load_route(cost_model *m, double *load, int from, int to, double bytes, int *touched, int *n_touched);

/* fmod(x, T) for x >= 0 and T > 0, the same to the last bit, without fmod's loop over the quotient's
 * bits (cost_contend.c: the reads' phases). */
double cost_wrap(double x, double T);

struct cost_model {
  const graph *g;
  const chip *c;
  opcost *oc;           /* the ops' works on the chip's core model; NULL without a graph */
  int n_links;
  int *port_of;         /* per core: its nearest DRAM port, -1 on a chip without */
  /* routes walked again and again (cost_route), listed at cost_model_new: per core k, entries 4k .. 4k+3
   * are k->k+1, k+1->k (chain links of snake neighbours), port->k and k->port (its nearest port) */
  int *route_off;       /* 4 n_cores + 1 offsets into route_links */
  int *route_links;
  int *route_buf;       /* any other route's links (cost_route): width + height entries */
  double *scratch;      /* per link: one stream's loads (left zeroed) */
  int *touched;         /* links with a load in scratch */
  double *plan_load;    /* per link: a plan's loads (cost_model_period) */
  double *side;         /* per link: one side of one stage's own load (cost_contended), left zeroed */
  int *side_touched;
  int *stage_of;        /* per layer: its stage in the plan being costed */
  int *seg_of;          /* per layer of a stage: its segment (split_segments) */
  unsigned char *has_a; /* per segment: it all-gathers bytes */
  uint64_t *traffic;    /* per layer: its SRAM traffic (opcost_op_traffic, a string test per call) */
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

/* The one link from core k to core k + 1 (back 0) or from k + 1 to k (back 1), snake neighbours. */
static inline int cost_chain_link(const cost_model *m, int k, int back) {
  return m->route_links[m->route_off[4 * k + back]];
}

#endif
