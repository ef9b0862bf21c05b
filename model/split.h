/* split: the Send/Recv rewrite of a plan — per core group, its layers, the Recv nodes that bring
 * in tensors made by other groups and the Send nodes that ship its tensors out.
 *
 * As in distributed TensorFlow, every tensor edge that crosses groups is cut: the producer's group
 * gets a Send node and the consumer's group a Recv node.  All consumers of one tensor in one
 * destination group share one Recv, so a tensor crosses to a given group once; a tensor read by
 * three later groups gets three Send/Recv pairs.  Graph inputs are not cut: they are fed by the host
 * to every group that reads them (they are no group's output), so they get no Send/Recv.
 * Invariant: every send names exactly one recv (dst_group, dst_recv) whose tensor and src_group
 * match, and every recv has exactly one send.  A split owns all its arrays; it borrows nothing after
 * split_new returns. */
#ifndef MESHPIPE_SPLIT_H
#define MESHPIPE_SPLIT_H

#include <cjson/cJSON.h>

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "plan.h"

#define SPLIT_FORMAT "meshpipe-split"
#define SPLIT_VERSION 1

typedef struct split_recv {
  int tensor;      /* graph tensor index */
  int src_group;   /* group of its producer */
  int src_send;    /* index of the matching send in that group */
  int n_consumers; /* layers of this group that read it, ascending; at least one */
  int *consumers;  /* owned */
} split_recv;

typedef struct split_send {
  int tensor;    /* graph tensor index */
  int layer;     /* its producer, a layer of this group */
  int dst_group; /* a later group with a consumer */
  int dst_recv;  /* index of the matching recv in dst_group */
} split_send;

typedef struct split_group {
  int first_layer, n_layers, first_core, n_cores; /* the plan's stage */
  int n_segments;
  int *segment; /* owned: per layer of the stage (index 0 = first_layer), its segment (split_segments) */
  int n_recvs;
  split_recv *recvs; /* owned; ordered by first consumer, then tensor index */
  int n_sends;
  split_send *sends; /* owned; ordered by producer layer, then tensor, then destination group */
} split_group;

typedef struct split {
  int n_groups;        /* = the plan's stages */
  split_group *groups; /* owned */
  int n_pairs;         /* Send/Recv pairs in total */
} split;

/* Rewrites plan p of graph g (both borrowed).  MP_INPUT if the plan was made for another layer
 * count.  *out is owned by the caller (split_free). */
mp_status split_new(const graph *g, const plan *p, split **out, mp_error *err);

/* The per-group subgraphs with their Send/Recv nodes, as `meshpipe split -o` writes them.  g and p
 * must be the ones the split was made from; c (may be NULL) adds the chip's name and core
 * positions.  With train, every pair also runs backward (`--mode train`): each group gets grad_sends,
 * one per Recv (the tensor's gradient back to its producer's group, once the backward has passed the
 * Recv's first consumer), and grad_recvs, one per Send (the gradient from that consumer group, added
 * up before the producer's backward): gradient_pairs = send_recv_pairs.  Owned by the caller; NULL
 * if out of memory. */
cJSON *split_to_json(const split *s, const graph *g, const plan *p, const chip *c, int train);

/* The segments of a stage of layers [first, first + n) of g: runs of consecutive layers that wait for
 * the same received tensors (an input made before `first` by a layer, directly or through earlier
 * layers of the stage; graph inputs are not received), cut after a layer with an output that a later
 * stage reads.  Within a segment nothing waits, so the simulator runs it as one execution and one
 * all-gather.  Writes each layer's segment (0, 1, ...) to seg_of[0 .. n) when it is not NULL and
 * returns the number of segments, or -1 when out of memory.  Depends on the range only. */
int split_segments(const graph *g, int first, int n, int *seg_of);

/* Frees s; split_free(NULL) is a no-op. */
void split_free(split *s);

#endif
