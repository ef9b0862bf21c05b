/* onnx internals shared by the files of the onnx module.  Not a public header.
 *   the operator table:  onnx_ops.c (the table and the helpers below), onnx_infer.c (shape rules),
 *                        onnx_cost.c (cost formulas);
 *   the import:          onnx_import.c (reading, ordering, a layer per node, entry points),
 *                        onnx_wire.c (nesting and size of the protobuf bytes, before unpacking),
 *                        onnx_fold.c (constants), onnx_emit.c (fusion and the output document). */
#ifndef MESHPIPE_ONNX_INT_H
#define MESHPIPE_ONNX_INT_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"
#include "graph.h"
#include "onnx.pb-c.h"
#include "onnx_import.h"

#define ONNX_MAX_RANK 8
#define ONNX_MAX_IO 64 /* inputs / outputs of one node (more is an error) */
#define ONNX_MAX_FILE ((size_t)1 << 31) /* the largest model read: protobuf's own limit, 2 GiB */
#define ONNX_MAX_NESTING 64             /* protobuf messages inside each other (a subgraph of an If is
                                           3 deeper than its node: graph, node, attribute) */
#define ONNX_UNPACKED_BASE (64 << 20)   /* what protobuf-c may allocate: 64 MiB + 32 x the file's size */
#define ONNX_UNPACKED_PER_BYTE 32

typedef struct onnx_shape {
  int rank;
  int64_t d[ONNX_MAX_RANK];
} onnx_shape;

typedef enum { ONNX_T_ACT, ONNX_T_INIT, ONNX_T_CONST } onnx_tkind;

/* A named value of the ONNX graph.  Borrowed strings and protos point into the unpacked model. */
typedef struct onnx_tensor {
  const char *name;
  onnx_tkind kind;
  int elem_type;       /* ONNX TensorProto.DataType, 0 when unknown (treated as float) */
  int has_shape;
  onnx_shape shape;
  const Onnx__TensorProto *value;     /* initializer, or a Constant's tensor (may hold no data) */
  const Onnx__AttributeProto *ivalue; /* a Constant's value_int(s) attribute */
  int n_ints;                         /* > 0: values computed at import time (a folded Shape) */
  int64_t ints[ONNX_MAX_RANK];
  int producer;        /* node index, -1 for graph inputs and initializers */
  int alias;           /* Identity/Dropout output: the tensor it stands for, else -1 */
  int raw_consumers;   /* nodes naming it as an input */
  int n_consumers;     /* kept layers reading it as an activation */
  int weight_counted;
  int graph_input, graph_output;
  int layer;           /* layer producing it, -1 */
} onnx_tensor;

/* One node as the operator table sees it: resolved inputs (NULL when omitted) and its outputs,
 * whose shapes the table fills when out_known is 0. */
typedef struct onnx_node_view {
  const Onnx__NodeProto *node;
  const char *file, *name; /* for messages */
  int n_in;
  const onnx_tensor *in[ONNX_MAX_IO];
  int n_out;
  onnx_shape out[ONNX_MAX_IO];
  int out_known[ONNX_MAX_IO];
  int out_elem[ONNX_MAX_IO];
} onnx_node_view;

/* Operator classes of the cost table. */
typedef enum {
  ONNX_OP_UNKNOWN = 0,
  ONNX_OP_UNARY,   /* elementwise, one input */
  ONNX_OP_NARY,    /* elementwise with broadcasting, several inputs */
  ONNX_OP_CONV,
  ONNX_OP_CONVT,
  ONNX_OP_GEMM,
  ONNX_OP_MATMUL,
  ONNX_OP_BN,
  ONNX_OP_LN,
  ONNX_OP_SOFTMAX,
  ONNX_OP_POOL,
  ONNX_OP_GPOOL,
  ONNX_OP_REDUCE,
  ONNX_OP_LSTM,
  ONNX_OP_GRU,
  ONNX_OP_RNN,
  ONNX_OP_MOVE,    /* data movement: 0 flops */
  ONNX_OP_CONSTANT,
  ONNX_OP_REMOVED, /* Identity, Dropout */
  ONNX_OP_SHAPE    /* Shape, Size: constant once shapes are static */
} onnx_op_class;

typedef struct onnx_op_info {
  const char *type;
  onnx_op_class cls;
  int flops_per_elem; /* UNARY / NARY: flops per output element (per extra input for NARY) */
  int fusible;        /* normalisation, activation, bias or residual add */
} onnx_op_info;

/* ---- the operator table (onnx_ops.c, onnx_infer.c, onnx_cost.c) ---- */

/* The table entry of an operator type, or NULL when the cost model does not know it. */
const onnx_op_info *onnx_op_lookup(const char *type);

/* Fills the shapes (and element types) of the outputs not already known.  An output that cannot be
 * inferred is MP_INPUT naming the node. */
mp_status onnx_op_infer(const onnx_op_info *op, onnx_node_view *v, mp_error *err);

/* The work of one node at the file's batch size, from its input and output shapes, and the shape of the
 * products its MACs form (graph.h's dims; all 0 when it has none). */
mp_status onnx_op_cost(const onnx_op_info *op, const onnx_node_view *v, uint64_t *macs, uint64_t *flops,
                       graph_dims *dims, mp_error *err);

/* MP_INPUT with "FILE: node 'NAME' (TYPE): what" for the node of v; returns MP_INPUT. */
mp_status onnx_node_fail(const onnx_node_view *v, mp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Input i of the node (NULL when omitted or beyond its inputs). */
const onnx_tensor *onnx_input(const onnx_node_view *v, int i);

/* MP_INPUT naming the node unless input i is present with at least min_rank dimensions.  The shape
 * rules and the cost formulas check every input they read with it: a node whose outputs have
 * value_info shapes skips the rules but not the formulas. */
mp_status onnx_need(const onnx_node_view *v, int i, int min_rank, mp_error *err);

/* A possibly negative axis counted from the end of a rank-`rank` shape, as a plain index (unchecked). */
int onnx_norm_axis(int64_t axis, int rank);

/* Elements of a shape (1 for a scalar). */
uint64_t onnx_shape_elems(const onnx_shape *s);

/* 1 when every dimension is positive and the element count is at most 2^50 (so that byte counts stay
 * exact in JSON), else 0. */
int onnx_shape_ok(const onnx_shape *s);

/* Attribute helpers (borrowed node). */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *name);
int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt);
float onnx_attr_float(const Onnx__NodeProto *n, const char *name, float dflt);
/* Copies up to max ints of a list attribute; returns how many it has, -1 when absent. */
int onnx_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max);

/* The integer values of a constant tensor (Constant value or an initializer that holds data):
 * returns how many (<= max copied), or -1 when they are not known at import time. */
int onnx_tensor_ints(const onnx_tensor *t, int64_t *out, int max);

/* The operands' dimensions of the products, checked (a mismatch is MP_INPUT naming the node); shared
 * by the shape rules and the cost formulas.  Gemm: A is m x k, B is k x n (after transA / transB). */
mp_status onnx_gemm_dims(const onnx_node_view *v, int64_t *m, int64_t *n, int64_t *k, mp_error *err);
/* MatMul: the output shape y (numpy matmul, batch dimensions broadcast) and the inner dimension k. */
mp_status onnx_matmul_dims(const onnx_node_view *v, onnx_shape *y, int64_t *k, mp_error *err);

/* LSTM / GRU / RNN: sequence length, batch, input size, hidden size, directions. */
typedef struct onnx_rnn_dims {
  int64_t t, b, i, h, d;
} onnx_rnn_dims;
mp_status onnx_rnn_read(const onnx_node_view *v, int gates, onnx_rnn_dims *r, mp_error *err);

/* ---- the import (onnx_import.c, onnx_wire.c, onnx_fold.c, onnx_emit.c) ---- */

/* Checks the protobuf bytes of a model before protobuf-c unpacks them (onnx_wire.c): messages nested
 * at most ONNX_MAX_NESTING deep and at most ONNX_UNPACKED_BASE + ONNX_UNPACKED_PER_BYTE x len bytes
 * unpacked; MP_INPUT naming file otherwise.  Malformed bytes pass (protobuf-c refuses them). */
mp_status onnx_wire_check(const char *file, const void *data, size_t len, mp_error *err);

/* A string -> index map (open addressing; only looked up, never iterated).  Keys are borrowed. */
typedef struct onnx_namemap {
  size_t cap;
  const char **keys;
  int *vals;
} onnx_namemap;

/* Sizes m for at most n keys (load factor <= 1/2, so it never fills); 0 when out of memory, with
 * nothing left allocated (onnx_map_free is then a no-op). */
int onnx_map_init(onnx_namemap *m, size_t n);
void onnx_map_free(onnx_namemap *m);
/* The value of key, or -1. */
int onnx_map_get(const onnx_namemap *m, const char *key);
void onnx_map_put(onnx_namemap *m, const char *key, int val);

/* One kept node: a layer of the output graph, until fusion folds it into its producer. */
typedef struct onnx_layer {
  int node;
  char *name; /* owned, unique */
  const char *type;
  char *fused_type; /* owned "Conv+BatchNormalization+Relu" once something is fused in, else NULL */
  int n_in, cap_in;
  int *in; /* activation tensors, distinct */
  int n_out;
  int *out;
  int out_owned; /* out is this layer's allocation */
  uint64_t macs, flops, wbytes;
  graph_dims dims; /* of its products (onnx_op_cost), all 0 when none */
  int merged_into; /* -1, or the layer this one was fused into */
} onnx_layer;

/* The state of one import: the unpacked graph (borrowed from the model), every named value, the
 * layers so far and the report. */
typedef struct onnx_importer {
  const char *path;
  int dtype_bytes;
  Onnx__GraphProto *g;
  int n_t;
  onnx_tensor *t;
  onnx_namemap names; /* tensor name -> index */
  onnx_namemap vinfo; /* tensor name -> index into vis */
  const Onnx__ValueInfoProto **vis;
  const char *batch_param;
  int model_batch;
  onnx_layer *layers;
  int n_layers;
  onnx_report rep;
} onnx_importer;

/* MP_INPUT with "FILE: node 'NAME' (TYPE): what", "FILE: node IDX (TYPE): what" for a node without a
 * name, or "FILE: what" when n is NULL; returns MP_INPUT. */
mp_status onnx_fail(const onnx_importer *im, mp_error *err, const Onnx__NodeProto *n, int idx, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Bytes of a tensor on the chip: its elements times the dtype's size (integers keep their own). */
uint64_t onnx_tensor_bytes(const onnx_importer *im, const onnx_tensor *t);

/* Adds activation tensor t to the layer's inputs unless it is there already; MP_NOMEM (err not filled)
 * when out of memory. */
mp_status onnx_layer_add_input(onnx_layer *l, int t);

/* Makes t the value of Constant node nd (index idx): kind, element type and shape from its value,
 * value_int(s) or value_float(s) attribute. */
mp_status onnx_fold_constant(const onnx_importer *im, const Onnx__NodeProto *nd, int idx, onnx_tensor *t,
                             mp_error *err);

/* Computes the values of a folded node's output when it is small integer shape arithmetic (what
 * exporters emit around Reshape, Slice and Expand), so that the shapes it feeds can be inferred.
 * Leaves the values unknown (n_ints 0) for anything else. */
void onnx_fold_eval(const onnx_node_view *v, onnx_tensor *out);

/* Folds each fusible layer into the layer producing its input when that layer has no other consumer;
 * counts them in rep.fused. */
mp_status onnx_fuse(onnx_importer *im, mp_error *err);

/* Names every remaining layer: its node's name when that is still free, else BASE_IDX (then BASE_IDX_1,
 * ...), BASE being the node's name or type and IDX its index. */
mp_status onnx_unique_names(onnx_importer *im, mp_error *err);

/* The meshpipe graph document of the remaining layers at the report's batch size, with its "source"
 * provenance (hash: of the file's bytes); fills the report's layer count and totals.  *out is owned. */
mp_status onnx_document(onnx_importer *im, const onnx_options *o, uint64_t hash, cJSON **out, mp_error *err);

#endif
