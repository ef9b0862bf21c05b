/* graph: loading, validation, linearisation and serialisation of workload graphs.  See graph.h.
 *
 * Loading happens in two passes over the document.  The first reads every member strictly into
 * "raw" records in file order, keeping borrowed pointers into the cJSON tree.  The second resolves
 * names through sorted indexes (no hash table, so nothing depends on iteration order), sorts the ops
 * topologically with the file position as tie-break, and only then builds the owned graph, renumbering
 * tensors in layer order. */
#define _GNU_SOURCE /* qsort_r */
#include "graph.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonio.h"

/* ---- first pass: raw records borrowed from the document ---- */

typedef struct raw_tensor {
  const char *name;
  uint64_t bytes;
  int producer; /* file index of the producing op, -1 for a graph input */
  int slot;     /* position in its producer's outputs (or in "inputs") */
} raw_tensor;

typedef struct raw_op {
  const char *name, *type;
  int n_inputs, n_outputs;
  const char **inputs;  /* tensor names */
  int *input_tensor;    /* resolved raw tensor indices */
  int first_output;     /* index of its first raw tensor */
  uint64_t macs, flops, weight_bytes;
  graph_dims dims;
} raw_op;

typedef struct loader {
  const char *file;
  int n_ops, n_tensors, n_graph_inputs;
  raw_op *ops;
  raw_tensor *tensors;
} loader;

static const char *const root_keys[] = {"format", "version", "name", "inputs", "ops", "source", NULL};
static const char *const op_keys[] = {"name", "type", "inputs", "outputs", "macs", "flops", "weight_bytes", "dims", NULL};
static const char *const dims_keys[] = {"g", "m", "n", "k", NULL};
static const char *const tensor_keys[] = {"name", "bytes", NULL};

static void loader_clear(loader *ld) {
  for (int i = 0; i < ld->n_ops; i++) {
    free(ld->ops[i].inputs);
    free(ld->ops[i].input_tensor);
  }
  free(ld->ops);
  free(ld->tensors);
}

/* Reads one {"name","bytes"} tensor object at where. */
static mp_status read_tensor(const cJSON *t, const char *file, const char *where, raw_tensor *out, mp_error *err) {
  if (!cJSON_IsObject(t)) return err_at(err, MP_INPUT, file, where, "expected an object with name and bytes");
  jsonio_reader rd = {file, where, err};
  mp_status st = jsonio_known_keys(&rd, t, tensor_keys);
  if (st == MP_OK) st = jsonio_get_str(&rd, t, "name", JSONIO_REQUIRED, &out->name, NULL);
  if (st == MP_OK) st = jsonio_get_u64(&rd, t, "bytes", JSONIO_REQUIRED, &out->bytes, NULL);
  return st;
}

/* "dims" of an op, optional: g, m, n, k each >= 1, their product its macs. */
static mp_status read_dims(const char *file, const char *named, const cJSON *o, raw_op *op, mp_error *err) {
  const cJSON *d = NULL;
  int present = 0;
  char where[200];
  snprintf(where, sizeof where, "%s.dims", named);
  jsonio_reader rd = {file, named, err}, in = {file, where, err};
  mp_status st = jsonio_get_object(&rd, o, "dims", JSONIO_OPTIONAL, &d, &present);
  if (st != MP_OK || !present) return st;
  st = jsonio_known_keys(&in, d, dims_keys);
  uint64_t *v[] = {&op->dims.g, &op->dims.m, &op->dims.n, &op->dims.k};
  for (int i = 0; i < 4 && st == MP_OK; i++) {
    st = jsonio_get_u64(&in, d, dims_keys[i], JSONIO_REQUIRED, v[i], NULL);
    if (st == MP_OK && *v[i] == 0) return err_at(err, MP_INPUT, file, where, "%s must be at least 1", dims_keys[i]);
  }
  if (st != MP_OK) return st;
  uint64_t p = op->dims.g;
  int over = __builtin_mul_overflow(p, op->dims.m, &p) || __builtin_mul_overflow(p, op->dims.n, &p) ||
             __builtin_mul_overflow(p, op->dims.k, &p);
  if (over || p != op->macs)
    return err_at(err, MP_INPUT, file, where, "g x m x n x k = %llu x %llu x %llu x %llu must equal macs (%llu)",
                  (unsigned long long)op->dims.g, (unsigned long long)op->dims.m, (unsigned long long)op->dims.n,
                  (unsigned long long)op->dims.k, (unsigned long long)op->macs);
  return MP_OK;
}

static mp_status read_op(loader *ld, const cJSON *o, int i, mp_error *err) {
  const char *file = ld->file;
  char where[64];
  snprintf(where, sizeof where, "ops[%d]", i);
  if (!cJSON_IsObject(o)) return err_at(err, MP_INPUT, file, where, "expected an object");
  raw_op *op = &ld->ops[i];
  const cJSON *ins, *outs;
  jsonio_reader rd = {file, where, err};
  mp_status st = jsonio_known_keys(&rd, o, op_keys);
  if (st == MP_OK) st = jsonio_get_str(&rd, o, "name", JSONIO_REQUIRED, &op->name, NULL);
  if (st == MP_OK) st = jsonio_get_str(&rd, o, "type", JSONIO_REQUIRED, &op->type, NULL);
  if (st == MP_OK) st = jsonio_get_array(&rd, o, "inputs", JSONIO_REQUIRED, &ins, NULL);
  if (st == MP_OK) st = jsonio_get_array(&rd, o, "outputs", JSONIO_REQUIRED, &outs, NULL);
  if (st == MP_OK) st = jsonio_get_u64(&rd, o, "macs", JSONIO_REQUIRED, &op->macs, NULL);
  if (st == MP_OK) st = jsonio_get_u64(&rd, o, "flops", JSONIO_REQUIRED, &op->flops, NULL);
  if (st == MP_OK) st = jsonio_get_u64(&rd, o, "weight_bytes", JSONIO_REQUIRED, &op->weight_bytes, NULL);
  if (st != MP_OK) return st;
  char named[160];
  snprintf(named, sizeof named, "ops[%d] '%.100s'", i, op->name);
  if (op->flops / 2 < op->macs)
    return err_at(err, MP_INPUT, file, named, "flops (%llu) must be at least 2 x macs (%llu)",
                  (unsigned long long)op->flops, (unsigned long long)op->macs);
  if ((st = read_dims(file, named, o, op, err)) != MP_OK) return st;
  op->n_inputs = cJSON_GetArraySize(ins);
  op->inputs = calloc((size_t)op->n_inputs + 1, sizeof *op->inputs);
  op->input_tensor = calloc((size_t)op->n_inputs + 1, sizeof *op->input_tensor);
  if (!op->inputs || !op->input_tensor) return err_nomem(err);
  int k = 0;
  for (const cJSON *in = ins->child; in; in = in->next, k++) {
    if (!cJSON_IsString(in) || !in->valuestring || !*in->valuestring) {
      char w[200];
      snprintf(w, sizeof w, "%s.inputs[%d]", named, k);
      return err_at(err, MP_INPUT, file, w, "expected a tensor name (a non-empty string)");
    }
    op->inputs[k] = in->valuestring;
  }
  op->n_outputs = cJSON_GetArraySize(outs);
  if (op->n_outputs == 0) return err_at(err, MP_INPUT, file, named, "outputs: an op must produce at least one tensor");
  op->first_output = ld->n_tensors;
  k = 0;
  for (const cJSON *out = outs->child; out; out = out->next, k++) {
    char w[200];
    snprintf(w, sizeof w, "%s.outputs[%d]", named, k);
    raw_tensor *t = &ld->tensors[ld->n_tensors];
    st = read_tensor(out, file, w, t, err);
    if (st != MP_OK) return st;
    t->producer = i;
    t->slot = k;
    ld->n_tensors++;
  }
  return MP_OK;
}

static mp_status read_document(loader *ld, const cJSON *root, mp_error *err) {
  const char *file = ld->file;
  const char *format, *name;
  int version;
  const cJSON *ins, *ops;
  if (!cJSON_IsObject(root)) return err_at(err, MP_INPUT, file, NULL, "expected a JSON object at the top level");
  jsonio_reader rd = {file, NULL, err};
  mp_status st = jsonio_known_keys(&rd, root, root_keys);
  if (st == MP_OK) st = jsonio_get_str(&rd, root, "format", JSONIO_REQUIRED, &format, NULL);
  if (st == MP_OK && strcmp(format, GRAPH_FORMAT) != 0)
    return err_at(err, MP_INPUT, file, "format", "expected \"%s\", got \"%.80s\"", GRAPH_FORMAT, format);
  if (st == MP_OK)
    st = jsonio_get_int(&rd, root, "version", JSONIO_REQUIRED, GRAPH_VERSION, GRAPH_VERSION, &version, NULL);
  if (st == MP_OK) st = jsonio_get_str(&rd, root, "name", JSONIO_REQUIRED, &name, NULL);
  if (st == MP_OK) st = jsonio_get_array(&rd, root, "inputs", JSONIO_REQUIRED, &ins, NULL);
  if (st == MP_OK) st = jsonio_get_array(&rd, root, "ops", JSONIO_REQUIRED, &ops, NULL);
  const cJSON *source = NULL; /* provenance: kept as it is, but an object as the format says */
  if (st == MP_OK) st = jsonio_get_object(&rd, root, "source", JSONIO_OPTIONAL, &source, NULL);
  if (st != MP_OK) return st;
  int n_ops = cJSON_GetArraySize(ops);
  if (n_ops == 0) return err_at(err, MP_INPUT, file, "ops", "the graph has no ops");
  int n_out = 0;
  for (const cJSON *o = ops->child; o; o = o->next) {
    const cJSON *outs = cJSON_GetObjectItemCaseSensitive(o, "outputs");
    n_out += cJSON_IsArray(outs) ? cJSON_GetArraySize(outs) : 0;
  }
  ld->n_graph_inputs = cJSON_GetArraySize(ins);
  ld->ops = calloc((size_t)n_ops, sizeof *ld->ops);
  ld->tensors = calloc((size_t)(ld->n_graph_inputs + n_out) + 1, sizeof *ld->tensors);
  if (!ld->ops || !ld->tensors) return err_nomem(err);
  ld->n_ops = n_ops; /* only now: loader_clear frees the entries of ops[0 .. n_ops) */
  int k = 0;
  for (const cJSON *t = ins->child; t; t = t->next, k++) {
    char w[64];
    snprintf(w, sizeof w, "inputs[%d]", k);
    st = read_tensor(t, file, w, &ld->tensors[k], err);
    if (st != MP_OK) return st;
    ld->tensors[k].producer = -1;
    ld->tensors[k].slot = k;
  }
  ld->n_tensors = ld->n_graph_inputs;
  int i = 0;
  for (const cJSON *o = ops->child; o; o = o->next, i++) {
    st = read_op(ld, o, i, err);
    if (st != MP_OK) return st;
  }
  return MP_OK;
}

/* ---- second pass: names, order ---- */

/* qsort_r orders of raw tensor / op indices by name, ties by index; ctx is the raw array. */
static int cmp_tensor_name(const void *a, const void *b, void *ctx) {
  const raw_tensor *base = ctx;
  int c = strcmp(base[*(const int *)a].name, base[*(const int *)b].name);
  return c ? c : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static int cmp_op_name(const void *a, const void *b, void *ctx) {
  const raw_op *base = ctx;
  int c = strcmp(base[*(const int *)a].name, base[*(const int *)b].name);
  return c ? c : (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

/* Describes where a raw tensor is declared, for messages. */
static void tensor_place(const loader *ld, int t, char *buf, size_t n) {
  const raw_tensor *r = &ld->tensors[t];
  if (r->producer < 0)
    snprintf(buf, n, "inputs[%d]", r->slot);
  else
    snprintf(buf, n, "ops[%d] '%.100s'.outputs[%d]", r->producer, ld->ops[r->producer].name, r->slot);
}

/* Finds duplicate op and tensor names and resolves every op input to a tensor. */
static mp_status resolve_names(loader *ld, mp_error *err) {
  mp_status st = MP_OK;
  int *byname = malloc(sizeof(int) * (size_t)(ld->n_tensors > ld->n_ops ? ld->n_tensors : ld->n_ops) + 1);
  if (!byname) return err_nomem(err);

  for (int i = 0; i < ld->n_ops; i++) byname[i] = i;
  qsort_r(byname, (size_t)ld->n_ops, sizeof *byname, cmp_op_name, ld->ops);
  for (int i = 1; i < ld->n_ops; i++) {
    const raw_op *a = &ld->ops[byname[i - 1]], *b = &ld->ops[byname[i]];
    if (strcmp(a->name, b->name) == 0) {
      char w[64];
      snprintf(w, sizeof w, "ops[%d]", byname[i]);
      st = err_at(err, MP_INPUT, ld->file, w, "duplicate op name '%.100s' (also ops[%d])", b->name, byname[i - 1]);
      goto cleanup;
    }
  }

  for (int t = 0; t < ld->n_tensors; t++) byname[t] = t;
  qsort_r(byname, (size_t)ld->n_tensors, sizeof *byname, cmp_tensor_name, ld->tensors);
  for (int i = 1; i < ld->n_tensors; i++) {
    const raw_tensor *a = &ld->tensors[byname[i - 1]], *b = &ld->tensors[byname[i]];
    if (strcmp(a->name, b->name) != 0) continue;
    char first[200], second[200];
    tensor_place(ld, byname[i - 1], first, sizeof first);
    tensor_place(ld, byname[i], second, sizeof second);
    if (a->producer < 0 && b->producer < 0)
      st = err_at(err, MP_INPUT, ld->file, second, "duplicate graph input '%.100s' (also %s)", b->name, first);
    else if (a->producer < 0)
      st = err_at(err, MP_INPUT, ld->file, second, "tensor '%.100s' is a graph input and is produced again", b->name);
    else
      st = err_at(err, MP_INPUT, ld->file, second, "tensor '%.100s' is produced twice (also %s)", b->name, first);
    goto cleanup;
  }

  for (int i = 0; i < ld->n_ops; i++) {
    raw_op *op = &ld->ops[i];
    for (int k = 0; k < op->n_inputs; k++) {
      int lo = 0, hi = ld->n_tensors - 1, found = -1;
      while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(ld->tensors[byname[mid]].name, op->inputs[k]);
        if (c == 0) {
          found = byname[mid];
          break;
        }
        if (c < 0)
          lo = mid + 1;
        else
          hi = mid - 1;
      }
      if (found < 0) {
        char w[200];
        snprintf(w, sizeof w, "ops[%d] '%.100s'.inputs[%d]", i, op->name, k);
        st = err_at(err, MP_INPUT, ld->file, w, "tensor '%.100s' is neither a graph input nor produced by any op",
                    op->inputs[k]);
        goto cleanup;
      }
      op->input_tensor[k] = found;
    }
  }
cleanup:
  free(byname);
  return st;
}

/* A binary min-heap of op file indices: the ready op earliest in the file runs first. */
typedef struct heap {
  int *v, n;
} heap;

static void heap_push(heap *h, int x) {
  int i = h->n++;
  while (i > 0 && h->v[(i - 1) / 2] > x) {
    h->v[i] = h->v[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  h->v[i] = x;
}

static int heap_pop(heap *h) {
  int top = h->v[0], x = h->v[--h->n], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= h->n) break;
    if (c + 1 < h->n && h->v[c + 1] < h->v[c]) c++;
    if (h->v[c] >= x) break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (h->n) h->v[i] = x;
  return top;
}

/* Reports one cycle among the ops left unsorted (pending[i] != 0), in dependency order. */
static mp_status report_cycle(const loader *ld, const int *pending, mp_error *err) {
  int start = 0;
  while (!pending[start]) start++;
  int *seen_at = malloc(sizeof(int) * (size_t)ld->n_ops), *path = malloc(sizeof(int) * (size_t)ld->n_ops);
  if (!seen_at || !path) {
    free(seen_at);
    free(path);
    return err_nomem(err);
  }
  for (int i = 0; i < ld->n_ops; i++) seen_at[i] = -1;
  int len = 0, u = start;
  /* Every pending op has a pending producer among its inputs, so walking to one never stops. */
  while (seen_at[u] < 0) {
    seen_at[u] = len;
    path[len++] = u;
    const raw_op *op = &ld->ops[u];
    int next = -1;
    for (int k = 0; k < op->n_inputs && next < 0; k++) {
      int p = ld->tensors[op->input_tensor[k]].producer;
      if (p >= 0 && pending[p]) next = p;
    }
    u = next;
  }
  /* path[seen_at[u] ..] walks from consumers to producers: reverse it into dependency order, then
   * rotate it to start at the op that comes first in the file. */
  int clen = len - seen_at[u], *cyc = path + seen_at[u], first = 0;
  for (int i = 0; i < clen / 2; i++) {
    int tmp = cyc[i];
    cyc[i] = cyc[clen - 1 - i];
    cyc[clen - 1 - i] = tmp;
  }
  for (int i = 1; i < clen; i++)
    if (cyc[i] < cyc[first]) first = i;
  char msg[MP_ERROR_MSG_MAX / 2];
  size_t used = 0;
  for (int i = 0; i <= clen && used < sizeof msg; i++) {
    int n = snprintf(msg + used, sizeof msg - used, "%s'%.60s'", i ? " -> " : "", ld->ops[cyc[(first + i) % clen]].name);
    if (n > 0) used += (size_t)n;
  }
  char w[64];
  snprintf(w, sizeof w, "ops[%d]", cyc[first]);
  free(seen_at);
  free(path);
  return err_at(err, MP_INPUT, ld->file, w, "the ops form a cycle: %s", msg);
}

/* Fills order[] with op file indices in topological order, ties by file position. */
static mp_status topo_sort(const loader *ld, int *order, mp_error *err) {
  int n = ld->n_ops;
  int *pending = calloc((size_t)n, sizeof *pending); /* inputs not yet produced, per op */
  int *first_use = NULL, *next_use = NULL;
  heap h = {malloc(sizeof(int) * (size_t)n), 0};
  mp_status st = MP_OK;
  /* Consumer lists per raw tensor as linked uses: (op, input slot) pairs. */
  int n_uses = 0;
  for (int i = 0; i < n; i++) n_uses += ld->ops[i].n_inputs;
  first_use = malloc(sizeof(int) * (size_t)ld->n_tensors + 1);
  next_use = malloc(sizeof(int) * (size_t)n_uses * 2 + 2);
  if (!pending || !h.v || !first_use || !next_use) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int t = 0; t < ld->n_tensors; t++) first_use[t] = -1;
  int u = 0;
  for (int i = n - 1; i >= 0; i--) {
    const raw_op *op = &ld->ops[i];
    for (int k = 0; k < op->n_inputs; k++) {
      int t = op->input_tensor[k];
      if (ld->tensors[t].producer < 0) continue;
      pending[i]++;
      next_use[2 * u] = i;
      next_use[2 * u + 1] = first_use[t];
      first_use[t] = u++;
    }
  }
  for (int i = 0; i < n; i++)
    if (!pending[i]) heap_push(&h, i);
  int done = 0;
  while (h.n) {
    int i = heap_pop(&h);
    order[done++] = i;
    const raw_op *op = &ld->ops[i];
    for (int k = 0; k < op->n_outputs; k++)
      for (int e = first_use[op->first_output + k]; e >= 0; e = next_use[2 * e + 1])
        if (--pending[next_use[2 * e]] == 0) heap_push(&h, next_use[2 * e]);
  }
  if (done < n) st = report_cycle(ld, pending, err);
cleanup:
  free(pending);
  free(first_use);
  free(next_use);
  free(h.v);
  return st;
}

/* ---- building the owned graph ---- */

void graph_free(graph *g) {
  if (!g) return;
  for (int i = 0; i < g->n_ops; i++) {
    free(g->ops[i].name);
    free(g->ops[i].type);
    free(g->ops[i].inputs);
    free(g->ops[i].outputs);
  }
  for (int t = 0; t < g->n_tensors; t++) {
    free(g->tensors[t].name);
    free(g->tensors[t].consumers);
  }
  free(g->ops);
  free(g->tensors);
  free(g->name);
  free(g->file);
  cJSON_Delete(g->source);
  free(g);
}

static int add_overflows(uint64_t *sum, uint64_t v) { return __builtin_add_overflow(*sum, v, sum); }

static int cmp_int(const void *a, const void *b) {
  return (*(const int *)a > *(const int *)b) - (*(const int *)a < *(const int *)b);
}

static mp_status build(const loader *ld, const int *order, const cJSON *root, graph *g, mp_error *err) {
  int n = ld->n_ops;
  int *new_tensor = malloc(sizeof(int) * (size_t)ld->n_tensors + 1); /* raw -> final tensor index */
  mp_status st = MP_OK;
  g->ops = calloc((size_t)n, sizeof *g->ops);
  g->tensors = calloc((size_t)ld->n_tensors + 1, sizeof *g->tensors);
  if (!new_tensor || !g->ops || !g->tensors) {
    st = err_nomem(err);
    goto cleanup;
  }
  g->n_ops = n;
  g->n_tensors = ld->n_tensors;
  g->n_inputs = ld->n_graph_inputs;
  for (int t = 0; t < ld->n_graph_inputs; t++) new_tensor[t] = t;
  int next = ld->n_graph_inputs;
  for (int l = 0; l < n; l++) {
    const raw_op *r = &ld->ops[order[l]];
    for (int k = 0; k < r->n_outputs; k++) new_tensor[r->first_output + k] = next++;
  }
  for (int t = 0; t < ld->n_tensors; t++) {
    graph_tensor *gt = &g->tensors[new_tensor[t]];
    gt->name = strdup(ld->tensors[t].name);
    gt->bytes = ld->tensors[t].bytes;
    gt->producer = -1;
    gt->last_consumer = -1;
    if (!gt->name) {
      st = err_nomem(err);
      goto cleanup;
    }
  }
  /* Every tensor's bytes, the graph inputs' too, sum to at most 2^63 - 1, so that live sets (and
   * graph_get_totals' signed differences of them) cannot overflow. */
  uint64_t macs = 0, flops = 0, weights = 0, bytes = 0;
  for (int t = 0; t < ld->n_graph_inputs; t++)
    if (add_overflows(&bytes, ld->tensors[t].bytes) || bytes > INT64_MAX) {
      char w[32];
      snprintf(w, sizeof w, "inputs[%d]", t);
      st = err_at(err, MP_INPUT, ld->file, w, "the graph's tensors total more than 2^63 bytes");
      goto cleanup;
    }
  for (int l = 0; l < n; l++) {
    const raw_op *r = &ld->ops[order[l]];
    graph_op *op = &g->ops[l];
    op->name = strdup(r->name);
    op->type = strdup(r->type);
    op->inputs = malloc(sizeof(int) * (size_t)r->n_inputs + 1);
    op->outputs = malloc(sizeof(int) * (size_t)r->n_outputs);
    if (!op->name || !op->type || !op->inputs || !op->outputs) {
      st = err_nomem(err);
      goto cleanup;
    }
    op->n_inputs = r->n_inputs;
    op->n_outputs = r->n_outputs;
    op->macs = r->macs;
    op->flops = r->flops;
    op->weight_bytes = r->weight_bytes;
    op->dims = r->dims;
    op->file_index = order[l];
    int overflow = add_overflows(&macs, r->macs) | add_overflows(&flops, r->flops) |
                   add_overflows(&weights, r->weight_bytes);
    for (int k = 0; k < r->n_inputs; k++) {
      op->inputs[k] = new_tensor[r->input_tensor[k]];
      int dup = 0;
      for (int q = 0; q < k; q++) dup |= op->inputs[q] == op->inputs[k];
      if (!dup) overflow |= add_overflows(&op->in_bytes, g->tensors[op->inputs[k]].bytes);
    }
    for (int k = 0; k < r->n_outputs; k++) {
      int t = new_tensor[r->first_output + k];
      op->outputs[k] = t;
      g->tensors[t].producer = l;
      overflow |= add_overflows(&op->out_bytes, g->tensors[t].bytes) | add_overflows(&bytes, g->tensors[t].bytes);
    }
    if (overflow || bytes > INT64_MAX) {
      char w[160];
      snprintf(w, sizeof w, "ops[%d] '%.100s'", order[l], r->name);
      st = err_at(err, MP_INPUT, ld->file, w, overflow ? "the graph's totals overflow 64 bits"
                                                       : "the graph's tensors total more than 2^63 bytes");
      goto cleanup;
    }
  }
  /* Consumers: distinct layers per tensor, ascending (layers are visited in order). */
  int *count = calloc((size_t)g->n_tensors + 1, sizeof *count);
  if (!count) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int l = 0; l < n; l++)
    for (int k = 0; k < g->ops[l].n_inputs; k++) count[g->ops[l].inputs[k]]++;
  for (int t = 0; t < g->n_tensors && st == MP_OK; t++)
    if (count[t] && !(g->tensors[t].consumers = malloc(sizeof(int) * (size_t)count[t]))) st = err_nomem(err);
  free(count);
  if (st != MP_OK) goto cleanup;
  for (int l = 0; l < n; l++) {
    for (int k = 0; k < g->ops[l].n_inputs; k++) {
      graph_tensor *t = &g->tensors[g->ops[l].inputs[k]];
      if (t->last_consumer == l) continue; /* an op that reads a tensor twice consumes it once */
      t->consumers[t->n_consumers++] = l;
      t->last_consumer = l;
    }
  }
  for (int t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].n_consumers > 1)
      qsort(g->tensors[t].consumers, (size_t)g->tensors[t].n_consumers, sizeof(int), cmp_int);
  const cJSON *source = cJSON_GetObjectItemCaseSensitive(root, "source");
  if (source && !(g->source = cJSON_Duplicate(source, 1))) st = err_nomem(err);
cleanup:
  free(new_tensor);
  return st;
}

static mp_status compute_hash(graph *g, mp_error *err) {
  cJSON *doc = graph_to_json(g);
  char *text = doc ? cJSON_PrintUnformatted(doc) : NULL;
  cJSON_Delete(doc);
  if (!text) return err_nomem(err);
  g->hash = fileio_hash(FILEIO_HASH_INIT, text, strlen(text));
  free(text);
  return MP_OK;
}

mp_status graph_from_json(const cJSON *root, const char *file, graph **out, mp_error *err) {
  loader ld = {.file = file ? file : "(graph)"};
  int *order = NULL;
  graph *g = NULL;
  *out = NULL;
  mp_status st = read_document(&ld, root, err);
  if (st == MP_OK) st = resolve_names(&ld, err);
  if (st == MP_OK && !(order = malloc(sizeof(int) * (size_t)ld.n_ops))) st = err_nomem(err);
  if (st == MP_OK) st = topo_sort(&ld, order, err);
  if (st == MP_OK && !(g = calloc(1, sizeof *g))) st = err_nomem(err);
  if (st != MP_OK) goto cleanup;
  g->name = strdup(cJSON_GetObjectItemCaseSensitive(root, "name")->valuestring); /* checked by read_document */
  g->file = strdup(ld.file);
  if (!g->name || !g->file) st = err_nomem(err);
  if (st == MP_OK) st = build(&ld, order, root, g, err);
  if (st == MP_OK) st = compute_hash(g, err);
  if (st == MP_OK) {
    *out = g;
    g = NULL;
  }
cleanup:
  graph_free(g);
  free(order);
  loader_clear(&ld);
  return st;
}

mp_status graph_with_flops(const graph *g, const uint64_t *flops, const unsigned char *measured, graph **out,
                           mp_error *err) {
  *out = NULL;
  cJSON *doc = graph_to_json(g);
  if (!doc) return err_nomem(err);
  graph *copy = NULL;
  mp_status st = graph_from_json(doc, g->file, &copy, err);
  cJSON_Delete(doc);
  if (st != MP_OK) return st;
  for (int l = 0; l < copy->n_ops; l++) {
    copy->ops[l].flops = flops[l];
    copy->ops[l].measured = !measured || measured[l];
  }
  st = compute_hash(copy, err);
  if (st != MP_OK) {
    graph_free(copy);
    return st;
  }
  *out = copy;
  return MP_OK;
}

int graph_batch(const graph *g) {
  const cJSON *b = g->source ? cJSON_GetObjectItemCaseSensitive(g->source, "batch") : NULL;
  if (cJSON_IsNumber(b) && b->valuedouble >= 1 && b->valuedouble <= 1 << 30 && b->valuedouble == (int)b->valuedouble)
    return (int)b->valuedouble;
  return 1;
}

mp_status graph_load(const char *path, graph **out, mp_error *err) {
  cJSON *root = NULL;
  *out = NULL;
  mp_status st = jsonio_load(path, &root, err);
  if (st == MP_OK) st = graph_from_json(root, path, out, err);
  cJSON_Delete(root);
  return st;
}

/* ---- serialisation ---- */

static cJSON *tensor_json(const graph_tensor *t) {
  cJSON *o = cJSON_CreateObject();
  if (o && (!cJSON_AddStringToObject(o, "name", t->name) || !jsonio_add_u64(o, "bytes", t->bytes))) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

cJSON *graph_to_json(const graph *g) {
  cJSON *root = cJSON_CreateObject(), *ins, *ops;
  if (!root || !cJSON_AddStringToObject(root, "format", GRAPH_FORMAT) ||
      !cJSON_AddNumberToObject(root, "version", GRAPH_VERSION) || !cJSON_AddStringToObject(root, "name", g->name) ||
      !(ins = cJSON_AddArrayToObject(root, "inputs")) || !(ops = cJSON_AddArrayToObject(root, "ops")))
    goto fail;
  for (int t = 0; t < g->n_inputs; t++) {
    cJSON *o = tensor_json(&g->tensors[t]);
    if (!o || !cJSON_AddItemToArray(ins, o)) goto fail;
  }
  for (int l = 0; l < g->n_ops; l++) {
    const graph_op *op = &g->ops[l];
    cJSON *o = cJSON_CreateObject(), *oi, *oo;
    if (!o || !cJSON_AddItemToArray(ops, o)) {
      cJSON_Delete(o);
      goto fail;
    }
    if (!cJSON_AddStringToObject(o, "name", op->name) || !cJSON_AddStringToObject(o, "type", op->type) ||
        !(oi = cJSON_AddArrayToObject(o, "inputs")) || !(oo = cJSON_AddArrayToObject(o, "outputs")) ||
        !jsonio_add_u64(o, "macs", op->macs) || !jsonio_add_u64(o, "flops", op->flops) ||
        !jsonio_add_u64(o, "weight_bytes", op->weight_bytes))
      goto fail;
    if (op->dims.g > 0) {
      cJSON *d = cJSON_AddObjectToObject(o, "dims");
      if (!d || !jsonio_add_u64(d, "g", op->dims.g) || !jsonio_add_u64(d, "m", op->dims.m) ||
          !jsonio_add_u64(d, "n", op->dims.n) || !jsonio_add_u64(d, "k", op->dims.k))
        goto fail;
    }
    for (int k = 0; k < op->n_inputs; k++) {
      cJSON *s = cJSON_CreateString(g->tensors[op->inputs[k]].name);
      if (!s || !cJSON_AddItemToArray(oi, s)) goto fail;
    }
    for (int k = 0; k < op->n_outputs; k++) {
      cJSON *t = tensor_json(&g->tensors[op->outputs[k]]);
      if (!t || !cJSON_AddItemToArray(oo, t)) goto fail;
    }
  }
  if (g->source) {
    cJSON *s = cJSON_Duplicate(g->source, 1);
    if (!s || !cJSON_AddItemToObject(root, "source", s)) {
      cJSON_Delete(s); /* not root's unless added */
      goto fail;
    }
  }
  return root;
fail:
  cJSON_Delete(root);
  return NULL;
}

mp_status graph_write(const graph *g, const char *path, mp_error *err) {
  cJSON *doc = graph_to_json(g);
  if (!doc) return err_nomem(err);
  mp_status st = jsonio_save(path, doc, err);
  cJSON_Delete(doc);
  return st;
}

/* ---- queries ---- */

void graph_get_totals(const graph *g, graph_totals *t) {
  memset(t, 0, sizeof *t);
  t->ops = t->layers = g->n_ops;
  t->inputs = g->n_inputs;
  t->tensors = g->n_tensors;
  t->peak_layer = 0;
  for (int l = 0; l < g->n_ops; l++) {
    t->macs += g->ops[l].macs;
    t->flops += g->ops[l].flops;
    t->weight_bytes += g->ops[l].weight_bytes;
  }
  /* A tensor is live from its producer (layer 0 for a graph input) to its last consumer, or only
   * while its producer runs when nothing reads it.  delta[] accumulates the live bytes per layer. */
  int64_t *delta = calloc((size_t)g->n_ops + 1, sizeof *delta);
  if (!delta) return; /* totals without the peak; callers only lose the peak on out-of-memory */
  for (int i = 0; i < g->n_tensors; i++) {
    const graph_tensor *x = &g->tensors[i];
    int from = x->producer < 0 ? 0 : x->producer;
    int to = x->last_consumer > x->producer ? x->last_consumer : x->producer;
    if (to < from) continue; /* an unread graph input never needs to be held */
    delta[from] += (int64_t)x->bytes;
    delta[to + 1] -= (int64_t)x->bytes;
  }
  int64_t live = 0;
  for (int l = 0; l < g->n_ops; l++) {
    live += delta[l];
    if ((uint64_t)live > t->peak_activation_bytes) {
      t->peak_activation_bytes = (uint64_t)live;
      t->peak_layer = l;
    }
  }
  free(delta);
}

int graph_find_op(const graph *g, const char *name) {
  for (int l = 0; l < g->n_ops; l++)
    if (strcmp(g->ops[l].name, name) == 0) return l;
  return -1;
}

int graph_find_tensor(const graph *g, const char *name) {
  for (int t = 0; t < g->n_tensors; t++)
    if (strcmp(g->tensors[t].name, name) == 0) return t;
  return -1;
}
