/* train: per-layer backward figures and per-range training memory.  See train.h and traces/README.md
 * ("Training").
 *
 * A range's memory is planned on the steps of one micro-batch through it: F(j) for its layers in order,
 * with recompute RF(j) (the forward again), then B(j) in reverse order.  Its tensors:
 *   - a stage input (made before the range, or a graph input): from the first step until the backward of
 *     its lowest reader in the range;
 *   - an output of layer j: from F(j); read in the range, until the backward of its lowest reader there
 *     (it is stashed), else until the end of the forward (a Send or the loss still reads it).  With
 *     recompute it lives until its last reader's forward (the end of the forward when it is sent), and a
 *     second copy from RF(j) until the backward of its lowest reader, for outputs read in the range;
 *   - the gradient of an output of layer j: from the backward of its highest reader in the range, or from
 *     the first backward step when a later stage reads it (its gradient is received) or nothing does
 *     (the loss's), until B(j);
 *   - the gradient of a stage input made by a layer: from the backward of its highest reader until the end
 *     of the backward (it is sent back).
 * In place: an elementwise op's first output over an input whose last reader it is (forward, or the
 * recompute's first forward: a stashed input is read again, so never without recompute), and the
 * gradient of such an op's input over the gradient of its first output (backward).  The stash is what
 * lives across the end of the forward. */
#include "train.h"

#include <stdlib.h>
#include <string.h>

#include "memplan.h"
#include "train_int.h"

void train_options_default(train_options *o) {
  o->optimizer = TRAIN_ADAM;
  o->schedule = TRAIN_1F1B;
  o->microbatches = 8;
  o->recompute = 0;
}

static const char *const optimizer_names[] = {"sgd", "momentum", "adam"};
static const char *const schedule_names[] = {"gpipe", "1f1b", "zb"};

const char *train_optimizer_name(train_optimizer o) { return (unsigned)o < 3 ? optimizer_names[o] : "?"; }
const char *train_schedule_name(train_schedule s) { return (unsigned)s < 3 ? schedule_names[s] : "?"; }

int train_optimizer_parse(const char *name) {
  for (int i = 0; i < 3; i++)
    if (strcmp(name, optimizer_names[i]) == 0) return i;
  return -1;
}

int train_schedule_parse(const char *name) {
  for (int i = 0; i < 3; i++)
    if (strcmp(name, schedule_names[i]) == 0) return i;
  return -1;
}

int train_in_flight(const train_options *o, int stage, int n_stages) {
  int M = o->microbatches;
  if (o->schedule == TRAIN_GPIPE) return M;
  int left = n_stages - stage;
  return left < M ? left : M;
}

train_hold train_hold_of(const train_options *o, int stage, int n_stages) {
  return (train_hold){o->schedule, stage, n_stages, o->microbatches, o->schedule == TRAIN_ZB ? 3 : 2};
}

/* The activation bytes of a state of `stashes` stashes and w W-stashes, with `arena` for the pass. */
static double act_bytes(const train_range *r, int stashes, int w, uint64_t arena) {
  return (double)(stashes > 1 ? stashes - 1 : 0) * (double)r->stash_bytes + (double)w * (double)r->wstash_bytes +
         (double)arena;
}

/* Keeps state (s, w) in (*bs, *bw) when it holds more activation bytes (or as many, and more micro-batches). */
static void consider(const train_range *r, int s, int w, int *bs, int *bw) {
  double a = act_bytes(r, s, w, 0), b = act_bytes(r, *bs, *bw, 0);
  if (a > b || (a == b && s + w > *bs + *bw)) {
    *bs = s;
    *bw = w;
  }
}

void train_hold_peak(const train_range *r, const train_hold *h, int *stashes, int *w_pending) {
  train_options o = {.schedule = h->schedule, .microbatches = h->microbatches};
  *stashes = train_in_flight(&o, h->stage, h->n_stages);
  *w_pending = 0;
  if (h->schedule != TRAIN_ZB) return;
  /* zb's order (sim_schedule.h): w0 warm-up forwards, then per k the forward w0 + k while any is left,
   * B(k), and W(k - d) once k >= d.  Before step k, k B's and max(0, k - d) W's are done. */
  int M = h->microbatches, d = h->stage, w0 = h->n_stages - h->stage - 1 < M ? h->n_stages - h->stage - 1 : M;
  *stashes = w0;
  for (int k = 0; k < M; k++) {
    int w_done = k > d ? k - d : 0, f_done = w0 + k + 1 < M ? w0 + k + 1 : M;
    if (w0 + k < M) consider(r, w0 + 1, k - w_done, stashes, w_pending);  /* after F(w0 + k) */
    consider(r, f_done - (k + 1), k + 1 - w_done, stashes, w_pending);    /* after B(k) */
  }
}

/* ---- per layer -------------------------------------------------------------------------------------- */

/* Ops that may write their output over an input: elementwise ones and views (the type's first part). */
static int inplace_type(const char *type) {
  static const char *const kinds[] = {"Relu", "LeakyRelu", "PRelu", "Sigmoid", "Tanh", "Clip", "Elu", "Selu",
                                      "Gelu", "Erf", "HardSigmoid", "HardSwish", "Softplus", "Add", "Sub", "Mul",
                                      "Div", "Pow", "Sqrt", "Exp", "Log", "Neg", "Abs", "Cast", "Dropout",
                                      "Identity", "BatchNormalization", "Reshape", "Flatten", "Squeeze",
                                      "Unsqueeze", NULL};
  size_t len = strcspn(type, "+");
  for (int i = 0; kinds[i]; i++)
    if (strlen(kinds[i]) == len && strncmp(type, kinds[i], len) == 0) return 1;
  return 0;
}

/* Bytes per element of the graph's dtype: source.dtype as the ONNX importer writes it, fp16 without. */
static int dtype_bytes(const graph *g) {
  const cJSON *d = g->source ? cJSON_GetObjectItemCaseSensitive(g->source, "dtype") : NULL;
  const char *s = cJSON_IsString(d) ? d->valuestring : "fp16";
  return strcmp(s, "fp32") == 0 ? 4 : strcmp(s, "int8") == 0 ? 1 : 2;
}

static void layer_figures(const graph *g, int j, int elem, train_layer *out) {
  const graph_op *op = &g->ops[j];
  uint64_t mac = 2 * op->macs, rest = op->flops - mac;
  int grads = 0; /* inputs made by a layer: they need a gradient */
  out->grad_bytes = 0;
  for (int k = 0; k < op->n_inputs; k++) {
    int t = op->inputs[k], dup = 0;
    for (int q = 0; q < k; q++) dup |= op->inputs[q] == t;
    if (dup || g->tensors[t].producer < 0) continue;
    grads++;
    out->grad_bytes += g->tensors[t].bytes;
  }
  /* dY W^T for each operand that is an activation: one product with weights, two without (x1 x2) */
  out->dx_flops = grads == 0 ? 0 : (op->weight_bytes > 0 || op->macs == 0 ? mac : 2 * mac) + rest;
  out->dw_flops = op->weight_bytes == 0 ? 0 : op->macs > 0 ? mac : rest;
  out->params = (op->weight_bytes + (uint64_t)elem - 1) / (uint64_t)elem;
  out->inplace = inplace_type(op->type);
}

/* ---- the memo of planned ranges --------------------------------------------------------------------- */

typedef struct memo_entry {
  uint64_t key; /* first << 32 | n; 0: empty (n >= 1) */
  train_range r;
} memo_entry;

struct train_memo {
  memo_entry *e;
  size_t cap, used;
  /* scratch for planning, per tensor of the graph */
  int *lo, *hi, *act, *act2, *grad;
  int *read; /* tensors read in the range */
  memplan_tensor *mt;
  size_t cap_mt;
};

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= UINT64_C(0xff51afd7ed558ccd);
  return k ^ (k >> 33);
}

mp_status train_new(const graph *g, const train_options *o, train **out, mp_error *err) {
  *out = NULL;
  train_options d;
  if (!o) {
    train_options_default(&d);
    o = &d;
  }
  if (o->microbatches < 1)
    return err_set(err, MP_USAGE, "train: a mini-batch needs at least 1 micro-batch (got %d)", o->microbatches);
  train *t = calloc(1, sizeof *t);
  if (!t) return err_nomem(err);
  t->g = g;
  t->opt = *o;
  t->elem_bytes = dtype_bytes(g);
  t->master = t->elem_bytes < 4;
  int states = o->optimizer == TRAIN_SGD ? 0 : o->optimizer == TRAIN_MOMENTUM ? 1 : 2;
  t->bytes_per_param = 2 * (uint64_t)t->elem_bytes + (t->master ? 4 : 0) + 4 * (uint64_t)states; /* optimizer states in fp32 */
  t->update_flops_per_param = (o->optimizer == TRAIN_SGD ? 2 : o->optimizer == TRAIN_MOMENTUM ? 4 : 12) + t->master;
  size_t nt = (size_t)g->n_tensors + 1;
  t->layers = calloc((size_t)g->n_ops + 1, sizeof *t->layers);
  t->memo = calloc(1, sizeof *t->memo);
  if (!t->layers || !t->memo) goto nomem;
  struct train_memo *m = t->memo;
  m->lo = malloc(nt * sizeof *m->lo);
  m->hi = malloc(nt * sizeof *m->hi);
  m->act = malloc(nt * sizeof *m->act);
  m->act2 = malloc(nt * sizeof *m->act2);
  m->grad = malloc(nt * sizeof *m->grad);
  m->read = malloc(nt * sizeof *m->read);
  if (!m->lo || !m->hi || !m->act || !m->act2 || !m->grad || !m->read) goto nomem;
  for (size_t i = 0; i < nt; i++) m->lo[i] = m->hi[i] = m->act[i] = m->act2[i] = m->grad[i] = -1;
  for (int j = 0; j < g->n_ops; j++) layer_figures(g, j, t->elem_bytes, &t->layers[j]);
  *out = t;
  return MP_OK;
nomem:
  train_free(t);
  return err_nomem(err);
}

void train_free(train *t) {
  if (!t) return;
  if (t->memo) {
    struct train_memo *m = t->memo;
    free(m->e);
    free(m->lo);
    free(m->hi);
    free(m->act);
    free(m->act2);
    free(m->grad);
    free(m->read);
    free(m->mt);
  }
  free(t->memo);
  train_scratch_free(t->scratch);
  free(t->layers);
  free(t);
}

double train_mem_bytes(const train_range *r, int n_cores, int stashes, int w_pending) {
  return cost_mem_bytes((double)r->static_bytes, act_bytes(r, stashes, w_pending, r->peak_bytes), n_cores);
}

double train_mem_naive_bytes(const train_range *r, int n_cores, int stashes, int w_pending) {
  return cost_mem_bytes((double)r->static_bytes, act_bytes(r, stashes, w_pending, r->naive_bytes), n_cores);
}

double train_hold_act_bytes(const train_range *r, const train_hold *h) {
  int s, w;
  train_hold_peak(r, h, &s, &w);
  return act_bytes(r, s, w, r->peak_bytes);
}

double train_hold_mem_bytes(const train_range *r, int n_cores, const train_hold *h) {
  return cost_mem_bytes((double)r->static_bytes, train_hold_act_bytes(r, h), n_cores);
}

/* ---- planning one range ----------------------------------------------------------------------------- */

/* Appends a tensor to the plan; its index, or -1 when out of memory. */
static int add(struct train_memo *m, int *n, uint64_t bytes, int birth, int death, int inplace) {
  if ((size_t)*n == m->cap_mt) {
    size_t cap = m->cap_mt ? 2 * m->cap_mt : 256;
    memplan_tensor *x = realloc(m->mt, cap * sizeof *x);
    if (!x) return -1;
    m->mt = x;
    m->cap_mt = cap;
  }
  m->mt[*n] = (memplan_tensor){bytes, birth, death, inplace};
  return (*n)++;
}

static mp_status plan_range(train *t, int l, int n, train_range *out, mp_error *err) {
  const graph *g = t->g;
  struct train_memo *m = t->memo;
  int r = l + n - 1, rc = t->opt.recompute, E = n - 1, Bs = rc ? 2 * n : n, S = rc ? 3 * n : 2 * n, n_read = 0, nt = 0;
#define F(j) ((j) - l)
#define RF(j) (n + (j) - l)
#define B(j) (Bs + r - (j))
  memset(out, 0, sizeof *out);
  for (int j = l; j <= r; j++) {
    const graph_op *op = &g->ops[j];
    const train_layer *tl = &t->layers[j];
    out->fwd_flops += op->flops;
    out->bwd_flops += tl->dx_flops + tl->dw_flops;
    out->dw_flops += tl->dw_flops;
    if (tl->dw_flops > 0) { /* W reads its inputs (each once in the range) and its output's gradient */
      out->wstash_bytes += op->out_bytes;
      for (int k = 0; k < op->n_inputs; k++) {
        const graph_tensor *tx = &g->tensors[op->inputs[k]];
        int first = 1;
        for (int q = 0; q < k; q++) first &= op->inputs[q] != op->inputs[k];
        for (int q = 0; q < tx->n_consumers && tx->consumers[q] < j; q++)
          first &= !(tx->consumers[q] >= l && t->layers[tx->consumers[q]].dw_flops > 0);
        if (first) out->wstash_bytes += tx->bytes;
      }
    }
    out->fwd_gather += op->out_bytes;
    out->bwd_gather += tl->grad_bytes;
    out->params += tl->params;
    for (int k = 0; k < op->n_inputs; k++) {
      int x = op->inputs[k];
      if (m->lo[x] < 0) {
        m->lo[x] = j;
        m->read[n_read++] = x;
      }
      m->hi[x] = j;
    }
  }
  out->recompute_flops = rc ? out->fwd_flops : 0;
  out->static_bytes = out->params * t->bytes_per_param;
  out->update_flops = out->params * (uint64_t)t->update_flops_per_param;
  int ok = 1;
  /* stage inputs, in order of first read */
  for (int i = 0; i < n_read && ok; i++) {
    int x = m->read[i];
    const graph_tensor *tx = &g->tensors[x];
    if (tx->producer >= l) continue;
    if (tx->producer >= 0) out->recv_bytes += tx->bytes;
    ok = (m->act[x] = add(m, &nt, tx->bytes, 0, B(m->lo[x]), -1)) >= 0;
  }
  /* outputs, layer by layer (forward in place over an input read for the last time) */
  for (int j = l; j <= r && ok; j++) {
    const graph_op *op = &g->ops[j];
    for (int k = 0; k < op->n_outputs && ok; k++) {
      int x = op->outputs[k];
      const graph_tensor *tx = &g->tensors[x];
      int local = m->lo[x] >= 0, away = tx->last_consumer > r || tx->n_consumers == 0;
      if (tx->last_consumer > r) out->send_bytes += tx->bytes;
      int death = rc ? (away ? E : F(m->hi[x])) : local ? B(m->lo[x]) : E, src = -1;
      for (int q = 0; k == 0 && t->layers[j].inplace && q < op->n_inputs && src < 0; q++) {
        int y = op->inputs[q], e = m->act[y];
        if (e >= 0 && m->mt[e].death == F(j) && g->tensors[y].bytes >= tx->bytes) src = e;
      }
      ok = (m->act[x] = add(m, &nt, tx->bytes, F(j), death, src)) >= 0;
      if (ok && rc && local) ok = (m->act2[x] = add(m, &nt, tx->bytes, RF(j), B(m->lo[x]), -1)) >= 0;
    }
  }
  /* gradients: of the outputs, then of the stage inputs made by layers */
  for (int j = r; j >= l && ok; j--) {
    const graph_op *op = &g->ops[j];
    for (int k = 0; k < op->n_outputs && ok; k++) {
      int x = op->outputs[k];
      const graph_tensor *tx = &g->tensors[x];
      int from = tx->last_consumer > r || tx->n_consumers == 0 ? Bs : B(m->hi[x]);
      ok = (m->grad[x] = add(m, &nt, tx->bytes, from, B(j), -1)) >= 0;
    }
  }
  for (int i = 0; i < n_read && ok; i++) {
    int x = m->read[i];
    const graph_tensor *tx = &g->tensors[x];
    if (tx->producer >= l || tx->producer < 0) continue;
    ok = (m->grad[x] = add(m, &nt, tx->bytes, B(m->hi[x]), S - 1, -1)) >= 0;
  }
  /* backward in place: an elementwise op's input-gradient over its output-gradient */
  for (int j = l; j <= r && ok; j++) {
    const graph_op *op = &g->ops[j];
    if (!t->layers[j].inplace) continue;
    int g0 = m->grad[op->outputs[0]];
    for (int q = 0; q < op->n_inputs; q++) {
      int y = op->inputs[q], e = m->grad[y];
      if (e >= 0 && m->mt[e].birth == B(j) && m->mt[e].inplace < 0 && g->tensors[y].bytes <= m->mt[g0].bytes) {
        m->mt[e].inplace = g0;
        break;
      }
    }
  }
  for (int i = 0; i < nt && ok; i++)
    if (m->mt[i].birth <= E && m->mt[i].death > E) out->stash_bytes += m->mt[i].bytes;
#undef F
#undef RF
#undef B
  mp_status st = ok ? MP_OK : err_nomem(err);
  memplan_result pr;
  if (st == MP_OK) st = memplan_run(m->mt, nt, S, NULL, &pr, err);
  if (st == MP_OK) {
    out->peak_bytes = pr.planned;
    out->naive_bytes = pr.naive;
    out->live_bytes = pr.live;
    out->inplace = pr.inplace;
  }
  for (int i = 0; i < n_read; i++) m->lo[m->read[i]] = m->hi[m->read[i]] = -1;
  for (int j = l; j <= r; j++)
    for (int k = 0; k < g->ops[j].n_inputs; k++) {
      int x = g->ops[j].inputs[k];
      m->act[x] = m->act2[x] = m->grad[x] = -1;
    }
  for (int j = l; j <= r; j++)
    for (int k = 0; k < g->ops[j].n_outputs; k++) {
      int x = g->ops[j].outputs[k];
      m->act[x] = m->act2[x] = m->grad[x] = -1;
    }
  return st;
}

mp_status train_range_of(train *t, int first, int n, train_range *out, mp_error *err) {
  struct train_memo *m = t->memo;
  uint64_t key = (uint64_t)first << 32 | (uint64_t)(unsigned)n;
  if (m->cap)
    for (size_t i = mix(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
      if (m->e[i].key == key) {
        *out = m->e[i].r;
        return MP_OK;
      }
      if (m->e[i].key == 0) break;
    }
  mp_status st = plan_range(t, first, n, out, err);
  if (st != MP_OK) return st;
  if (2 * (m->used + 1) > m->cap) { /* keep the table at most half full */
    size_t cap = m->cap ? 2 * m->cap : 1024;
    memo_entry *e = calloc(cap, sizeof *e);
    if (!e) return MP_OK; /* answered, just not kept */
    for (size_t i = 0; i < m->cap; i++)
      if (m->e[i].key) {
        size_t k = mix(m->e[i].key) & (cap - 1);
        while (e[k].key) k = (k + 1) & (cap - 1);
        e[k] = m->e[i];
      }
    free(m->e);
    m->e = e;
    m->cap = cap;
  }
  size_t i = mix(key) & (m->cap - 1);
  while (m->e[i].key) i = (i + 1) & (m->cap - 1);
  m->e[i].key = key;
  m->e[i].r = *out;
  m->used++;
  return MP_OK;
}
