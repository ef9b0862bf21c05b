/* Tests of rl_policy: the forward pass against a hand-written loop, the REINFORCE gradient against
 * central finite differences, Adam against its closed-form first step, sampling frequencies, a
 * contextual bandit learned end to end, and the file format (bit-for-bit round trip, every
 * rejection). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "rl_policy.h"
#include "testutil.h"

static rl_policy *make_policy(int n_in, int n_out, int n_hidden, int hidden, uint64_t seed) {
  rng r;
  rng_seed(&r, seed);
  rl_policy *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_policy_new(n_in, n_out, n_hidden, hidden, 1e-2, &r, &p, &err), MP_OK);
  return p;
}

static void rl_policy_new_should_reject_bad_shapes_and_learning_rates(void) {
  rng r;
  rng_seed(&r, 1);
  rl_policy *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(rl_policy_new(0, 4, 1, 8, 1e-3, &r, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "bad shape"));
  CU_ASSERT_EQUAL(rl_policy_new(3, 0, 1, 8, 1e-3, &r, &p, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_policy_new(3, 4, RL_POLICY_MAX_HIDDEN + 1, 8, 1e-3, &r, &p, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_policy_new(3, 4, 2, 0, 1e-3, &r, &p, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_policy_new(3, 4, 1, 8, 0.0, &r, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "learning rate"));
  CU_ASSERT_EQUAL(rl_policy_new(3, 4, 1, 8, NAN, &r, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_EQUAL(rl_policy_new(3, 4, 0, 0, 1e-3, &r, &p, &err), MP_OK); /* a linear policy is fine */
  CU_ASSERT_EQUAL(p->n_params, (size_t)(3 * 4 + 4));
  rl_policy_free(p);
  rl_policy_free(NULL);
}

/* The forward pass written as plain loops over the documented layout: logits of one row. */
static void reference_logits(const rl_policy *p, const double *x, double *out) {
  double a[64], z[64];
  memcpy(a, x, (size_t)p->n_in * sizeof *a);
  for (int l = 0; l < p->n_layers; l++) {
    int s0 = p->sizes[l], s1 = p->sizes[l + 1];
    for (int o = 0; o < s1; o++) {
      double s = p->params[p->b_off[l] + o];
      for (int i = 0; i < s0; i++) s += p->params[p->w_off[l] + (size_t)o * s0 + i] * a[i];
      z[o] = l < p->n_layers - 1 ? tanh(s) : s;
    }
    memcpy(a, z, (size_t)s1 * sizeof *a);
  }
  memcpy(out, a, (size_t)p->n_out * sizeof *out);
}

/* Masked softmax over `rows` rows' logits, by the definition. */
static void reference_probs_rows(const rl_policy *p, const double *x, int rows, const unsigned char *mask,
                                 double *probs) {
  double z[64], sum = 0;
  for (int r = 0; r < rows; r++) reference_logits(p, x + (size_t)r * p->n_in, z + r * p->n_out);
  int n = rows * p->n_out;
  for (int k = 0; k < n; k++) sum += mask[k] ? exp(z[k]) : 0;
  for (int k = 0; k < n; k++) probs[k] = mask[k] ? exp(z[k]) / sum : 0;
}

static void reference_probs(const rl_policy *p, const double *x, const unsigned char *mask, double *probs) {
  reference_probs_rows(p, x, 1, mask, probs);
}

static void perturb(rl_policy *p, uint64_t seed, double scale) {
  rng r;
  rng_seed(&r, seed);
  for (size_t i = 0; i < p->n_params; i++) p->params[i] += scale * rng_normal(&r);
}

static void probs_should_match_a_plain_loop_forward_pass_and_respect_the_mask(void) {
  rl_policy *p = make_policy(5, 7, 2, 6, 11);
  perturb(p, 12, 0.5);
  const double x[5] = {0.3, -1.2, 2.0, 0.0, 0.7};
  const unsigned char mask[7] = {1, 0, 1, 1, 0, 1, 1};
  double got[7], want[7];
  rl_policy_ws ws = {0};
  CU_ASSERT_EQUAL(rl_policy_probs(p, &ws, x, 1, mask, got), 5);
  reference_probs(p, x, mask, want);
  double sum = 0;
  for (int k = 0; k < 7; k++) {
    CU_ASSERT_DOUBLE_EQUAL(got[k], want[k], 1e-14);
    sum += got[k];
  }
  CU_ASSERT_EQUAL(got[1], 0.0);
  CU_ASSERT_EQUAL(got[4], 0.0);
  CU_ASSERT_DOUBLE_EQUAL(sum, 1.0, 1e-14);
  const unsigned char none[7] = {0};
  CU_ASSERT_EQUAL(rl_policy_probs(p, &ws, x, 1, none, got), 0);
  CU_ASSERT_EQUAL(rl_policy_sample(got, 7, &(rng){{1, 2, 3, 4}}), -1);
  CU_ASSERT_EQUAL(rl_policy_argmax(got, 7), -1);
  CU_ASSERT_EQUAL(rl_policy_probs(p, &ws, x, 0, mask, got), -1);
  rl_policy_ws_free(&ws);
  rl_policy_free(p);
}

/* Several rows per state: each row gives n_out logits and one softmax spans them all. */
static void probs_should_span_all_rows_of_a_state(void) {
  rl_policy *p = make_policy(3, 2, 1, 5, 13);
  perturb(p, 14, 0.5);
  const double x[9] = {0.1, 0.2, 0.3, -1, 0, 1, 2, -2, 0.5};
  const unsigned char mask[6] = {1, 1, 0, 1, 1, 1};
  double got[6], want[6];
  rl_policy_ws ws = {0};
  CU_ASSERT_EQUAL(rl_policy_probs(p, &ws, x, 3, mask, got), 5);
  reference_probs_rows(p, x, 3, mask, want);
  for (int k = 0; k < 6; k++) CU_ASSERT_DOUBLE_EQUAL(got[k], want[k], 1e-14);
  CU_ASSERT_EQUAL(got[2], 0.0);
  rl_policy_ws_free(&ws);
  rl_policy_free(p);
}

static void a_new_policy_should_be_nearly_uniform_over_the_allowed_actions(void) {
  rl_policy *p = make_policy(16, 30, 2, 32, 3);
  double x[16], probs[30];
  unsigned char mask[30];
  for (int i = 0; i < 16; i++) x[i] = 1.0 + 0.1 * i;
  for (int k = 0; k < 30; k++) mask[k] = k % 3 != 0;
  rl_policy_ws ws = {0};
  rl_policy_probs(p, &ws, x, 1, mask, probs);
  rl_policy_ws_free(&ws);
  for (int k = 0; k < 30; k++)
    if (mask[k]) CU_ASSERT_DOUBLE_EQUAL(probs[k], 1.0 / 20, 0.1 / 20);
  rl_policy_free(p);
}

/* A random batch for gradient checks: GT states of GR rows, GOUT logits per row. */
enum { GT = 9, GR = 3, GIN = 4, GROW = 2, GOUT = GR * GROW };
static void random_batch(double *X, unsigned char *masks, int *act, double *adv) {
  rng r;
  rng_seed(&r, 99);
  for (int t = 0; t < GT; t++) {
    for (int i = 0; i < GR * GIN; i++) X[t * GR * GIN + i] = 2 * rng_normal(&r);
    int first = -1;
    for (int k = 0; k < GOUT; k++) {
      masks[t * GOUT + k] = rng_uniform(&r) < 0.7;
      if (masks[t * GOUT + k] && first < 0) first = k;
    }
    if (first < 0) masks[t * GOUT + (first = t % GOUT)] = 1;
    do act[t] = (int)rng_below(&r, GOUT);
    while (!masks[t * GOUT + act[t]]);
    adv[t] = rng_normal(&r);
  }
}

static void check_gradient(int n_hidden, int hidden, double beta) {
  rl_policy *p = make_policy(GIN, GROW, n_hidden, hidden, 21);
  perturb(p, 22, 0.4); /* away from the near-uniform start, so every term matters */
  double X[GT * GR * GIN], adv[GT];
  unsigned char masks[GT * GOUT];
  int act[GT];
  random_batch(X, masks, act, adv);
  rl_policy_ws ws = {0};
  mp_error err;
  double loss, *grad = calloc(p->n_params, sizeof *grad);
  CU_ASSERT_EQUAL_FATAL(rl_policy_loss_grad(p, GT, GR, X, masks, act, adv, beta, &ws, &loss, NULL, grad, &err), MP_OK);
  double worst = 0;
  for (size_t i = 0; i < p->n_params; i++) {
    const double h = 1e-6, keep = p->params[i];
    double lp, lm;
    p->params[i] = keep + h;
    rl_policy_loss_grad(p, GT, GR, X, masks, act, adv, beta, &ws, &lp, NULL, NULL, &err);
    p->params[i] = keep - h;
    rl_policy_loss_grad(p, GT, GR, X, masks, act, adv, beta, &ws, &lm, NULL, NULL, &err);
    p->params[i] = keep;
    double fd = (lp - lm) / (2 * h);
    double rel = fabs(fd - grad[i]) / fmax(1e-6, fabs(fd) + fabs(grad[i]));
    if (rel > worst) worst = rel;
  }
  CU_ASSERT(worst < 1e-5);
  double l2;
  rl_policy_loss_grad(p, GT, GR, X, masks, act, adv, beta, &ws, &l2, NULL, NULL, &err);
  CU_ASSERT_EQUAL(l2, loss); /* a loss-only pass gives the same value */
  free(grad);
  rl_policy_ws_free(&ws);
  rl_policy_free(p);
}

static void the_gradient_should_match_finite_differences(void) {
  check_gradient(2, 5, 0.0);  /* log-probability term alone */
  check_gradient(2, 5, 0.3);  /* with the entropy bonus */
  check_gradient(1, 3, 0.05); /* another depth */
  check_gradient(0, 0, 0.2);  /* a linear policy */
}

static void the_loss_should_match_its_definition(void) {
  rl_policy *p = make_policy(GIN, GROW, 1, 4, 5);
  perturb(p, 6, 0.5);
  double X[GT * GR * GIN], adv[GT];
  unsigned char masks[GT * GOUT];
  int act[GT];
  random_batch(X, masks, act, adv);
  rl_policy_ws ws = {0};
  mp_error err;
  double loss, ent;
  CU_ASSERT_EQUAL_FATAL(rl_policy_loss_grad(p, GT, GR, X, masks, act, adv, 0.25, &ws, &loss, &ent, NULL, &err),
                        MP_OK);
  double want = 0, want_h = 0, probs[GOUT];
  for (int t = 0; t < GT; t++) {
    reference_probs_rows(p, X + t * GR * GIN, GR, masks + t * GOUT, probs);
    double h = 0;
    for (int k = 0; k < GOUT; k++)
      if (probs[k] > 0) h -= probs[k] * log(probs[k]);
    want -= adv[t] * log(probs[act[t]]) + 0.25 * h;
    want_h += h;
  }
  CU_ASSERT_DOUBLE_EQUAL(loss, want / GT, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(ent, want_h / GT, 1e-12);
  rl_policy_ws_free(&ws);
  rl_policy_free(p);
}

static void loss_grad_should_reject_an_empty_batch_and_a_masked_action(void) {
  rl_policy *p = make_policy(2, 3, 1, 4, 5);
  double X[2] = {1, 2}, adv[1] = {1};
  unsigned char mask[3] = {1, 0, 1};
  int act[1] = {1};
  rl_policy_ws ws = {0};
  mp_error err;
  double loss;
  CU_ASSERT_EQUAL(rl_policy_loss_grad(p, 0, 1, X, mask, act, adv, 0, &ws, &loss, NULL, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at least one step"));
  CU_ASSERT_EQUAL(rl_policy_loss_grad(p, 1, 0, X, mask, act, adv, 0, &ws, &loss, NULL, NULL, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_policy_loss_grad(p, 1, 1, X, mask, act, adv, 0, &ws, &loss, NULL, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not allowed by its mask"));
  act[0] = 3;
  CU_ASSERT_EQUAL(rl_policy_loss_grad(p, 1, 1, X, mask, act, adv, 0, &ws, &loss, NULL, NULL, &err), MP_INPUT);
  rl_policy_ws_free(&ws);
  rl_policy_free(p);
}

static void the_first_adam_step_should_move_each_parameter_by_the_learning_rate(void) {
  rl_policy *p = make_policy(2, 2, 0, 0, 8); /* 6 parameters */
  double before[6], grad[6] = {3, -0.5, 0, 2e-3, -7, 1};
  memcpy(before, p->params, sizeof before);
  double norm = rl_policy_adam_step(p, grad, 0);
  CU_ASSERT_DOUBLE_EQUAL(norm, sqrt(9 + 0.25 + 4e-6 + 49 + 1), 1e-12);
  for (int i = 0; i < 6; i++) {
    double g = grad[i], want = g == 0 ? 0 : -p->adam.lr * g / (fabs(g) + 1e-8);
    CU_ASSERT_DOUBLE_EQUAL(p->params[i] - before[i], want, 1e-15);
  }
  CU_ASSERT_EQUAL(p->adam.t, 1u);
  double g2[6] = {30, 40, 0, 0, 0, 0};
  CU_ASSERT_DOUBLE_EQUAL(rl_policy_adam_step(p, g2, 5.0), 50.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(g2[0], 3.0, 1e-12); /* scaled to norm 5 */
  CU_ASSERT_DOUBLE_EQUAL(g2[1], 4.0, 1e-12);
  rl_policy_free(p);
}

static void sampling_should_follow_the_probabilities(void) {
  const double probs[5] = {0.1, 0.0, 0.6, 0.3, 0.0};
  rng r;
  rng_seed(&r, 17);
  int count[5] = {0};
  const int n = 50000;
  for (int i = 0; i < n; i++) {
    int a = rl_policy_sample(probs, 5, &r);
    CU_ASSERT_FATAL(a >= 0 && a < 5);
    count[a]++;
  }
  CU_ASSERT_EQUAL(count[1] + count[4], 0);
  double chi2 = 0;
  for (int k = 0; k < 5; k++)
    if (probs[k] > 0) chi2 += (count[k] - n * probs[k]) * (count[k] - n * probs[k]) / (n * probs[k]);
  CU_ASSERT(chi2 < 13.8); /* 2 degrees of freedom, p = 0.001 */
  const double tie[4] = {0.4, 0.1, 0.4, 0.1};
  CU_ASSERT_EQUAL(rl_policy_argmax(tie, 4), 0);
}

/* Two contexts, each rewarding a different action: the policy must learn both. */
static void policy_gradient_should_learn_a_contextual_bandit(void) {
  rl_policy *p = make_policy(2, 3, 1, 8, 31);
  rng r;
  rng_seed(&r, 32);
  rl_policy_ws ws = {0};
  mp_error err;
  enum { B = 32 };
  double X[B * 2], adv[B], probs[3], *grad = calloc(p->n_params, sizeof *grad);
  unsigned char masks[B * 3];
  int act[B];
  memset(masks, 1, sizeof masks);
  for (int it = 0; it < 300; it++) {
    double mean = 0, rew[B];
    for (int t = 0; t < B; t++) {
      int ctx = t % 2;
      X[2 * t] = ctx == 0, X[2 * t + 1] = ctx == 1;
      rl_policy_probs(p, &ws, X + 2 * t, 1, masks, probs);
      act[t] = rl_policy_sample(probs, 3, &r);
      rew[t] = act[t] == (ctx == 0 ? 2 : 0) ? 1.0 : 0.0;
      mean += rew[t] / B;
    }
    for (int t = 0; t < B; t++) adv[t] = rew[t] - mean;
    CU_ASSERT_EQUAL_FATAL(rl_policy_loss_grad(p, B, 1, X, masks, act, adv, 0.001, &ws, NULL, NULL, grad, &err), MP_OK);
    rl_policy_adam_step(p, grad, 10);
  }
  const double c0[2] = {1, 0}, c1[2] = {0, 1};
  rl_policy_probs(p, &ws, c0, 1, masks, probs);
  CU_ASSERT(probs[2] > 0.95);
  rl_policy_probs(p, &ws, c1, 1, masks, probs);
  CU_ASSERT(probs[0] > 0.95);
  free(grad);
  rl_policy_ws_free(&ws);
  rl_policy_free(p);
}

static void a_saved_policy_should_load_back_bit_for_bit(void) {
  rl_policy *p = make_policy(6, 5, 2, 7, 41);
  perturb(p, 42, 1e-3);
  double grad[200];
  for (size_t i = 0; i < p->n_params; i++) grad[i] = sin((double)i);
  rl_policy_adam_step(p, grad, 0); /* non-trivial optimiser state */
  mp_error err;
  rl_policy *q = NULL;
  for (int with_opt = 0; with_opt <= 1; with_opt++) {
    const char *path = testutil_temp_path(with_opt ? "p_opt.pol" : "p.pol");
    CU_ASSERT_EQUAL_FATAL(rl_policy_save(p, with_opt, path, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(rl_policy_load(path, &q, &err), MP_OK);
    CU_ASSERT_TRUE(rl_policy_identical(p, q, 0));
    CU_ASSERT_EQUAL(rl_policy_identical(p, q, 1), with_opt);
    strbuf a = {0}, b = {0};
    CU_ASSERT_EQUAL(rl_policy_to_bytes(p, with_opt, &a, &err), MP_OK);
    CU_ASSERT_EQUAL(rl_policy_to_bytes(q, with_opt, &b, &err), MP_OK);
    CU_ASSERT_TRUE(a.len == b.len && memcmp(a.s, b.s, a.len) == 0);
    strbuf_clear(&a);
    strbuf_clear(&b);
    rl_policy_free(q);
  }
  rl_policy *c = rl_policy_clone(p);
  CU_ASSERT_TRUE(rl_policy_identical(p, c, 1));
  c->params[3] = nextafter(c->params[3], 1e9);
  CU_ASSERT_FALSE(rl_policy_identical(p, c, 0));
  rl_policy_free(c);
  rl_policy_free(p);
}

/* Rewrites the trailing checksum of an image after a deliberate edit. */
static void reseal(unsigned char *b, size_t len) {
  uint64_t h = fileio_hash(FILEIO_HASH_INIT, b, len - 8);
  for (int i = 0; i < 8; i++) b[len - 8 + i] = (unsigned char)(h >> (8 * i));
}

static void expect_reject(const unsigned char *b, size_t len, const char *what) {
  rl_policy *q = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(rl_policy_from_bytes(b, len, "x.pol", &q, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(q);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, what));
  if (!strstr(err.msg, what)) fprintf(stderr, "\n  got: %s (wanted %s)\n", err.msg, what);
  CU_ASSERT_EQUAL(strncmp(err.msg, "x.pol: ", 7), 0);
}

/* A 60-byte header declaring 4 hidden layers of 65 536 (12.9 G parameters, 300 GB with Adam's state)
 * is refused from its length before anything is allocated: the nomem-free build would otherwise try. */
static void a_header_larger_than_its_file_should_be_refused_before_allocating(void) {
  unsigned char b[60] = "MPRLPOL1";
  const uint32_t head[] = {1, 26, 4, 4, 65536, 1, 1};
  for (int k = 0; k < 7; k++)
    for (int i = 0; i < 4; i++) b[8 + 4 * k + i] = (unsigned char)(head[k] >> (8 * i));
  uint64_t n = 26ull * 65536 + 65536 + 3 * (65536ull * 65536 + 65536) + 4ull * 65536 + 4;
  for (int i = 0; i < 8; i++) b[36 + i] = (unsigned char)(n >> (8 * i));
  expect_reject(b, sizeof b, "truncated: 60 bytes cannot hold 12887130116 parameters");
  /* the shape's size is checked too: 5 hidden layers is no shape at all */
  b[20] = 5;
  expect_reject(b, sizeof b, "bad shape: 26 inputs, 4 outputs, 5 hidden layers of 65536");
}

/* Adam's state is checked like the parameters: a NaN moment or a learning rate of 0 is damage. */
static void a_damaged_adam_state_should_be_refused(void) {
  rl_policy *p = make_policy(3, 4, 1, 5, 52);
  strbuf image = {0};
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_policy_to_bytes(p, 1, &image, &err), MP_OK);
  size_t len = image.len, at_lr = 44 + 8 * p->n_params, at_v0 = at_lr + 8 * 4 + 8 + 8 * p->n_params;
  unsigned char *b = malloc(len);
  double bad[] = {0.0, NAN, -1.0};
  size_t at[] = {at_lr, at_v0, at_v0};
  const char *want[] = {"learning rate 0", "moment 0 is not a finite number", "moment 0 is not a finite number"};
  for (int k = 0; k < 3; k++) {
    memcpy(b, image.s, len);
    uint64_t bits;
    memcpy(&bits, &bad[k], 8);
    for (int i = 0; i < 8; i++) b[at[k] + i] = (unsigned char)(bits >> (8 * i));
    reseal(b, len);
    expect_reject(b, len, want[k]);
  }
  free(b);
  strbuf_clear(&image);
  rl_policy_free(p);
}

/* A policy of another shape than the partitioner's is refused with the file's name. */
static void loading_a_policy_of_another_shape_should_name_the_file(void) {
  rl_policy *p = make_policy(3, 4, 1, 5, 53), *q = NULL;
  mp_error err;
  const char *path = testutil_temp_path("shape.pol");
  CU_ASSERT_EQUAL_FATAL(rl_policy_save(p, 0, path, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_policy_load_shaped(path, 26, 4, &q, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(q);
  CU_ASSERT_EQUAL(strncmp(err.msg, path, strlen(path)), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": shape: the policy takes 3 features per row and gives 4 logits"));
  CU_ASSERT_EQUAL(rl_policy_load_shaped(path, 3, 4, &q, &err), MP_OK);
  CU_ASSERT_TRUE(q && rl_policy_identical(p, q, 0));
  rl_policy_free(q);
  rl_policy_free(p);
}

static void loading_should_reject_damaged_or_foreign_files(void) {
  rl_policy *p = make_policy(3, 4, 1, 5, 51);
  strbuf image = {0};
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_policy_to_bytes(p, 1, &image, &err), MP_OK);
  const unsigned char *img = (const unsigned char *)image.s;
  size_t len = image.len;
  unsigned char *b = malloc(len + 8);
  memcpy(b, img, len);
  b[0] = 'X';
  expect_reject(b, len, "not a meshpipe RL policy");
  expect_reject(img, 20, "not a meshpipe RL policy");
  memcpy(b, img, len);
  b[8] = 2, reseal(b, len);
  expect_reject(b, len, "version 2");
  memcpy(b, img, len);
  b[28] = 9, reseal(b, len);
  expect_reject(b, len, "unknown activation");
  memcpy(b, img, len);
  b[32] = 6, reseal(b, len);
  expect_reject(b, len, "unknown flags");
  memcpy(b, img, len);
  b[20] = 9, reseal(b, len); /* 9 hidden layers */
  expect_reject(b, len, "bad shape");
  memcpy(b, img, len);
  b[24] = 6, reseal(b, len); /* hidden width 6: the parameter count no longer fits the shape */
  expect_reject(b, len, "parameters for a shape");
  memcpy(b, img, len);
  b[36] = 0xff, b[37] = 0xff, b[38] = 0xff, reseal(b, len);
  expect_reject(b, len, "parameters for a shape");
  expect_reject(img, len - 9, "truncated");
  memcpy(b, img, len);
  b[60] ^= 1;
  expect_reject(b, len, "checksum");
  memcpy(b, img, len);
  double inf = INFINITY;
  uint64_t bits;
  memcpy(&bits, &inf, 8);
  for (int i = 0; i < 8; i++) b[44 + 8 + i] = (unsigned char)(bits >> (8 * i));
  reseal(b, len);
  expect_reject(b, len, "not a finite number");
  /* Through files: trailing bytes, and a missing file. */
  memcpy(b, img, len);
  memset(b + len, 0, 8);
  const char *path = testutil_temp_path("trail.pol");
  CU_ASSERT_EQUAL(fileio_write_atomic(path, b, len + 8, &err), MP_OK);
  rl_policy *q = NULL;
  CU_ASSERT_EQUAL(rl_policy_load(path, &q, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "trailing data"));
  CU_ASSERT_EQUAL(rl_policy_load(testutil_temp_path("absent.pol"), &q, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(q);
  CU_ASSERT_EQUAL(rl_policy_save(p, 0, "/nonexistent-dir/p.pol", &err), MP_OUTPUT);
  free(b);
  strbuf_clear(&image);
  rl_policy_free(p);
}

static CU_TestInfo tests[] = {
    {"rl_policy_new_should_reject_bad_shapes_and_learning_rates",
     rl_policy_new_should_reject_bad_shapes_and_learning_rates},
    {"probs_should_match_a_plain_loop_forward_pass_and_respect_the_mask",
     probs_should_match_a_plain_loop_forward_pass_and_respect_the_mask},
    {"probs_should_span_all_rows_of_a_state", probs_should_span_all_rows_of_a_state},
    {"a_new_policy_should_be_nearly_uniform_over_the_allowed_actions",
     a_new_policy_should_be_nearly_uniform_over_the_allowed_actions},
    {"the_gradient_should_match_finite_differences", the_gradient_should_match_finite_differences},
    {"the_loss_should_match_its_definition", the_loss_should_match_its_definition},
    {"loss_grad_should_reject_an_empty_batch_and_a_masked_action",
     loss_grad_should_reject_an_empty_batch_and_a_masked_action},
    {"the_first_adam_step_should_move_each_parameter_by_the_learning_rate",
     the_first_adam_step_should_move_each_parameter_by_the_learning_rate},
    {"sampling_should_follow_the_probabilities", sampling_should_follow_the_probabilities},
    {"policy_gradient_should_learn_a_contextual_bandit", policy_gradient_should_learn_a_contextual_bandit},
    {"a_saved_policy_should_load_back_bit_for_bit", a_saved_policy_should_load_back_bit_for_bit},
    {"a_header_larger_than_its_file_should_be_refused_before_allocating",
     a_header_larger_than_its_file_should_be_refused_before_allocating},
    {"a_damaged_adam_state_should_be_refused", a_damaged_adam_state_should_be_refused},
    {"loading_a_policy_of_another_shape_should_name_the_file", loading_a_policy_of_another_shape_should_name_the_file},
    {"loading_should_reject_damaged_or_foreign_files", loading_should_reject_damaged_or_foreign_files},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_policy", tests, argc, argv); }
