/* onnx: shape inference — the output shapes (and element types) of each operator class of the table
 * from its input shapes, attributes and constant inputs, checking what the operator needs on the way.
 * See onnx_int.h. */
#include <string.h>

#include "onnx_int.h"

static mp_status need(const onnx_node_view *v, int i, int min_rank, mp_error *err) {
  const onnx_tensor *t = onnx_input(v, i);
  if (!t) return onnx_node_fail(v, err, "input %d is missing", i);
  if (t->shape.rank < min_rank)
    return onnx_node_fail(v, err, "input '%.200s' has rank %d, expected at least %d", t->name, t->shape.rank, min_rank);
  return MP_OK;
}

mp_status onnx_need(const onnx_node_view *v, int i, int min_rank, mp_error *err) { return need(v, i, min_rank, err); }

/* Reads the integer values of input i into out; fails naming the node when unknown. */
static mp_status need_ints(const onnx_node_view *v, int i, int64_t *out, int max, int *n, mp_error *err) {
  const onnx_tensor *t = onnx_input(v, i);
  if (!t) return onnx_node_fail(v, err, "input %d is missing", i);
  int k = onnx_tensor_ints(t, out, max);
  if (k < 0)
    return onnx_node_fail(v, err, "the values of input '%.200s' are not known at import time, so the output shape "
                          "cannot be inferred (give the output a value_info shape)", t->name);
  if (k > max) return onnx_node_fail(v, err, "input '%.200s' has %d values, more than %d", t->name, k, max);
  *n = k;
  return MP_OK;
}

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

static int attr_is(const Onnx__NodeProto *n, const char *name, const char *value) {
  const Onnx__AttributeProto *a = onnx_attr(n, name);
  if (!a || !a->has_s) return 0;
  size_t len = strlen(value);
  return a->s.len == len && memcmp(a->s.data, value, len) == 0;
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
    if (n != nsp) return onnx_node_fail(v, err, "kernel_shape has %d values for %d spatial axes", n, nsp);
    memcpy(win->k, tmp, (size_t)nsp * sizeof *tmp);
  } else if (!w) {
    return onnx_node_fail(v, err, "kernel_shape is missing");
  }
  if ((n = onnx_attr_ints(v->node, "strides", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != nsp) return onnx_node_fail(v, err, "strides has %d values for %d spatial axes", n, nsp);
    memcpy(win->s, tmp, (size_t)nsp * sizeof *tmp);
  }
  if ((n = onnx_attr_ints(v->node, "dilations", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != nsp) return onnx_node_fail(v, err, "dilations has %d values for %d spatial axes", n, nsp);
    memcpy(win->dil, tmp, (size_t)nsp * sizeof *tmp);
  }
  if ((n = onnx_attr_ints(v->node, "pads", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != 2 * nsp) return onnx_node_fail(v, err, "pads has %d values for %d spatial axes", n, nsp);
    memcpy(win->pads, tmp, (size_t)n * sizeof *tmp);
  }
  if ((n = onnx_attr_ints(v->node, "output_padding", tmp, 2 * ONNX_MAX_RANK)) >= 0) {
    if (n != nsp) return onnx_node_fail(v, err, "output_padding has %d values for %d spatial axes", n, nsp);
    memcpy(win->opad, tmp, (size_t)nsp * sizeof *tmp);
  }
  for (int i = 0; i < nsp; i++)
    if (win->k[i] <= 0 || win->s[i] <= 0 || win->dil[i] <= 0 || win->pads[i] < 0 || win->pads[nsp + i] < 0)
      return onnx_node_fail(v, err, "kernel, strides and dilations must be positive and pads not negative");
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
    return onnx_node_fail(v, err, "weight rank %d differs from input rank %d", w->rank, x->rank);
  int nsp = x->rank - 2;
  window win;
  if ((st = read_window(v, nsp, w, &win, err)) != MP_OK) return st;
  int64_t group = onnx_attr_int(v->node, "group", 1);
  if (group <= 0 || x->d[1] % group)
    return onnx_node_fail(v, err, "group %lld does not divide the input channels %lld", (long long)group,
                          (long long)x->d[1]);
  onnx_shape y = {x->rank, {0}};
  y.d[0] = x->d[0];
  if (!transposed) {
    if (w->d[1] * group != x->d[1])
      return onnx_node_fail(v, err, "weight expects %lld input channels, the input has %lld",
                            (long long)(w->d[1] * group), (long long)x->d[1]);
    y.d[1] = w->d[0];
    for (int i = 0; i < nsp; i++) y.d[2 + i] = window_out(v, &win, i, x->d[2 + i], 0);
  } else {
    if (w->d[0] != x->d[1])
      return onnx_node_fail(v, err, "weight expects %lld input channels, the input has %lld", (long long)w->d[0],
                            (long long)x->d[1]);
    y.d[1] = w->d[1] * group;
    int64_t os[ONNX_MAX_RANK + 2];
    int n = onnx_attr_ints(v->node, "output_shape", os, ONNX_MAX_RANK + 2);
    if (n >= 0) {
      if (n != nsp && n != nsp + 2) return onnx_node_fail(v, err, "output_shape has %d values", n);
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

mp_status onnx_gemm_dims(const onnx_node_view *v, int64_t *m, int64_t *n, int64_t *k, mp_error *err) {
  mp_status st = need(v, 0, 2, err);
  if (st == MP_OK) st = need(v, 1, 2, err);
  if (st != MP_OK) return st;
  const onnx_shape *a = &v->in[0]->shape, *b = &v->in[1]->shape;
  if (a->rank != 2 || b->rank != 2) return onnx_node_fail(v, err, "Gemm needs two matrices");
  int ta = onnx_attr_int(v->node, "transA", 0) != 0, tb = onnx_attr_int(v->node, "transB", 0) != 0;
  *m = ta ? a->d[1] : a->d[0];
  *k = ta ? a->d[0] : a->d[1];
  *n = tb ? b->d[0] : b->d[1];
  int64_t kb = tb ? b->d[1] : b->d[0];
  if (kb != *k) return onnx_node_fail(v, err, "inner dimensions differ (%lld and %lld)", (long long)*k, (long long)kb);
  return MP_OK;
}

mp_status onnx_matmul_dims(const onnx_node_view *v, onnx_shape *y, int64_t *k, mp_error *err) {
  mp_status st = need(v, 0, 1, err);
  if (st == MP_OK) st = need(v, 1, 1, err);
  if (st != MP_OK) return st;
  onnx_shape a = v->in[0]->shape, b = v->in[1]->shape;
  int a1 = a.rank == 1, b1 = b.rank == 1;
  if (a1) a = (onnx_shape){2, {1, a.d[0]}};
  if (b1) b = (onnx_shape){2, {b.d[0], 1}};
  *k = a.d[a.rank - 1];
  if (b.d[b.rank - 2] != *k)
    return onnx_node_fail(v, err, "inner dimensions differ (%lld and %lld)", (long long)*k, (long long)b.d[b.rank - 2]);
  onnx_shape ba = {a.rank - 2, {0}}, bb = {b.rank - 2, {0}};
  memcpy(ba.d, a.d, (size_t)ba.rank * sizeof a.d[0]);
  memcpy(bb.d, b.d, (size_t)bb.rank * sizeof b.d[0]);
  if (broadcast(&ba, &bb, y) < 0) return onnx_node_fail(v, err, "batch dimensions do not broadcast");
  if (y->rank + 2 > ONNX_MAX_RANK) return onnx_node_fail(v, err, "rank too large");
  if (!a1) y->d[y->rank++] = a.d[a.rank - 2];
  if (!b1) y->d[y->rank++] = b.d[b.rank - 1];
  return MP_OK;
}

mp_status onnx_rnn_read(const onnx_node_view *v, int gates, onnx_rnn_dims *r, mp_error *err) {
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
    return onnx_node_fail(v, err, "weight W is not [%lld, %lld, %lld]", (long long)r->d, (long long)(gates * r->h),
                          (long long)r->i);
  return MP_OK;
}

static mp_status infer_rnn(onnx_node_view *v, int gates, mp_error *err) {
  onnx_rnn_dims r;
  mp_status st = onnx_rnn_read(v, gates, &r, err);
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
      if (minus >= 0) return onnx_node_fail(v, err, "the target shape has two -1 entries");
      minus = i;
      continue;
    }
    y.d[i] = s[i] == 0 && !allowzero ? (i < x->rank ? x->d[i] : 0) : s[i];
    if (y.d[i] <= 0) return onnx_node_fail(v, err, "the target shape has a dimension %lld", (long long)y.d[i]);
    known *= (uint64_t)y.d[i];
  }
  uint64_t total = onnx_shape_elems(x);
  if (minus >= 0) {
    if (total % known) return onnx_node_fail(v, err, "cannot reshape %llu elements", (unsigned long long)total);
    y.d[minus] = (int64_t)(total / known);
  } else if (known != total) {
    return onnx_node_fail(v, err, "cannot reshape %llu elements into %llu", (unsigned long long)total,
                          (unsigned long long)known);
  }
  return set_out(v, 0, &y, v->in[0]->elem_type);
}

/* Axes from the "axes" attribute or, in newer opsets, from input 1; *n = -1 when neither exists. */
static mp_status read_axes(onnx_node_view *v, int64_t *axes, int *n, mp_error *err) {
  *n = onnx_attr_ints(v->node, "axes", axes, ONNX_MAX_RANK);
  if (*n > ONNX_MAX_RANK) return onnx_node_fail(v, err, "too many axes");
  if (*n >= 0 || !onnx_input(v, 1)) return MP_OK;
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
    if (n < 0) return onnx_node_fail(v, err, "axes are missing");
    int r = x->rank + n, mark[ONNX_MAX_RANK] = {0};
    if (r > ONNX_MAX_RANK) return onnx_node_fail(v, err, "rank too large");
    for (int i = 0; i < n; i++) {
      int a = onnx_norm_axis(axes[i], r);
      if (a < 0 || a >= r || mark[a]) return onnx_node_fail(v, err, "bad axis %lld", (long long)axes[i]);
      mark[a] = 1;
    }
    for (int i = 0, j = 0; i < r; i++) y.d[i] = mark[i] ? 1 : x->d[j++];
    y.rank = r;
  } else {
    int mark[ONNX_MAX_RANK] = {0};
    for (int i = 0; i < n; i++) {
      int a = onnx_norm_axis(axes[i], x->rank);
      if (a < 0 || a >= x->rank || x->d[a] != 1)
        return onnx_node_fail(v, err, "cannot squeeze axis %lld", (long long)axes[i]);
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
    if (st == MP_OK && onnx_input(v, 3)) st = need_ints(v, 3, axes, ONNX_MAX_RANK, &na, err);
    if (st == MP_OK && onnx_input(v, 4)) st = need_ints(v, 4, steps, ONNX_MAX_RANK, &nst, err);
    if (st != MP_OK) return st;
  }
  if (ns != ne || ns < 0 || ns > ONNX_MAX_RANK || (na >= 0 && na != ns) || (nst >= 0 && nst != ns))
    return onnx_node_fail(v, err, "starts, ends, axes and steps differ in length");
  onnx_shape y = v->in[0]->shape;
  for (int i = 0; i < ns; i++) {
    int a = onnx_norm_axis(na >= 0 ? axes[i] : i, y.rank);
    int64_t step = nst >= 0 ? steps[i] : 1, dim = v->in[0]->shape.d[a];
    if (a < 0 || a >= y.rank || step == 0) return onnx_node_fail(v, err, "bad axis or step");
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
  int a = onnx_norm_axis(onnx_attr_int(v->node, "axis", 0), x->rank);
  if (a < 0 || a >= x->rank) return onnx_node_fail(v, err, "bad axis");
  int64_t parts[ONNX_MAX_IO];
  int n = onnx_attr_ints(v->node, "split", parts, ONNX_MAX_IO);
  if (n < 0 && onnx_input(v, 1) && (st = need_ints(v, 1, parts, ONNX_MAX_IO, &n, err)) != MP_OK) return st;
  if (n < 0) {
    n = v->n_out;
    int64_t each = (x->d[a] + n - 1) / n;
    for (int i = 0; i < n; i++) parts[i] = i < n - 1 ? each : x->d[a] - each * (n - 1);
  }
  if (n != v->n_out) return onnx_node_fail(v, err, "%d split sizes for %d outputs", n, v->n_out);
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
    int a = onnx_norm_axis(onnx_attr_int(v->node, "axis", 0), x->rank);
    if (a < 0 || a >= x->rank) return onnx_node_fail(v, err, "bad axis");
    for (int i = 1; i < v->n_in; i++) {
      const onnx_tensor *o = v->in[i];
      if (!o) continue;
      if (o->shape.rank != x->rank) return onnx_node_fail(v, err, "inputs differ in rank");
      y.d[a] += o->shape.d[a];
    }
  } else if (strcmp(t, "Gather") == 0) {
    if ((st = need(v, 1, 0, err)) != MP_OK) return st;
    const onnx_shape *idx = &v->in[1]->shape;
    int a = onnx_norm_axis(onnx_attr_int(v->node, "axis", 0), x->rank);
    if (a < 0 || a >= x->rank || x->rank - 1 + idx->rank > ONNX_MAX_RANK)
      return onnx_node_fail(v, err, "bad axis or rank");
    y.rank = 0;
    for (int i = 0; i < a; i++) y.d[y.rank++] = x->d[i];
    for (int i = 0; i < idx->rank; i++) y.d[y.rank++] = idx->d[i];
    for (int i = a + 1; i < x->rank; i++) y.d[y.rank++] = x->d[i];
  } else if (strcmp(t, "Transpose") == 0) {
    n = onnx_attr_ints(v->node, "perm", vals, ONNX_MAX_RANK);
    if (n >= 0 && n != x->rank) return onnx_node_fail(v, err, "perm has %d values for rank %d", n, x->rank);
    for (int i = 0; i < x->rank; i++) {
      int p = n >= 0 ? (int)vals[i] : x->rank - 1 - i;
      if (p < 0 || p >= x->rank) return onnx_node_fail(v, err, "bad perm");
      y.d[i] = x->d[p];
    }
  } else if (strcmp(t, "Flatten") == 0) {
    int a = onnx_norm_axis(onnx_attr_int(v->node, "axis", 1), x->rank);
    if (a < 0 || a > x->rank) return onnx_node_fail(v, err, "bad axis");
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < x->rank; i++) *(i < a ? &outer : &inner) *= x->d[i];
    y = (onnx_shape){2, {outer, inner}};
  } else if (strcmp(t, "Expand") == 0) {
    if ((st = need_ints(v, 1, vals, ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    onnx_shape s = {n, {0}};
    memcpy(s.d, vals, (size_t)n * sizeof vals[0]);
    if (broadcast(x, &s, &y) < 0) return onnx_node_fail(v, err, "the shape does not broadcast");
  } else if (strcmp(t, "Tile") == 0) {
    if ((st = need_ints(v, 1, vals, ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    if (n != x->rank) return onnx_node_fail(v, err, "repeats has %d values for rank %d", n, x->rank);
    for (int i = 0; i < n; i++) y.d[i] *= vals[i];
  } else if (strcmp(t, "Pad") == 0) {
    n = onnx_attr_ints(v->node, "pads", vals, 2 * ONNX_MAX_RANK);
    if (n < 0 && (st = need_ints(v, 1, vals, 2 * ONNX_MAX_RANK, &n, err)) != MP_OK) return st;
    if (n != 2 * x->rank) return onnx_node_fail(v, err, "pads has %d values for rank %d", n, x->rank);
    for (int i = 0; i < x->rank; i++) y.d[i] += vals[i] + vals[x->rank + i];
  } else if (strcmp(t, "DepthToSpace") == 0 || strcmp(t, "SpaceToDepth") == 0) {
    int64_t b = onnx_attr_int(v->node, "blocksize", 0);
    if (x->rank != 4 || b <= 0) return onnx_node_fail(v, err, "needs a 4-d input and a positive blocksize");
    int d2s = t[0] == 'D';
    if (d2s ? x->d[1] % (b * b) : x->d[2] % b || x->d[3] % b)
      return onnx_node_fail(v, err, "blocksize does not divide");
    y.d[1] = d2s ? x->d[1] / (b * b) : x->d[1] * b * b;
    y.d[2] = d2s ? x->d[2] * b : x->d[2] / b;
    y.d[3] = d2s ? x->d[3] * b : x->d[3] / b;
  } else {
    return onnx_node_fail(v, err, "no shape rule for this operator (give its outputs value_info shapes)");
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
    int a = onnx_norm_axis(axes[i], x->rank);
    if (a < 0 || a >= x->rank) return onnx_node_fail(v, err, "bad axis %lld", (long long)axes[i]);
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
      if (onnx_input(v, 1)) set_out(v, i, &v->in[1]->shape, v->in[0]->elem_type);
    return MP_OK;
  case ONNX_OP_NARY: {
    onnx_shape y = {0, {0}};
    int first = 1;
    for (int i = 0; i < v->n_in; i++) {
      if (!v->in[i]) continue;
      if (first) y = v->in[i]->shape;
      else if (broadcast(&y, &v->in[i]->shape, &y) < 0)
        return onnx_node_fail(v, err, "input '%.200s' does not broadcast with the others", v->in[i]->name);
      first = 0;
    }
    if (first) return onnx_node_fail(v, err, "no inputs");
    int cmp = op->fusible == 0; /* comparisons and logic give booleans */
    int e = cmp ? ONNX__TENSOR_PROTO__DATA_TYPE__BOOL
            : strcmp(t, "Where") == 0 && onnx_input(v, 1) ? v->in[1]->elem_type
            : v->in[0] ? v->in[0]->elem_type : 0;
    return set_out(v, 0, &y, e);
  }
  case ONNX_OP_LN: {
    if ((st = need(v, 0, 1, err)) != MP_OK) return st;
    const onnx_shape *x = &v->in[0]->shape;
    int a = onnx_norm_axis(onnx_attr_int(v->node, "axis", -1), x->rank);
    if (a < 0 || a >= x->rank) return onnx_node_fail(v, err, "bad axis");
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
    if ((st = onnx_gemm_dims(v, &m, &n, &k, err)) != MP_OK) return st;
    onnx_shape y = {2, {m, n}};
    return set_out(v, 0, &y, v->in[0]->elem_type);
  }
  case ONNX_OP_MATMUL: {
    onnx_shape y;
    int64_t k;
    if ((st = onnx_matmul_dims(v, &y, &k, err)) != MP_OK) return st;
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
  return onnx_node_fail(v, err, "no shape rule for this operator (give its outputs value_info shapes)");
}
