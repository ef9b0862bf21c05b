/* graph: a workload — a named DAG of ops over tensors — linearised into layers.
 *
 * After construction the ops are in topological order, ties broken by their order in the file: op i
 * is layer i, and every input of layer i is a graph input or an output of a layer below i.  Tensors
 * are numbered graph inputs first (in file order), then each layer's outputs in layer order.  A
 * graph is immutable once built; every array in it is owned by the graph.  Real graphs are DAGs with
 * skip connections, so nothing here assumes a chain.  The file format is described in
 * traces/README.md. */
#ifndef MESHPIPE_GRAPH_H
#define MESHPIPE_GRAPH_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define GRAPH_FORMAT "meshpipe-graph"
#define GRAPH_VERSION 1

typedef struct graph_tensor {
  char *name;
  uint64_t bytes;
  int producer;      /* layer that writes it, or -1 for a graph input */
  int n_consumers;   /* distinct layers that read it */
  int *consumers;    /* ascending layer indices */
  int last_consumer; /* largest consumer, or -1 when no layer reads it (a graph output) */
} graph_tensor;

/* The products an op's multiply-accumulates form (the importer's "dims"; traces/README.md): g
 * independent products of an m x k matrix by a k x n one (a convolution: g groups, m output positions, n
 * output channels per group, k = input channels per group x kernel), so macs = g m n k.  All 0 when the
 * file gives none (an op without MACs, or a graph written before dims were recorded). */
typedef struct graph_dims {
  uint64_t g, m, n, k;
} graph_dims;

typedef struct graph_op {
  char *name;
  char *type;
  int n_inputs;
  int *inputs; /* tensor indices in the order the file lists them */
  int n_outputs;
  int *outputs; /* tensor indices; at least one */
  uint64_t macs;         /* multiply-accumulates */
  uint64_t flops;        /* all floating-point work, >= 2 * macs */
  uint64_t weight_bytes; /* parameters this op reads */
  uint64_t out_bytes;    /* sum of the bytes of its outputs (a_j of the cost model) */
  uint64_t in_bytes;     /* sum of the bytes of the distinct tensors it reads */
  graph_dims dims;       /* its products' shape, or all 0 */
  int measured;          /* 1 when flops is a measured time's work (graph_with_flops), not the op's arithmetic */
  int file_index;        /* position in the file's "ops" array */
} graph_op;

typedef struct graph {
  char *name;
  char *file; /* where it was read from, for messages */
  int n_ops;  /* = number of layers */
  graph_op *ops;
  int n_tensors;
  int n_inputs; /* tensors[0 .. n_inputs) are the graph inputs */
  graph_tensor *tensors;
  cJSON *source; /* optional provenance object ("source" in the file), owned; NULL if absent */
  uint64_t hash; /* FNV-1a of the canonical serialisation; equal graphs hash equal */
} graph;

typedef struct graph_totals {
  int ops, layers, inputs, tensors;
  uint64_t macs, flops, weight_bytes;
  uint64_t peak_activation_bytes; /* largest live set while one layer runs: the tensors it and later
                                      layers still need, plus its own outputs */
  int peak_layer;                 /* the layer where that peak occurs */
} graph_totals;

/* Reads and validates a graph file.  file names the source in error messages.  On success *out is
 * owned by the caller (graph_free).  Bad input is MP_INPUT with "FILE: where: what". */
mp_status graph_load(const char *path, graph **out, mp_error *err);

/* Validates and builds a graph from a parsed document (borrowed).  file labels error messages. */
mp_status graph_from_json(const cJSON *root, const char *file, graph **out, mp_error *err);

/* The canonical serialisation (layer order), owned by the caller (cJSON_Delete); NULL if out of memory. */
cJSON *graph_to_json(const graph *g);

/* Writes the canonical serialisation atomically. */
mp_status graph_write(const graph *g, const char *path, mp_error *err);

/* A copy of g (borrowed) whose layer l does flops[l] of work (g->n_ops entries), whatever its MACs:
 * how measured op times reach every user of the graph (optimes_apply).  The layers with measured[l]
 * set (every layer when measured is NULL) are marked measured, so the core model (opcost.h) leaves
 * their time at flops / peak.  Its hash is that of the copy's serialisation, so it differs from g's when
 * a figure differs.  *out is owned by the caller. */
mp_status graph_with_flops(const graph *g, const uint64_t *flops, const unsigned char *measured, graph **out,
                           mp_error *err);

/* Samples one run of the graph processes: "batch" of its "source" (the ONNX importer's --batch), 1 when
 * absent.  A pipeline's throughput in samples/s is graph_batch / period (one micro-batch per run). */
int graph_batch(const graph *g);

/* Frees g and everything it owns; graph_free(NULL) is a no-op. */
void graph_free(graph *g);

/* Totals over the whole graph. */
void graph_get_totals(const graph *g, graph_totals *t);

/* Index of the layer / tensor with that name, or -1. */
int graph_find_op(const graph *g, const char *name);
int graph_find_tensor(const graph *g, const char *name);

#endif
