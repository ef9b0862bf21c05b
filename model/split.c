/* split: the Send/Recv rewrite (see split.h).  One pass over the tensors in index order creates the
 * sends already in their documented order; the recvs are then sorted by first consumer. */
#include "split.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonio.h"

void split_free(split *s) {
  if (!s) return;
  for (int i = 0; i < s->n_groups; i++) {
    split_group *gr = &s->groups[i];
    for (int r = 0; r < gr->n_recvs; r++) free(gr->recvs[r].consumers);
    free(gr->recvs);
    free(gr->sends);
    free(gr->segment);
  }
  free(s->groups);
  free(s);
}

static int grow(void **arr, int n, int *cap, size_t size) {
  if (n < *cap) return 0;
  int nc = *cap ? 2 * *cap : 4;
  void *p = realloc(*arr, (size_t)nc * size);
  if (!p) return -1;
  *arr = p;
  *cap = nc;
  return 0;
}

int split_segments(const graph *g, int first, int n, int *seg_of) {
  int last = first + n - 1, n_recv = 0, words, segs = 0;
  int *recv = NULL; /* the received tensors, in order of first reader */
  uint64_t *R = NULL;
  for (int l = first; l <= last; l++) n_recv += g->ops[l].n_inputs;
  recv = malloc(((size_t)n_recv + 1) * sizeof *recv);
  if (!recv) return -1;
  n_recv = 0;
  for (int l = first; l <= last; l++)
    for (int k = 0; k < g->ops[l].n_inputs; k++) {
      int t = g->ops[l].inputs[k], prod = g->tensors[t].producer, seen = 0;
      if (prod < 0 || prod >= first) continue;
      for (int q = 0; q < n_recv && !seen; q++) seen = recv[q] == t;
      if (!seen) recv[n_recv++] = t;
    }
  words = (n_recv + 63) / 64 + 1;
  R = calloc((size_t)n * (size_t)words, sizeof *R); /* per layer: the received tensors it waits for */
  if (!R) {
    free(recv);
    return -1;
  }
  int posted = 0;
  for (int l = first; l <= last; l++) {
    uint64_t *mine = R + (size_t)(l - first) * (size_t)words;
    const graph_op *op = &g->ops[l];
    for (int k = 0; k < op->n_inputs; k++) {
      int t = op->inputs[k], prod = g->tensors[t].producer;
      if (prod >= first) {
        for (int w = 0; w < words; w++) mine[w] |= R[(size_t)(prod - first) * (size_t)words + (size_t)w];
      } else if (prod >= 0) {
        int r = 0;
        while (recv[r] != t) r++;
        mine[r / 64] |= UINT64_C(1) << (r % 64);
      }
    }
    if (l == first || posted || memcmp(mine, mine - words, (size_t)words * sizeof *mine) != 0) segs++;
    if (seg_of) seg_of[l - first] = segs - 1;
    posted = 0;
    for (int k = 0; k < op->n_outputs; k++) posted |= g->tensors[op->outputs[k]].last_consumer > last;
  }
  free(R);
  free(recv);
  return segs;
}

static int recv_cmp(const void *a, const void *b) {
  const split_recv *x = a, *y = b;
  if (x->consumers[0] != y->consumers[0]) return x->consumers[0] < y->consumers[0] ? -1 : 1;
  return (x->tensor > y->tensor) - (x->tensor < y->tensor);
}

mp_status split_new(const graph *g, const plan *p, split **out, mp_error *err) {
  *out = NULL;
  if (p->n_layers != g->n_ops)
    return err_set(err, MP_INPUT, "split: the plan covers %d layers but graph '%s' has %d", p->n_layers, g->name,
                   g->n_ops);
  mp_status st = MP_OK;
  int *recv_cap = NULL, *send_cap = NULL;
  split *s = calloc(1, sizeof *s);
  if (!s) return err_nomem(err);
  s->groups = calloc((size_t)p->n_stages, sizeof *s->groups);
  recv_cap = calloc((size_t)p->n_stages, sizeof *recv_cap);
  send_cap = calloc((size_t)p->n_stages, sizeof *send_cap);
  if (!s->groups || !recv_cap || !send_cap) {
    st = err_nomem(err);
    goto cleanup;
  }
  s->n_groups = p->n_stages; /* only now: split_free visits groups[0 .. n_groups) */
  for (int i = 0; i < p->n_stages; i++) {
    split_group *gr = &s->groups[i];
    gr->first_layer = p->stages[i].first_layer;
    gr->n_layers = p->stages[i].n_layers;
    gr->first_core = p->stages[i].first_core;
    gr->n_cores = p->stages[i].n_cores;
    gr->segment = malloc((size_t)gr->n_layers * sizeof *gr->segment);
    if (!gr->segment || (gr->n_segments = split_segments(g, gr->first_layer, gr->n_layers, gr->segment)) < 0) {
      st = err_nomem(err);
      goto cleanup;
    }
  }
  for (int t = g->n_inputs; t < g->n_tensors; t++) {
    const graph_tensor *ten = &g->tensors[t];
    if (ten->producer < 0) continue;
    int src = plan_stage_of_layer(p, ten->producer);
    for (int k = 0; k < ten->n_consumers;) {
      int dst = plan_stage_of_layer(p, ten->consumers[k]);
      int k_end = k;
      while (k_end < ten->n_consumers && plan_stage_of_layer(p, ten->consumers[k_end]) == dst) k_end++;
      if (dst != src) {
        split_group *sg = &s->groups[src], *dg = &s->groups[dst];
        if (grow((void **)&sg->sends, sg->n_sends, &send_cap[src], sizeof *sg->sends) ||
            grow((void **)&dg->recvs, dg->n_recvs, &recv_cap[dst], sizeof *dg->recvs)) {
          st = err_nomem(err);
          goto cleanup;
        }
        split_recv *r = &dg->recvs[dg->n_recvs];
        r->consumers = malloc((size_t)(k_end - k) * sizeof *r->consumers);
        if (!r->consumers) {
          st = err_nomem(err);
          goto cleanup;
        }
        memcpy(r->consumers, ten->consumers + k, (size_t)(k_end - k) * sizeof *r->consumers);
        r->n_consumers = k_end - k;
        r->tensor = t;
        r->src_group = src;
        r->src_send = sg->n_sends;
        dg->n_recvs++;
        split_send *snd = &sg->sends[sg->n_sends++];
        snd->tensor = t;
        snd->layer = ten->producer;
        snd->dst_group = dst;
        snd->dst_recv = -1; /* set after the recvs are sorted */
        s->n_pairs++;
      }
      k = k_end;
    }
  }
  for (int i = 0; i < s->n_groups; i++) {
    split_group *gr = &s->groups[i];
    if (gr->n_recvs > 1) qsort(gr->recvs, (size_t)gr->n_recvs, sizeof *gr->recvs, recv_cmp);
    for (int r = 0; r < gr->n_recvs; r++) s->groups[gr->recvs[r].src_group].sends[gr->recvs[r].src_send].dst_recv = r;
  }
  *out = s;
  s = NULL;
cleanup:
  free(recv_cap);
  free(send_cap);
  split_free(s);
  return st;
}

static int add_range(cJSON *obj, const char *key, int first, int n) {
  cJSON *a = cJSON_AddArrayToObject(obj, key);
  if (!a) return -1;
  cJSON *x = cJSON_CreateNumber(first), *y = cJSON_CreateNumber(first + n - 1);
  if (!x || !y) {
    cJSON_Delete(x);
    cJSON_Delete(y);
    return -1;
  }
  cJSON_AddItemToArray(a, x);
  cJSON_AddItemToArray(a, y);
  return 0;
}

/* The name a cut tensor has inside the receiving group: "recv:TENSOR". */
static int recv_name(char *buf, size_t n, const graph *g, int tensor) {
  return snprintf(buf, n, "recv:%s", g->tensors[tensor].name) >= (int)n ? -1 : 0;
}

/* Training: the gradient pairs of group gi, one per forward pair it takes part in, reversed.  A Recv of
 * the forward becomes a Send of that tensor's gradient back to its producer's group, ready once the
 * backward has passed the Recv's first consumer; a Send of the forward becomes a Recv of the gradient
 * from the consumer's group, which the producer's backward adds up with any other group's. */
static int add_gradients(cJSON *o, const split *s, int gi, const graph *g) {
  const split_group *gr = &s->groups[gi];
  char name[512];
  cJSON *sends = cJSON_AddArrayToObject(o, "grad_sends"), *recvs = sends ? cJSON_AddArrayToObject(o, "grad_recvs") : NULL;
  if (!recvs) return -1;
  for (int r = 0; r < gr->n_recvs; r++) {
    const split_recv *rv = &gr->recvs[r];
    cJSON *x = cJSON_CreateObject();
    if (!x) return -1;
    cJSON_AddItemToArray(sends, x);
    if (snprintf(name, sizeof name, "send:grad:%s>%d", g->tensors[rv->tensor].name, rv->src_group) >= (int)sizeof name ||
        !cJSON_AddStringToObject(x, "name", name) || !cJSON_AddStringToObject(x, "tensor", g->tensors[rv->tensor].name) ||
        !jsonio_add_u64(x, "bytes", g->tensors[rv->tensor].bytes) ||
        !cJSON_AddStringToObject(x, "after_backward_of", g->ops[rv->consumers[0]].name) ||
        !cJSON_AddNumberToObject(x, "to_group", rv->src_group))
      return -1;
  }
  for (int k = 0; k < gr->n_sends; k++) {
    const split_send *sd = &gr->sends[k];
    cJSON *x = cJSON_CreateObject();
    if (!x) return -1;
    cJSON_AddItemToArray(recvs, x);
    if (snprintf(name, sizeof name, "recv:grad:%s<%d", g->tensors[sd->tensor].name, sd->dst_group) >= (int)sizeof name ||
        !cJSON_AddStringToObject(x, "name", name) || !cJSON_AddStringToObject(x, "tensor", g->tensors[sd->tensor].name) ||
        !jsonio_add_u64(x, "bytes", g->tensors[sd->tensor].bytes) ||
        !cJSON_AddStringToObject(x, "before_backward_of", g->ops[sd->layer].name) ||
        !cJSON_AddNumberToObject(x, "from_group", sd->dst_group))
      return -1;
  }
  return 0;
}

static cJSON *group_json(const split *s, int gi, const graph *g, const chip *c) {
  const split_group *gr = &s->groups[gi];
  char name[512];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddNumberToObject(o, "group", gi) || add_range(o, "layer_range", gr->first_layer, gr->n_layers) ||
      add_range(o, "core_range", gr->first_core, gr->n_cores))
    goto fail;
  if (c) {
    cJSON *pos = cJSON_AddArrayToObject(o, "core_positions");
    if (!pos) goto fail;
    for (int k = gr->first_core; k < gr->first_core + gr->n_cores; k++) {
      int xy[2] = {c->cores[k].x, c->cores[k].y};
      cJSON *pt = cJSON_CreateIntArray(xy, 2);
      if (!pt) goto fail;
      cJSON_AddItemToArray(pos, pt);
    }
  }
  cJSON *recvs = cJSON_AddArrayToObject(o, "recvs");
  if (!recvs) goto fail;
  for (int r = 0; r < gr->n_recvs; r++) {
    const split_recv *rv = &gr->recvs[r];
    cJSON *x = cJSON_CreateObject();
    if (!x) goto fail;
    cJSON_AddItemToArray(recvs, x);
    if (recv_name(name, sizeof name, g, rv->tensor)) goto fail;
    if (!cJSON_AddStringToObject(x, "name", name) ||
        !cJSON_AddStringToObject(x, "tensor", g->tensors[rv->tensor].name) ||
        !jsonio_add_u64(x, "bytes", g->tensors[rv->tensor].bytes) ||
        !cJSON_AddNumberToObject(x, "from_group", rv->src_group))
      goto fail;
    cJSON *cons = cJSON_AddArrayToObject(x, "consumers");
    if (!cons) goto fail;
    for (int k = 0; k < rv->n_consumers; k++) {
      cJSON *cs = cJSON_CreateString(g->ops[rv->consumers[k]].name);
      if (!cs) goto fail;
      cJSON_AddItemToArray(cons, cs);
    }
  }
  cJSON *layers = cJSON_AddArrayToObject(o, "layers");
  if (!layers) goto fail;
  for (int l = gr->first_layer; l < gr->first_layer + gr->n_layers; l++) {
    const graph_op *op = &g->ops[l];
    cJSON *x = cJSON_CreateObject();
    if (!x) goto fail;
    cJSON_AddItemToArray(layers, x);
    if (!cJSON_AddStringToObject(x, "name", op->name) || !cJSON_AddStringToObject(x, "type", op->type)) goto fail;
    cJSON *ins = cJSON_AddArrayToObject(x, "inputs");
    if (!ins) goto fail;
    for (int k = 0; k < op->n_inputs; k++) {
      int t = op->inputs[k];
      int prod = g->tensors[t].producer;
      const char *in = g->tensors[t].name;
      if (prod >= 0 && (prod < gr->first_layer || prod >= gr->first_layer + gr->n_layers)) {
        if (recv_name(name, sizeof name, g, t)) goto fail;
        in = name;
      }
      cJSON *cs = cJSON_CreateString(in);
      if (!cs) goto fail;
      cJSON_AddItemToArray(ins, cs);
    }
  }
  cJSON *sends = cJSON_AddArrayToObject(o, "sends");
  if (!sends) goto fail;
  for (int k = 0; k < gr->n_sends; k++) {
    const split_send *sd = &gr->sends[k];
    cJSON *x = cJSON_CreateObject();
    if (!x) goto fail;
    cJSON_AddItemToArray(sends, x);
    if (snprintf(name, sizeof name, "send:%s>%d", g->tensors[sd->tensor].name, sd->dst_group) >= (int)sizeof name)
      goto fail;
    if (!cJSON_AddStringToObject(x, "name", name) ||
        !cJSON_AddStringToObject(x, "tensor", g->tensors[sd->tensor].name) ||
        !jsonio_add_u64(x, "bytes", g->tensors[sd->tensor].bytes) ||
        !cJSON_AddStringToObject(x, "after", g->ops[sd->layer].name) ||
        !cJSON_AddNumberToObject(x, "to_group", sd->dst_group))
      goto fail;
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

cJSON *split_to_json(const split *s, const graph *g, const plan *p, const chip *c, int train) {
  char hex[17];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  if (!cJSON_AddStringToObject(o, "format", SPLIT_FORMAT) || !cJSON_AddNumberToObject(o, "version", SPLIT_VERSION) ||
      !cJSON_AddStringToObject(o, "graph", g->name) ||
      !cJSON_AddStringToObject(o, "graph_hash", fileio_hash_hex(g->hash, hex)))
    goto fail;
  if (c && (!cJSON_AddStringToObject(o, "chip", c->name) ||
            !cJSON_AddStringToObject(o, "chip_hash", fileio_hash_hex(c->hash, hex))))
    goto fail;
  cJSON *ac = cJSON_CreateIntArray(p->arranged, p->n_cores);
  if (!ac || !cJSON_AddItemToObject(o, "arranged_core", ac)) {
    cJSON_Delete(ac); /* not o's unless added */
    goto fail;
  }
  if (!cJSON_AddNumberToObject(o, "send_recv_pairs", s->n_pairs) ||
      !cJSON_AddStringToObject(o, "mode", train ? "train" : "infer") ||
      (train && !cJSON_AddNumberToObject(o, "gradient_pairs", s->n_pairs)))
    goto fail;
  cJSON *groups = cJSON_AddArrayToObject(o, "groups");
  if (!groups) goto fail;
  for (int i = 0; i < s->n_groups; i++) {
    cJSON *x = group_json(s, i, g, c);
    if (!x) goto fail;
    cJSON_AddItemToArray(groups, x);
    if (train && add_gradients(x, s, i, g)) goto fail;
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}
