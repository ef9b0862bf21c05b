/* onnx: the end of an import — fusing each normalisation, activation, bias or residual-add layer into
 * the layer producing its input, giving every layer a unique name, and writing the meshpipe graph
 * document at the requested batch size.  See onnx_int.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonio.h"
#include "onnx_int.h"

/* ---- fusion ---- */

static int root(const onnx_importer *im, int l) {
  while (im->layers[l].merged_into >= 0) l = im->layers[l].merged_into;
  return l;
}

mp_status onnx_fuse(onnx_importer *im, mp_error *err) {
  for (int li = 0; li < im->n_layers; li++) {
    onnx_layer *l = &im->layers[li];
    const onnx_op_info *op = onnx_op_lookup(l->type);
    if (!op || !op->fusible) continue;
    for (int k = 0; k < l->n_in; k++) {
      const onnx_tensor *t = &im->t[l->in[k]];
      if (t->layer < 0 || t->n_consumers != 1 || t->graph_output) continue;
      int pi = root(im, t->layer);
      onnx_layer *p = &im->layers[pi];
      if (p->n_out != 1 || p->out[0] != l->in[k]) continue;
      for (int j = 0; j < l->n_in; j++)
        if (j != k && onnx_layer_add_input(p, l->in[j]) != MP_OK) return err_nomem(err);
      const char *pt = p->fused_type ? p->fused_type : p->type;
      size_t len = strlen(pt) + strlen(l->type) + 2;
      char *ft = malloc(len);
      if (!ft) return err_nomem(err);
      snprintf(ft, len, "%s+%s", pt, l->type);
      free(p->fused_type);
      p->fused_type = ft;
      if (p->dims.g == 0 && p->macs == 0) p->dims = l->dims; /* the fused layer's products are its one product's */
      else if (l->macs > 0) p->dims = (graph_dims){0, 0, 0, 0}; /* two products: no single shape */
      p->macs += l->macs;
      p->flops += l->flops;
      p->wbytes += l->wbytes;
      if (p->out_owned) free(p->out);
      p->out = l->out;
      p->n_out = l->n_out;
      p->out_owned = l->out_owned;
      l->out_owned = 0;
      l->merged_into = pi;
      im->rep.fused++;
      break;
    }
  }
  return MP_OK;
}

/* ---- the document ---- */

/* v x k into *out, unless that exceeds what a JSON number carries exactly. */
static mp_status scaled(const onnx_importer *im, uint64_t v, uint64_t k, const char *what, const char *name,
                        uint64_t *out, mp_error *err) {
  uint64_t r;
  if (__builtin_mul_overflow(v, k, &r) || (double)r > JSONIO_MAX_EXACT)
    return err_at(err, MP_INPUT, im->path, NULL, "%s of '%.200s' exceeds 2^53 at this batch size", what, name);
  *out = r;
  return MP_OK;
}

static cJSON *tensor_json(const char *name, uint64_t bytes) {
  cJSON *o = cJSON_CreateObject();
  if (o && (!cJSON_AddStringToObject(o, "name", name) || !jsonio_add_u64(o, "bytes", bytes))) {
    cJSON_Delete(o);
    o = NULL;
  }
  return o;
}

mp_status onnx_unique_names(onnx_importer *im, mp_error *err) {
  onnx_namemap used;
  if (!onnx_map_init(&used, (size_t)im->n_layers)) return err_nomem(err);
  mp_status st = MP_OK;
  for (int li = 0; li < im->n_layers && st == MP_OK; li++) {
    onnx_layer *l = &im->layers[li];
    if (l->merged_into >= 0) continue;
    const char *base = im->g->node[l->node]->name;
    char buf[300];
    if (base && *base && onnx_map_get(&used, base) < 0) {
      l->name = strdup(base);
    } else {
      snprintf(buf, sizeof buf, "%.200s_%d", base && *base ? base : l->type, l->node);
      for (int extra = 1; onnx_map_get(&used, buf) >= 0; extra++)
        snprintf(buf, sizeof buf, "%.200s_%d_%d", base && *base ? base : l->type, l->node, extra);
      l->name = strdup(buf);
    }
    if (!l->name) st = err_nomem(err);
    else onnx_map_put(&used, l->name, li);
  }
  onnx_map_free(&used);
  return st;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

mp_status onnx_document(onnx_importer *im, const onnx_options *o, uint64_t hash, cJSON **out, mp_error *err) {
  uint64_t k = (uint64_t)(im->rep.batch / im->model_batch);
  mp_status st = MP_OK;
  cJSON *root = cJSON_CreateObject(), *inputs, *ops, *src, *unk;
  /* the graph is named after the file: exporters' graph names ("torch_jit", "main_graph") say little */
  char name[256];
  snprintf(name, sizeof name, "%s", base_name(im->path));
  if (fileio_has_suffix(name, ".onnx") && strlen(name) > 5) name[strlen(name) - 5] = 0;
  if (!root || !cJSON_AddStringToObject(root, "format", GRAPH_FORMAT) ||
      !jsonio_add_u64(root, "version", GRAPH_VERSION) || !cJSON_AddStringToObject(root, "name", name) ||
      !(inputs = cJSON_AddArrayToObject(root, "inputs")) || !(ops = cJSON_AddArrayToObject(root, "ops")) ||
      !(src = cJSON_AddObjectToObject(root, "source")))
    goto nomem;
  for (int i = 0; i < im->n_t; i++) {
    const onnx_tensor *t = &im->t[i];
    if (!t->graph_input) continue;
    uint64_t b = 0;
    if ((st = scaled(im, onnx_tensor_bytes(im, t), k, "bytes", t->name, &b, err)) != MP_OK) goto fail;
    cJSON *j = tensor_json(t->name, b);
    if (!j || !cJSON_AddItemToArray(inputs, j)) goto nomem;
  }
  for (int li = 0; li < im->n_layers; li++) {
    const onnx_layer *l = &im->layers[li];
    if (l->merged_into >= 0) continue;
    uint64_t macs = 0, flops = 0, wbytes = 0;
    cJSON *op = cJSON_CreateObject(), *ins, *outs;
    if (!op || !cJSON_AddItemToArray(ops, op)) {
      cJSON_Delete(op);
      goto nomem;
    }
    if ((st = scaled(im, l->macs, k, "macs", l->name, &macs, err)) != MP_OK ||
        (st = scaled(im, l->flops, k, "flops", l->name, &flops, err)) != MP_OK ||
        (st = scaled(im, l->wbytes, 1, "weight bytes", l->name, &wbytes, err)) != MP_OK)
      goto fail;
    if (!cJSON_AddStringToObject(op, "name", l->name) ||
        !cJSON_AddStringToObject(op, "type", l->fused_type ? l->fused_type : l->type) ||
        !(ins = cJSON_AddArrayToObject(op, "inputs")) || !(outs = cJSON_AddArrayToObject(op, "outputs")) ||
        !jsonio_add_u64(op, "macs", macs) || !jsonio_add_u64(op, "flops", flops) ||
        !jsonio_add_u64(op, "weight_bytes", wbytes))
      goto nomem;
    if (l->dims.g > 0) { /* the batch rides in the products' batch (g) when there is one, else in m */
      graph_dims d = l->dims;
      int in_g = strcmp(l->type, "MatMul") == 0 && d.g > 1;
      cJSON *dj = cJSON_AddObjectToObject(op, "dims");
      if ((st = scaled(im, in_g ? d.g : d.m, k, "dims", l->name, in_g ? &d.g : &d.m, err)) != MP_OK) goto fail;
      if (!dj || !jsonio_add_u64(dj, "g", d.g) || !jsonio_add_u64(dj, "m", d.m) || !jsonio_add_u64(dj, "n", d.n) ||
          !jsonio_add_u64(dj, "k", d.k))
        goto nomem;
    }
    for (int j = 0; j < l->n_in; j++) {
      cJSON *s = cJSON_CreateString(im->t[l->in[j]].name);
      if (!s || !cJSON_AddItemToArray(ins, s)) {
        cJSON_Delete(s);
        goto nomem;
      }
    }
    for (int j = 0; j < l->n_out; j++) {
      const onnx_tensor *t = &im->t[l->out[j]];
      uint64_t b = 0;
      if ((st = scaled(im, onnx_tensor_bytes(im, t), k, "bytes", t->name, &b, err)) != MP_OK) goto fail;
      cJSON *tj = tensor_json(t->name, b);
      if (!tj || !cJSON_AddItemToArray(outs, tj)) {
        cJSON_Delete(tj);
        goto nomem;
      }
    }
    im->rep.layers++;
    im->rep.macs += macs;
    im->rep.flops += flops;
    im->rep.weight_bytes += wbytes;
  }
  char hex[17];
  if (!cJSON_AddStringToObject(src, "onnx", base_name(im->path)) ||
      !cJSON_AddStringToObject(src, "onnx_graph", im->g->name ? im->g->name : "") ||
      !cJSON_AddStringToObject(src, "hash", fileio_hash_hex(hash, hex)) ||
      !jsonio_add_u64(src, "nodes", (uint64_t)im->rep.nodes) ||
      !jsonio_add_u64(src, "layers", (uint64_t)im->rep.layers) ||
      !cJSON_AddBoolToObject(src, "fused", !(o && o->no_fuse)) ||
      !jsonio_add_u64(src, "fused_nodes", (uint64_t)im->rep.fused) ||
      !jsonio_add_u64(src, "folded_constants", (uint64_t)im->rep.folded) ||
      !jsonio_add_u64(src, "removed", (uint64_t)im->rep.removed) ||
      !cJSON_AddStringToObject(src, "dtype", o && o->dtype ? o->dtype : "fp16") ||
      !jsonio_add_u64(src, "batch", (uint64_t)im->rep.batch) ||
      !jsonio_add_u64(src, "model_batch", (uint64_t)im->model_batch) ||
      !jsonio_add_u64(src, "params", im->rep.params) || !(unk = cJSON_AddObjectToObject(src, "unsupported")))
    goto nomem;
  for (int i = 0; i < im->rep.n_unknown; i++)
    if (!jsonio_add_u64(unk, im->rep.unknown[i].type, (uint64_t)im->rep.unknown[i].count)) goto nomem;
  *out = root;
  return MP_OK;
nomem:
  st = err_nomem(err);
fail:
  cJSON_Delete(root);
  return st;
}
