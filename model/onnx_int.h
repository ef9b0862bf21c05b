/* onnx internals shared by onnx_import.c (reading, folding, fusion, output) and onnx_ops.c (the
 * per-operator table: shape inference and cost).  Not a public header. */
#ifndef MESHPIPE_ONNX_INT_H
#define MESHPIPE_ONNX_INT_H

#include <stdint.h>

#include "err.h"
#include "onnx.pb-c.h"

#define ONNX_MAX_RANK 8
#define ONNX_MAX_IO 64 /* inputs / outputs of one node (more is an error) */

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

/* The table entry of an operator type, or NULL when the cost model does not know it. */
const onnx_op_info *onnx_op_lookup(const char *type);

/* Fills the shapes (and element types) of the outputs not already known.  An output that cannot be
 * inferred is MP_INPUT naming the node. */
mp_status onnx_op_infer(const onnx_op_info *op, onnx_node_view *v, mp_error *err);

/* The work of one node at the file's batch size, from its input and output shapes. */
mp_status onnx_op_cost(const onnx_op_info *op, const onnx_node_view *v, uint64_t *macs, uint64_t *flops,
                       mp_error *err);

/* Elements of a shape (1 for a scalar). */
uint64_t onnx_shape_elems(const onnx_shape *s);

/* Attribute helpers (borrowed node). */
const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *name);
int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt);
float onnx_attr_float(const Onnx__NodeProto *n, const char *name, float dflt);
/* Copies up to max ints of a list attribute; returns how many it has, -1 when absent. */
int onnx_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max);

/* The integer values of a constant tensor (Constant value or an initializer that holds data):
 * returns how many (<= max copied), or -1 when they are not known at import time. */
int onnx_tensor_ints(const onnx_tensor *t, int64_t *out, int max);

#endif
