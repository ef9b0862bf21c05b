/* rl_policy: the RL partitioner's policy — a small multilayer perceptron from the rl_env features to
 * one logit per action, a softmax restricted to the actions the mask allows, and its Adam optimiser.
 *
 * Layout: sizes[0] = n_in, sizes[1..n_hidden] = hidden width, sizes[n_layers] = n_out; weight layer l
 * maps sizes[l] to sizes[l+1] as z = W_l·a + b_l, tanh between layers, none after the last.  All
 * parameters live in one flat array params[n_params]: for l = 0, 1, ...: W_l (sizes[l+1] × sizes[l],
 * row-major, handed straight to cblas) then b_l.  Adam's moments m[] and v[] have the same layout.
 * Rows: a state may be several rows of n_in features (the rl_env gives one row per neighbour pair);
 * each row yields n_out logits, and the softmax runs over all rows × n_out logits of the state, so
 * one small network with shared weights scores every position of any size of state.
 * The file format (rl_policy_save/rl_policy_load) is described in partitioner/README.md, section
 * "RL policy and checkpoint files"; a saved policy loads back bit for bit. */
#ifndef MESHPIPE_RL_POLICY_H
#define MESHPIPE_RL_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"
#include "rng.h"
#include "strbuf.h"

#define RL_POLICY_MAGIC "MPRLPOL1"
#define RL_POLICY_VERSION 1
#define RL_POLICY_MAX_HIDDEN 4

typedef struct rl_adam {
  double lr, beta1, beta2, eps;
  uint64_t t; /* steps taken */
} rl_adam;

typedef struct rl_policy {
  int n_in, n_out, n_hidden, hidden; /* n_hidden hidden layers of width hidden */
  int n_layers;                      /* weight layers = n_hidden + 1 */
  int sizes[RL_POLICY_MAX_HIDDEN + 2];
  size_t w_off[RL_POLICY_MAX_HIDDEN + 1], b_off[RL_POLICY_MAX_HIDDEN + 1];
  size_t n_params;
  double *params, *m, *v; /* owned */
  rl_adam adam;
} rl_policy;

/* A new policy: Glorot-scaled normal weights drawn from r (borrowed, advanced), zero biases, the last
 * layer scaled by 0.01 so the first policy is close to uniform over the allowed actions (every action
 * gets tried before any is trusted).  n_hidden in 0..RL_POLICY_MAX_HIDDEN, hidden >= 1 when
 * n_hidden > 0.  Adam starts at lr with beta1 0.9, beta2 0.999, eps 1e-8.  *out owned (rl_policy_free). */
mp_status rl_policy_new(int n_in, int n_out, int n_hidden, int hidden, double lr, rng *r, rl_policy **out,
                        mp_error *err);

/* A deep copy (parameters and optimiser state); NULL if out of memory. */
rl_policy *rl_policy_clone(const rl_policy *p);

void rl_policy_free(rl_policy *p);

/* Draws an action from probs[n] (allowed entries > 0) with r; -1 when all are zero. */
int rl_policy_sample(const double *probs, int n, rng *r);

/* The allowed action of highest probability (ties to the lowest index); -1 when none. */
int rl_policy_argmax(const double *probs, int n);

/* Workspace for batched loss and gradient passes, sized for up to cap rows; grown on demand. */
typedef struct rl_policy_ws {
  int cap;
  double *acts;  /* per layer l >= 1: cap × sizes[l] activations (the inputs are read where they are) */
  double *delta; /* cap × the widest layer after the inputs: back-propagated error */
  double *delta2;
  double *ones; /* cap ones, for bias sums through cblas */
} rl_policy_ws;

void rl_policy_ws_free(rl_policy_ws *ws);

/* Action probabilities of one state of `rows` rows: x[rows · n_in] and mask[rows · n_out] borrowed,
 * probs[rows · n_out] caller-owned, ws caller-owned scratch.  Masked actions get exactly 0.  Returns
 * the number of allowed actions (0: probs all zero), or -1 when out of memory or rows < 1. */
int rl_policy_probs(rl_policy *p, rl_policy_ws *ws, const double *x, int rows, const unsigned char *mask,
                    double *probs);

/* The REINFORCE loss of a batch of T steps (states of `rows` rows each) and its gradient:
 *   loss = −(1/T) Σ_t [ adv[t] · log π(act[t] | X_t) + beta · H(π(·|X_t)) ]
 * with X (T · rows × n_in, row-major) the states, masks (T × rows · n_out) the allowed actions,
 * act[t] an allowed action (0 .. rows · n_out − 1), adv[t] its advantage, beta the entropy bonus.  grad[n_params] (caller-owned) receives
 * d loss / d params when not NULL; *loss gets the loss.  The mean entropy goes to *entropy if not NULL.
 * ws is caller-owned (zero-initialise it once; free with rl_policy_ws_free).  MP_NOMEM or MP_INPUT
 * (T < 1, rows < 1, an action outside its mask). */
mp_status rl_policy_loss_grad(rl_policy *p, int T, int rows, const double *X, const unsigned char *masks,
                              const int *act, const double *adv, double beta, rl_policy_ws *ws, double *loss,
                              double *entropy, double *grad, mp_error *err);

/* One Adam step along −grad, after scaling grad down to global norm clip_norm when it is larger
 * (clip_norm <= 0: no clipping).  grad is modified (scaled).  Returns the norm before clipping. */
double rl_policy_adam_step(rl_policy *p, double *grad, double clip_norm);

/* Appends the file image to out (caller-owned): header, parameters and (with_optimizer) Adam's state,
 * then a checksum.  MP_NOMEM only. */
mp_status rl_policy_to_bytes(const rl_policy *p, int with_optimizer, strbuf *out, mp_error *err);

/* Parses a file image (borrowed); file labels messages.  *used (if not NULL) gets the number of
 * bytes the image took.  Bad magic, version, shapes, sizes or checksum, non-finite parameters or an
 * Adam state Adam cannot have are MP_INPUT; the header is checked against the shape and the length
 * before anything is allocated. */
mp_status rl_policy_from_bytes(const unsigned char *data, size_t len, const char *file, rl_policy **out,
                               size_t *used, mp_error *err);

/* Writes the image atomically / reads it back. */
mp_status rl_policy_save(const rl_policy *p, int with_optimizer, const char *path, mp_error *err);
mp_status rl_policy_load(const char *path, rl_policy **out, mp_error *err);

/* rl_policy_load, then the shape a caller needs: n_in features and n_out logits per row (MP_INPUT
 * naming path otherwise). */
mp_status rl_policy_load_shaped(const char *path, int n_in, int n_out, rl_policy **out, mp_error *err);

/* 1 when both have the same shape and bit-identical parameters (and optimiser state when with_optimizer). */
int rl_policy_identical(const rl_policy *a, const rl_policy *b, int with_optimizer);

#endif
