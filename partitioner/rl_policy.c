/* rl_policy: the MLP policy, its REINFORCE gradient and Adam.  See rl_policy.h.
 *
 * Stability choices (each one is there because training on simulated runtimes is noisy):
 * - tanh hidden units keep activations bounded whatever the feature scale;
 * - the last layer starts 100x smaller than Glorot, so the first policy is nearly uniform over the
 *   allowed actions and no action is abandoned before it has been tried;
 * - masked actions get probability exactly 0 and no gradient, so invalid moves never soak up mass;
 * - log-probabilities come from the logits (z − logsumexp), never log(p), so a tiny probability
 *   gives a large finite gradient instead of −inf;
 * - the caller clips the gradient's global norm before Adam (rl_policy_adam_step), which bounds a
 *   step when one batch holds an outlying reward. */
#include "rl_policy.h"

#include <cblas.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "fileio.h"

#define ACT_TANH 1u
#define FLAG_OPTIMIZER 1u

/* The widest layer after the inputs: the widest error the backward pass holds (it stops at layer 0's
 * weights, never back-propagating into the inputs). */
static int widest(const rl_policy *p) {
  int w = 0;
  for (int l = 1; l <= p->n_layers; l++) w = p->sizes[l] > w ? p->sizes[l] : w;
  return w;
}

/* OpenBLAS splits a product over its threads by the machine's core count, and the summation order,
 * hence the last bits, follow the split: a policy trained on a 2-core machine would differ from one
 * trained on an 8-core machine, or in an mpirun rank pinned to one core.  The policy's matrices are
 * small (a few hundred rows of 26 x 16), where the threads only cost CPU time, so every policy's
 * products run on one thread: results then depend on the seed alone. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;

static void one_blas_thread(void) { openblas_set_num_threads(1); }

/* The number of parameters of a shape, or 0 when the shape is not one a policy may have (so a file's
 * header is checked by arithmetic, before anything is allocated for it). */
static uint64_t shape_params(uint64_t n_in, uint64_t n_out, uint64_t n_hidden, uint64_t hidden) {
  if (n_in < 1 || n_out < 1 || n_hidden > RL_POLICY_MAX_HIDDEN || (n_hidden > 0 && hidden < 1) ||
      n_in > (1 << 24) || n_out > (1 << 24) || hidden > (1 << 16))
    return 0;
  uint64_t sizes[RL_POLICY_MAX_HIDDEN + 2], n = 0;
  sizes[0] = n_in;
  for (uint64_t l = 1; l <= n_hidden; l++) sizes[l] = hidden;
  sizes[n_hidden + 1] = n_out;
  for (uint64_t l = 0; l <= n_hidden; l++) n += sizes[l + 1] * sizes[l] + sizes[l + 1]; /* < 2^50 */
  return n;
}

/* Allocates a policy of the given shape with zero parameters and moments. */
static mp_status alloc_shape(int n_in, int n_out, int n_hidden, int hidden, rl_policy **out, mp_error *err) {
  pthread_once(&blas_once, one_blas_thread);
  *out = NULL;
  if (n_in < 0 || n_out < 0 || n_hidden < 0 || hidden < 0 ||
      !shape_params((uint64_t)n_in, (uint64_t)n_out, (uint64_t)n_hidden, (uint64_t)hidden))
    return err_set(err, MP_INPUT, "rl_policy: bad shape: %d inputs, %d outputs, %d hidden layers of %d", n_in, n_out,
                   n_hidden, hidden);
  rl_policy *p = calloc(1, sizeof *p);
  if (!p) return err_nomem(err);
  p->n_in = n_in;
  p->n_out = n_out;
  p->n_hidden = n_hidden;
  p->hidden = n_hidden > 0 ? hidden : 0;
  p->n_layers = n_hidden + 1;
  p->sizes[0] = n_in;
  for (int l = 1; l <= n_hidden; l++) p->sizes[l] = hidden;
  p->sizes[p->n_layers] = n_out;
  size_t off = 0;
  for (int l = 0; l < p->n_layers; l++) {
    p->w_off[l] = off;
    off += (size_t)p->sizes[l + 1] * (size_t)p->sizes[l];
    p->b_off[l] = off;
    off += (size_t)p->sizes[l + 1];
  }
  p->n_params = off;
  p->params = calloc(off, sizeof *p->params);
  p->m = calloc(off, sizeof *p->m);
  p->v = calloc(off, sizeof *p->v);
  if (!p->params || !p->m || !p->v) {
    rl_policy_free(p);
    return err_nomem(err);
  }
  p->adam = (rl_adam){.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .t = 0};
  *out = p;
  return MP_OK;
}

mp_status rl_policy_new(int n_in, int n_out, int n_hidden, int hidden, double lr, rng *r, rl_policy **out,
                        mp_error *err) {
  if (!(lr > 0) || !isfinite(lr)) return err_set(err, MP_INPUT, "rl_policy: the learning rate must be > 0, got %g", lr);
  mp_status st = alloc_shape(n_in, n_out, n_hidden, hidden, out, err);
  if (st != MP_OK) return st;
  rl_policy *p = *out;
  p->adam.lr = lr;
  for (int l = 0; l < p->n_layers; l++) {
    double fan_in = p->sizes[l], fan_out = p->sizes[l + 1];
    double sd = sqrt(2.0 / (fan_in + fan_out)) * (l == p->n_layers - 1 ? 0.01 : 1.0);
    size_t n = (size_t)p->sizes[l + 1] * (size_t)p->sizes[l];
    for (size_t i = 0; i < n; i++) p->params[p->w_off[l] + i] = sd * rng_normal(r);
  }
  return MP_OK;
}

rl_policy *rl_policy_clone(const rl_policy *p) {
  rl_policy *c = NULL;
  if (alloc_shape(p->n_in, p->n_out, p->n_hidden, p->hidden, &c, NULL) != MP_OK) return NULL;
  memcpy(c->params, p->params, p->n_params * sizeof *p->params);
  memcpy(c->m, p->m, p->n_params * sizeof *p->m);
  memcpy(c->v, p->v, p->n_params * sizeof *p->v);
  c->adam = p->adam;
  return c;
}

void rl_policy_free(rl_policy *p) {
  if (!p) return;
  free(p->params);
  free(p->m);
  free(p->v);
  free(p);
}

/* Masked softmax of logits z[n] into probs; logp (optional) gets z − logsumexp for allowed entries. */
static int masked_softmax(const double *z, const unsigned char *mask, int n, double *probs, double *lse_out) {
  double zmax = -INFINITY;
  int allowed = 0;
  for (int k = 0; k < n; k++)
    if (mask[k]) {
      allowed++;
      if (z[k] > zmax) zmax = z[k];
    }
  if (!allowed) {
    for (int k = 0; k < n; k++) probs[k] = 0;
    if (lse_out) *lse_out = 0;
    return 0;
  }
  double sum = 0;
  for (int k = 0; k < n; k++) sum += probs[k] = mask[k] ? exp(z[k] - zmax) : 0.0;
  for (int k = 0; k < n; k++) probs[k] /= sum;
  if (lse_out) *lse_out = zmax + log(sum);
  return allowed;
}

int rl_policy_sample(const double *probs, int n, rng *r) {
  int last = -1;
  for (int k = 0; k < n; k++)
    if (probs[k] > 0) last = k;
  if (last < 0) return -1;
  double u = rng_uniform(r), c = 0;
  for (int k = 0; k < n; k++) {
    if (probs[k] <= 0) continue;
    c += probs[k];
    if (u < c) return k;
  }
  return last; /* u beyond the rounded total */
}

int rl_policy_argmax(const double *probs, int n) {
  int best = -1;
  for (int k = 0; k < n; k++)
    if (probs[k] > 0 && (best < 0 || probs[k] > probs[best])) best = k;
  return best;
}

void rl_policy_ws_free(rl_policy_ws *ws) {
  if (!ws) return;
  free(ws->acts);
  free(ws->delta);
  free(ws->delta2);
  free(ws->ones);
  memset(ws, 0, sizeof *ws);
}

/* Where layer >= 1's activations start in ws->acts (layer 0, the inputs, stays in the caller's X). */
static size_t act_offset(const rl_policy *p, int cap, int layer) {
  size_t off = 0;
  for (int l = 1; l < layer; l++) off += (size_t)cap * (size_t)p->sizes[l];
  return off;
}

static mp_status ws_reserve(const rl_policy *p, rl_policy_ws *ws, int T, mp_error *err) {
  if (ws->cap >= T && ws->acts) return MP_OK;
  int cap = ws->cap > 0 ? ws->cap : 64;
  while (cap < T) cap *= 2;
  rl_policy_ws_free(ws);
  int w = widest(p);
  ws->acts = malloc(act_offset(p, cap, p->n_layers + 1) * sizeof *ws->acts);
  ws->delta = malloc((size_t)cap * (size_t)w * sizeof *ws->delta);
  ws->delta2 = malloc((size_t)cap * (size_t)w * sizeof *ws->delta2);
  ws->ones = malloc((size_t)cap * sizeof *ws->ones);
  if (!ws->acts || !ws->delta || !ws->delta2 || !ws->ones) {
    rl_policy_ws_free(ws);
    return err_nomem(err);
  }
  for (int i = 0; i < cap; i++) ws->ones[i] = 1.0;
  ws->cap = cap;
  return MP_OK;
}

/* Layer l's activations in ws (n rows; layer 0 is X, read in place). */
static const double *layer_acts(const rl_policy *p, const rl_policy_ws *ws, const double *X, int l) {
  return l == 0 ? X : ws->acts + act_offset(p, ws->cap, l);
}

/* Forward pass of n rows of X through the layers into ws; returns the logits (n × n_out). */
static double *forward(rl_policy *p, rl_policy_ws *ws, const double *X, int n) {
  int cap = ws->cap, L = p->n_layers;
  for (int l = 0; l < L; l++) {
    int s0 = p->sizes[l], s1 = p->sizes[l + 1];
    const double *A = layer_acts(p, ws, X, l);
    double *Z = ws->acts + act_offset(p, cap, l + 1);
    for (int t = 0; t < n; t++) memcpy(Z + (size_t)t * s1, p->params + p->b_off[l], (size_t)s1 * sizeof *Z);
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, s1, s0, 1.0, A, s0, p->params + p->w_off[l], s0, 1.0, Z,
                s1);
    if (l < L - 1)
      for (size_t i = 0; i < (size_t)n * s1; i++) Z[i] = tanh(Z[i]);
  }
  return ws->acts + act_offset(p, cap, L);
}

int rl_policy_probs(rl_policy *p, rl_policy_ws *ws, const double *x, int rows, const unsigned char *mask,
                    double *probs) {
  if (rows < 1 || ws_reserve(p, ws, rows, NULL) != MP_OK) return -1;
  const double *logits = forward(p, ws, x, rows);
  return masked_softmax(logits, mask, rows * p->n_out, probs, NULL);
}

mp_status rl_policy_loss_grad(rl_policy *p, int T, int rows, const double *X, const unsigned char *masks,
                              const int *act, const double *adv, double beta, rl_policy_ws *ws, double *loss,
                              double *entropy, double *grad, mp_error *err) {
  if (T < 1 || rows < 1)
    return err_set(err, MP_INPUT, "rl_policy: a batch needs at least one step of one row, got %d of %d", T, rows);
  const int n_out = rows * p->n_out; /* actions per state */
  for (int t = 0; t < T; t++)
    if (act[t] < 0 || act[t] >= n_out || !masks[(size_t)t * n_out + act[t]])
      return err_set(err, MP_INPUT, "rl_policy: step %d: action %d is not allowed by its mask", t, act[t]);
  mp_status st = ws_reserve(p, ws, T * rows, err);
  if (st != MP_OK) return st;
  int cap = ws->cap, L = p->n_layers;

  /* Forward: acts[l+1] = act(acts[l] · W_lᵀ + b_l), one dgemm per layer over all T · rows rows. */
  forward(p, ws, X, T * rows);

  /* Loss and d loss / d logits, state by state: a state's rows × n_out logits are contiguous. */
  double *logits = ws->acts + act_offset(p, cap, L);
  double *dz = ws->delta;
  double total = 0, total_h = 0;
  for (int t = 0; t < T; t++) {
    const double *z = logits + (size_t)t * n_out;
    const unsigned char *mask = masks + (size_t)t * n_out;
    double *d = dz + (size_t)t * n_out, lse;
    masked_softmax(z, mask, n_out, d, &lse); /* d holds the probabilities for now */
    double h = 0;
    for (int k = 0; k < n_out; k++)
      if (mask[k]) h -= d[k] * (z[k] - lse);
    total += adv[t] * (z[act[t]] - lse) + beta * h;
    total_h += h;
    for (int k = 0; k < n_out; k++) {
      if (!mask[k]) {
        d[k] = 0;
        continue;
      }
      double pk = d[k];
      d[k] = (-adv[t] * ((k == act[t]) - pk) + beta * pk * ((z[k] - lse) + h)) / T;
    }
  }
  if (loss) *loss = -total / T;
  if (entropy) *entropy = total_h / T;
  if (!grad) return MP_OK;

  /* Backward: gW_l = dZᵀ · A_l, gb_l = dZᵀ · 1, dA_l = dZ · W_l, dZ_{l-1} = dA_l ⊙ (1 − A_l²). */
  double *cur = ws->delta, *other = ws->delta2;
  for (int l = L - 1; l >= 0; l--) {
    int s0 = p->sizes[l], s1 = p->sizes[l + 1], TR = T * rows;
    const double *A = layer_acts(p, ws, X, l);
    cblas_dgemm(CblasRowMajor, CblasTrans, CblasNoTrans, s1, s0, TR, 1.0, cur, s1, A, s0, 0.0, grad + p->w_off[l], s0);
    cblas_dgemv(CblasRowMajor, CblasTrans, TR, s1, 1.0, cur, s1, ws->ones, 1, 0.0, grad + p->b_off[l], 1);
    if (l == 0) break;
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, TR, s0, s1, 1.0, cur, s1, p->params + p->w_off[l], s0, 0.0,
                other, s0);
    for (size_t i = 0; i < (size_t)TR * s0; i++) other[i] *= 1.0 - A[i] * A[i];
    double *tmp = cur;
    cur = other;
    other = tmp;
  }
  return MP_OK;
}

double rl_policy_adam_step(rl_policy *p, double *grad, double clip_norm) {
  double norm = sqrt(cblas_ddot((int)p->n_params, grad, 1, grad, 1));
  if (clip_norm > 0 && norm > clip_norm) cblas_dscal((int)p->n_params, clip_norm / norm, grad, 1);
  rl_adam *a = &p->adam;
  a->t++;
  double c1 = 1.0 - pow(a->beta1, (double)a->t), c2 = 1.0 - pow(a->beta2, (double)a->t);
  for (size_t i = 0; i < p->n_params; i++) {
    double g = grad[i];
    p->m[i] = a->beta1 * p->m[i] + (1.0 - a->beta1) * g;
    p->v[i] = a->beta2 * p->v[i] + (1.0 - a->beta2) * g * g;
    p->params[i] -= a->lr * (p->m[i] / c1) / (sqrt(p->v[i] / c2) + a->eps);
  }
  return norm;
}

/* ---- file image: little-endian fields, see partitioner/README.md ---- */

#define HEADER_BYTES (8 + 4 * 7 + 8)

static size_t image_size(size_t n_params, int with_optimizer) {
  size_t n = HEADER_BYTES + 8 * n_params;
  if (with_optimizer) n += 8 * 5 + 16 * n_params;
  return n + 8;
}

mp_status rl_policy_to_bytes(const rl_policy *p, int with_optimizer, strbuf *out, mp_error *err) {
  size_t start = out->len;
  strbuf_append(out, RL_POLICY_MAGIC, 8);
  bytes_put_u32(out, RL_POLICY_VERSION);
  bytes_put_u32(out, (uint32_t)p->n_in);
  bytes_put_u32(out, (uint32_t)p->n_out);
  bytes_put_u32(out, (uint32_t)p->n_hidden);
  bytes_put_u32(out, (uint32_t)p->hidden);
  bytes_put_u32(out, ACT_TANH);
  bytes_put_u32(out, with_optimizer ? FLAG_OPTIMIZER : 0u);
  bytes_put_u64(out, p->n_params);
  for (size_t i = 0; i < p->n_params; i++) bytes_put_f64(out, p->params[i]);
  if (with_optimizer) {
    bytes_put_f64(out, p->adam.lr);
    bytes_put_f64(out, p->adam.beta1);
    bytes_put_f64(out, p->adam.beta2);
    bytes_put_f64(out, p->adam.eps);
    bytes_put_u64(out, p->adam.t);
    for (size_t i = 0; i < p->n_params; i++) bytes_put_f64(out, p->m[i]);
    for (size_t i = 0; i < p->n_params; i++) bytes_put_f64(out, p->v[i]);
  }
  if (out->oom) return err_nomem(err);
  bytes_put_u64(out, fileio_hash(FILEIO_HASH_INIT, out->s + start, out->len - start));
  return out->oom ? err_nomem(err) : MP_OK;
}

mp_status rl_policy_from_bytes(const unsigned char *data, size_t len, const char *file, rl_policy **out,
                               size_t *used, mp_error *err) {
  *out = NULL;
  if (len < HEADER_BYTES + 8 || memcmp(data, RL_POLICY_MAGIC, 8) != 0)
    return err_at(err, MP_INPUT, file, NULL, "not a meshpipe RL policy (no %s header)", RL_POLICY_MAGIC);
  bytes_reader r = bytes_reader_of(data, len); /* the header fits: len was checked */
  r.pos = 8;
  uint32_t version = bytes_get_u32(&r);
  if (version != RL_POLICY_VERSION)
    return err_at(err, MP_INPUT, file, "version", "policy format version %u, this meshpipe reads %d", version,
                  RL_POLICY_VERSION);
  uint32_t n_in = bytes_get_u32(&r), n_out = bytes_get_u32(&r), n_hidden = bytes_get_u32(&r),
           hidden = bytes_get_u32(&r), activation = bytes_get_u32(&r), flags = bytes_get_u32(&r);
  uint64_t n_params = bytes_get_u64(&r);
  if (activation != ACT_TANH)
    return err_at(err, MP_INPUT, file, "activation", "unknown activation %u (1 = tanh)", activation);
  if (flags & ~FLAG_OPTIMIZER) return err_at(err, MP_INPUT, file, "flags", "unknown flags 0x%x", flags);
  /* The header against the shape and the file's length, before anything is allocated for them. */
  uint64_t shape_n = shape_params(n_in, n_out, n_hidden, hidden);
  if (!shape_n)
    return err_at(err, MP_INPUT, file, "shape", "bad shape: %u inputs, %u outputs, %u hidden layers of %u", n_in,
                  n_out, n_hidden, hidden);
  if (n_params != shape_n)
    return err_at(err, MP_INPUT, file, "n_params", "%llu parameters for a shape that has %llu",
                  (unsigned long long)n_params, (unsigned long long)shape_n);
  int with_opt = (flags & FLAG_OPTIMIZER) != 0;
  if (n_params > len / (with_opt ? 24 : 8))
    return err_at(err, MP_INPUT, file, NULL, "truncated: %zu bytes cannot hold %llu parameters", len,
                  (unsigned long long)n_params);
  size_t need = image_size((size_t)n_params, with_opt);
  if (len < need) return err_at(err, MP_INPUT, file, NULL, "truncated: %zu bytes, the header announces %zu", len, need);
  rl_policy *p = NULL;
  mp_status st = alloc_shape((int)n_in, (int)n_out, (int)n_hidden, (int)hidden, &p, err);
  if (st != MP_OK) return st; /* the shape was checked: only memory can fail */
  bytes_reader sum = bytes_reader_of(data + need - 8, 8);
  if (bytes_get_u64(&sum) != fileio_hash(FILEIO_HASH_INIT, data, need - 8)) {
    st = err_at(err, MP_INPUT, file, "checksum", "checksum mismatch: the file is damaged");
    goto cleanup;
  }
  for (size_t i = 0; i < p->n_params; i++) p->params[i] = bytes_get_f64(&r);
  if (with_opt) {
    p->adam.lr = bytes_get_f64(&r);
    p->adam.beta1 = bytes_get_f64(&r);
    p->adam.beta2 = bytes_get_f64(&r);
    p->adam.eps = bytes_get_f64(&r);
    p->adam.t = bytes_get_u64(&r);
    for (size_t i = 0; i < p->n_params; i++) p->m[i] = bytes_get_f64(&r);
    for (size_t i = 0; i < p->n_params; i++) p->v[i] = bytes_get_f64(&r);
  }
  for (size_t i = 0; i < p->n_params; i++)
    if (!isfinite(p->params[i])) {
      st = err_at(err, MP_INPUT, file, "params", "parameter %zu is not a finite number", i);
      goto cleanup;
    }
  if (with_opt) { /* Adam's state as Adam leaves it: a damaged one would poison every later step */
    const rl_adam *a = &p->adam;
    if (!(a->lr > 0 && isfinite(a->lr)) || !(a->beta1 >= 0 && a->beta1 < 1) || !(a->beta2 >= 0 && a->beta2 < 1) ||
        !(a->eps > 0 && isfinite(a->eps))) {
      st = err_at(err, MP_INPUT, file, "adam", "learning rate %g, betas %g and %g, epsilon %g: not Adam's state",
                  a->lr, a->beta1, a->beta2, a->eps);
      goto cleanup;
    }
    for (size_t i = 0; i < p->n_params; i++)
      if (!isfinite(p->m[i]) || !(p->v[i] >= 0 && isfinite(p->v[i]))) {
        st = err_at(err, MP_INPUT, file, "adam", "moment %zu is not a finite number (the second one >= 0)", i);
        goto cleanup;
      }
  }
  if (used) *used = need;
  *out = p;
  return MP_OK;
cleanup:
  rl_policy_free(p);
  return st;
}

mp_status rl_policy_save(const rl_policy *p, int with_optimizer, const char *path, mp_error *err) {
  strbuf b = {0};
  mp_status st = rl_policy_to_bytes(p, with_optimizer, &b, err);
  if (st == MP_OK) st = fileio_write_atomic(path, b.s, b.len, err);
  strbuf_clear(&b);
  return st;
}

mp_status rl_policy_load(const char *path, rl_policy **out, mp_error *err) {
  *out = NULL;
  char *buf = NULL;
  size_t len = 0;
  mp_status st = fileio_read_all(path, &buf, &len, err);
  if (st != MP_OK) return st;
  size_t used = 0;
  st = rl_policy_from_bytes((const unsigned char *)buf, len, path, out, &used, err);
  if (st == MP_OK && used != len) {
    rl_policy_free(*out);
    *out = NULL;
    st = err_at(err, MP_INPUT, path, NULL, "%zu bytes of trailing data after the policy", len - used);
  }
  free(buf);
  return st;
}

mp_status rl_policy_load_shaped(const char *path, int n_in, int n_out, rl_policy **out, mp_error *err) {
  mp_status st = rl_policy_load(path, out, err);
  if (st != MP_OK || ((*out)->n_in == n_in && (*out)->n_out == n_out)) return st;
  st = err_at(err, MP_INPUT, path, "shape",
              "the policy takes %d features per row and gives %d logits, this partitioner needs %d and %d",
              (*out)->n_in, (*out)->n_out, n_in, n_out);
  rl_policy_free(*out);
  *out = NULL;
  return st;
}

int rl_policy_identical(const rl_policy *a, const rl_policy *b, int with_optimizer) {
  if (a->n_in != b->n_in || a->n_out != b->n_out || a->n_hidden != b->n_hidden || a->hidden != b->hidden ||
      a->n_params != b->n_params)
    return 0;
  size_t bytes = a->n_params * sizeof(double);
  if (memcmp(a->params, b->params, bytes) != 0) return 0;
  if (!with_optimizer) return 1;
  return memcmp(a->m, b->m, bytes) == 0 && memcmp(a->v, b->v, bytes) == 0 &&
         memcmp(&a->adam.lr, &b->adam.lr, sizeof(double)) == 0 && a->adam.t == b->adam.t &&
         a->adam.beta1 == b->adam.beta1 && a->adam.beta2 == b->adam.beta2 && a->adam.eps == b->adam.eps;
}
