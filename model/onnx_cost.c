/* onnx: the cost formulas — the multiply-accumulates and flops of one node at the file's batch size,
 * from its input and output shapes, with 64-bit overflow reported as an error naming the node.  The
 * formulas are documented in traces/README.md ("Cost model per operator").  See onnx_int.h. */
#include <string.h>

#include "onnx_int.h"

/* Overflow-checked arithmetic: once a step overflows, the cost is an error. */
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
                       graph_dims *dims, mp_error *err) {
  acc a = {0};
  graph_dims d = {0, 0, 0, 0};
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
    if ((st = onnx_need(v, 0, 3, err)) != MP_OK || (st = onnx_need(v, 1, 3, err)) != MP_OK) return st;
    const onnx_shape *w = &v->in[1]->shape;
    uint64_t per = 1;
    for (int i = 1; i < w->rank; i++) per = mul(&a, per, (uint64_t)w->d[i]);
    /* a convolution produces each output from Cin/group x kernel inputs; a transposed one scatters
       each input into Cout/group x kernel outputs */
    m = mul(&a, op->cls == ONNX_OP_CONV ? out : elems(&a, &v->in[0]->shape), per);
    f = add(&a, mul(&a, m, 2), onnx_input(v, 2) ? out : 0);
    /* as products: a convolution is, per group, (positions x Cin/group x kernel) by (Cin/group x kernel x
       Cout/group); a transposed one (input positions x Cin/group) by (Cin/group x Cout/group x kernel) */
    uint64_t groups = (uint64_t)onnx_attr_int(v->node, "group", 1), c0 = (uint64_t)w->d[0];
    if (op->cls == ONNX_OP_CONV && v->n_out > 0 && v->out[0].rank >= 2 && groups >= 1 && c0 % groups == 0)
      d = (graph_dims){groups, out / c0, c0 / groups, per};
    else if (op->cls == ONNX_OP_CONVT && v->in[0]->shape.rank >= 2 && groups >= 1 && c0 % groups == 0)
      d = (graph_dims){groups, elems(&a, &v->in[0]->shape) / c0, per, c0 / groups};
    break;
  }
  case ONNX_OP_GEMM: {
    int64_t mm, nn, kk;
    if ((st = onnx_gemm_dims(v, &mm, &nn, &kk, err)) != MP_OK) return st;
    uint64_t mn = mul(&a, (uint64_t)mm, (uint64_t)nn);
    m = mul(&a, mn, (uint64_t)kk);
    f = mul(&a, m, 2);
    d = (graph_dims){1, (uint64_t)mm, (uint64_t)nn, (uint64_t)kk};
    if (onnx_attr_float(v->node, "alpha", 1.0f) != 1.0f) f = add(&a, f, mn);
    if (onnx_input(v, 2)) {
      f = add(&a, f, mn);
      if (onnx_attr_float(v->node, "beta", 1.0f) != 1.0f) f = add(&a, f, mn);
    }
    break;
  }
  case ONNX_OP_MATMUL: {
    onnx_shape y;
    int64_t k;
    if ((st = onnx_matmul_dims(v, &y, &k, err)) != MP_OK) return st;
    m = mul(&a, elems(&a, &y), (uint64_t)k);
    f = mul(&a, m, 2);
    /* y is [batch..., M, N], without M when A is a vector and without N when B is */
    int a1 = v->in[0]->shape.rank == 1, b1 = v->in[1]->shape.rank == 1, r = y.rank;
    d = (graph_dims){1, 1, 1, (uint64_t)k};
    if (!b1) d.n = (uint64_t)y.d[--r];
    if (!a1) d.m = (uint64_t)y.d[--r];
    for (int i = 0; i < r; i++) d.g = mul(&a, d.g, (uint64_t)y.d[i]);
    /* an operand shared by the whole batch (a weight) makes the batch one longer product */
    if (v->in[1]->shape.rank <= 2) d = (graph_dims){1, mul(&a, d.g, d.m), d.n, d.k};
    else if (v->in[0]->shape.rank <= 2) d = (graph_dims){1, d.m, mul(&a, d.g, d.n), d.k};
    break;
  }
  case ONNX_OP_BN: f = mul(&a, out, 2); break;
  case ONNX_OP_LN: {
    if ((st = onnx_need(v, 0, 0, err)) != MP_OK) return st;
    const onnx_shape *x = &v->in[0]->shape;
    int ax = onnx_norm_axis(onnx_attr_int(v->node, "axis", -1), x->rank);
    uint64_t rows = 1;
    for (int i = 0; i < ax && i < x->rank; i++) rows = mul(&a, rows, (uint64_t)x->d[i]);
    f = add(&a, mul(&a, out, 5 + (onnx_input(v, 1) != NULL) + (onnx_input(v, 2) != NULL)), mul(&a, rows, 8));
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
    if ((st = onnx_need(v, 0, 0, err)) != MP_OK) return st;
    int mean = strcmp(t, "GlobalAveragePool") == 0 || strcmp(t, "ReduceMean") == 0;
    f = add(&a, elems(&a, &v->in[0]->shape), mean ? out : 0);
    break;
  }
  case ONNX_OP_LSTM:
  case ONNX_OP_GRU:
  case ONNX_OP_RNN: {
    int gates = op->cls == ONNX_OP_LSTM ? 4 : op->cls == ONNX_OP_GRU ? 3 : 1;
    onnx_rnn_dims r;
    if ((st = onnx_rnn_read(v, gates, &r, err)) != MP_OK) return st;
    uint64_t steps = mul(&a, mul(&a, (uint64_t)r.d, (uint64_t)r.t), (uint64_t)r.b);
    m = mul(&a, mul(&a, steps, (uint64_t)(gates * r.h)), (uint64_t)(r.i + r.h));
    int bias = onnx_input(v, 3) != NULL;
    /* elementwise work per hidden unit and step: see the table in traces/README.md */
    uint64_t per = op->cls == ONNX_OP_LSTM ? 34 + 8 * bias + 6 * (onnx_input(v, 7) != NULL)
                   : op->cls == ONNX_OP_GRU ? 24 + 6 * bias
                                            : 5 + 2 * bias;
    f = add(&a, mul(&a, m, 2), mul(&a, mul(&a, steps, (uint64_t)r.h), per));
    /* every step of every direction, one product of the batch's (input, hidden) rows by the gates' weights */
    d = (graph_dims){mul(&a, (uint64_t)r.d, (uint64_t)r.t), (uint64_t)r.b, (uint64_t)(gates * r.h), (uint64_t)(r.i + r.h)};
    break;
  }
  default: /* data movement, constants, unknown operators: no arithmetic */
    break;
  }
  if (a.overflow) return onnx_node_fail(v, err, "its cost overflows 64 bits");
  *macs = m;
  *flops = f;
  uint64_t p = 0;
  int bad = d.g == 0 || __builtin_mul_overflow(d.g, d.m, &p) || __builtin_mul_overflow(p, d.n, &p) ||
            __builtin_mul_overflow(p, d.k, &p) || p != m;
  *dims = bad ? (graph_dims){0, 0, 0, 0} : d; /* dims only when they account for the MACs exactly */
  return MP_OK;
}
