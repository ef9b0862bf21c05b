/* onnx: the operator table — which ONNX operators the cost model knows, with their class, flops per
 * element and whether they fuse — and the helpers the shape rules (onnx_infer.c) and the cost formulas
 * (onnx_cost.c) share: failures naming a node, attributes, constant integer values.  See onnx_int.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "onnx_int.h"

/* Per-element flop counts: an add, multiply, compare or select is 1; exp, log, tanh, erf, sqrt-free
 * transcendental functions and pow are 4; a sigmoid is exp + add + divide = 6. */
static const onnx_op_info op_table[] = {
    /* elementwise, one input */
    {"Relu", ONNX_OP_UNARY, 1, 1},
    {"Abs", ONNX_OP_UNARY, 1, 1},
    {"Neg", ONNX_OP_UNARY, 1, 1},
    {"Sqrt", ONNX_OP_UNARY, 1, 1},
    {"Reciprocal", ONNX_OP_UNARY, 1, 1},
    {"Floor", ONNX_OP_UNARY, 1, 1},
    {"Ceil", ONNX_OP_UNARY, 1, 1},
    {"Sign", ONNX_OP_UNARY, 1, 1},
    {"Not", ONNX_OP_UNARY, 1, 1},
    {"Cast", ONNX_OP_UNARY, 1, 1},
    {"Clip", ONNX_OP_UNARY, 2, 1},
    {"LeakyRelu", ONNX_OP_UNARY, 2, 1},
    {"HardSigmoid", ONNX_OP_UNARY, 4, 1},
    {"HardSwish", ONNX_OP_UNARY, 5, 1},
    {"Exp", ONNX_OP_UNARY, 4, 1},
    {"Log", ONNX_OP_UNARY, 4, 1},
    {"Tanh", ONNX_OP_UNARY, 4, 1},
    {"Erf", ONNX_OP_UNARY, 4, 1},
    {"Sigmoid", ONNX_OP_UNARY, 6, 1},
    {"Elu", ONNX_OP_UNARY, 6, 1},
    {"Selu", ONNX_OP_UNARY, 7, 1},
    {"Gelu", ONNX_OP_UNARY, 8, 1},
    {"Softplus", ONNX_OP_UNARY, 9, 1},
    /* elementwise with broadcasting */
    {"Add", ONNX_OP_NARY, 1, 1},
    {"Sub", ONNX_OP_NARY, 1, 1},
    {"Mul", ONNX_OP_NARY, 1, 1},
    {"Div", ONNX_OP_NARY, 1, 1},
    {"Max", ONNX_OP_NARY, 1, 1},
    {"Min", ONNX_OP_NARY, 1, 1},
    {"Sum", ONNX_OP_NARY, 1, 1},
    {"Mean", ONNX_OP_NARY, 1, 1},
    {"PRelu", ONNX_OP_NARY, 2, 1},
    {"Pow", ONNX_OP_NARY, 4, 1},
    {"Where", ONNX_OP_NARY, 1, 1},
    {"Equal", ONNX_OP_NARY, 1, 0},
    {"Less", ONNX_OP_NARY, 1, 0},
    {"Greater", ONNX_OP_NARY, 1, 0},
    {"LessOrEqual", ONNX_OP_NARY, 1, 0},
    {"GreaterOrEqual", ONNX_OP_NARY, 1, 0},
    {"And", ONNX_OP_NARY, 1, 0},
    {"Or", ONNX_OP_NARY, 1, 0},
    /* products */
    {"Conv", ONNX_OP_CONV, 0, 0},
    {"ConvTranspose", ONNX_OP_CONVT, 0, 0},
    {"Gemm", ONNX_OP_GEMM, 0, 0},
    {"MatMul", ONNX_OP_MATMUL, 0, 0},
    {"LSTM", ONNX_OP_LSTM, 0, 0},
    {"GRU", ONNX_OP_GRU, 0, 0},
    {"RNN", ONNX_OP_RNN, 0, 0},
    /* normalisation and reductions */
    {"BatchNormalization", ONNX_OP_BN, 0, 1},
    {"LayerNormalization", ONNX_OP_LN, 0, 1},
    {"Softmax", ONNX_OP_SOFTMAX, 0, 0},
    {"LogSoftmax", ONNX_OP_SOFTMAX, 0, 0},
    {"MaxPool", ONNX_OP_POOL, 0, 0},
    {"AveragePool", ONNX_OP_POOL, 0, 0},
    {"GlobalAveragePool", ONNX_OP_GPOOL, 0, 0},
    {"GlobalMaxPool", ONNX_OP_GPOOL, 0, 0},
    {"ReduceMean", ONNX_OP_REDUCE, 0, 0},
    {"ReduceSum", ONNX_OP_REDUCE, 0, 0},
    {"ReduceMax", ONNX_OP_REDUCE, 0, 0},
    {"ReduceMin", ONNX_OP_REDUCE, 0, 0},
    {"ReduceProd", ONNX_OP_REDUCE, 0, 0},
    /* data movement */
    {"Concat", ONNX_OP_MOVE, 0, 0},
    {"Split", ONNX_OP_MOVE, 0, 0},
    {"Slice", ONNX_OP_MOVE, 0, 0},
    {"Gather", ONNX_OP_MOVE, 0, 0},
    {"Transpose", ONNX_OP_MOVE, 0, 0},
    {"Reshape", ONNX_OP_MOVE, 0, 0},
    {"Flatten", ONNX_OP_MOVE, 0, 0},
    {"Squeeze", ONNX_OP_MOVE, 0, 0},
    {"Unsqueeze", ONNX_OP_MOVE, 0, 0},
    {"Expand", ONNX_OP_MOVE, 0, 0},
    {"Tile", ONNX_OP_MOVE, 0, 0},
    {"Pad", ONNX_OP_MOVE, 0, 0},
    {"ConstantOfShape", ONNX_OP_MOVE, 0, 0},
    {"DepthToSpace", ONNX_OP_MOVE, 0, 0},
    {"SpaceToDepth", ONNX_OP_MOVE, 0, 0},
    /* no work */
    {"Constant", ONNX_OP_CONSTANT, 0, 0},
    {"Identity", ONNX_OP_REMOVED, 0, 0},
    {"Dropout", ONNX_OP_REMOVED, 0, 0},
    {"Shape", ONNX_OP_SHAPE, 0, 0},
    {"Size", ONNX_OP_SHAPE, 0, 0},
};
#define N_OPS ((int)(sizeof op_table / sizeof op_table[0]))

const onnx_op_info *onnx_op_lookup(const char *type) {
  if (!type) return NULL;
  for (int i = 0; i < N_OPS; i++)
    if (strcmp(op_table[i].type, type) == 0) return &op_table[i];
  return NULL;
}

/* ---- helpers ---- */

mp_status onnx_node_fail(const onnx_node_view *v, mp_error *err, const char *fmt, ...) {
  char what[512], where[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(where, sizeof where, "node '%.200s' (%.60s)", v->name, v->node->op_type);
  return err_at(err, MP_INPUT, v->file, where, "%s", what);
}

const onnx_tensor *onnx_input(const onnx_node_view *v, int i) { return i < v->n_in ? v->in[i] : NULL; }

int onnx_norm_axis(int64_t axis, int rank) { return (int)(axis < 0 ? axis + rank : axis); }

uint64_t onnx_shape_elems(const onnx_shape *s) {
  uint64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= (uint64_t)s->d[i];
  return n;
}

/* Largest element count a shape may have: JSON carries integers exactly up to 2^53. */
#define MAX_ELEMS (UINT64_C(1) << 50)

int onnx_shape_ok(const onnx_shape *s) {
  uint64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->d[i] <= 0) return 0;
    n *= (uint64_t)s->d[i];
    if (n > MAX_ELEMS) return 0;
  }
  return 1;
}

const Onnx__AttributeProto *onnx_attr(const Onnx__NodeProto *n, const char *name) {
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->name && strcmp(n->attribute[i]->name, name) == 0) return n->attribute[i];
  return NULL;
}

int64_t onnx_attr_int(const Onnx__NodeProto *n, const char *name, int64_t dflt) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  return a && a->has_i ? a->i : dflt;
}

float onnx_attr_float(const Onnx__NodeProto *n, const char *name, float dflt) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  return a && a->has_f ? a->f : dflt;
}

int onnx_attr_ints(const Onnx__NodeProto *n, const char *name, int64_t *out, int max) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  if (!a) return -1;
  for (size_t i = 0; i < a->n_ints && (int)i < max; i++) out[i] = a->ints[i];
  return (int)a->n_ints;
}

static int64_t le_int(const uint8_t *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; i--) v = (v << 8) | p[i];
  if (bytes == 4) return (int64_t)(int32_t)(uint32_t)v;
  return (int64_t)v;
}

int onnx_tensor_ints(const onnx_tensor *t, int64_t *out, int max) {
  if (t->n_ints > 0) {
    for (int i = 0; i < t->n_ints && i < max; i++) out[i] = t->ints[i];
    return t->n_ints;
  }
  if (t->ivalue) {
    const Onnx__AttributeProto *a = t->ivalue;
    if (a->n_ints || a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS) {
      for (size_t i = 0; i < a->n_ints && (int)i < max; i++) out[i] = a->ints[i];
      return (int)a->n_ints;
    }
    if (a->has_i) {
      if (max > 0) out[0] = a->i;
      return 1;
    }
    return -1;
  }
  const Onnx__TensorProto *p = t->value;
  if (!p) return -1;
  if (p->n_int64_data) {
    for (size_t i = 0; i < p->n_int64_data && (int)i < max; i++) out[i] = p->int64_data[i];
    return (int)p->n_int64_data;
  }
  if (p->n_int32_data) {
    for (size_t i = 0; i < p->n_int32_data && (int)i < max; i++) out[i] = p->int32_data[i];
    return (int)p->n_int32_data;
  }
  if (p->has_raw_data && p->raw_data.len) {
    int bytes = p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT32 ? 4
                : p->data_type == ONNX__TENSOR_PROTO__DATA_TYPE__INT64 ? 8 : 0;
    if (!bytes || p->raw_data.len % (size_t)bytes) return -1;
    int n = (int)(p->raw_data.len / (size_t)bytes);
    for (int i = 0; i < n && i < max; i++) out[i] = le_int(p->raw_data.data + (size_t)i * (size_t)bytes, bytes);
    return n;
  }
  return -1;
}
