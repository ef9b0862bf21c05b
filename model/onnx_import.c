/* onnx: reading a model, folding constants, costing each node, fusing layers and writing the
 * meshpipe graph document.  See onnx_import.h; the operator table is in onnx_ops.c (with its shape
 * rules in onnx_infer.c and its cost formulas in onnx_cost.c), the folding of constants in
 * onnx_fold.c, and fusion and the output document in onnx_emit.c.
 *
 * The import runs in passes over the unpacked ModelProto: name every value (graph inputs,
 * initializers, node outputs) in one table; check every node input exists; order the nodes
 * topologically (file order breaks ties, a cycle is an error naming a node on it); then, in that
 * order, fold constants, drop Identity/Dropout, give every output a static shape and make each
 * remaining node a layer with its cost; finally fuse and emit. */
#include "onnx_import.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "onnx_int.h"

int onnx_dtype_bytes(const char *dtype) {
  if (!dtype || strcmp(dtype, "fp16") == 0 || strcmp(dtype, "bf16") == 0) return 2;
  if (strcmp(dtype, "fp32") == 0) return 4;
  if (strcmp(dtype, "int8") == 0) return 1;
  return 0;
}

/* ---- the string -> index map ---- */

void onnx_map_free(onnx_namemap *m) {
  free(m->keys);
  free(m->vals);
}

int onnx_map_init(onnx_namemap *m, size_t n) {
  m->cap = 16;
  while (m->cap < 2 * n + 16) m->cap *= 2;
  m->keys = calloc(m->cap, sizeof *m->keys);
  m->vals = calloc(m->cap, sizeof *m->vals);
  if (m->keys && m->vals) return 1;
  onnx_map_free(m);
  m->keys = NULL;
  m->vals = NULL;
  return 0;
}

static size_t map_slot(const onnx_namemap *m, const char *key) {
  size_t i = (size_t)fileio_hash(FILEIO_HASH_INIT, key, strlen(key)) & (m->cap - 1);
  while (m->keys[i] && strcmp(m->keys[i], key) != 0) i = (i + 1) & (m->cap - 1);
  return i;
}

int onnx_map_get(const onnx_namemap *m, const char *key) {
  size_t i = map_slot(m, key);
  return m->keys[i] ? m->vals[i] : -1;
}

void onnx_map_put(onnx_namemap *m, const char *key, int val) {
  size_t i = map_slot(m, key);
  m->keys[i] = key;
  m->vals[i] = val;
}

/* ---- the import state ---- */

mp_status onnx_fail(const onnx_importer *im, mp_error *err, const Onnx__NodeProto *n, int idx, const char *fmt, ...) {
  char what[600], where[300];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (n && n->name && *n->name) snprintf(where, sizeof where, "node '%.200s' (%.60s)", n->name, n->op_type);
  else if (n) snprintf(where, sizeof where, "node %d (%.60s)", idx, n->op_type ? n->op_type : "?");
  else where[0] = 0;
  return err_at(err, MP_INPUT, im->path, where, "%s", what);
}

static const char *node_label(const Onnx__NodeProto *n, int idx, char *buf, size_t size) {
  if (n->name && *n->name) return n->name;
  snprintf(buf, size, "node %d", idx);
  return buf;
}

static int is_float(int elem) {
  return elem == 0 || elem == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT || elem == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16 ||
         elem == ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16 || elem == ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
}

/* Bytes the chip stores per element: the dtype for floating-point tensors, the natural size for
 * integers and booleans. */
static uint64_t elem_bytes(const onnx_importer *im, int elem) {
  switch (elem) {
  case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL:
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT8:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: return 1;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT16:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: return 2;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT32:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT32: return 4;
  case ONNX__TENSOR_PROTO__DATA_TYPE__INT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__UINT64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__STRING: return 8;
  case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX64:
  case ONNX__TENSOR_PROTO__DATA_TYPE__COMPLEX128: return 2 * (uint64_t)im->dtype_bytes;
  default: return (uint64_t)im->dtype_bytes;
  }
}

uint64_t onnx_tensor_bytes(const onnx_importer *im, const onnx_tensor *t) {
  return onnx_shape_elems(&t->shape) * elem_bytes(im, t->elem_type);
}

static int resolve(const onnx_importer *im, int i) {
  while (i >= 0 && im->t[i].alias >= 0) i = im->t[i].alias;
  return i;
}

static int has_data(const Onnx__TensorProto *p) {
  return p->n_float_data || p->n_int32_data || p->n_int64_data || p->n_double_data || p->n_uint64_data ||
         p->n_string_data || (p->has_raw_data && p->raw_data.len) || p->n_external_data;
}

/* A static shape from a TypeProto: 1 when every dimension is known (a symbolic batch dimension
 * counts as 1), 0 when some is not or there is no tensor shape, -1 when a dimension is zero or
 * negative (*bad = its index), -2 when the rank or the element count is too large. */
static int type_shape(const onnx_importer *im, const Onnx__TypeProto *type, onnx_shape *s, int *elem, int *bad) {
  if (!type || type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type) return 0;
  const Onnx__TypeProto__Tensor *tt = type->tensor_type;
  *elem = tt->has_elem_type ? tt->elem_type : 0;
  if (!tt->shape) return 0;
  if (tt->shape->n_dim > ONNX_MAX_RANK) return -2;
  s->rank = (int)tt->shape->n_dim;
  int known = 1;
  for (int i = 0; i < s->rank; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      s->d[i] = d->dim_value;
      if (d->dim_value <= 0) {
        *bad = i;
        return -1;
      }
    } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && im->batch_param &&
               strcmp(d->dim_param, im->batch_param) == 0) {
      s->d[i] = 1;
    } else {
      known = 0;
    }
  }
  return known && !onnx_shape_ok(s) ? -2 : known;
}

/* The message for a type_shape result below 0. */
static const char *shape_problem(int r, const onnx_shape *s, int bad, char *buf, size_t size) {
  if (r == -1) snprintf(buf, size, "dimension %d is %lld (zero or negative)", bad, (long long)s->d[bad]);
  else snprintf(buf, size, "the rank (at most %d) or the number of elements is too large", ONNX_MAX_RANK);
  return buf;
}

static int new_tensor(onnx_importer *im, const char *name, onnx_tkind kind, int producer) {
  onnx_tensor *t = &im->t[im->n_t];
  memset(t, 0, sizeof *t);
  t->name = name;
  t->kind = kind;
  t->producer = producer;
  t->alias = -1;
  t->layer = -1;
  onnx_map_put(&im->names, name, im->n_t);
  return im->n_t++;
}

/* ---- pass 1: every named value ---- */

static mp_status read_values(onnx_importer *im, mp_error *err) {
  Onnx__GraphProto *g = im->g;
  size_t n = g->n_input + g->n_initializer + 1;
  for (size_t i = 0; i < g->n_node; i++) n += g->node[i]->n_output;
  im->t = calloc(n, sizeof *im->t);
  im->vis = calloc(g->n_value_info + g->n_output + 1, sizeof *im->vis);
  if (!im->t || !im->vis || !onnx_map_init(&im->names, n) || !onnx_map_init(&im->vinfo, g->n_value_info + g->n_output))
    return err_nomem(err);

  for (size_t i = 0; i < g->n_initializer; i++) {
    const Onnx__TensorProto *p = g->initializer[i];
    if (!p->name || !*p->name) return err_at(err, MP_INPUT, im->path, NULL, "initializer %zu has no name", i);
    if (onnx_map_get(&im->names, p->name) >= 0)
      return err_at(err, MP_INPUT, im->path, NULL, "initializer '%.200s' is defined twice", p->name);
    if (p->n_dims == 0 && !has_data(p))
      return err_at(err, MP_INPUT, im->path, NULL,
                    "initializer '%.200s' has no dims (and no data): its size is unknown", p->name);
    if (p->n_dims > ONNX_MAX_RANK)
      return err_at(err, MP_INPUT, im->path, NULL, "initializer '%.200s' has rank %zu, more than %d", p->name,
                    p->n_dims, ONNX_MAX_RANK);
    int k = new_tensor(im, p->name, ONNX_T_INIT, -1);
    onnx_tensor *t = &im->t[k];
    t->value = p;
    t->elem_type = p->has_data_type ? p->data_type : 0;
    t->has_shape = 1;
    t->shape.rank = (int)p->n_dims;
    for (size_t d = 0; d < p->n_dims; d++) {
      if (p->dims[d] <= 0)
        return err_at(err, MP_INPUT, im->path, NULL, "initializer '%.200s': dimension %zu is %lld (zero or negative)",
                      p->name, d, (long long)p->dims[d]);
      t->shape.d[d] = p->dims[d];
    }
    if (!onnx_shape_ok(&t->shape))
      return err_at(err, MP_INPUT, im->path, NULL, "initializer '%.200s' has too many elements", p->name);
  }

  im->model_batch = 0;
  for (size_t i = 0; i < g->n_input; i++) {
    const Onnx__ValueInfoProto *vi = g->input[i];
    if (!vi->name || !*vi->name) return err_at(err, MP_INPUT, im->path, NULL, "graph input %zu has no name", i);
    int k = onnx_map_get(&im->names, vi->name);
    if (k >= 0 && im->t[k].kind == ONNX_T_INIT) continue; /* older exporters list weights as inputs */
    if (k >= 0) return err_at(err, MP_INPUT, im->path, NULL, "graph input '%.200s' is listed twice", vi->name);
    /* a symbolic leading dimension is the batch */
    const Onnx__TypeProto *type = vi->type;
    if (type && type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && type->tensor_type &&
        type->tensor_type->shape && type->tensor_type->shape->n_dim > 0) {
      const Onnx__TensorShapeProto__Dimension *d0 = type->tensor_type->shape->dim[0];
      if (d0->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && !im->batch_param)
        im->batch_param = d0->dim_param;
    }
    onnx_shape s;
    int elem = 0, bad = 0;
    int known = type_shape(im, type, &s, &elem, &bad);
    char why[120];
    if (known < 0)
      return err_at(err, MP_INPUT, im->path, NULL, "graph input '%.200s': %s", vi->name,
                    shape_problem(known, &s, bad, why, sizeof why));
    if (!known)
      return err_at(err, MP_INPUT, im->path, NULL,
                    "graph input '%.200s' has no static shape (only a symbolic batch dimension is allowed)", vi->name);
    k = new_tensor(im, vi->name, ONNX_T_ACT, -1);
    im->t[k].graph_input = 1;
    im->t[k].has_shape = 1;
    im->t[k].shape = s;
    im->t[k].elem_type = elem;
    if (!im->model_batch) {
      int sym = type->tensor_type->shape->n_dim > 0 &&
                type->tensor_type->shape->dim[0]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      im->model_batch = s.rank > 0 && !sym ? (int)(s.d[0] > 1 << 20 ? 1 << 20 : s.d[0]) : 1;
    }
  }
  if (!im->model_batch) im->model_batch = 1;

  int nv = 0;
  for (size_t i = 0; i < g->n_value_info + g->n_output; i++) {
    const Onnx__ValueInfoProto *vi = i < g->n_value_info ? g->value_info[i] : g->output[i - g->n_value_info];
    if (!vi->name || !*vi->name || onnx_map_get(&im->vinfo, vi->name) >= 0) continue;
    im->vis[nv] = vi;
    onnx_map_put(&im->vinfo, vi->name, nv++);
  }

  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    if (!nd->op_type || !*nd->op_type) return onnx_fail(im, err, nd, (int)i, "the node has no op_type");
    if (nd->n_input > ONNX_MAX_IO || nd->n_output > ONNX_MAX_IO)
      return onnx_fail(im, err, nd, (int)i, "more than %d inputs or outputs", ONNX_MAX_IO);
    for (size_t o = 0; o < nd->n_output; o++) {
      const char *name = nd->output[o];
      if (!*name) continue;
      int k = onnx_map_get(&im->names, name);
      if (k >= 0) {
        const onnx_tensor *t = &im->t[k];
        char pl[32];
        return onnx_fail(im, err, nd, (int)i, "output '%.200s' is already %s", name,
                         t->kind == ONNX_T_INIT ? "an initializer"
                         : t->producer < 0      ? "a graph input"
                                                : node_label(g->node[t->producer], t->producer, pl, sizeof pl));
      }
      new_tensor(im, name, ONNX_T_ACT, (int)i);
    }
  }
  return MP_OK;
}

/* ---- pass 2: inputs exist, topological order ---- */

static mp_status order_nodes(onnx_importer *im, int *order, mp_error *err) {
  Onnx__GraphProto *g = im->g;
  int nn = (int)g->n_node;
  mp_status st = MP_OK;
  int *indeg = calloc((size_t)nn + 1, sizeof *indeg);
  int *start = calloc((size_t)im->n_t + 1, sizeof *start); /* CSR: consumers of each tensor */
  int *fill = calloc((size_t)im->n_t + 1, sizeof *fill);
  size_t n_edges = 0;
  for (int i = 0; i < nn; i++) n_edges += g->node[i]->n_input;
  int *cons = calloc(n_edges + 1, sizeof *cons);
  if (!indeg || !start || !fill || !cons) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int i = 0; i < nn; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    for (size_t k = 0; k < nd->n_input; k++) {
      if (!*nd->input[k]) continue;
      int t = onnx_map_get(&im->names, nd->input[k]);
      if (t < 0) {
        st = onnx_fail(im, err, nd, i,
                       "input '%.200s' is not produced by any node, nor an initializer or graph input", nd->input[k]);
        goto cleanup;
      }
      im->t[t].raw_consumers++;
      start[t + 1]++;
      if (im->t[t].producer >= 0) indeg[i]++;
    }
  }
  for (int t = 0; t < im->n_t; t++) start[t + 1] += start[t];
  for (int i = 0; i < nn; i++) {
    const Onnx__NodeProto *nd = g->node[i];
    for (size_t k = 0; k < nd->n_input; k++) {
      if (!*nd->input[k]) continue;
      int t = onnx_map_get(&im->names, nd->input[k]);
      cons[start[t] + fill[t]++] = i;
    }
  }
  int head = 0, tail = 0;
  for (int i = 0; i < nn; i++)
    if (indeg[i] == 0) order[tail++] = i;
  while (head < tail) {
    const Onnx__NodeProto *nd = g->node[order[head++]];
    for (size_t o = 0; o < nd->n_output; o++) {
      if (!*nd->output[o]) continue;
      int t = onnx_map_get(&im->names, nd->output[o]);
      for (int c = start[t]; c < start[t + 1]; c++)
        if (--indeg[cons[c]] == 0) order[tail++] = cons[c];
    }
  }
  if (tail < nn) {
    /* walk back along unfinished producers: after nn steps the walk is on a cycle */
    int u = 0;
    while (indeg[u] == 0) u++;
    for (int step = 0; step < nn; step++) {
      const Onnx__NodeProto *nd = g->node[u];
      for (size_t k = 0; k < nd->n_input; k++) {
        if (!*nd->input[k]) continue;
        int p = im->t[onnx_map_get(&im->names, nd->input[k])].producer;
        if (p >= 0 && indeg[p] > 0) {
          u = p;
          break;
        }
      }
    }
    st = onnx_fail(im, err, g->node[u], u, "the graph has a cycle through this node");
  }
cleanup:
  free(indeg);
  free(start);
  free(fill);
  free(cons);
  return st;
}

/* ---- pass 3: constants, shapes, layers and costs ---- */

mp_status onnx_layer_add_input(onnx_layer *l, int t) {
  for (int i = 0; i < l->n_in; i++)
    if (l->in[i] == t) return MP_OK;
  if (l->n_in == l->cap_in) {
    int cap = l->cap_in ? 2 * l->cap_in : 4;
    int *p = realloc(l->in, (size_t)cap * sizeof *p);
    if (!p) return MP_NOMEM;
    l->in = p;
    l->cap_in = cap;
  }
  l->in[l->n_in++] = t;
  return MP_OK;
}

static mp_status note_unknown(onnx_importer *im, const char *type, mp_error *err) {
  for (int i = 0; i < im->rep.n_unknown; i++)
    if (strcmp(im->rep.unknown[i].type, type) == 0) {
      im->rep.unknown[i].count++;
      return MP_OK;
    }
  onnx_unknown *u = realloc(im->rep.unknown, (size_t)(im->rep.n_unknown + 1) * sizeof *u);
  if (!u) return err_nomem(err);
  im->rep.unknown = u;
  if (!(u[im->rep.n_unknown].type = strdup(type))) return err_nomem(err);
  u[im->rep.n_unknown++].count = 1;
  return MP_OK;
}

static mp_status process_node(onnx_importer *im, int idx, mp_error *err) {
  const Onnx__NodeProto *nd = im->g->node[idx];
  const onnx_op_info *op = onnx_op_lookup(nd->op_type);
  onnx_op_class cls = op ? op->cls : ONNX_OP_UNKNOWN;
  char lb[32];
  onnx_node_view v;
  memset(&v, 0, sizeof v);
  v.node = nd;
  v.file = im->path;
  v.name = node_label(nd, idx, lb, sizeof lb);
  v.n_in = (int)nd->n_input;
  v.n_out = (int)nd->n_output;
  int n_present = 0, n_const = 0;
  for (int i = 0; i < v.n_in; i++) {
    if (!*nd->input[i]) continue;
    const onnx_tensor *t = &im->t[resolve(im, onnx_map_get(&im->names, nd->input[i]))];
    v.in[i] = t;
    n_present++;
    n_const += t->kind == ONNX_T_CONST;
  }
  int outs[ONNX_MAX_IO];
  for (int i = 0; i < v.n_out; i++) outs[i] = *nd->output[i] ? onnx_map_get(&im->names, nd->output[i]) : -1;

  if (cls == ONNX_OP_CONSTANT) {
    if (v.n_out < 1 || outs[0] < 0) return onnx_fail(im, err, nd, idx, "a Constant needs an output");
    im->rep.folded++;
    return onnx_fold_constant(im, nd, idx, &im->t[outs[0]], err);
  }
  if (cls == ONNX_OP_REMOVED) {
    if (!v.in[0] || v.n_out < 1 || outs[0] < 0) return onnx_fail(im, err, nd, idx, "needs an input and an output");
    for (int i = 1; i < v.n_out; i++)
      if (outs[i] >= 0 && im->t[outs[i]].raw_consumers > 0)
        return onnx_fail(im, err, nd, idx, "output '%.200s' (the mask) is used: only inference graphs are supported",
                         nd->output[i]);
    im->t[outs[0]].alias = resolve(im, onnx_map_get(&im->names, nd->input[0]));
    im->rep.removed++;
    return MP_OK;
  }
  /* known shapes make Shape constant, and so everything computed from constants alone */
  int fold = cls == ONNX_OP_SHAPE || (cls != ONNX_OP_UNKNOWN && n_present > 0 && n_const == n_present);

  for (int i = 0; i < v.n_out; i++) {
    if (outs[i] < 0) continue;
    int vk = onnx_map_get(&im->vinfo, nd->output[i]);
    if (vk < 0) continue;
    int bad = 0;
    int known = type_shape(im, im->vis[vk]->type, &v.out[i], &v.out_elem[i], &bad);
    char why[120];
    if (known < 0)
      return onnx_fail(im, err, nd, idx, "value_info of output '%.200s': %s", nd->output[i],
                       shape_problem(known, &v.out[i], bad, why, sizeof why));
    v.out_known[i] = known;
  }
  int missing = 0;
  for (int i = 0; i < v.n_out; i++) missing += outs[i] >= 0 && !v.out_known[i];
  if (missing) {
    if (!op) {
      for (int i = 0; i < v.n_out; i++)
        if (outs[i] >= 0 && !v.out_known[i])
          return onnx_fail(im, err, nd, idx,
                           "operator '%.60s' is not in the cost model and output '%.200s' has no value_info shape",
                           nd->op_type, nd->output[i]);
    }
    mp_status st = onnx_op_infer(op, &v, err);
    if (st != MP_OK) return st;
  }
  for (int i = 0; i < v.n_out; i++) {
    if (outs[i] < 0) continue;
    if (!v.out_known[i])
      return onnx_fail(im, err, nd, idx, "the shape of output '%.200s' cannot be inferred", nd->output[i]);
    for (int d = 0; d < v.out[i].rank; d++)
      if (v.out[i].d[d] <= 0)
        return onnx_fail(im, err, nd, idx, "output '%.200s' would have dimension %d = %lld (zero or negative)",
                         nd->output[i], d, (long long)v.out[i].d[d]);
    if (!onnx_shape_ok(&v.out[i]))
      return onnx_fail(im, err, nd, idx, "output '%.200s' has too many elements", nd->output[i]);
    onnx_tensor *t = &im->t[outs[i]];
    t->has_shape = 1;
    t->shape = v.out[i];
    t->elem_type = v.out_elem[i];
    if (fold) t->kind = ONNX_T_CONST;
  }
  if (fold) {
    if (v.n_out > 0 && outs[0] >= 0) onnx_fold_eval(&v, &im->t[outs[0]]);
    im->rep.folded++;
    return MP_OK;
  }

  int li = im->n_layers++; /* counted at once, so the cleanup frees it whatever fails below */
  onnx_layer *l = &im->layers[li];
  memset(l, 0, sizeof *l);
  l->node = idx;
  l->type = nd->op_type;
  l->merged_into = -1;
  mp_status st = onnx_op_cost(op, &v, &l->macs, &l->flops, &l->dims, err);
  if (st != MP_OK) return st;
  if (!op && (st = note_unknown(im, nd->op_type, err)) != MP_OK) return st;
  for (int i = 0; i < v.n_in; i++) {
    const onnx_tensor *t = v.in[i];
    if (!t) continue;
    int k = (int)(t - im->t);
    if (t->kind == ONNX_T_ACT) {
      if (onnx_layer_add_input(l, k) != MP_OK) return err_nomem(err);
    } else if (!t->weight_counted) {
      /* at inference a BatchNormalization is a per-channel scale and shift: its running mean and variance
         fold into them, so they are neither weights nor parameters */
      int bn_stat = cls == ONNX_OP_BN && (i == 3 || i == 4);
      if (bn_stat) continue;
      im->t[k].weight_counted = 1;
      l->wbytes += onnx_tensor_bytes(im, t);
      if (t->kind == ONNX_T_INIT && is_float(t->elem_type)) im->rep.params += onnx_shape_elems(&t->shape);
    }
  }
  l->out = calloc((size_t)v.n_out + 1, sizeof *l->out);
  if (!l->out) return err_nomem(err);
  l->out_owned = 1;
  for (int i = 0; i < v.n_out; i++)
    if (outs[i] >= 0) {
      l->out[l->n_out++] = outs[i];
      im->t[outs[i]].layer = li;
    }
  if (l->n_out == 0) return onnx_fail(im, err, nd, idx, "the node has no outputs");
  return MP_OK;
}

/* ---- entry points ---- */

void onnx_report_free(onnx_report *rep) {
  if (!rep) return;
  for (int i = 0; i < rep->n_unknown; i++) free(rep->unknown[i].type);
  free(rep->unknown);
  memset(rep, 0, sizeof *rep);
}

int onnx_report_warning(const onnx_report *rep, char *buf, size_t size) {
  if (size) buf[0] = 0;
  if (!rep || rep->n_unknown == 0 || size == 0) return 0;
  int total = 0;
  for (int i = 0; i < rep->n_unknown; i++) total += rep->unknown[i].count;
  size_t len = (size_t)snprintf(buf, size, "%d node%s of types outside the cost model kept with zero cost:", total,
                                total == 1 ? "" : "s");
  for (int i = 0; i < rep->n_unknown && len < size; i++)
    len += (size_t)snprintf(buf + len, size - len, "%s %s x%d", i ? "," : "", rep->unknown[i].type,
                            rep->unknown[i].count);
  return 1;
}

mp_status onnx_import_json(const char *path, const onnx_options *o, cJSON **out, onnx_report *rep, mp_error *err) {
  *out = NULL;
  if (rep) memset(rep, 0, sizeof *rep);
  char *buf = NULL;
  size_t len = 0;
  mp_status st = fileio_read_max(path, ONNX_MAX_FILE, &buf, &len, err);
  if (st == MP_OK) st = onnx_import_json_mem(path, buf, len, o, out, rep, err);
  free(buf);
  return st;
}

mp_status onnx_import_json_mem(const char *path, const void *data, size_t len, const onnx_options *o, cJSON **out,
                               onnx_report *rep, mp_error *err) {
  err_clear(err);
  *out = NULL;
  if (rep) memset(rep, 0, sizeof *rep);
  onnx_importer im;
  memset(&im, 0, sizeof im);
  im.path = path;
  im.dtype_bytes = onnx_dtype_bytes(o ? o->dtype : NULL);
  if (!im.dtype_bytes)
    return err_set(err, MP_USAGE, "unknown dtype '%.40s' (expected fp32, fp16, bf16 or int8)", o->dtype);
  if (o && o->batch < 0) return err_set(err, MP_USAGE, "the batch size must be positive, got %d", o->batch);

  Onnx__ModelProto *model = NULL;
  int *order = NULL;
  mp_status st = onnx_wire_check(path, data, len, err);
  if (st != MP_OK) return st;
  uint64_t hash = fileio_hash(FILEIO_HASH_INIT, data, len);
  model = onnx__model_proto__unpack(NULL, len, (const uint8_t *)data);
  if (!model) {
    st = err_at(err, MP_INPUT, path, NULL, "not an ONNX model: protobuf decoding failed (truncated or not protobuf)");
    goto cleanup;
  }
  if (!model->graph || model->n_opset_import == 0) {
    st = err_at(err, MP_INPUT, path, NULL, "not an ONNX model: %s (truncated or not an ONNX file)",
                model->graph ? "no opset_import" : "no graph");
    goto cleanup;
  }
  im.g = model->graph;
  if (im.g->n_node == 0) {
    st = err_at(err, MP_INPUT, path, NULL, "the graph has no nodes");
    goto cleanup;
  }
  im.rep.nodes = (int)im.g->n_node;
  if ((st = read_values(&im, err)) != MP_OK) goto cleanup;
  im.rep.model_batch = im.model_batch;
  im.rep.batch = o && o->batch > 0 ? o->batch : im.model_batch;
  im.rep.dtype_bytes = im.dtype_bytes;
  if (im.rep.batch % im.model_batch) {
    st = err_set(err, MP_USAGE, "--batch %d is not a multiple of the model's batch size %d", im.rep.batch,
                 im.model_batch);
    goto cleanup;
  }
  order = calloc(im.g->n_node, sizeof *order);
  im.layers = calloc(im.g->n_node, sizeof *im.layers);
  if (!order || !im.layers) {
    st = err_nomem(err);
    goto cleanup;
  }
  if ((st = order_nodes(&im, order, err)) != MP_OK) goto cleanup;
  for (size_t i = 0; i < im.g->n_node && st == MP_OK; i++) st = process_node(&im, order[i], err);
  if (st != MP_OK) goto cleanup;

  for (int li = 0; li < im.n_layers; li++)
    for (int j = 0; j < im.layers[li].n_in; j++) im.t[im.layers[li].in[j]].n_consumers++;
  for (size_t i = 0; i < im.g->n_output; i++) {
    int t = im.g->output[i]->name ? onnx_map_get(&im.names, im.g->output[i]->name) : -1;
    if (t >= 0) im.t[resolve(&im, t)].graph_output = 1;
  }
  if (!(o && o->no_fuse) && (st = onnx_fuse(&im, err)) != MP_OK) goto cleanup;
  if (im.n_layers == 0) {
    st = err_at(err, MP_INPUT, path, NULL, "no node does any work: every node is a constant or an identity");
    goto cleanup;
  }
  if ((st = onnx_unique_names(&im, err)) != MP_OK) goto cleanup;
  st = onnx_document(&im, o, hash, out, err);

cleanup:
  for (int li = 0; li < im.n_layers; li++) {
    free(im.layers[li].name);
    free(im.layers[li].fused_type);
    free(im.layers[li].in);
    if (im.layers[li].out_owned) free(im.layers[li].out);
  }
  free(im.layers);
  free(order);
  free(im.t);
  free(im.vis);
  onnx_map_free(&im.names);
  onnx_map_free(&im.vinfo);
  if (model) onnx__model_proto__free_unpacked(model, NULL);
  if (st == MP_OK && rep) *rep = im.rep;
  else onnx_report_free(&im.rep);
  return st;
}

mp_status onnx_import(const char *path, const onnx_options *o, graph **out, onnx_report *rep, mp_error *err) {
  cJSON *doc = NULL;
  *out = NULL;
  mp_status st = onnx_import_json(path, o, &doc, rep, err);
  if (st != MP_OK) return st;
  st = graph_from_json(doc, path, out, err);
  cJSON_Delete(doc);
  if (st != MP_OK) onnx_report_free(rep);
  return st;
}
