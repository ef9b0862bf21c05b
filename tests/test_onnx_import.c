/* Tests of the ONNX importer: every real model of tests/models against its reference table
 * (totals within 0.5 %, Conv/Gemm/MatMul MACs node by node exactly), hand counts of the operators
 * the real models lack (ConvTranspose, LSTM, GRU, grouped/dilated Conv, Gemm, broadcast MatMul),
 * folding, fusion, batch and dtype, and bad files — each built here as a small ModelProto with the
 * generated protobuf-c API and written to a temporary file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "onnx.pb-c.h"
#include "onnx_import.h"
#include "testutil.h"

/* ---- an arena for the hand-built models (freed after each test) ---- */

static void **arena;
static int n_arena, cap_arena;

static void *amalloc(size_t n) {
  if (n_arena == cap_arena) {
    cap_arena = cap_arena ? 2 * cap_arena : 256;
    arena = realloc(arena, (size_t)cap_arena * sizeof *arena);
  }
  void *p = calloc(1, n ? n : 1);
  arena[n_arena++] = p;
  return p;
}

static void afree(void) {
  for (int i = 0; i < n_arena; i++) free(arena[i]);
  free(arena);
  arena = NULL;
  n_arena = cap_arena = 0;
}

static char *astr(const char *s) {
  char *p = amalloc(strlen(s) + 1);
  strcpy(p, s);
  return p;
}

/* "a,b,,c" -> {"a","b","","c"}; "" -> none. */
static char **split(const char *csv, size_t *n) {
  *n = 0;
  if (!*csv) return NULL;
  size_t k = 1;
  for (const char *p = csv; *p; p++) k += *p == ',';
  char **out = amalloc(k * sizeof *out);
  const char *s = csv;
  for (size_t i = 0; i < k; i++) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    out[i] = amalloc(len + 1);
    memcpy(out[i], s, len);
    s = e ? e + 1 : s + len;
  }
  *n = k;
  return out;
}

typedef struct mb {
  Onnx__ModelProto *m;
  Onnx__GraphProto *g;
} mb;

#define MB_CAP 64

static mb mb_new(void) {
  mb b;
  b.m = amalloc(sizeof *b.m);
  onnx__model_proto__init(b.m);
  b.m->has_ir_version = 1;
  b.m->ir_version = 8;
  Onnx__OperatorSetIdProto *op = amalloc(sizeof *op);
  onnx__operator_set_id_proto__init(op);
  op->domain = astr("");
  op->has_version = 1;
  op->version = 13;
  b.m->n_opset_import = 1;
  b.m->opset_import = amalloc(sizeof *b.m->opset_import);
  b.m->opset_import[0] = op;
  b.g = amalloc(sizeof *b.g);
  onnx__graph_proto__init(b.g);
  b.g->name = astr("hand");
  b.g->node = amalloc(MB_CAP * sizeof *b.g->node);
  b.g->initializer = amalloc(MB_CAP * sizeof *b.g->initializer);
  b.g->input = amalloc(MB_CAP * sizeof *b.g->input);
  b.g->output = amalloc(MB_CAP * sizeof *b.g->output);
  b.g->value_info = amalloc(MB_CAP * sizeof *b.g->value_info);
  b.m->graph = b.g;
  return b;
}

static Onnx__ValueInfoProto *vinfo(const char *name, int rank, const int64_t *dims) {
  Onnx__ValueInfoProto *v = amalloc(sizeof *v);
  onnx__value_info_proto__init(v);
  v->name = astr(name);
  Onnx__TypeProto *t = amalloc(sizeof *t);
  onnx__type_proto__init(t);
  Onnx__TypeProto__Tensor *tt = amalloc(sizeof *tt);
  onnx__type_proto__tensor__init(tt);
  tt->has_elem_type = 1;
  tt->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  Onnx__TensorShapeProto *s = amalloc(sizeof *s);
  onnx__tensor_shape_proto__init(s);
  s->n_dim = (size_t)rank;
  s->dim = amalloc((size_t)rank * sizeof *s->dim);
  for (int i = 0; i < rank; i++) {
    s->dim[i] = amalloc(sizeof *s->dim[i]);
    onnx__tensor_shape_proto__dimension__init(s->dim[i]);
    s->dim[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    s->dim[i]->dim_value = dims[i];
  }
  tt->shape = s;
  t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  t->tensor_type = tt;
  v->type = t;
  return v;
}

#define DIMS(...) (sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}

static Onnx__ValueInfoProto *mb_input(mb *b, const char *name, size_t rank, const int64_t *dims) {
  return b->g->input[b->g->n_input++] = vinfo(name, (int)rank, dims);
}
static void mb_output(mb *b, const char *name, size_t rank, const int64_t *dims) {
  b->g->output[b->g->n_output++] = vinfo(name, (int)rank, dims);
}
static void mb_value_info(mb *b, const char *name, size_t rank, const int64_t *dims) {
  b->g->value_info[b->g->n_value_info++] = vinfo(name, (int)rank, dims);
}

static Onnx__TensorProto *mb_init(mb *b, const char *name, size_t rank, const int64_t *dims) {
  Onnx__TensorProto *t = amalloc(sizeof *t);
  onnx__tensor_proto__init(t);
  t->name = astr(name);
  t->n_dims = rank;
  t->dims = amalloc(rank * sizeof *t->dims);
  if (rank) memcpy(t->dims, dims, rank * sizeof *dims);
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  b->g->initializer[b->g->n_initializer++] = t;
  return t;
}

static Onnx__NodeProto *mb_node(mb *b, const char *type, const char *name, const char *ins, const char *outs) {
  Onnx__NodeProto *n = amalloc(sizeof *n);
  onnx__node_proto__init(n);
  n->op_type = astr(type);
  n->name = astr(name);
  n->input = split(ins, &n->n_input);
  n->output = split(outs, &n->n_output);
  n->attribute = amalloc(16 * sizeof *n->attribute);
  b->g->node[b->g->n_node++] = n;
  return n;
}

static Onnx__AttributeProto *attr(Onnx__NodeProto *n, const char *name, Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto *a = amalloc(sizeof *a);
  onnx__attribute_proto__init(a);
  a->name = astr(name);
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}
static void attr_int(Onnx__NodeProto *n, const char *name, int64_t v) {
  Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = v;
}
static void attr_float(Onnx__NodeProto *n, const char *name, float v) {
  Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = v;
}
static void attr_ints(Onnx__NodeProto *n, const char *name, size_t k, const int64_t *v) {
  Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->n_ints = k;
  a->ints = amalloc(k * sizeof *v);
  memcpy(a->ints, v, k * sizeof *v);
}
static void attr_str(Onnx__NodeProto *n, const char *name, const char *s) {
  Onnx__AttributeProto *a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t *)astr(s);
  a->s.len = strlen(s);
}
/* A Constant node's int64 tensor value. */
static void attr_int_tensor(Onnx__NodeProto *n, size_t k, const int64_t *v) {
  Onnx__AttributeProto *a = attr(n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  Onnx__TensorProto *t = amalloc(sizeof *t);
  onnx__tensor_proto__init(t);
  t->n_dims = 1;
  t->dims = amalloc(sizeof *t->dims);
  t->dims[0] = (int64_t)k;
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  t->n_int64_data = k;
  t->int64_data = amalloc(k * sizeof *v);
  memcpy(t->int64_data, v, k * sizeof *v);
  a->t = t;
}

static const char *mb_write(const mb *b, const char *fname) {
  size_t len = onnx__model_proto__get_packed_size(b->m);
  uint8_t *buf = malloc(len);
  onnx__model_proto__pack(b->m, buf);
  const char *path = testutil_temp_path(fname);
  FILE *f = fopen(path, "wb");
  if (f) {
    fwrite(buf, 1, len, f);
    fclose(f);
  }
  free(buf);
  return path;
}

/* A model from a few lines of text (';' separates lines), for the tables of small cases:
 *   in NAME DIMS         graph input; DIMS "1,3,8,8", a dimension N is symbolic ("N"), '-' is rank 0
 *   init NAME [DIMS]     float initializer without data (no DIMS: no dims at all)
 *   vi NAME DIMS / out NAME DIMS    value_info / graph output
 *   const NAME V,V...    a Constant node (named NAME_c) with an int64 value
 *   node TYPE NAME INS OUTS [ATTR...]   INS/OUTS comma lists ('-' none, empty items allowed);
 *                        ATTR is a=[1,2] (ints), a=3 (int), a=f0.5 (float) or a='text' (string) */
static size_t parse_dims(const char *text, int64_t *d, const char **param) {
  size_t n = 0;
  if (strcmp(text, "-") == 0) return 0;
  for (const char *p = text; *p && n < 16;) {
    if (*p == 'N') {
      param[n] = "N";
      d[n++] = 0;
      p++;
    } else {
      param[n] = NULL;
      d[n++] = strtoll(p, (char **)&p, 10);
    }
    if (*p == ',') p++;
  }
  return n;
}

static Onnx__ValueInfoProto *dsl_vinfo(const char *name, const char *dims) {
  int64_t d[16] = {0};
  const char *param[16];
  size_t n = parse_dims(dims, d, param);
  Onnx__ValueInfoProto *v = vinfo(name, (int)n, d);
  for (size_t i = 0; i < n; i++)
    if (param[i]) {
      v->type->tensor_type->shape->dim[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      v->type->tensor_type->shape->dim[i]->dim_param = astr(param[i]);
    }
  return v;
}

static mb mb_text(const char *text) {
  mb b = mb_new();
  char *copy = astr(text), *line_save = NULL;
  for (char *line = strtok_r(copy, ";", &line_save); line; line = strtok_r(NULL, ";", &line_save)) {
    char *w[16], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, " ", &save); t && n < 16; t = strtok_r(NULL, " ", &save)) w[n++] = t;
    if (n == 0) continue;
    int64_t d[16] = {0};
    const char *param[16];
    if (strcmp(w[0], "in") == 0) b.g->input[b.g->n_input++] = dsl_vinfo(w[1], w[2]);
    else if (strcmp(w[0], "vi") == 0) b.g->value_info[b.g->n_value_info++] = dsl_vinfo(w[1], w[2]);
    else if (strcmp(w[0], "out") == 0) b.g->output[b.g->n_output++] = dsl_vinfo(w[1], w[2]);
    else if (strcmp(w[0], "init") == 0) mb_init(&b, w[1], n > 2 ? parse_dims(w[2], d, param) : 0, d);
    else if (strcmp(w[0], "const") == 0) {
      char cname[64];
      snprintf(cname, sizeof cname, "%s_c", w[1]);
      attr_int_tensor(mb_node(&b, "Constant", cname, "", w[1]), parse_dims(w[2], d, param), d);
    } else if (strcmp(w[0], "node") == 0) {
      Onnx__NodeProto *nd = mb_node(&b, w[1], w[2], strcmp(w[3], "-") ? w[3] : "", strcmp(w[4], "-") ? w[4] : "");
      for (int i = 5; i < n; i++) {
        char *eq = strchr(w[i], '=');
        *eq = 0;
        const char *v = eq + 1;
        if (*v == '[') {
          char inner[128];
          snprintf(inner, sizeof inner, "%.*s", (int)strlen(v) - 2, v + 1);
          attr_ints(nd, w[i], parse_dims(inner, d, param), d);
        } else if (*v == 'f') {
          attr_float(nd, w[i], strtof(v + 1, NULL));
        } else if (*v == '\'') {
          char inner[128];
          snprintf(inner, sizeof inner, "%.*s", (int)strlen(v) - 2, v + 1);
          attr_str(nd, w[i], inner);
        } else {
          attr_int(nd, w[i], strtoll(v, NULL, 10));
        }
      }
    }
  }
  return b;
}

static mp_status import(const char *path, const char *dtype, int batch, int no_fuse, graph **g, onnx_report *rep,
                        mp_error *err) {
  onnx_options o = {dtype, batch, no_fuse};
  *g = NULL;
  err_clear(err);
  return onnx_import(path, &o, g, rep, err);
}

static const graph_op *op_named(const graph *g, const char *name) {
  int i = graph_find_op(g, name);
  return i >= 0 ? &g->ops[i] : NULL;
}

/* ---- the real models ---- */

static const char *const models[] = {"alexnet", "googlenet", "mobilenet_v2", "resnet18", "resnet50",
                                     "squeezenet1_0", "transformer_encoder", "vgg16", "vit_b_16"};

static void check_model(const char *model) {
  char rel[256];
  snprintf(rel, sizeof rel, "%s.reference.json", model);
  cJSON *ref = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(jsonio_load(testutil_model(rel), &ref, &err), MP_OK);
  snprintf(rel, sizeof rel, "%s.onnx", model);
  graph *g = NULL;
  onnx_report rep;
  mp_status st = import(testutil_model(rel), "fp32", 0, 1, &g, &rep, &err);
  if (st != MP_OK) fprintf(stderr, "\n%s: %s\n", model, err.msg);
  CU_ASSERT_EQUAL_FATAL(st, MP_OK);
  double ref_macs = cJSON_GetObjectItem(ref, "total_macs")->valuedouble;
  double ref_params = cJSON_GetObjectItem(ref, "total_params")->valuedouble;
  graph_totals t;
  graph_get_totals(g, &t);
  CU_ASSERT(fabs((double)t.macs - ref_macs) <= 0.005 * ref_macs);
  CU_ASSERT(fabs((double)t.weight_bytes / 4.0 - ref_params) <= 0.005 * ref_params);
  CU_ASSERT_EQUAL((double)rep.params, ref_params); /* the same definition: exact */
  CU_ASSERT_EQUAL(rep.nodes, cJSON_GetObjectItem(ref, "num_nodes")->valueint);
  CU_ASSERT_EQUAL(rep.n_unknown, 0);
  int compared = 0, mismatched = 0;
  const cJSON *n;
  cJSON_ArrayForEach(n, cJSON_GetObjectItem(ref, "nodes")) {
    const char *type = cJSON_GetObjectItem(n, "op_type")->valuestring;
    if (strcmp(type, "Conv") && strcmp(type, "Gemm") && strcmp(type, "MatMul")) continue;
    const graph_op *op = op_named(g, cJSON_GetObjectItem(n, "name")->valuestring);
    double macs = cJSON_GetObjectItem(n, "macs")->valuedouble;
    if (!op || (double)op->macs != macs) {
      if (mismatched++ < 3)
        fprintf(stderr, "\n%s: node %s: %s %.0f\n", model, cJSON_GetObjectItem(n, "name")->valuestring,
                op ? "macs" : "missing, reference macs", op ? (double)op->macs : macs);
    }
    compared++;
  }
  CU_ASSERT(compared > 0);
  CU_ASSERT_EQUAL(mismatched, 0);
  graph_free(g);
  onnx_report_free(&rep);

  /* fused: the same work in fewer layers */
  st = import(testutil_model(rel), "fp32", 0, 0, &g, &rep, &err);
  CU_ASSERT_EQUAL_FATAL(st, MP_OK);
  graph_totals f;
  graph_get_totals(g, &f);
  CU_ASSERT_EQUAL(f.macs, t.macs);
  CU_ASSERT_EQUAL(f.flops, t.flops);
  CU_ASSERT_EQUAL(f.weight_bytes, t.weight_bytes);
  CU_ASSERT(f.layers < t.layers);
  CU_ASSERT_EQUAL(rep.layers, f.layers);
  graph_free(g);
  onnx_report_free(&rep);
  cJSON_Delete(ref);
}

static void onnx_import_should_match_every_reference_table(void) {
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) check_model(models[i]);
}

/* Differential test of shape inference: the same model without its value_info shapes (only the
 * graph input's shape left) must import to the same graph, byte for byte of every tensor. */
static void onnx_import_should_infer_the_shapes_the_exporter_wrote(void) {
  const char *const *cnns = models; /* the transformers need the shape arithmetic evaluated */
  for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
    char rel[256], *buf = NULL;
    size_t len = 0;
    mp_error err;
    snprintf(rel, sizeof rel, "%s.onnx", cnns[i]);
    CU_ASSERT_EQUAL_FATAL(fileio_read_all(testutil_model(rel), &buf, &len, &err), MP_OK);
    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, len, (const uint8_t *)buf);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    size_t n_vi = m->graph->n_value_info, n_out = m->graph->n_output;
    CU_ASSERT(n_vi > 0);
    m->graph->n_value_info = 0;
    m->graph->n_output = 0;
    size_t plen = onnx__model_proto__get_packed_size(m);
    uint8_t *packed = malloc(plen);
    onnx__model_proto__pack(m, packed);
    m->graph->n_value_info = n_vi;
    m->graph->n_output = n_out;
    onnx__model_proto__free_unpacked(m, NULL);
    const char *bare = testutil_temp_path("bare.onnx");
    CU_ASSERT_EQUAL(fileio_write_atomic(bare, packed, plen, &err), MP_OK);
    free(packed);
    free(buf);

    graph *with = NULL, *without = NULL;
    onnx_report r1, r2;
    CU_ASSERT_EQUAL_FATAL(import(testutil_model(rel), NULL, 0, 1, &with, &r1, &err), MP_OK);
    mp_status st = import(bare, NULL, 0, 1, &without, &r2, &err);
    if (st != MP_OK) fprintf(stderr, "\n%s: %s\n", cnns[i], err.msg);
    CU_ASSERT_EQUAL_FATAL(st, MP_OK);
    CU_ASSERT_EQUAL_FATAL(with->n_ops, without->n_ops);
    int differ = 0;
    for (int l = 0; l < with->n_ops; l++) {
      const graph_op *a = &with->ops[l], *b = &without->ops[l];
      if (a->macs != b->macs || a->flops != b->flops || a->out_bytes != b->out_bytes ||
          a->weight_bytes != b->weight_bytes) {
        if (differ++ < 3) fprintf(stderr, "\n%s: layer %s differs\n", cnns[i], a->name);
      }
    }
    CU_ASSERT_EQUAL(differ, 0);
    graph_free(with);
    graph_free(without);
    onnx_report_free(&r1);
    onnx_report_free(&r2);
  }
}

static void onnx_import_should_give_resnet50_the_published_size(void) {
  graph *g;
  onnx_report rep;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(import(testutil_model("resnet50.onnx"), NULL, 0, 0, &g, &rep, &err), MP_OK);
  CU_ASSERT(rep.macs > 4.08e9 && rep.macs < 4.10e9);     /* torchvision: 4.09 GMACs */
  CU_ASSERT(rep.params > 25.4e6 && rep.params < 25.6e6); /* 25.56 M less the folded BN shifts */
  CU_ASSERT_EQUAL(rep.dtype_bytes, 2);
  CU_ASSERT_EQUAL(rep.weight_bytes, 2 * rep.params); /* fp16, no integer constants */
  CU_ASSERT_EQUAL(rep.nodes, 122);
  CU_ASSERT_EQUAL(rep.layers, g->n_ops);
  /* the input 1x3x224x224 at fp16 */
  CU_ASSERT_EQUAL(g->tensors[0].bytes, 2u * 3 * 224 * 224);
  graph_free(g);
  onnx_report_free(&rep);
}

/* ---- hand counts ---- */

static graph *import_hand(const mb *b, const char *dtype, int batch, int no_fuse, onnx_report *rep) {
  graph *g = NULL;
  mp_error err;
  mp_status st = import(mb_write(b, "hand.onnx"), dtype, batch, no_fuse, &g, rep, &err);
  if (st != MP_OK) fprintf(stderr, "\n%s\n", err.msg);
  return g;
}

/* ConvTranspose, group 2: X 1x4x3x3, W 4x2x3x3 (Cout/group = 2), stride 2, pads 1:
 * out = 2*(3-1) + 3 - 1 - 1 = 5 -> Y 1x4x5x5 (100 elements).  Each of the 36 input elements is
 * scattered to 2 output channels x 9 taps: MACs 36*18 = 648; flops 2*648 + 100 bias adds = 1396;
 * weights (72 + 4) * 4 B = 304 B at fp32.  As products (dims): per group, the 9 input positions x 2 input
 * channels by 2 input channels x (2 output channels x 9 taps): g 2, m 9, n 18, k 2. */
static void onnx_import_should_cost_conv_transpose_by_hand_count(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 4, 3, 3));
  mb_init(&b, "W", DIMS(4, 2, 3, 3));
  mb_init(&b, "B", DIMS(4));
  Onnx__NodeProto *n = mb_node(&b, "ConvTranspose", "up", "X,W,B", "Y");
  attr_int(n, "group", 2);
  attr_ints(n, "strides", DIMS(2, 2));
  attr_ints(n, "pads", DIMS(1, 1, 1, 1));
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].macs, 648);
  CU_ASSERT_EQUAL(g->ops[0].flops, 1396);
  CU_ASSERT(g->ops[0].dims.g == 2 && g->ops[0].dims.m == 9 && g->ops[0].dims.n == 18 && g->ops[0].dims.k == 2);
  CU_ASSERT_EQUAL(g->ops[0].weight_bytes, 304);
  CU_ASSERT_EQUAL(g->ops[0].out_bytes, 100 * 4);
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* Conv, group 2, stride 2, pads 1, dilation 2, bias: X 1x4x9x9, W 6x2x3x3.  Effective kernel
 * (3-1)*2+1 = 5, out = (9+2-5)/2 + 1 = 4 -> Y 1x6x4x4 (96).  MACs 96 * 2*9 = 1728; flops 3456 + 96.
 * Products: per group, 16 positions x (2 channels x 9 taps) by 3 output channels: g 2, m 16, n 3, k 18. */
static void onnx_import_should_cost_a_grouped_dilated_conv_by_hand_count(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 4, 9, 9));
  mb_init(&b, "W", DIMS(6, 2, 3, 3));
  mb_init(&b, "B", DIMS(6));
  Onnx__NodeProto *n = mb_node(&b, "Conv", "conv", "X,W,B", "Y");
  attr_int(n, "group", 2);
  attr_ints(n, "strides", DIMS(2, 2));
  attr_ints(n, "pads", DIMS(1, 1, 1, 1));
  attr_ints(n, "dilations", DIMS(2, 2));
  onnx_report rep;
  graph *g = import_hand(&b, "fp16", 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].macs, 1728);
  CU_ASSERT(g->ops[0].dims.g == 2 && g->ops[0].dims.m == 16 && g->ops[0].dims.n == 3 && g->ops[0].dims.k == 18);
  CU_ASSERT_EQUAL(g->ops[0].flops, 3552);
  CU_ASSERT_EQUAL(g->ops[0].out_bytes, 96 * 2);
  CU_ASSERT_EQUAL(g->ops[0].weight_bytes, (108 + 6) * 2);
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* LSTM, forward, T=5, batch 1, input 10, hidden 20, with bias:
 * MACs = 5 steps * 1 * 4*20 gates * (10 + 20) = 12,000.  Elementwise per step and hidden unit:
 * 4 gate sums + 8 bias adds + 3 sigmoids * 6 + 2 tanh * 4 + 3 for the cell + 1 for o*tanh(c) = 42,
 * so flops = 24,000 + 5*20*42 = 28,200.  Weights W 80x10 + R 80x20 + B 160 = 2,560 floats.  Products: one per
 * step, batch 1 x (10 + 20) by the 80 gate rows: g 5, m 1, n 80, k 30. */
static void onnx_import_should_cost_lstm_by_hand_count(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(5, 1, 10));
  mb_init(&b, "W", DIMS(1, 80, 10));
  mb_init(&b, "R", DIMS(1, 80, 20));
  mb_init(&b, "B", DIMS(1, 160));
  Onnx__NodeProto *n = mb_node(&b, "LSTM", "lstm", "X,W,R,B", "Y,Y_h");
  attr_int(n, "hidden_size", 20);
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].macs, 12000);
  CU_ASSERT(g->ops[0].dims.g == 5 && g->ops[0].dims.m == 1 && g->ops[0].dims.n == 80 && g->ops[0].dims.k == 30);
  CU_ASSERT_EQUAL(g->ops[0].flops, 28200);
  CU_ASSERT_EQUAL(g->ops[0].weight_bytes, 2560 * 4);
  CU_ASSERT_EQUAL(rep.params, 2560);
  CU_ASSERT_EQUAL(g->ops[0].n_outputs, 2);
  CU_ASSERT_EQUAL(g->ops[0].out_bytes, (5 * 20 + 20) * 4); /* Y 5x1x1x20, Y_h 1x1x20 */
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* GRU, bidirectional, T=5, batch 2, input 10, hidden 20, no bias:
 * MACs = 2 directions * 5 * 2 * 3*20 * (10 + 20) = 36,000.  Elementwise per step and unit:
 * 3 gate sums + 1 for r*h + 2 sigmoids * 6 + 1 tanh * 4 + 4 for (1-z)*h~ + z*h = 24, so
 * flops = 72,000 + 2*5*2*20*24 = 81,600.  Products: g 2*5, m 2, n 60, k 30. */
static void onnx_import_should_cost_gru_by_hand_count(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(5, 2, 10));
  mb_init(&b, "W", DIMS(2, 60, 10));
  mb_init(&b, "R", DIMS(2, 60, 20));
  Onnx__NodeProto *n = mb_node(&b, "GRU", "gru", "X,W,R", "Y");
  attr_int(n, "hidden_size", 20);
  attr_str(n, "direction", "bidirectional");
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].macs, 36000);
  CU_ASSERT(g->ops[0].dims.g == 10 && g->ops[0].dims.m == 2 && g->ops[0].dims.n == 60 && g->ops[0].dims.k == 30);
  CU_ASSERT_EQUAL(g->ops[0].flops, 81600);
  CU_ASSERT_EQUAL(g->ops[0].out_bytes, 5 * 2 * 2 * 20 * 4); /* Y 5x2x2x20 */
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* Gemm A 3x5, B 4x5 transposed, C 4, beta 0.5: MACs 3*4*5 = 60; flops 120 + 12 (C) + 12 (beta).
 * MatMul [2,1,3,4] x [5,4,6] broadcasts to [2,5,3,6] (180 outputs) * K 4 = 720 MACs.  Products: Gemm g 1,
 * m 3, n 4, k 5; MatMul, both operands batched, g 10, m 3, n 6, k 4; MatMul by a shared [4,6] weight, the
 * batch folds into one longer product: g 1, m 2*3, n 6, k 4. */
static void onnx_import_should_cost_gemm_and_broadcast_matmul_by_hand_count(void) {
  mb b = mb_new();
  mb_input(&b, "A", DIMS(3, 5));
  mb_input(&b, "P", DIMS(2, 1, 3, 4));
  mb_input(&b, "Q", DIMS(5, 4, 6));
  mb_init(&b, "B", DIMS(4, 5));
  mb_init(&b, "C", DIMS(4));
  Onnx__NodeProto *n = mb_node(&b, "Gemm", "fc", "A,B,C", "Y");
  attr_int(n, "transB", 1);
  attr_float(n, "beta", 0.5f);
  mb_node(&b, "MatMul", "mm", "P,Q", "Z");
  mb_init(&b, "V", DIMS(4, 6));
  mb_node(&b, "MatMul", "mw", "P,V", "Z2");
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  const graph_op *fc = op_named(g, "fc"), *mm = op_named(g, "mm");
  CU_ASSERT_PTR_NOT_NULL_FATAL(fc);
  CU_ASSERT_PTR_NOT_NULL_FATAL(mm);
  CU_ASSERT_EQUAL(fc->macs, 60);
  CU_ASSERT_EQUAL(fc->flops, 144);
  CU_ASSERT_EQUAL(fc->out_bytes, 12 * 4);
  CU_ASSERT_EQUAL(mm->macs, 720);
  CU_ASSERT_EQUAL(mm->flops, 1440);
  CU_ASSERT_EQUAL(mm->out_bytes, 180 * 4);
  const graph_op *mw = op_named(g, "mw");
  CU_ASSERT_PTR_NOT_NULL_FATAL(mw);
  CU_ASSERT(fc->dims.g == 1 && fc->dims.m == 3 && fc->dims.n == 4 && fc->dims.k == 5);
  CU_ASSERT(mm->dims.g == 10 && mm->dims.m == 3 && mm->dims.n == 6 && mm->dims.k == 4);
  CU_ASSERT(mw->dims.g == 1 && mw->dims.m == 6 && mw->dims.n == 6 && mw->dims.k == 4);
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* Shape rules and costs of single operators, no value_info, fp32, no fusion: the op named,
 * its output bytes (sum over outputs), MACs and flops, each counted by hand in the comment. */
static const struct shape_case {
  const char *model, *op;
  long long out_bytes, macs, flops;
} shape_cases[] = {
    /* SAME_UPPER, stride 2 on 7: ceil(7/2) = 4 -> 1x2x4x4 = 32; MACs 32*9 */
    {"in X 1,1,7,7;init W 2,1,3,3;node Conv c X,W Y auto_pad='SAME_UPPER' strides=[2,2]", "c", 128, 288, 576},
    /* VALID, k 3, stride 2 on 7: (7-3)/2+1 = 3 -> 1x2x3x3 = 18 */
    {"in X 1,1,7,7;init W 2,1,3,3;node Conv c X,W Y auto_pad='VALID' strides=[2,2]", "c", 72, 162, 324},
    /* ceil_mode: ceil((8-3)/2)+1 = 4 -> 16 outputs * 9 compares; floor: 3 -> 9 * 9 */
    {"in X 1,1,8,8;node MaxPool p X Y kernel_shape=[3,3] strides=[2,2] ceil_mode=1", "p", 16 * 4, 0, 144},
    {"in X 1,1,8,8;node MaxPool p X Y kernel_shape=[3,3] strides=[2,2]", "p", 9 * 4, 0, 81},
    /* pads 1: 5+2-2+1 = 6 -> 1x2x6x6 = 72, 4 adds each */
    {"in X 1,2,5,5;node AveragePool p X Y kernel_shape=[2,2] pads=[1,1,1,1]", "p", 288, 0, 288},
    /* 36 adds + 4 divides */
    {"in X 1,4,3,3;node GlobalAveragePool g X Y", "g", 16, 0, 40},
    /* Flatten axis 2: [6,20] x [20,2] -> 12 outputs * 20 */
    {"in X 2,3,4,5;node Flatten f X Y axis=2;init W 20,2;node MatMul m Y,W Z", "m", 48, 240, 480},
    /* [2,3,4] perm (2,0,1) -> [4,2,3] x [3,5] -> [4,2,5] = 40 * 3; default perm -> [4,3,2] x [2,5] */
    {"in X 2,3,4;node Transpose t X Y perm=[2,0,1];init W 3,5;node MatMul m Y,W Z", "m", 160, 120, 240},
    {"in X 2,3,4;node Transpose t X Y;init W 2,5;node MatMul m Y,W Z", "m", 240, 120, 240},
    {"in X 1,2,4;in Z 1,3,4;node Concat c X,Z Y axis=1", "c", 80, 0, 0},
    /* 7 split three ways: 3,3,1; the last [2,1] x [1,4] */
    {"in X 2,7;node Split s X A,B,C axis=1;init W 1,4;node MatMul m C,W Z", "m", 32, 8, 16},
    {"in X 2,7;node Split s X A,B,C axis=1", "s", 56, 0, 0},
    /* start -1 -> 9, end -11 -> clamped -1, step -2: rows 9,7,5,3,1 */
    {"in X 10,4;const a -1;const b -11;const ax 0;const st -2;node Slice s X,a,b,ax,st Y", "s", 80, 0, 0},
    /* columns 1,4,7 of 10 (end past the end is clamped) */
    {"in X 2,10;const a 1;const b 9223372036854775807;const ax 1;const st 3;node Slice s X,a,b,ax,st Y", "s", 24, 0, 0},
    {"in X 5,6;const i 0,2,4;node Gather g X,i Y axis=1", "g", 60, 0, 0},
    /* [3,4] -> [1,3,4,1] -> squeezed back to [3,4] x [4,2] */
    {"in X 3,4;node Unsqueeze u X Y axes=[0,-1];node Squeeze q Y Z;init W 4,2;node MatMul m Z,W V", "m", 24, 24, 48},
    /* 24 adds + 8 divides */
    {"in X 2,3,4;node ReduceMean r X Y axes=[1] keepdims=0", "r", 32, 0, 32},
    {"in X 2,5;node Softmax s X Y", "s", 40, 0, 80},
    /* 24 elements * (5 + scale + bias) + 8 per row * 6 rows */
    {"in X 2,3,4;init g 4;init b 4;node LayerNormalization n X,g,b Y", "n", 96, 0, 216},
    {"in X 2,3;node Pad p X Y pads=[1,0,1,2]", "p", 80, 0, 0},
    {"in X 2,3;const r 2,3;node Tile t X,r Y", "t", 144, 0, 0},
    {"in X 3,1;const s 2,1,4;node Expand e X,s Y", "e", 96, 0, 0},
    /* [1,8,2,3] -> [1,2,4,6] x [6,1] -> 8 outputs * 6 */
    {"in X 1,8,2,3;node DepthToSpace d X Y blocksize=2;init W 6,1;node MatMul m Y,W Z", "m", 32, 48, 96},
    /* [1,2,4,6] -> [1,8,2,3] x [3,1] -> 16 outputs * 3 */
    {"in X 1,2,4,6;node SpaceToDepth d X Y blocksize=2;init W 3,1;node MatMul m Y,W Z", "m", 64, 48, 96},
    {"in C 4,1;in X 1,5;in Y 4,5;node Where w C,X,Y Z", "w", 80, 0, 20},
    /* Cast to int64 keeps 8 bytes per element whatever the dtype */
    {"in X 2,3;node Cast c X Y to=7", "c", 48, 0, 6},
    /* Shape from axis 1 of [1,3,4] is [3,4]: Z reshaped to 3x4, times 4x2 */
    {"in X 1,3,4;in Z 12;node Shape s X S start=1;node Reshape r Z,S Y;init W 4,2;node MatMul m Y,W V", "m", 24, 24, 48},
    /* a vector times a matrix, a matrix times a vector */
    {"in X 4;init W 4,3;node MatMul m X,W Y", "m", 12, 12, 24},
    {"in X 2,4;init W 4;node MatMul m X,W Y", "m", 8, 8, 16},
    /* A transposed: M 3, K 5, N 4; alpha 2 costs one multiply per output */
    {"in A 5,3;init B 5,4;node Gemm g A,B Y transA=1 alpha=f2.0", "g", 48, 60, 132},
    /* LSTM, batch-first layout, peepholes, no bias: MACs 5*80*30; flops 24000 + 5*20*(34 + 6);
       outputs Y [1,5,1,20] and Y_h [1,1,20] */
    {"in X 1,5,10;init W 1,80,10;init R 1,80,20;init P 1,60;node LSTM l X,W,R,,,,,P Y,Y_h hidden_size=20 layout=1",
     "l", 480, 12000, 28000},
    /* RNN: MACs 4 steps * 5 * (3 + 5); flops 320 + 4*5*(5 + 2) */
    {"in X 4,1,3;init W 1,5,3;init R 1,5,5;init B 1,10;node RNN r X,W,R,B Y hidden_size=5", "r", 80, 160, 460},
    /* n inputs: (n-1) adds per element for Sum, n for Mean */
    {"in X 2,3;node Sum s X,X,X Y", "s", 24, 0, 12},
    {"in X 2,3;node Mean s X,X,X Y", "s", 24, 0, 18},
    {"in X 2,3;node Gelu g X Y", "g", 24, 0, 48},
    {"in X 2,3;node HardSwish g X Y", "g", 24, 0, 30},
    {"in X 2,3;in Z 3;node PRelu g X,Z Y", "g", 24, 0, 12},
    /* the first input of lower rank: [3] + [4,2,3] -> [4,2,3] */
    {"in Z 3;in X 4,2,3;node Add a Z,X Y", "a", 96, 0, 24},
};

static void onnx_import_should_infer_shapes_and_costs_of_single_operators(void) {
  for (size_t i = 0; i < sizeof shape_cases / sizeof shape_cases[0]; i++) {
    const struct shape_case *c = &shape_cases[i];
    mb b = mb_text(c->model);
    onnx_report rep;
    graph *g = import_hand(&b, "fp32", 0, 1, &rep);
    const graph_op *op = g ? op_named(g, c->op) : NULL;
    int ok = op && (long long)op->out_bytes == c->out_bytes && (long long)op->macs == c->macs &&
             (long long)op->flops == c->flops;
    if (!ok)
      fprintf(stderr, "\ncase %zu (%s): got bytes %lld macs %lld flops %lld\n", i, c->model,
              op ? (long long)op->out_bytes : -1, op ? (long long)op->macs : -1, op ? (long long)op->flops : -1);
    CU_ASSERT(ok);
    graph_free(g);
    onnx_report_free(&rep);
    afree();
  }
  /* a ConstantOfShape of constants folds; the Add reads its value as a 3x4 float constant */
  mb b = mb_text("in X 3,4;const s 3,4;node ConstantOfShape c s K;node Add a X,K Y");
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 0, 1, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->n_ops, 1);
  CU_ASSERT_EQUAL(g->ops[0].weight_bytes, 12 * 4);
  CU_ASSERT_EQUAL(g->ops[0].flops, 12);
  CU_ASSERT_EQUAL(rep.folded, 2);
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* ---- fusion, folding, batch ---- */

/* conv (X 1x3x8x8, W 4x3x3x3, pads 1, no bias) -> BatchNormalization -> Relu.
 * conv: 256 outputs * 27 = 6,912 MACs, 13,824 flops; BN 2 * 256; Relu 256: 14,592 flops fused.
 * Weights at fp16: (108 + 2*4) * 2 = 232 B: at inference BN is a per-channel scale and shift, its mean and
 * variance fold into them, so they are neither weights nor params (params 108 + 8).  Products: m 64
 * positions, n 4 channels, k 27. */
static mb conv_bn_relu(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 3, 8, 8));
  mb_init(&b, "W", DIMS(4, 3, 3, 3));
  mb_init(&b, "s", DIMS(4));
  mb_init(&b, "o", DIMS(4));
  mb_init(&b, "m", DIMS(4));
  mb_init(&b, "v", DIMS(4));
  attr_ints(mb_node(&b, "Conv", "conv", "X,W", "c"), "pads", DIMS(1, 1, 1, 1));
  mb_node(&b, "BatchNormalization", "bn", "c,s,o,m,v", "n");
  mb_node(&b, "Relu", "relu", "n", "Y");
  mb_output(&b, "Y", DIMS(1, 4, 8, 8));
  return b;
}

static void onnx_import_should_fuse_conv_bn_relu_into_one_layer(void) {
  mb b = conv_bn_relu();
  onnx_report rep;
  graph *g = import_hand(&b, NULL, 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->n_ops, 1);
  CU_ASSERT_STRING_EQUAL(g->ops[0].name, "conv");
  CU_ASSERT_STRING_EQUAL(g->ops[0].type, "Conv+BatchNormalization+Relu");
  CU_ASSERT_EQUAL(g->ops[0].macs, 6912);
  CU_ASSERT_EQUAL(g->ops[0].flops, 14592);
  CU_ASSERT_EQUAL(g->ops[0].weight_bytes, 232);
  CU_ASSERT(g->ops[0].dims.g == 1 && g->ops[0].dims.m == 64 && g->ops[0].dims.n == 4 && g->ops[0].dims.k == 27);
  CU_ASSERT_STRING_EQUAL(g->tensors[g->ops[0].outputs[0]].name, "Y");
  CU_ASSERT_EQUAL(rep.params, 116);
  CU_ASSERT_EQUAL(rep.fused, 2);
  CU_ASSERT_EQUAL(rep.nodes, 3);
  CU_ASSERT_EQUAL(rep.layers, 1);
  graph_free(g);
  onnx_report_free(&rep);
  g = import_hand(&b, NULL, 0, 1, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->n_ops, 3);
  CU_ASSERT_EQUAL(op_named(g, "bn")->flops, 512);
  CU_ASSERT_EQUAL(op_named(g, "bn")->weight_bytes, 2 * 4 * 2); /* unfused: 2 parameters per channel, not 4 */
  CU_ASSERT_EQUAL(op_named(g, "bn")->dims.g, 0);
  CU_ASSERT_EQUAL(op_named(g, "relu")->flops, 256);
  CU_ASSERT_EQUAL(rep.fused, 0);
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

/* conv's output feeds both relu and the add: relu is not fused into conv (conv has another
 * consumer), but the add is fused into relu (relu's output has no other reader). */
static void onnx_import_should_not_fuse_into_an_op_with_other_consumers(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 3, 8, 8));
  mb_init(&b, "W", DIMS(3, 3, 1, 1));
  mb_node(&b, "Conv", "conv", "X,W", "c");
  mb_node(&b, "Relu", "relu", "c", "r");
  mb_node(&b, "Add", "add", "c,r", "Y");
  onnx_report rep;
  graph *g = import_hand(&b, NULL, 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->n_ops, 2);
  const graph_op *relu = op_named(g, "relu");
  CU_ASSERT_PTR_NOT_NULL_FATAL(relu);
  CU_ASSERT_EQUAL(relu->n_inputs, 1); /* c, once */
  CU_ASSERT_EQUAL(relu->flops, 192 + 192);
  CU_ASSERT_STRING_EQUAL(relu->type, "Relu+Add");
  CU_ASSERT_PTR_NULL(op_named(g, "add"));
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

static void onnx_import_should_scale_work_and_activations_with_the_batch(void) {
  mb b = conv_bn_relu();
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 4, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].macs, 4 * 6912);
  CU_ASSERT_EQUAL(g->ops[0].flops, 4 * 14592);
  CU_ASSERT_EQUAL(g->ops[0].weight_bytes, 116 * 4); /* weights do not grow with the batch */
  CU_ASSERT_EQUAL(g->ops[0].dims.m, 4 * 64);                /* the batch rides in the products' rows */
  CU_ASSERT_EQUAL(g->tensors[0].bytes, 4u * 3 * 64 * 4);
  CU_ASSERT_EQUAL(rep.batch, 4);
  CU_ASSERT_EQUAL(rep.model_batch, 1);
  graph_free(g);
  onnx_report_free(&rep);

  /* a symbolic batch dimension counts as 1 */
  b.g->input[0]->type->tensor_type->shape->dim[0]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  b.g->input[0]->type->tensor_type->shape->dim[0]->dim_param = astr("N");
  b.g->output[0]->type->tensor_type->shape->dim[0]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  b.g->output[0]->type->tensor_type->shape->dim[0]->dim_param = astr("N");
  g = import_hand(&b, "fp32", 3, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].macs, 3 * 6912);
  graph_free(g);
  onnx_report_free(&rep);

  /* a static batch of 2 cannot become 3 */
  b.g->input[0]->type->tensor_type->shape->dim[0]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  b.g->input[0]->type->tensor_type->shape->dim[0]->dim_value = 2;
  b.g->n_output = 0;
  mp_error err;
  CU_ASSERT_EQUAL(import(mb_write(&b, "b2.onnx"), NULL, 3, 0, &g, &rep, &err), MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--batch 3"));
  afree();
}

/* Constant and Shape fold away; Identity is removed; Reshape takes its target from a Constant. */
static void onnx_import_should_fold_constants_and_remove_identities(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(2, 6));
  attr_int_tensor(mb_node(&b, "Constant", "k", "", "shape"), DIMS(3, 4));
  mb_node(&b, "Identity", "id", "X", "x2");
  mb_node(&b, "Reshape", "reshape", "x2,shape", "r");
  mb_node(&b, "Shape", "shp", "r", "s");
  mb_node(&b, "Relu", "relu", "r", "y");
  mb_node(&b, "Reshape", "back", "y,s", "z");
  onnx_report rep;
  graph *g = import_hand(&b, "fp32", 0, 1, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(rep.folded, 2); /* Constant, Shape */
  CU_ASSERT_EQUAL(rep.removed, 1);
  CU_ASSERT_EQUAL(g->n_ops, 3);
  const graph_op *r = op_named(g, "reshape");
  CU_ASSERT_PTR_NOT_NULL_FATAL(r);
  CU_ASSERT_STRING_EQUAL(g->tensors[r->inputs[0]].name, "X");
  CU_ASSERT_EQUAL(r->weight_bytes, 2 * 8); /* the int64 target shape [3, 4] */
  CU_ASSERT_EQUAL(op_named(g, "back")->weight_bytes, 2 * 8); /* the folded Shape [3, 4] */
  CU_ASSERT_EQUAL(r->flops, 0);
  graph_free(g);
  onnx_report_free(&rep);
  afree();
}

static void onnx_import_should_keep_unknown_operators_at_zero_cost_and_report_them(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 16));
  mb_node(&b, "FancyOp", "f1", "X", "a");
  mb_node(&b, "FancyOp", "f2", "a", "c");
  mb_node(&b, "Relu", "relu", "c", "y");
  mb_value_info(&b, "a", DIMS(1, 16));
  mb_value_info(&b, "c", DIMS(1, 8));
  onnx_report rep;
  graph *g = import_hand(&b, NULL, 0, 0, &rep);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(rep.n_unknown, 1);
  CU_ASSERT_STRING_EQUAL(rep.unknown[0].type, "FancyOp");
  CU_ASSERT_EQUAL(rep.unknown[0].count, 2);
  CU_ASSERT_EQUAL(op_named(g, "f1")->flops, 0);
  CU_ASSERT_EQUAL(op_named(g, "f2")->flops, 8); /* the fused Relu */
  char line[256];
  CU_ASSERT_EQUAL(onnx_report_warning(&rep, line, sizeof line), 1);
  CU_ASSERT_STRING_EQUAL(line, "2 nodes of types outside the cost model kept with zero cost: FancyOp x2");
  graph_free(g);
  onnx_report_free(&rep);
  /* without a value_info shape the unknown operator's output cannot be known */
  b.g->n_value_info = 0;
  mp_error err;
  CU_ASSERT_EQUAL(import(mb_write(&b, "unk.onnx"), NULL, 0, 0, &g, &rep, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "node 'f1' (FancyOp)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no value_info"));
  afree();
}

/* ---- bad input ---- */

/* Imports path expecting MP_INPUT; the message must be one line naming the file and contain want. */
static void expect_bad(const char *path, const char *want) {
  graph *g = NULL;
  onnx_report rep;
  mp_error err;
  mp_status st = import(path, NULL, 0, 0, &g, &rep, &err);
  CU_ASSERT_EQUAL(st, MP_INPUT);
  CU_ASSERT_PTR_NULL(g);
  CU_ASSERT_EQUAL(rep.n_unknown, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  if (!strstr(err.msg, want)) fprintf(stderr, "\nexpected '%s' in: %s\n", want, err.msg);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
  graph_free(g);
}

static void onnx_import_should_reject_truncated_and_non_protobuf_files(void) {
  char *buf;
  size_t len;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(testutil_model("resnet18.onnx"), &buf, &len, &err), MP_OK);
  const size_t cuts[] = {1, 7, len / 10, len / 2, len - 100, len - 1};
  for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
    const char *path = testutil_temp_path("cut.onnx");
    CU_ASSERT_EQUAL(fileio_write_atomic(path, buf, cuts[i], &err), MP_OK);
    expect_bad(path, "not an ONNX model");
  }
  free(buf);
  expect_bad(testutil_write_temp("text.onnx", "this is plain text, not a protobuf message\n"), "not an ONNX model");
  expect_bad(testutil_src("traces/tiny_resnet.json"), "not an ONNX model");
  expect_bad(testutil_temp_path("absent.onnx"), "absent.onnx");
}

static void onnx_import_should_reject_a_cycle(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 4));
  mb_node(&b, "Relu", "head", "X", "h");
  mb_node(&b, "Add", "a", "h,d", "c");
  mb_node(&b, "Relu", "b", "c", "d");
  expect_bad(mb_write(&b, "cycle.onnx"), "the graph has a cycle through this node");
  /* it names a node on the cycle (a or b), not 'head' which only feeds it */
  graph *g;
  onnx_report rep;
  mp_error err;
  CU_ASSERT_EQUAL(import(mb_write(&b, "cycle.onnx"), NULL, 0, 0, &g, &rep, &err), MP_INPUT);
  CU_ASSERT(strstr(err.msg, "node 'a' (Add)") || strstr(err.msg, "node 'b' (Relu)"));
  afree();
}

static void onnx_import_should_reject_an_initializer_without_dims(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 4));
  mb_init(&b, "W", 0, NULL);
  mb_node(&b, "MatMul", "mm", "X,W", "Y");
  expect_bad(mb_write(&b, "nodims.onnx"), "initializer 'W' has no dims");
  afree();
}

static void onnx_import_should_reject_an_op_whose_inputs_are_missing(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 4));
  mb_node(&b, "Relu", "r", "X", "a");
  mb_node(&b, "Add", "sum", "a,ghost", "Y");
  expect_bad(mb_write(&b, "missing.onnx"), "node 'sum' (Add): input 'ghost' is not produced by any node");
  afree();
}

static void onnx_import_should_reject_zero_and_negative_dimensions(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(1, 0));
  mb_node(&b, "Relu", "r", "X", "Y");
  expect_bad(mb_write(&b, "zero.onnx"), "graph input 'X': dimension 1 is 0");
  afree();

  b = mb_new();
  mb_input(&b, "X", DIMS(1, 4));
  mb_init(&b, "W", DIMS(4, -3));
  mb_node(&b, "MatMul", "mm", "X,W", "Y");
  expect_bad(mb_write(&b, "neg.onnx"), "initializer 'W': dimension 1 is -3");
  afree();

  b = mb_new();
  mb_input(&b, "X", DIMS(1, 4));
  mb_node(&b, "Relu", "r", "X", "Y");
  mb_value_info(&b, "Y", DIMS(1, -4));
  expect_bad(mb_write(&b, "negvi.onnx"), "node 'r' (Relu): value_info of output 'Y': dimension 1 is -4");
  afree();

  /* a 5x5 kernel on a 3x3 map without padding leaves nothing */
  b = mb_new();
  mb_input(&b, "X", DIMS(1, 1, 3, 3));
  mb_init(&b, "W", DIMS(1, 1, 5, 5));
  mb_node(&b, "Conv", "big", "X,W", "Y");
  expect_bad(mb_write(&b, "empty.onnx"), "node 'big' (Conv): output 'Y' would have dimension 2 = 0");
  afree();
}

static void onnx_import_should_reject_shapes_it_cannot_know(void) {
  mb b = mb_new();
  mb_input(&b, "X", DIMS(2, 6));
  mb_input(&b, "S", DIMS(2));
  mb_node(&b, "Reshape", "rs", "X,S", "Y");
  expect_bad(mb_write(&b, "dyn.onnx"), "node 'rs' (Reshape): the values of input 'S' are not known");
  afree();

  b = mb_new();
  mb_input(&b, "X", DIMS(2, 6));
  mb_init(&b, "W", DIMS(5, 3));
  mb_node(&b, "MatMul", "mm", "X,W", "Y");
  expect_bad(mb_write(&b, "inner.onnx"), "node 'mm' (MatMul): inner dimensions differ (6 and 5)");
  afree();

  b = mb_new();
  mb_input(&b, "X", DIMS(2, 6));
  mb_node(&b, "Relu", "r", "X", "Y");
  mb_node(&b, "Relu", "again", "X", "Y");
  expect_bad(mb_write(&b, "twice.onnx"), "node 'again' (Relu): output 'Y' is already r");
  afree();
}

/* Every way a node can be wrong that the operator rules check: one line each, naming the node. */
static const struct bad_case {
  const char *model, *want;
} bad_cases[] = {
    {"in X 1,4;init W 4,4;init W 4,4;node MatMul m X,W Y", "initializer 'W' is defined twice"},
    {"in X 1,4;init W 1,1,1,1,1,1,1,1,1;node MatMul m X,W Y", "initializer 'W' has rank 9"},
    {"in X 1,4;init W 1048576,1048576,1048576;node MatMul m X,W Y", "initializer 'W' has too many elements"},
    {"in X 1,4;in X 1,4;node Relu r X Y", "graph input 'X' is listed twice"},
    {"in X 1,N;node Relu r X Y", "graph input 'X' has no static shape"},
    {"in X 1048576,1048576,1048576;node Relu r X Y", "graph input 'X': the rank (at most 8) or the number of elements"},
    {"in X 1,4;node Relu r X X", "node 'r' (Relu): output 'X' is already a graph input"},
    {"in X 1,4;init W 4;node Relu r X W", "node 'r' (Relu): output 'W' is already an initializer"},
    {"in X 1,4;node Constant k - c;node Add a X,c Y", "node 'k' (Constant): a Constant needs a value"},
    {"in X 1,4;node Identity i - Y", "node 'i' (Identity): needs an input and an output"},
    {"in X 1,4;node Dropout d X Y,M;node Add a Y,M Z", "node 'd' (Dropout): output 'M' (the mask) is used"},
    {"in X 1,4;node Relu r X ,", "node 'r' (Relu): the node has no outputs"},
    {"in X 1,4;node Identity i X Y", "no node does any work"},
    {"in X 1,4;node Add a , Y", "node 'a' (Add): no inputs"},
    {"in X 1,4;in Z 1,3;node Add a X,Z Y", "node 'a' (Add): input 'Z' does not broadcast"},
    {"in X 1,3,8,8;node Conv c X Y", "node 'c' (Conv): input 1 is missing"},
    {"in X 1,3;init W 4,3,3,3;node Conv c X,W Y", "node 'c' (Conv): input 'X' has rank 2, expected at least 3"},
    {"in X 1,3,8,8;init W 4,3,3;node Conv c X,W Y", "node 'c' (Conv): weight rank 3 differs from input rank 4"},
    {"in X 1,3,8,8;init W 4,3,3,3;node Conv c X,W Y kernel_shape=[3]", "kernel_shape has 1 values for 2 spatial axes"},
    {"in X 1,3,8,8;init W 4,3,3,3;node Conv c X,W Y strides=[1]", "strides has 1 values for 2 spatial axes"},
    {"in X 1,3,8,8;init W 4,3,3,3;node Conv c X,W Y dilations=[1]", "dilations has 1 values for 2 spatial axes"},
    {"in X 1,3,8,8;init W 4,3,3,3;node Conv c X,W Y pads=[1,1]", "pads has 2 values for 2 spatial axes"},
    {"in X 1,3,8,8;init W 4,3,3,3;node Conv c X,W Y strides=[0,1]", "kernel, strides and dilations must be positive"},
    {"in X 1,3,8,8;init W 4,3,3,3;node Conv c X,W Y group=2", "group 2 does not divide the input channels 3"},
    {"in X 1,4,8,8;init W 4,3,3,3;node Conv c X,W Y", "weight expects 3 input channels, the input has 4"},
    {"in X 1,4,8,8;init W 3,3,3,3;node ConvTranspose c X,W Y", "weight expects 3 input channels, the input has 4"},
    {"in X 1,3,8,8;init W 3,3,3,3;node ConvTranspose c X,W Y output_padding=[1]", "output_padding has 1 values"},
    {"in X 1,3,8,8;init W 3,3,3,3;node ConvTranspose c X,W Y output_shape=[9]", "output_shape has 1 values"},
    {"in X 1,3,8,8;node MaxPool p X Y", "node 'p' (MaxPool): kernel_shape is missing"},
    {"in X 2,3,4;init W 4,5;node Gemm g X,W Y", "node 'g' (Gemm): Gemm needs two matrices"},
    {"in X 2,3;init W 4,5;node Gemm g X,W Y", "node 'g' (Gemm): inner dimensions differ (3 and 4)"},
    {"in X 2,3,4;in Z 5,4,6;node MatMul m X,Z Y", "node 'm' (MatMul): batch dimensions do not broadcast"},
    {"in X 5,1,10;init W 1,80,11;init R 1,80,20;node LSTM l X,W,R Y hidden_size=20", "node 'l' (LSTM): weight W is not [1, 80, 10]"},
    {"in X 5,1,10;init W 1,60,10;init R 1,60,20;node GRU l X,W,R Y direction='bidirectional' hidden_size=20",
     "node 'l' (GRU): weight W is not [2, 60, 10]"},
    {"in X 2,6;const s -1,-1;node Reshape r X,s Y", "the target shape has two -1 entries"},
    {"in X 2,6;const s -2,6;node Reshape r X,s Y", "the target shape has a dimension -2"},
    {"in X 2,6;const s 5,-1;node Reshape r X,s Y", "cannot reshape 12 elements"},
    {"in X 2,6;const s 5,2;node Reshape r X,s Y", "cannot reshape 12 elements into 10"},
    {"in X 2,6;const s 1,1,1,1,1,1,1,1,1,12;node Reshape r X,s Y", "input 's' has 10 values, more than 8"},
    {"in X 2,6;node Unsqueeze u X Y", "node 'u' (Unsqueeze): axes are missing"},
    {"in X 2,6;node Unsqueeze u X Y axes=[5]", "node 'u' (Unsqueeze): bad axis 5"},
    {"in X 1,1,1,1,1,1,1;node Unsqueeze u X Y axes=[0,1]", "node 'u' (Unsqueeze): rank too large"},
    {"in X 2,6;node Squeeze q X Y axes=[0]", "node 'q' (Squeeze): cannot squeeze axis 0"},
    {"in X 2,6;node Squeeze q X Y axes=[1,2,3,4,5,6,7,8,9]", "node 'q' (Squeeze): too many axes"},
    {"in X 2,6;node Reshape r X Y", "node 'r' (Reshape): input 1 is missing"},
    {"in X 2,6;const a 0;const b 1,2;node Slice s X,a,b Y", "starts, ends, axes and steps differ in length"},
    {"in X 2,6;const a 0;const b 1;const c 0;const d 0;node Slice s X,a,b,c,d Y", "node 's' (Slice): bad axis or step"},
    {"in X 2,6;node Split s X A,B axis=2", "node 's' (Split): bad axis"},
    {"in X 2,6;node Split s X A,B split=[1,2,3]", "node 's' (Split): 3 split sizes for 2 outputs"},
    {"in X 2,6;in S 2;node ConstantOfShape c S Y", "node 'c' (ConstantOfShape): the values of input 'S' are not known"},
    {"in X 2,6;in Z 2,6,1;node Concat c X,Z Y axis=0", "node 'c' (Concat): inputs differ in rank"},
    {"in X 2,6;node Concat c X,X Y axis=3", "node 'c' (Concat): bad axis"},
    {"in X 2,6;const i 0;node Gather g X,i Y axis=2", "node 'g' (Gather): bad axis or rank"},
    {"in X 2,6;node Transpose t X Y perm=[0]", "node 't' (Transpose): perm has 1 values for rank 2"},
    {"in X 2,6;node Transpose t X Y perm=[0,2]", "node 't' (Transpose): bad perm"},
    {"in X 2,6;node Flatten f X Y axis=3", "node 'f' (Flatten): bad axis"},
    {"in X 2,6;const s 3,6;node Expand e X,s Y", "node 'e' (Expand): the shape does not broadcast"},
    {"in X 2,6;const r 2;node Tile t X,r Y", "node 't' (Tile): repeats has 1 values for rank 2"},
    {"in X 2,6;node Pad p X Y pads=[1,1]", "node 'p' (Pad): pads has 2 values for rank 2"},
    {"in X 1,3,4,4;node DepthToSpace d X Y blocksize=2", "node 'd' (DepthToSpace): blocksize does not divide"},
    {"in X 1,3,4;node SpaceToDepth d X Y blocksize=2", "node 'd' (SpaceToDepth): needs a 4-d input"},
    {"in X 2,6;node ReduceMean r X Y axes=[2]", "node 'r' (ReduceMean): bad axis 2"},
    {"in X 2,6;init s 6;node LayerNormalization n X,s Y axis=2", "node 'n' (LayerNormalization): bad axis"},
    {"in X 33554432,1;in Z 1,67108864;node MatMul m X,Z Y", "node 'm' (MatMul): output 'Y' has too many elements"},
    {"in X 33554432,33554432;in Z 33554432,33554432;node MatMul m X,Z Y", "node 'm' (MatMul): its cost overflows 64 bits"},
};

/* The cost formulas read the inputs they need even when value_info gives every output's shape (the
 * shape rules, which check them, are then skipped): a Conv without its weight read in[1]. */
static void onnx_import_should_reject_a_conv_without_weights_whose_output_has_a_shape(void) {
  static const char *const texts[] = {
      "in X 1,3,8,8;vi Y 1,4,8,8;node Conv c X Y",
      "in X 1,3,8,8;vi Y 1,4,8,8;node ConvTranspose c X Y",
      "in X 1,3,8,8;vi Y 1,4,8,8;node Conv c ,X Y",
      "in X 1,3,8,8;vi Y 1,3,8,8;node ReduceMean c , Y",
      "in X 1,3,8,8;vi Y 1,3,8,8;node LayerNormalization c , Y",
  };
  const char *want[] = {"node 'c' (Conv): input 1 is missing", "node 'c' (ConvTranspose): input 1 is missing",
                        "node 'c' (Conv): input 0 is missing", "node 'c' (ReduceMean): input 0 is missing",
                        "node 'c' (LayerNormalization): input 0 is missing"};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    mb b = mb_text(texts[i]);
    expect_bad(mb_write(&b, "noweight.onnx"), want[i]);
    afree();
  }
}

/* Protobuf by hand: field num with a varint, or with a length-delimited payload, appended to buf. */
static size_t put_varint(unsigned char *buf, uint64_t v) {
  size_t n = 0;
  do {
    buf[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return n;
}

static size_t put_field(unsigned char *buf, unsigned num, const void *payload, size_t len) {
  size_t n = put_varint(buf, (uint64_t)num << 3 | 2);
  n += put_varint(buf + n, len);
  memmove(buf + n, payload, len);
  return n + len;
}

/* A model whose graph holds If nodes nested `depth` deep (each then_branch the next graph), built from
 * the inside out, so nothing here recurses.  Owned by the caller. */
static unsigned char *nested_ifs(int depth, size_t *len) {
  size_t cap = 64 + (size_t)depth * 48;
  unsigned char *a = malloc(cap), *b = malloc(cap), *t;
  size_t n = put_field(a, 2, "g", 1); /* the innermost graph: a name, no node */
  for (int k = 0; k < depth; k++) {
    size_t m = put_field(b, 1, "then_branch", 11);
    m += put_varint(b + m, 20 << 3); /* type (a varint): GRAPH, 5 */
    b[m++] = 5;
    m += put_field(b + m, 6, a, n);         /* attribute: name, type, g */
    n = put_field(a, 4, "If", 2);           /* node: op_type ... */
    n += put_field(a + n, 5, b, m);         /* ... and the attribute */
    m = put_field(b, 1, a, n);              /* graph: the node ... */
    m += put_field(b + m, 2, "g", 1);       /* ... and a name */
    t = a, a = b, b = t, n = m;
  }
  size_t m = put_field(b, 7, a, n); /* model: the graph and an opset */
  m += put_field(b + m, 8, "\x10\x0d", 2);
  free(a);
  *len = m;
  return b;
}

static void onnx_import_should_refuse_deep_nesting_before_unpacking_it(void) {
  mp_error err;
  size_t len;
  unsigned char *bytes = nested_ifs(3000, &len);
  const char *path = testutil_temp_path("deep.onnx");
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, bytes, len, &err), MP_OK);
  free(bytes);
  expect_bad(path, "messages nested more than 64 deep");
  /* nesting within the limit reaches the importer, which says what it thinks of an If */
  bytes = nested_ifs(5, &len);
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, bytes, len, &err), MP_OK);
  free(bytes);
  graph *g;
  onnx_report rep;
  CU_ASSERT_EQUAL(import(path, NULL, 0, 0, &g, &rep, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(strstr(err.msg, "nested"));
}

static void onnx_import_should_refuse_a_small_file_that_unpacks_to_far_more(void) {
  /* 400 000 empty attributes of one node: 800 kB that protobuf-c would unpack to 100 MB */
  size_t n_attr = 400000, len = 0;
  unsigned char *node = malloc(2 * n_attr + 16), *model = malloc(2 * n_attr + 64);
  size_t n = 0;
  for (size_t i = 0; i < n_attr; i++) node[n++] = 5 << 3 | 2, node[n++] = 0;
  unsigned char *gr = malloc(2 * n_attr + 32);
  size_t m = put_field(gr, 1, node, n);
  len = put_field(model, 7, gr, m);
  len += put_field(model + len, 8, "\x10\x0d", 2);
  mp_error err;
  const char *path = testutil_temp_path("wide.onnx");
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, model, len, &err), MP_OK);
  free(node);
  free(gr);
  free(model);
  expect_bad(path, "would unpack to more than 88 MiB of protobuf messages");
}

static void onnx_import_should_reject_each_bad_node_with_its_name(void) {
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    mb b = mb_text(bad_cases[i].model);
    expect_bad(mb_write(&b, "case.onnx"), bad_cases[i].want);
    afree();
  }
}

static void onnx_import_should_reject_files_without_a_usable_graph(void) {
  mb b = mb_text("in X 1,4;node Relu r X Y");
  b.m->n_opset_import = 0;
  expect_bad(mb_write(&b, "noopset.onnx"), "no opset_import");
  b.m->n_opset_import = 1;
  b.m->graph = NULL;
  expect_bad(mb_write(&b, "nograph.onnx"), "no graph");
  afree();
  b = mb_text("in X 1,4");
  expect_bad(mb_write(&b, "nonodes.onnx"), "the graph has no nodes");
  afree();
  b = mb_text("in X 1,4;node Relu r X Y");
  b.g->node[0]->op_type = astr("");
  expect_bad(mb_write(&b, "notype.onnx"), "the node has no op_type");
  afree();
  b = mb_text("in X 1,4;init W 4;node Relu r X Y");
  b.g->initializer[0]->name = astr("");
  expect_bad(mb_write(&b, "noname.onnx"), "initializer 0 has no name");
  b.g->initializer[0]->name = astr("W");
  b.g->input[0]->name = astr("");
  expect_bad(mb_write(&b, "noname.onnx"), "graph input 0 has no name");
  afree();
  /* more inputs than a node may have */
  char text[1024] = "in X 1,4;node Sum s ";
  for (int i = 0; i < 65; i++) strcat(text, i ? ",X" : "X");
  strcat(text, " Y");
  b = mb_text(text);
  expect_bad(mb_write(&b, "many.onnx"), "more than 64 inputs or outputs");
  afree();
}

/* Overflowing the JSON range only at a large batch is an input error, not a wrong number. */
static void onnx_import_should_refuse_numbers_json_cannot_carry(void) {
  mb b = mb_text("in X 1,1048576,1024;in Z 1024,1048576;node MatMul m X,Z Y");
  graph *g;
  onnx_report rep;
  mp_error err;
  CU_ASSERT_EQUAL(import(mb_write(&b, "big.onnx"), NULL, 0, 0, &g, &rep, &err), MP_OK); /* 2^50 MACs */
  graph_free(g);
  onnx_report_free(&rep);
  CU_ASSERT_EQUAL(import(mb_write(&b, "big.onnx"), NULL, 1 << 10, 0, &g, &rep, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exceeds 2^53 at this batch size"));
  afree();
}

static void onnx_import_should_refuse_a_bad_dtype(void) {
  graph *g;
  onnx_report rep;
  mp_error err;
  CU_ASSERT_EQUAL(import(testutil_model("alexnet.onnx"), "fp64", 0, 0, &g, &rep, &err), MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "fp64"));
  CU_ASSERT_EQUAL(onnx_dtype_bytes("bf16"), 2);
  CU_ASSERT_EQUAL(onnx_dtype_bytes("int8"), 1);
  CU_ASSERT_EQUAL(onnx_dtype_bytes("fp32"), 4);
  CU_ASSERT_EQUAL(onnx_dtype_bytes("fp8"), 0);
}

/* ---- the command ---- */

static void meshpipe_import_should_write_a_graph_or_nothing(void) {
  char cmd[4096], *out = NULL, *errout = NULL;
  const char *dst = testutil_temp_path("r18.json");
  snprintf(cmd, sizeof cmd, "import '%s' -o '%s' --dtype int8", testutil_model("resnet18.onnx"), dst);
  CU_ASSERT_EQUAL(testutil_meshpipe(cmd, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "49 nodes -> 24 layers"));
  free(out);
  free(errout);
  graph *g = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(dst, &g, &err), MP_OK);
  CU_ASSERT_EQUAL(g->n_ops, 24);
  graph_free(g);

  const char *bad = testutil_write_temp("bad.onnx", "garbage");
  const char *none = testutil_temp_path("none.json");
  snprintf(cmd, sizeof cmd, "import '%s' -o '%s'", bad, none);
  CU_ASSERT_EQUAL(testutil_meshpipe(cmd, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "not an ONNX model"));
  CU_ASSERT_FALSE(testutil_exists(none));
  free(out);
  free(errout);

  snprintf(cmd, sizeof cmd, "import '%s' --dtype fp64", testutil_model("resnet18.onnx"));
  CU_ASSERT_EQUAL(testutil_meshpipe(cmd, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "--dtype must be fp32, fp16, bf16 or int8"));
  free(out);
  free(errout);
}

/* Without -o the graph goes to stdout; unknown operators give one warning line, also when another
 * command reads the .onnx directly. */
static void meshpipe_import_should_print_the_graph_and_one_warning_line(void) {
  mb b = mb_text("in X 1,16;node FancyOp f X a;vi a 1,16;node Relu r a y");
  const char *model = mb_write(&b, "fancy.onnx");
  char cmd[4096], *out = NULL, *errout = NULL;
  snprintf(cmd, sizeof cmd, "import '%s' --no-fuse --batch 2", model);
  CU_ASSERT_EQUAL(testutil_meshpipe(cmd, &out, &errout), 0);
  cJSON *doc = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL(doc);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(doc, "ops")), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "warning: 1 node of types outside the cost model kept with zero cost: FancyOp x1\n"));
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "2 nodes -> 2 layers"));
  cJSON_Delete(doc);
  free(out);
  free(errout);
  snprintf(cmd, sizeof cmd, "info '%s'", model);
  CU_ASSERT_EQUAL(testutil_meshpipe(cmd, &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "FancyOp x1"));
  free(out);
  free(errout);
  afree();
}

static CU_TestInfo tests[] = {
    {"onnx_import_should_match_every_reference_table", onnx_import_should_match_every_reference_table},
    {"onnx_import_should_infer_the_shapes_the_exporter_wrote", onnx_import_should_infer_the_shapes_the_exporter_wrote},
    {"onnx_import_should_give_resnet50_the_published_size", onnx_import_should_give_resnet50_the_published_size},
    {"onnx_import_should_cost_conv_transpose_by_hand_count", onnx_import_should_cost_conv_transpose_by_hand_count},
    {"onnx_import_should_cost_a_grouped_dilated_conv_by_hand_count",
     onnx_import_should_cost_a_grouped_dilated_conv_by_hand_count},
    {"onnx_import_should_cost_lstm_by_hand_count", onnx_import_should_cost_lstm_by_hand_count},
    {"onnx_import_should_cost_gru_by_hand_count", onnx_import_should_cost_gru_by_hand_count},
    {"onnx_import_should_cost_gemm_and_broadcast_matmul_by_hand_count",
     onnx_import_should_cost_gemm_and_broadcast_matmul_by_hand_count},
    {"onnx_import_should_infer_shapes_and_costs_of_single_operators",
     onnx_import_should_infer_shapes_and_costs_of_single_operators},
    {"onnx_import_should_fuse_conv_bn_relu_into_one_layer", onnx_import_should_fuse_conv_bn_relu_into_one_layer},
    {"onnx_import_should_not_fuse_into_an_op_with_other_consumers",
     onnx_import_should_not_fuse_into_an_op_with_other_consumers},
    {"onnx_import_should_scale_work_and_activations_with_the_batch",
     onnx_import_should_scale_work_and_activations_with_the_batch},
    {"onnx_import_should_fold_constants_and_remove_identities", onnx_import_should_fold_constants_and_remove_identities},
    {"onnx_import_should_keep_unknown_operators_at_zero_cost_and_report_them",
     onnx_import_should_keep_unknown_operators_at_zero_cost_and_report_them},
    {"onnx_import_should_reject_truncated_and_non_protobuf_files",
     onnx_import_should_reject_truncated_and_non_protobuf_files},
    {"onnx_import_should_reject_a_cycle", onnx_import_should_reject_a_cycle},
    {"onnx_import_should_reject_an_initializer_without_dims", onnx_import_should_reject_an_initializer_without_dims},
    {"onnx_import_should_reject_an_op_whose_inputs_are_missing",
     onnx_import_should_reject_an_op_whose_inputs_are_missing},
    {"onnx_import_should_reject_zero_and_negative_dimensions", onnx_import_should_reject_zero_and_negative_dimensions},
    {"onnx_import_should_reject_shapes_it_cannot_know", onnx_import_should_reject_shapes_it_cannot_know},
    {"onnx_import_should_reject_a_conv_without_weights_whose_output_has_a_shape",
     onnx_import_should_reject_a_conv_without_weights_whose_output_has_a_shape},
    {"onnx_import_should_refuse_deep_nesting_before_unpacking_it", onnx_import_should_refuse_deep_nesting_before_unpacking_it},
    {"onnx_import_should_refuse_a_small_file_that_unpacks_to_far_more",
     onnx_import_should_refuse_a_small_file_that_unpacks_to_far_more},
    {"onnx_import_should_reject_each_bad_node_with_its_name", onnx_import_should_reject_each_bad_node_with_its_name},
    {"onnx_import_should_reject_files_without_a_usable_graph", onnx_import_should_reject_files_without_a_usable_graph},
    {"onnx_import_should_refuse_numbers_json_cannot_carry", onnx_import_should_refuse_numbers_json_cannot_carry},
    {"onnx_import_should_refuse_a_bad_dtype", onnx_import_should_refuse_a_bad_dtype},
    {"meshpipe_import_should_write_a_graph_or_nothing", meshpipe_import_should_write_a_graph_or_nothing},
    {"meshpipe_import_should_print_the_graph_and_one_warning_line",
     meshpipe_import_should_print_the_graph_and_one_warning_line},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("onnx_import", tests, argc, argv); }
