/* onnx: the operator table — which ONNX operators the cost model knows, how their output shapes
 * follow from their inputs, and what work they do.  See onnx_int.h; the formulas are documented in
 * traces/README.md ("Cost model per operator"). */
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

static mp_status node_fail(const onnx_node_view *v, mp_error *err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mp_status node_fail(const onnx_node_view *v, mp_error *err, const char *fmt, ...) {
  char what[512], where[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(where, sizeof where, "node '%.200s' (%.60s)", v->name, v->node->op_type);
  return err_at(err, MP_INPUT, v->file, where, "%s", what);
}

uint64_t onnx_shape_elems(const onnx_shape *s) {
  uint64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= (uint64_t)s->d[i];
  return n;
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

static int attr_is(const Onnx__NodeProto *n, const char *name, const char *value) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  if (!a || !a->has_s) return 0;
  size_t len = strlen(value);
  return a->s.len == len && memcmp(a->s.data, value, len) == 0;
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

static const onnx_tensor *in_at(const onnx_node_view *v, int i) { return i < v->n_in ? v->in[i] : NULL; }

static mp_status need(const onnx_node_view *v, int i, int min_rank, mp_error *err) {
  const onnx_tensor *t = in_at(v, i);
  if (!t) return node_fail(v, err, "input %d is missing", i);
  if (t->shape.rank < min_rank)
    return node_fail(v, err, "input '%.200s' has rank %d, expected at least %d", t->name, t->shape.rank, min_rank);
  return MP_OK;
}

/* Reads the integer values of input i into out; fails naming the node when unknown. */
static mp_status need_ints(const onnx_node_view *v, int i, int64_t *out, int max, int *n, mp_error *err) {
  const onnx_tensor *t = in_at(v, i);
  if (!t) return node_fail(v, err, "input %d is missing", i);
  int k = onnx_tensor_ints(t, out, max);
  if (k < 0)
    return node_fail(v, err, "the values of input '%.200s' are not known at import time, so the output shape "
                     "cannot be inferred (give the output a value_info shape)", t->name);
  if (k > max) return node_fail(v, err, "input '%.200s' has %d values, more than %d", t->name, k, max);
  *n = k;
  return MP_OK;
}

static int norm_axis(int64_t axis, int rank) { return (int)(axis < 0 ? axis + rank : axis); }

static mp_status set_out(onnx_node_view *v, int i, const onnx_shape *s, int elem) {
  if (i < v->n_out && !v->out_known[i]) {
    v->out[i] = *s;
    v->out_known[i] = 1;
  }
  if (i < v->n_out && !v->out_elem[i]) v->out_elem[i] = elem;
  return MP_OK;
}

/* numpy broadcasting; out may be a or b. */
static int broadcast(const onnx_shape *a, const onnx_shape *b, onnx_shape *out) {
  onnx_shape y;
  y.rank = a->rank > b->rank ? a->rank : b->rank;
  for (int i = 0; i < y.rank; i++) {
    int64_t da = i < y.rank - a->rank ? 1 : a->d[i - (y.rank - a->rank)];
    int64_t db = i < y.rank - b->rank ? 1 : b->d[i - (y.rank - b->rank)];
    if (da == db || db == 1) y.d[i] = da;
    else if (da == 1) y.d[i] = db;
    else return -1;
  }
  *out = y;
  return 0;
}

/* ---- spatial operators ---- */

typedef struct window {
  int nsp;
  int64_t k[ONNX_MAX_RANK], s[ONNX_MAX_RANK], dil[ONNX_MAX_RANK], pads[2 * ONNX_MAX_RANK], opad[ONNX_MAX_RANK];
} window;

static mp_status read_window(const onnx_node_view *v, int nsp, const onnx_shape *w, window *win, mp_error *err) {
  win->nsp = nsp;
  for (int i = 0; i < nsp; i++) {
    win->k[i] = w ? w->d[2 + i] : 1;
    win->s[i] = win->dil[i] = 1;
    win->pads[i] = win->pads[nsp + i] = win->opad[i] = 0;
  }
  int64_t tmp[2 * ONNX_MAX_RANK];
  int n = onnx_attr_ints(v->node, "kernel_shape", tmp, 2 * ONNX_MAX_RANK);
  if (n >= 0) {
    if (n != nsp) return node_fail(v, err, "kernel_shape has %d values for %d spatial axes", n, nsp);
    memcpy(win->k, tmp, (size_t)nsp * sizeof *tmp);
  } else if (!w) {
    return node_fail(v, err, "kernel_shape is missing");
  }
  if ((n = onnx_attr_ints(v->node, "strides", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != nsp) return node_fail(v, err, "strides has %d values for %d spatial axes", n, nsp);
    memcpy(win->s, tmp, (size_t)nsp * sizeof *tmp);
  }
  if ((n = onnx_attr_ints(v->node, "dilations", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != nsp) return node_fail(v, err, "dilations has %d values for %d spatial axes", n, nsp);
    memcpy(win->dil, tmp, (size_t)nsp * sizeof *tmp);
  }
  if ((n = onnx_attr_ints(v->node, "pads", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != 2 * nsp) return node_fail(v, err, "pads has %d values for %d spatial axes", n, nsp);
    memcpy(win->pads, tmp, (size_t)n * sizeof *tmp);
  }
  if ((n = onnx_attr_ints(v->node, "output_padding", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != nsp) return node_fail(v, err, "output_padding has %d values for %d spatial axes", n, nsp);
    memcpy(win->opad, tmp, (size_t)nsp * sizeof *tmp);
  }
  for (int i = 0; i < nsp; i++)
    if (win->k[i] <= 0 || win->s[i] <= 0 || win->dil[i] <= 0 || win->pads[i] < 0 || win->pads[nsp + i] < 0)
      return node_fail(v, err, "kernel, strides and dilations must be positive and pads not negative");
  return MP_OK;
}

/* Output extent of a forward window (Conv, pools) along one axis. */
static int64_t window_out(const onnx_node_view *v, const window *w, int i, int64_t in, int ceil_mode) {
  int64_t ek = (w->k[i] - 1) * w->dil[i] + 1;
  if (attr_is(v->node, "auto_pad", "SAME_UPPER") || attr_is(v->node, "auto_pad", "SAME_LOWER"))
    return (in + w->s[i] - 1) / w->s[i];
  if (attr_is(v->node, "auto_pad", "VALID")) return in < ek ? 0 : (in - ek) / w->s[i] + 1;
  int64_t span = in + w->pads[i] + w->pads[w->nsp + i] - ek;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + w->s[i] - 1) / w->s[i] : span / w->s[i]) + 1;
  if (ceil_mode && (out - 1) * w->s[i] >= in + w->pads[i]) out--;
  return out;
}

static mp_status infer_conv(onnx_node_view *v, int transposed, mp_error *err) {
  mp_status st = need(v, 0, 3, err);
  if (st == MP_OK) st = need(v, 1, 3, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape, *w = &v->in[1]->shape;
  if (w->rank != x->rank)
    return node_fail(v, err, "weight rank %d differs from input rank %d", w->rank, x->rank);
  int nsp = x->rank - 2;
  window win;
  if ((st = read_window(v, nsp, w, &win, err)) != MP_OK) return st;
  int64_t group = onnx_attr_int(v->node, "group", 1);
  if (group <= 0 || x->d[1] % group) return node_fail(v, err, "group %lld does not divide the input channels %lld",
                                                      (long long)group, (long long)x->d[1]);
  onnx_shape y = {x->rank, {0}};
  y.d[0] = x->d[0];
  if (!transposed) {
    if (w->d[1] * group != x->d[1])
      return node_fail(v, err, "weight expects %lld input channels, the input has %lld",
                       (long long)(w->d[1] * group), (long long)x->d[1]);
    y.d[1] = w->d[0];
    for (int i = 0; i < nsp; i++) y.d[2 + i] = window_out(v, &win, i, x->d[2 + i], 0);
  } else {
    if (w->d[0] != x->d[1])
      return node_fail(v, err, "weight expects %lld input channels, the input has %lld", (long long)w->d[0],
                       (long long)x->d[1]);
    y.d[1] = w->d[1] * group;
    int64_t os[ONNX_MAX_RANK + 2];
    int n = onnx_attr_ints(v->node, "output_shape", os, ONNX_MAX_RANK + 2);
    if (n >= 0) {
      if (n != nsp && n != nsp + 2) return node_fail(v, err, "output_shape has %d values", n);
      for (int i = 0; i < nsp; i++) y.d[2 + i] = os[n - nsp + i];
    } else {
      int same = attr_is(v->node, "auto_pad", "SAME_UPPER") || attr_is(v->node, "auto_pad", "SAME_LOWER");
      for (int i = 0; i < nsp; i++) {
        int64_t in = x->d[2 + i];
        y.d[2 + i] = same ? in * win.s[i]
                          : win.s[i] * (in - 1) + win.opad[i] + (win.k[i] - 1) * win.dil[i] + 1 - win.pads[i] -
                                win.pads[nsp + i];
      }
    }
  }
  return set_out(v, 0, &y, v->in[0]->elem_type);
}

static mp_status infer_pool(onnx_node_view *v, int global, mp_error *err) {
  mp_status st = need(v, 0, 3, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape;
  onnx_shape y = *x;
  int nsp = x->rank - 2;
  if (global) {
    for (int i = 0; i < nsp; i++) y.d[2 + i] = 1;
  } else {
    window win;
    if ((st = read_window(v, nsp, NULL, &win, err)) != MP_OK) return st;
    int ceil_mode = (int)onnx_attr_int(v->node, "ceil_mode", 0);
    for (int i = 0; i < nsp; i++) y.d[2 + i] = window_out(v, &win, i, x->d[2 + i], ceil_mode);
  }
  set_out(v, 0, &y, v->in[0]->elem_type);
  return set_out(v, 1, &y, ONNX__TENSOR_PROTO__DATA_TYPE__INT64); /* MaxPool indices */
}

/* ---- products ---- */

static mp_status gemm_dims(const onnx_node_view *v, int64_t *m, int64_t *n, int64_t *k, mp_error *err) {
  mp_status st = need(v, 0, 2, err);
  if (st == MP_OK) st = need(v, 1, 2, err);
  if (st != MP_OK) return st;
  const onnx_shape *a = &v->in[0]->shape, *b = &v->in[1]->shape;
  if (a->rank != 2 || b->rank != 2) return node_fail(v, err, "Gemm needs two matrices");
  int ta = onnx_attr_int(v->node, "transA", 0) != 0, tb = onnx_attr_int(v->node, "transB", 0) != 0;
  *m = ta ? a->d[1] : a->d[0];
  *k = ta ? a->d[0] : a->d[1];
  *n = tb ? b->d[0] : b->d[1];
  int64_t kb = tb ? b->d[1] : b->d[0];
  if (kb != *k) return node_fail(v, err, "inner dimensions differ (%lld and %lld)", (long long)*k, (long long)kb);
  return MP_OK;
}

static mp_status matmul_dims(const onnx_node_view *v, onnx_shape *y, int64_t *k, mp_error *err) {
  mp_status st = need(v, 0, 1, err);
  if (st == MP_OK) st = need(v, 1, 1, err);
  if (st != MP_OK) return st;
  onnx_shape a = v->in[0]->shape, b = v->in[1]->shape;
  int a1 = a.rank == 1, b1 = b.rank == 1;
  if (a1) a = (onnx_shape){2, {1, a.d[0]}};
  if (b1) b = (onnx_shape){2, {b.d[0], 1}};
  *k = a.d[a.rank - 1];
  if (b.d[b.rank - 2] != *k)
    return node_fail(v, err, "inner dimensions differ (%lld and %lld)", (long long)*k, (long long)b.d[b.rank - 2]);
  onnx_shape ba = {a.rank - 2, {0}}, bb = {b.rank - 2, {0}};
  memcpy(ba.d, a.d, (size_t)ba.rank * sizeof a.d[0]);
  memcpy(bb.d, b.d, (size_t)bb.rank * sizeof b.d[0]);
  if (broadcast(&ba, &bb, y) < 0) return node_fail(v, err, "batch dimensions do not broadcast");
  if (y->rank + 2 > ONNX_MAX_RANK) return node_fail(v, err, "rank too large");
  if (!a1) y->d[y->rank++] = a.d[a.rank - 2];
  if (!b1) y->d[y->rank++] = b.d[b.rank - 1];
  return MP_OK;
}

typedef struct rnn_dims {
  int64_t t, b, i, h, d;
} rnn_dims;

static mp_status rnn_read(const onnx_node_view *v, int gates, rnn_dims *r, mp_error *err) {
  mp_status st = need(v, 0, 3, err);
  if (st == MP_OK) st = need(v, 1, 3, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape, *w = &v->in[1]->shape;
  int layout = onnx_attr_int(v->node, "layout", 0) != 0;
  r->t = layout ? x->d[1] : x->d[0];
  r->b = layout ? x->d[0] : x->d[1];
  r->i = x->d[2];
  r->d = attr_is(v->node, "direction", "bidirectional") ? 2 : 1;
  r->h = onnx_attr_int(v->node, "hidden_size", w->d[1] / gates);
  if (w->rank != 3 || w->d[0] != r->d || w->d[1] != gates * r->h || w->d[2] != r->i)
    return node_fail(v, err, "weight W is not [%lld, %lld, %lld]", (long long)r->d, (long long)(gates * r->h),
                     (long long)r->i);
  return MP_OK;
}

static mp_status infer_rnn(onnx_node_view *v, int gates, mp_error *err) {
  rnn_dims r;
  mp_status st = rnn_read(v, gates, &r, err);
  if (st != MP_OK) return st;
  int layout = onnx_attr_int(v->node, "layout", 0) != 0;
  int e = v->in[0]->elem_type;
  onnx_shape y = layout ? (onnx_shape){4, {r.b, r.t, r.d, r.h}} : (onnx_shape){4, {r.t, r.d, r.b, r.h}};
  onnx_shape yh = layout ? (onnx_shape){3, {r.b, r.d, r.h}} : (onnx_shape){3, {r.d, r.b, r.h}};
  set_out(v, 0, &y, e);
  set_out(v, 1, &yh, e);
  return set_out(v, 2, &yh, e);
}

/* ---- data movement ---- */

static mp_status infer_reshape(onnx_node_view *v, mp_error *err) {
  int64_t s[ONNX_MAX_RANK];
  int n;
  mp_status st = need(v, 0, 0, err);
  if (st == MP_OK) st = need_ints(v, 1, s, ONNX_MAX_RANK, &n, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape;
  int allowzero = onnx_attr_int(v->node, "allowzero", 0) != 0;
  onnx_shape y = {n, {0}};
  int minus = -1;
  uint64_t known = 1;
  for (int i = 0; i < n; i++) {
    if (s[i] == -1) {
      if (minus >= 0) return node_fail(v, err, "the target shape has two -1 entries");
      minus = i;
      continue;
    }
    y.d[i] = s[i] == 0 && !allowzero ? (i < x->rank ? x->d[i] : 0) : s[i];
    if (y.d[i] <= 0) return node_fail(v, err, "the target shape has a dimension %lld", (long long)y.d[i]);
    known *= (uint64_t)y.d[i];
  }
  uint64_t total = onnx_shape_elems(x);
  if (minus >= 0) {
    if (total % known) return node_fail(v, err, "cannot reshape %llu elements", (unsigned long long)total);
    y.d[minus] = (int64_t)(total / known);
  } else if (known != total) {
    return node_fail(v, err, "cannot reshape %llu elements into %llu", (unsigned long long)total,
                     (unsigned long long)known);
  }
  return set_out(v, 0, &y, v->in[0]->elem_type);
}

/* Axes from the "axes" attribute or, in newer opsets, from input 1; *n = -1 when neither exists. */
static mp_status read_axes(onnx_node_view *v, int64_t *axes, int *n, mp_error *err) {
  *n = onnx_attr_ints(v->node, "axes", axes, ONNX_MAX_RANK);
  if (*n > ONNX_MAX_RANK) return node_fail(v, err, "too many axes");
  if (*n >= 0 || !in_at(v, 1)) return MP_OK;
  return need_ints(v, 1, axes, ONNX_MAX_RANK, n, err);
}

static mp_status infer_squeeze(onnx_node_view *v, int unsqueeze, mp_error *err) {
  int64_t axes[ONNX_MAX_RANK];
  int n;
  mp_status st = need(v, 0, 0, err);
  if (st == MP_OK) st = read_axes(v, axes, &n, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape;
  onnx_shape y = {0, {0}};
  if (unsqueeze) {
    if (n < 0) return node_fail(v, err, "axes are missing");
    int r = x->rank + n, mark[ONNX_MAX_RANK] = {0};
    if (r > ONNX_MAX_RANK) return node_fail(v, err, "rank too large");
    for (int i = 0; i < n; i++) {
      int a = norm_axis(axes[i], r);
      if (a < 0 || a >= r || mark[a]) return node_fail(v, err, "bad axis %lld", (long long)axes[i]);
      mark[a] = 1;
    }
    for (int i = 0, j = 0; i < r; i++) y.d[i] = mark[i] ? 1 : x->d[j++];
    y.rank = r;
  } else {
    int mark[ONNX_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) {
      int a = norm_axis(axes[i], x->rank);
      if (a < 0 || a >= x->rank || x->d[a] != 1) return node_fail(v, err, "cannot squeeze axis %lld", (long long)axes[i]);
      mark[a] = 1;
    }
    for (int i = 0; i < x->rank; i++)
      if (!(n < 0 ? x->d[i] == 1 : mark[i])) y.d[y.rank++] = x->d[i];
  }
  return set_out(v, 0, &y, v->in[0]->elem_type);
}

static mp_status infer_slice(onnx_node_view *v, mp_error *err) {
  int64_t starts[ONNX_MAX_RANK], ends[ONNX_MAX_RANK], axes[ONNX_MAX_RANK], steps[ONNX_MAX_RANK];
  int ns, ne, na = -1, nst = -1;
  mp_status st = need(v, 0, 1, err);
  if (st != MP_OK) return st;
  if (onnx_attr(v->node, "starts")) { /* opset 1 */
    ns = onnx_attr_ints(v->node, "starts", starts, ONNX_MAX_RANK);
    ne = onnx_attr_ints(v->node, "ends", ends, ONNX_MAX_RANK);
    na = onnx_attr_ints(v->node, "axes", axes, ONNX_MAX_RANK);
  } else {
    st = need_ints(v, 1, starts, ONNX_MAX_RANK, &ns, err);
    if (st == MP_OK) st = need_ints(v, 2, ends, ONNX_MAX_RANK, &ne, err);
    if (st == MP_OK && in_at(v, 3)) st = need_ints(v, 3, axes, ONNX_MAX_RANK, &na, err);
    if (st == MP_OK && in_at(v, 4)) st = need_ints(v, 4, steps, ONNX_MAX_RANK, &nst, err);
    if (st != MP_OK) return st;
  }
  if (ns != ne || ns < 0 || ns > ONNX_MAX_RANK || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return node_fail(v, err, "starts, ends, axes and steps differ in length");
  onnx_shape y = v->in[0]->shape;
  for (int i = 0; i < ns; i++) {
    int a = norm_axis(na >= 0 ? axes[i] : i, y.rank);
    int64_t step = nst >= 0 ? steps[i] : 1, dim = v->in[0]->shape.d[a];
    if (a < 0 || a >= y.rank || step == 0) return node_fail(v, err, "bad axis or step");
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i], e = ends[i] < 0 ? ends[i] + dim : ends[i];
    int64_t len;
    if (step > 0) {
      s = s < 0 ? 0 : s > dim ? dim : s;
      e = e < 0 ? 0 : e > dim ? dim : e;
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      len = s > e ? (s - e - step - 1) / (-step) : 0;
    }
    y.d[a] = len;
  }
  return set_out(v, 0, &y, v->in[0]->elem_type);
}

static mp_status infer_split(onnx_node_view *v, mp_error *err) {
  mp_status st = need(v, 0, 1, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape;
  int a = norm_axis(onnx_attr_int(v->node, "axis", 0), x->rank);
  if (a < 0 || a >= x->rank) return node_fail(v, err, "bad axis");
  int64_t parts[ONNX_MAX_IO];
  int n = onnx_attr_ints(v->node, "split", parts, ONNX_MAX_IO);
  if (n < 0 && in_at(v, 1) && (st = need_ints(v, 1, parts, ONNX_MAX_IO, &n, err)) != MP_OK) return st;
  if (n < 0) {
    n = v->n_out;
    int64_t each = (x->d[a] + n - 1) / n;
    for (int i = 0; i < n; i++) parts[i] = i < n - 1 ? each : x->d[a] - each * (n - 1);
  }
  if (n != v->n_out) return node_fail(v, err, "%d split sizes for %d outputs", n, v->n_out);
  for (int i = 0; i < n; i++) {
    onnx_shape y = *x;
    y.d[a] = parts[i];
    set_out(v, i, &y, v->in[0]->elem_type);
  }
  return MP_OK;
}

static mp_status infer_move(onnx_node_view *v, mp_error *err) {
  const char *t = v->node->op_type;
  mp_status st = MP_OK;
  int64_t vals[ONNX_MAX_RANK * 2];
  int n;
  if (strcmp(t, "Reshape") == 0) return infer_reshape(v, err);
  if (strcmp(t, "Squeeze") == 0) return infer_squeeze(v, 0, err);
  if (strcmp(t, "Unsqueeze") == 0) return infer_squeeze(v, 1, err);
  if (strcmp(t, "Slice") == 0) return infer_slice(v, err);
  if (strcmp(t, "Split") == 0) return infer_split(v, err);
  if (strcmp(t, "ConstantOfShape") == 0) {
    if ((st = need_ints(v, 0, vals, ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    onnx_shape y = {n, {0}};
    memcpy(y.d, vals, (size_t)n * sizeof vals[0]);
    const Onnx__AttributeProto *a = onnx_attr(v->node, "value");
    return set_out(v, 0, &y, a && a->t && a->t->has_data_type ? a->t->data_type : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  }
  if ((st = need(v, 0, 0, err)) != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape;
  int e = v->in[0]->elem_type;
  onnx_shape y = *x;
  if (strcmp(t, "Concat") == 0) {
    int a = norm_axis(onnx_attr_int(v->node, "axis", 0), x->rank);
    if (a < 0 || a >= x->rank) return node_fail(v, err, "bad axis");
    for (int i = 1; i < v->n_in; i++) {
      const onnx_tensor *o = v->in[i];
      if (!o) continue;
      if (o->shape.rank != x->rank) return node_fail(v, err, "inputs differ in rank");
      y.d[a] += o->shape.d[a];
    }
  } else if (strcmp(t, "Gather") == 0) {
    if ((st = need(v, 1, 0, err)) != MP_OK) return st;
    const onnx_shape *idx = &v->in[1]->shape;
    int a = norm_axis(onnx_attr_int(v->node, "axis", 0), x->rank);
    if (a < 0 || a >= x->rank || x->rank - 1 + idx->rank > ONNX_MAX_RANK) return node_fail(v, err, "bad axis or rank");
    y.rank = 0;
    for (int i = 0; i < a; i++) y.d[y.rank++] = x->d[i];
    for (int i = 0; i < idx->rank; i++) y.d[y.rank++] = idx->d[i];
    for (int i = a + 1; i < x->rank; i++) y.d[y.rank++] = x->d[i];
  } else if (strcmp(t, "Transpose") == 0) {
    n = onnx_attr_ints(v->node, "perm", vals, ONNX_MAX_RANK);
    if (n >= 0 && n != x->rank) return node_fail(v, err, "perm has %d values for rank %d", n, x->rank);
    for (int i = 0; i < x->rank; i++) {
      int p = n >= 0 ? (int)vals[i] : x->rank - 1 - i;
      if (p < 0 || p >= x->rank) return node_fail(v, err, "bad perm");
      y.d[i] = x->d[p];
    }
  } else if (strcmp(t, "Flatten") == 0) {
    int a = norm_axis(onnx_attr_int(v->node, "axis", 1), x->rank);
    if (a < 0 || a > x->rank) return node_fail(v, err, "bad axis");
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < x->rank; i++) *(i < a ? &outer : &inner) *= x->d[i];
    y = (onnx_shape){2, {outer, inner}};
  } else if (strcmp(t, "Expand") == 0) {
    if ((st = need_ints(v, 1, vals, ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    onnx_shape s = {n, {0}};
    memcpy(s.d, vals, (size_t)n * sizeof vals[0]);
    if (broadcast(x, &s, &y) < 0) return node_fail(v, err, "the shape does not broadcast");
  } else if (strcmp(t, "Tile") == 0) {
    if ((st = need_ints(v, 1, vals, ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    if (n != x->rank) return node_fail(v, err, "repeats has %d values for rank %d", n, x->rank);
    for (int i = 0; i < n; i++) y.d[i] *= vals[i];
  } else if (strcmp(t, "Pad") == 0) {
    n = onnx_attr_ints(v->node, "pads", vals, 2 * ONNX_MAX_RANK);
    if (n < 0 && (st = need_ints(v, 1, vals, 2 * ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    if (n != 2 * x->rank) return node_fail(v, err, "pads has %d values for rank %d", n, x->rank);
    for (int i = 0; i < x->rank; i++) y.d[i] += vals[i] + vals[x->rank + i];
  } else if (strcmp(t, "DepthToSpace") == 0 || strcmp(t, "SpaceToDepth") == 0) {
    int64_t b = onnx_attr_int(v->node, "blocksize", 0);
    if (x->rank != 4 || b <= 0) return node_fail(v, err, "needs a 4-d input and a positive blocksize");
    int d2s = t[0] == 'D';
    if (d2s ? x->d[1] % (b * b) : x->d[2] % b || x->d[3] % b) return node_fail(v, err, "blocksize does not divide");
    y.d[1] = d2s ? x->d[1] / (b * b) : x->d[1] * b * b;
    y.d[2] = d2s ? x->d[2] * b : x->d[2] / b;
    y.d[3] = d2s ? x->d[3] * b : x->d[3] / b;
  } else {
    return node_fail(v, err, "no shape rule for this operator (give its outputs value_info shapes)");
  }
  return set_out(v, 0, &y, e);
}

static mp_status infer_reduce(onnx_node_view *v, mp_error *err) {
  int64_t axes[ONNX_MAX_RANK];
  int n;
  mp_status st = need(v, 0, 0, err);
  if (st == MP_OK) st = read_axes(v, axes, &n, err);
  if (st != MP_OK) return st;
  const onnx_shape *x = &v->in[0]->shape;
  int keep = onnx_attr_int(v->node, "keepdims", 1) != 0;
  int mark[ONNX_MAX_RANK] = {0};
  if (n <= 0) {
    if (onnx_attr_int(v->node, "noop_with_empty_axes", 0)) return set_out(v, 0, x, v->in[0]->elem_type);
    for (int i = 0; i < x->rank; i++) mark[i] = 1;
  }
  for (int i = 0; i < n; i++) {
    int a = norm_axis(axes[i], x->rank);
    if (a < 0 || a >= x->rank) return node_fail(v, err, "bad axis %lld", (long long)axes[i]);
    mark[a] = 1;
  }
  onnx_shape y = {0, {0}};
  for (int i = 0; i < x->rank; i++)
    if (!mark[i]) y.d[y.rank++] = x->d[i];
    else if (keep) y.d[y.rank++] = 1;
  return set_out(v, 0, &y, v->in[0]->elem_type);
}

mp_status onnx_op_infer(const onnx_op_info *op, onnx_node_view *v, mp_error *err) {
  const char *t = v->node->op_type;
  mp_status st;
  switch (op ? op->cls : ONNX_OP_UNKNOWN) {
  case ONNX_OP_UNARY:
  case ONNX_OP_BN:
  case ONNX_OP_SOFTMAX:
    if ((st = need(v, 0, 0, err)) != MP_OK) return st;
    set_out(v, 0, &v->in[0]->shape,
            strcmp(t, "Cast") == 0 ? (int)onnx_attr_int(v->node, "to", 0)
            : strcmp(t, "Not") == 0 ? ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
                                     : v->in[0]->elem_type);
    for (int i = 1; i < v->n_out && op->cls == ONNX_OP_BN; i++) /* training-mode running statistics */
      if (in_at(v, 1)) set_out(v, i, &v->in[1]->shape, v->in[0]->elem_type);
    return MP_OK;
  case ONNX_OP_NARY: {
    onnx_shape y = {0, {0}};
    int first = 1;
    for (int i = 0; i < v->n_in; i++) {
      if (!v->in[i]) continue;
      if (first) y = v->in[i]->shape;
      else if (broadcast(&y, &v->in[i]->shape, &y) < 0)
        return node_fail(v, err, "input '%.200s' does not broadcast with the others", v->in[i]->name);
      first = 0;
    }
    if (first) return node_fail(v, err, "no inputs");
    int cmp = op->fusible == 0; /* comparisons and logic give booleans */
    int e = cmp ? ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
                : strcmp(t, "Where") == 0 && in_at(v, 1) ? v->in[1]->elem_type : v->in[0] ? v->in[0]->elem_type : 0;
    return set_out(v, 0, &y, e);
  }
  case ONNX_OP_LN: {
    if ((st = need(v, 0, 1, err)) != MP_OK) return st;
    const onnx_shape *x = &v->in[0]->shape;
    int a = norm_axis(onnx_attr_int(v->node, "axis", -1), x->rank);
    if (a < 0 || a >= x->rank) return node_fail(v, err, "bad axis");
    onnx_shape stat = *x;
    for (int i = a; i < x->rank; i++) stat.d[i] = 1;
    set_out(v, 0, x, v->in[0]->elem_type);
    set_out(v, 1, &stat, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    return set_out(v, 2, &stat, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
  }
  case ONNX_OP_CONV: return infer_conv(v, 0, err);
  case ONNX_OP_CONVT: return infer_conv(v, 1, err);
  case ONNX_OP_GEMM: {
    int64_t m, n, k;
    if ((st = gemm_dims(v, &m, &n, &k, err)) != MP_OK) return st;
    onnx_shape y = {2, {m, n}};
    return set_out(v, 0, &y, v->in[0]->elem_type);
  }
  case ONNX_OP_MATMUL: {
    onnx_shape y;
    int64_t k;
    if ((st = matmul_dims(v, &y, &k, err)) != MP_OK) return st;
    return set_out(v, 0, &y, v->in[0]->elem_type);
  }
  case ONNX_OP_POOL: return infer_pool(v, 0, err);
  case ONNX_OP_GPOOL: return infer_pool(v, 1, err);
  case ONNX_OP_REDUCE: return infer_reduce(v, err);
  case ONNX_OP_LSTM: return infer_rnn(v, 4, err);
  case ONNX_OP_GRU: return infer_rnn(v, 3, err);
  case ONNX_OP_RNN: return infer_rnn(v, 1, err);
  case ONNX_OP_MOVE: return infer_move(v, err);
  case ONNX_OP_SHAPE: {
    if ((st = need(v, 0, 0, err)) != MP_OK) return st;
    int r = v->in[0]->shape.rank;
    int64_t s = onnx_attr_int(v->node, "start", 0), e = onnx_attr_int(v->node, "end", r);
    s = s < 0 ? s + r : s;
    e = e < 0 ? e + r : e;
    s = s < 0 ? 0 : s > r ? r : s;
    e = e < 0 ? 0 : e > r ? r : e;
    onnx_shape y = strcmp(t, "Size") == 0 ? (onnx_shape){0, {0}} : (onnx_shape){1, {e > s ? e - s : 0}};
    return set_out(v, 0, &y, ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
  }
  default:
    break;
  }
  return node_fail(v, err, "no shape rule for this operator (give its outputs value_info shapes)");
}

/* ---- cost ---- */

typedef struct acc {
  int overflow;
} acc;

static uint64_t mul(acc *a, uint64_t x, uint64_t y) {
  uint64_t r;
  if (__builtin_mul_overflow(x, y, &r)) a->overflow = 1;
  return r;
}

static uint64_t add(acc *a, uint64_t x, uint64_t y) {
  uint64_t r;
  if (__builtin_add_overflow(x, y, &r)) a->overflow = 1;
  return r;
}

static uint64_t elems(acc *a, const onnx_shape *s) {
  uint64_t n = 1;
  for (int i = 0; i < s->rank; i++) n = mul(a, n, (uint64_t)s->d[i]);
  return n;
}

mp_status onnx_op_cost(const onnx_op_info *op, const onnx_node_view *v, uint64_t *macs, uint64_t *flops,
                       mp_error *err) {
  acc a = {0};
  uint64_t m = 0, f = 0, out = v->n_out > 0 ? elems(&a, &v->out[0]) : 0;
  const char *t = v->node->op_type;
  mp_status st = MP_OK;
  switch (op ? op->cls : ONNX_OP_UNKNOWN) {
  case ONNX_OP_UNARY: f = mul(&a, out, (uint64_t)op->flops_per_elem); break;
  case ONNX_OP_NARY: {
    uint64_t n = 0;
    for (int i = 0; i < v->n_in; i++) n += v->in[i] != NULL;
    uint64_t per = strcmp(t, "Where") == 0 ? 1 : strcmp(t, "Mean") == 0 ? n : n > 1 ? n - 1 : 1;
    f = mul(&a, mul(&a, out, per), (uint64_t)op->flops_per_elem);
    break;
  }
  case ONNX_OP_CONV:
  case ONNX_OP_CONVT: {
    const onnx_shape *w = &v->in[1]->shape;
    uint64_t per = 1;
    for (int i = 1; i < w->rank; i++) per = mul(&a, per, (uint64_t)w->d[i]);
    /* a convolution produces each output from Cin/group x kernel inputs; a transposed one scatters
       each input into Cout/group x kernel outputs */
    m = mul(&a, op->cls == ONNX_OP_CONV ? out : elems(&a, &v->in[0]->shape), per);
    f = add(&a, mul(&a, m, 2), in_at(v, 2) ? out : 0);
    break;
  }
  case ONNX_OP_GEMM: {
    int64_t mm, nn, kk;
    if ((st = gemm_dims(v, &mm, &nn, &kk, err)) != MP_OK) return st;
    uint64_t mn = mul(&a, (uint64_t)mm, (uint64_t)nn);
    m = mul(&a, mn, (uint64_t)kk);
    f = mul(&a, m, 2);
    if (onnx_attr_float(v->node, "alpha", 1.0f) != 1.0f) f = add(&a, f, mn);
    if (in_at(v, 2)) {
      f = add(&a, f, mn);
      if (onnx_attr_float(v->node, "beta", 1.0f) != 1.0f) f = add(&a, f, mn);
    }
    break;
  }
  case ONNX_OP_MATMUL: {
    onnx_shape y;
    int64_t k;
    if ((st = matmul_dims(v, &y, &k, err)) != MP_OK) return st;
    m = mul(&a, elems(&a, &y), (uint64_t)k);
    f = mul(&a, m, 2);
    break;
  }
  case ONNX_OP_BN: f = mul(&a, out, 2); break;
  case ONNX_OP_LN: {
    const onnx_shape *x = &v->in[0]->shape;
    int ax = norm_axis(onnx_attr_int(v->node, "axis", -1), x->rank);
    uint64_t rows = 1;
    for (int i = 0; i < ax && i < x->rank; i++) rows = mul(&a, rows, (uint64_t)x->d[i]);
    f = add(&a, mul(&a, out, 5 + (in_at(v, 1) != NULL) + (in_at(v, 2) != NULL)), mul(&a, rows, 8));
    break;
  }
  case ONNX_OP_SOFTMAX: f = mul(&a, out, 8); break;
  case ONNX_OP_POOL: {
    int64_t k[ONNX_MAX_RANK];
    int n = onnx_attr_ints(v->node, "kernel_shape", k, ONNX_MAX_RANK);
    uint64_t kp = 1;
    for (int i = 0; i < n && i < ONNX_MAX_RANK; i++) kp = mul(&a, kp, (uint64_t)k[i]);
    f = mul(&a, out, kp);
    break;
  }
  case ONNX_OP_GPOOL:
  case ONNX_OP_REDUCE: {
    int mean = strcmp(t, "GlobalAveragePool") == 0 || strcmp(t, "ReduceMean") == 0;
    f = add(&a, elems(&a, &v->in[0]->shape), mean ? out : 0);
    break;
  }
  case ONNX_OP_LSTM:
  case ONNX_OP_GRU:
  case ONNX_OP_RNN: {
    int gates = op->cls == ONNX_OP_LSTM ? 4 : op->cls == ONNX_OP_GRU ? 3 : 1;
    rnn_dims r;
    if ((st = rnn_read(v, gates, &r, err)) != MP_OK) return st;
    uint64_t steps = mul(&a, mul(&a, (uint64_t)r.d, (uint64_t)r.t), (uint64_t)r.b);
    m = mul(&a, mul(&a, steps, (uint64_t)(gates * r.h)), (uint64_t)(r.i + r.h));
    int bias = in_at(v, 3) != NULL;
    /* elementwise work per hidden unit and step: see the table in traces/README.md */
    uint64_t per = op->cls == ONNX_OP_LSTM ? 34 + 8 * bias + 6 * (in_at(v, 7) != NULL)
                   : op->cls == ONNX_OP_GRU ? 24 + 6 * bias
                                            : 5 + 2 * bias;
    f = add(&a, mul(&a, m, 2), mul(&a, mul(&a, steps, (uint64_t)r.h), per));
    break;
  }
  default: /* data movement, constants, unknown operators: no arithmetic */
    break;
  }
  if (a.overflow) return node_fail(v, err, "its cost overflows 64 bits");
  *macs = m;
  *flops = f;
  return MP_OK;
}
