/* onnx: folding constants — the value of a Constant node, and the small integer shape arithmetic
 * (Shape, and what only constants feed) that static shapes make constant, computed at import time so
 * that the shapes it feeds (Reshape, Slice, Expand ...) can be inferred.  See onnx_int.h. */
#include <string.h>

#include "onnx_int.h"

mp_status onnx_fold_constant(const onnx_importer *im, const Onnx__NodeProto *nd, int idx, onnx_tensor *t,
                             mp_error *err) {
  const Onnx__AttributeProto *a;
  t->kind = ONNX_T_CONST;
  t->has_shape = 1;
  if ((a = onnx_attr(nd, "value")) && a->t) {
    const Onnx__TensorProto *p = a->t;
    if (p->n_dims > ONNX_MAX_RANK) return onnx_fail(im, err, nd, idx, "the value has rank %zu", p->n_dims);
    t->value = p;
    t->elem_type = p->has_data_type ? p->data_type : 0;
    t->shape.rank = (int)p->n_dims;
    for (size_t d = 0; d < p->n_dims; d++) t->shape.d[d] = p->dims[d];
    if (!onnx_shape_ok(&t->shape)) return onnx_fail(im, err, nd, idx, "the value has a zero or negative dimension");
  } else if ((a = onnx_attr(nd, "value_ints")) || (a = onnx_attr(nd, "value_floats"))) {
    t->ivalue = a->n_ints ? a : NULL;
    t->elem_type = a->n_ints ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64 : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->shape = (onnx_shape){1, {a->n_ints ? (int64_t)a->n_ints : (int64_t)a->n_floats}};
    if (t->shape.d[0] <= 0) return onnx_fail(im, err, nd, idx, "the value is empty");
  } else if ((a = onnx_attr(nd, "value_int")) || (a = onnx_attr(nd, "value_float"))) {
    t->ivalue = a->has_i ? a : NULL;
    t->elem_type = a->has_i ? ONNX__TENSOR_PROTO__DATA_TYPE__INT64 : ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    t->shape.rank = 0;
  } else {
    return onnx_fail(im, err, nd, idx, "a Constant needs a value, value_int(s) or value_float(s) attribute");
  }
  return MP_OK;
}

/* The integer values of a constant input with at most ONNX_MAX_RANK elements, or -1. */
static int small_ints(const onnx_node_view *v, int i, int64_t *out) {
  if (i >= v->n_in || !v->in[i]) return -1;
  int k = onnx_tensor_ints(v->in[i], out, ONNX_MAX_RANK);
  return k > ONNX_MAX_RANK ? -1 : k;
}

/* Element i of a vector of n values broadcast to the output (n is 1 or the output's count). */
static int64_t at(const int64_t *x, int n, int i) { return n == 1 ? x[0] : x[i]; }

void onnx_fold_eval(const onnx_node_view *v, onnx_tensor *out) {
  const Onnx__NodeProto *nd = v->node;
  const char *t = nd->op_type;
  uint64_t count = onnx_shape_elems(&out->shape);
  if (!out->has_shape || count > ONNX_MAX_RANK) return;
  int n = (int)count;
  int64_t a[ONNX_MAX_RANK], b[ONNX_MAX_RANK], c[ONNX_MAX_RANK], r[ONNX_MAX_RANK];
  int na = small_ints(v, 0, a), nb = small_ints(v, 1, b), nc = small_ints(v, 2, c);
  if (strcmp(t, "Shape") == 0 || strcmp(t, "Size") == 0) {
    if (!onnx_input(v, 0)) return;
    const onnx_shape *x = &v->in[0]->shape;
    int64_t s = onnx_attr_int(nd, "start", 0);
    s = s < 0 ? s + x->rank : s;
    s = s < 0 ? 0 : s;
    if (t[1] != 'i' && (s > x->rank || n > x->rank - s)) return; /* a value_info shape that disagrees */
    int64_t size = 1;
    for (int i = 0; i < x->rank; i++) size *= x->d[i];
    for (int i = 0; i < n; i++) r[i] = t[1] == 'i' ? size : x->d[s + i];
  } else if (strcmp(t, "Add") == 0 || strcmp(t, "Sub") == 0 || strcmp(t, "Mul") == 0 || strcmp(t, "Div") == 0 ||
             strcmp(t, "Equal") == 0) {
    if (na <= 0 || nb <= 0 || (na != 1 && na != n) || (nb != 1 && nb != n)) return;
    for (int i = 0; i < n; i++) {
      int64_t x = at(a, na, i), y = at(b, nb, i);
      if (t[0] == 'D' && y == 0) return;
      r[i] = t[0] == 'A' ? x + y : t[0] == 'S' ? x - y : t[0] == 'M' ? x * y : t[0] == 'D' ? x / y : x == y;
    }
  } else if (strcmp(t, "Where") == 0) {
    if (na <= 0 || nb <= 0 || nc <= 0 || (na != 1 && na != n) || (nb != 1 && nb != n) || (nc != 1 && nc != n))
      return;
    for (int i = 0; i < n; i++) r[i] = at(a, na, i) ? at(b, nb, i) : at(c, nc, i);
  } else if (strcmp(t, "Unsqueeze") == 0 || strcmp(t, "Squeeze") == 0 || strcmp(t, "Reshape") == 0 ||
             strcmp(t, "Flatten") == 0 || strcmp(t, "Cast") == 0 || strcmp(t, "Expand") == 0) {
    if (na != n && na != 1) return;
    for (int i = 0; i < n; i++) r[i] = at(a, na, i);
  } else if (strcmp(t, "Gather") == 0) {
    if (na <= 0 || nb != n || v->in[0]->shape.rank != 1) return;
    for (int i = 0; i < n; i++) {
      int64_t k = b[i] < 0 ? b[i] + na : b[i];
      if (k < 0 || k >= na) return;
      r[i] = a[k];
    }
  } else if (strcmp(t, "Concat") == 0) {
    int k = 0;
    for (int i = 0; i < v->n_in; i++) {
      int64_t x[ONNX_MAX_RANK];
      int nx = small_ints(v, i, x);
      if (nx <= 0 || k + nx > n) return;
      memcpy(r + k, x, (size_t)nx * sizeof *x);
      k += nx;
    }
    if (k != n) return;
  } else if (strcmp(t, "Slice") == 0) {
    int64_t ax[1] = {0}, st[1] = {1};
    if (na <= 0 || nb != 1 || nc != 1 || small_ints(v, 3, ax) > 1 || small_ints(v, 4, st) > 1 || ax[0] != 0 ||
        st[0] <= 0)
      return;
    int64_t s0 = b[0] < 0 ? b[0] + na : b[0], e0 = c[0] < 0 ? c[0] + na : c[0];
    s0 = s0 < 0 ? 0 : s0 > na ? na : s0;
    e0 = e0 < 0 ? 0 : e0 > na ? na : e0;
    int k = 0;
    for (int64_t i = s0; i < e0 && k < n; i += st[0]) r[k++] = a[i];
    if (k != n) return;
  } else if (strcmp(t, "ConstantOfShape") == 0) {
    const Onnx__AttributeProto *val = onnx_attr(nd, "value");
    int64_t fill = 0;
    if (val && val->t) {
      onnx_tensor tmp;
      memset(&tmp, 0, sizeof tmp);
      tmp.value = val->t;
      if (onnx_tensor_ints(&tmp, &fill, 1) != 1) return;
    }
    for (int i = 0; i < n; i++) r[i] = fill;
  } else {
    return;
  }
  memcpy(out->ints, r, (size_t)n * sizeof *r);
  out->n_ints = n;
}
