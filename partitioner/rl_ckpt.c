/* rl_ckpt: the trainer's checkpoint file (see rl_ckpt.h; the fields are listed in
 * partitioner/README.md), written and read with the little-endian codec of bytes.h. */
#include "rl_ckpt.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "fileio.h"
#include "rl_train_int.h"
#include "strbuf.h"

#define CKPT_MAGIC "MPRLCKP1"
#define CKPT_VERSION 3

/* The configuration fields a resumed run must share with the checkpoint, in file order. */
static void put_config(strbuf *w, const rl_train_config *c) {
  bytes_put_u64(w, c->seed);
  bytes_put_u32(w, (uint32_t)c->batch);
  bytes_put_u32(w, (uint32_t)c->max_steps);
  bytes_put_u32(w, (uint32_t)c->hidden);
  bytes_put_u32(w, (uint32_t)c->n_hidden);
  bytes_put_u32(w, (uint32_t)c->samples);
  bytes_put_u32(w, (uint32_t)c->feasible_first);
  bytes_put_f64(w, c->lr);
  bytes_put_f64(w, c->entropy);
  bytes_put_f64(w, c->gamma);
  bytes_put_f64(w, c->clip_norm);
  bytes_put_f64(w, c->restart_best);
  bytes_put_f64(w, c->balance_weight);
  bytes_put_f64(w, c->target_reward);
}

mp_status rl_ckpt_save(const rl_trainer *t, double sim_clock, const char *path, mp_error *err) {
  strbuf w = {0}, img = {0};
  strbuf_append(&w, CKPT_MAGIC, 8);
  bytes_put_u32(&w, CKPT_VERSION);
  put_config(&w, &t->cfg);
  bytes_put_u32(&w, (uint32_t)t->n_inst);
  bytes_put_u32(&w, (uint32_t)t->n_cores);
  for (int i = 0; i < t->n_inst; i++) {
    const rl_inst_state *s = &t->inst[i];
    bytes_put_u64(&w, s->in.key);
    bytes_put_u32(&w, (uint32_t)s->in.env->n_layers);
    for (int c = 0; c < t->n_cores; c++) bytes_put_u32(&w, (uint32_t)s->best[c]);
    bytes_put_f64(&w, s->best_eval.reward);
    bytes_put_f64(&w, s->best_eval.balance);
    bytes_put_f64(&w, s->best_eval.figure);
    bytes_put_u32(&w, (uint32_t)s->best_eval.feasible);
  }
  for (int k = 0; k < 4; k++) bytes_put_u64(&w, t->rng.s[k]);
  bytes_put_u64(&w, (uint64_t)t->episodes_done);
  bytes_put_u64(&w, (uint64_t)t->iterations);
  bytes_put_u64(&w, (uint64_t)t->evaluations);
  bytes_put_u64(&w, (uint64_t)t->steps);
  bytes_put_f64(&w, t->mean_final);
  bytes_put_f64(&w, t->entropy);
  bytes_put_f64(&w, t->grad_norm);
  bytes_put_f64(&w, sim_clock);
  mp_status st = rl_policy_to_bytes(t->policy, 1, &img, err);
  if (st == MP_OK) {
    bytes_put_u64(&w, img.len);
    strbuf_append(&w, img.s, img.len);
    if (!w.oom) bytes_put_u64(&w, fileio_hash(FILEIO_HASH_INIT, w.s, w.len));
    st = w.oom ? err_nomem(err) : fileio_write_atomic(path, w.s, w.len, err);
  }
  strbuf_clear(&img);
  strbuf_clear(&w);
  return st;
}

/* The state after the instances, as read: counters and figures are checked before they are trusted
 * (a checkpoint with a valid checksum may still be crafted). */
static mp_status check_progress(const rl_trainer *t, const uint64_t count[4], const char *path, mp_error *err) {
  const uint64_t cap = (uint64_t)1 << 53; /* no run counts that far */
  uint64_t episodes = count[0], iterations = count[1], evaluations = count[2], steps = count[3];
  if (episodes > cap || iterations > cap || evaluations > cap || steps > cap)
    return err_at(err, MP_INPUT, path, "progress", "a counter past 2^53 (episodes %llu, iterations %llu)",
                  (unsigned long long)episodes, (unsigned long long)iterations);
  /* each iteration plays 1 .. batch episodes, each of at most max_steps steps */
  if (episodes < iterations || episodes > iterations * (uint64_t)t->cfg.batch ||
      steps > episodes * (uint64_t)t->cfg.max_steps)
    return err_at(err, MP_INPUT, path, "progress",
                  "%llu episodes in %llu iterations of at most %d with %llu steps: not a run's progress",
                  (unsigned long long)episodes, (unsigned long long)iterations, t->cfg.batch,
                  (unsigned long long)steps);
  if (!(t->rng.s[0] | t->rng.s[1] | t->rng.s[2] | t->rng.s[3]))
    return err_at(err, MP_INPUT, path, "rng", "the random generator's state is all zero (it would draw only zeros)");
  if (!isfinite(t->mean_final) || !isfinite(t->entropy) || !isfinite(t->grad_norm))
    return err_at(err, MP_INPUT, path, "progress", "the last mean reward, entropy or gradient norm is not finite");
  return MP_OK;
}

mp_status rl_ckpt_resume(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const char *path,
                         rl_trainer **out, double *sim_clock, mp_error *err) {
  *out = NULL;
  char *data = NULL;
  size_t len = 0;
  mp_status st = fileio_read_all(path, &data, &len, err);
  if (st == MP_OK) st = rl_ckpt_resume_mem(cfg, inst, n_inst, path, (const unsigned char *)data, len, out, sim_clock, err);
  free(data);
  return st;
}

mp_status rl_ckpt_resume_mem(const rl_train_config *cfg, const rl_instance *inst, int n_inst, const char *path,
                             const unsigned char *data, size_t len, rl_trainer **out, double *sim_clock,
                             mp_error *err) {
  *out = NULL;
  mp_status st = MP_OK;
  rl_trainer *t = NULL;
  rl_policy *pol = NULL;
  strbuf want = {0};
  if (len < 8 + 4 + 8 || memcmp(data, CKPT_MAGIC, 8) != 0) {
    st = err_at(err, MP_INPUT, path, NULL, "not a meshpipe RL checkpoint (no %s header)", CKPT_MAGIC);
    goto cleanup;
  }
  bytes_reader sum = bytes_reader_of(data + len - 8, 8);
  if (bytes_get_u64(&sum) != fileio_hash(FILEIO_HASH_INIT, data, len - 8)) {
    st = err_at(err, MP_INPUT, path, "checksum", "checksum mismatch: the checkpoint is damaged");
    goto cleanup;
  }
  bytes_reader r = bytes_reader_of(data, len - 8); /* the body, without the checksum */
  r.pos = 8;
  uint32_t version = bytes_get_u32(&r);
  if (version != CKPT_VERSION) {
    st = err_at(err, MP_INPUT, path, "version", "checkpoint format version %u, this meshpipe reads %d", version,
                CKPT_VERSION);
    goto cleanup;
  }
  put_config(&want, cfg);
  if (want.oom) {
    st = err_nomem(err);
    goto cleanup;
  }
  if (bytes_left(&r) < want.len || memcmp(r.data + r.pos, want.s, want.len) != 0) {
    st = err_at(err, MP_INPUT, path, "config",
                "the checkpoint was written with another configuration (seed, batch, steps, policy shape or rates); "
                "resume with the options of the interrupted run");
    goto cleanup;
  }
  r.pos += want.len;
  st = rl_trainer_new(cfg, inst, n_inst, NULL, &t, err);
  if (st != MP_OK) goto cleanup;
  uint32_t ni = bytes_get_u32(&r), nc = bytes_get_u32(&r);
  if (r.short_read || ni != (uint32_t)n_inst || nc != (uint32_t)t->n_cores) {
    st = err_at(err, MP_INPUT, path, "instances", "the checkpoint is of %u graphs on %u cores, not %d on %d", ni, nc,
                n_inst, t->n_cores);
    goto cleanup;
  }
  for (int i = 0; i < n_inst; i++) {
    rl_inst_state *s = &t->inst[i];
    uint64_t key = bytes_get_u64(&r);
    uint32_t layers = bytes_get_u32(&r);
    if (r.short_read || key != s->in.key || layers != (uint32_t)s->in.env->n_layers) {
      st = err_at(err, MP_INPUT, path, "instances", "graph %d, its chip or what its reward measures (simulator or model, "
                  "objective, --mode train and its options) differs from the checkpoint's run", i);
      goto cleanup;
    }
    for (int c = 0; c < t->n_cores; c++) s->best[c] = (int)bytes_get_u32(&r);
    s->best_eval.reward = bytes_get_f64(&r);
    s->best_eval.balance = bytes_get_f64(&r);
    s->best_eval.figure = bytes_get_f64(&r);
    uint32_t feasible = bytes_get_u32(&r);
    s->best_eval.feasible = (int)feasible;
    if (!r.short_read && !rl_env_valid_state(s->in.env, s->best)) {
      st = err_at(err, MP_INPUT, path, "instances", "the best plan of graph %d is not a valid arranged_core list", i);
      goto cleanup;
    }
    if (!r.short_read && (!isfinite(s->best_eval.reward) || !isfinite(s->best_eval.balance) ||
                          !isfinite(s->best_eval.figure) || feasible > 1)) {
      st = err_at(err, MP_INPUT, path, "instances", "the best plan of graph %d has a figure that is not finite", i);
      goto cleanup;
    }
  }
  for (int k = 0; k < 4; k++) t->rng.s[k] = bytes_get_u64(&r);
  uint64_t count[4];
  for (int k = 0; k < 4; k++) count[k] = bytes_get_u64(&r);
  t->mean_final = bytes_get_f64(&r);
  t->entropy = bytes_get_f64(&r);
  t->grad_norm = bytes_get_f64(&r);
  double clock = bytes_get_f64(&r);
  uint64_t img_len = bytes_get_u64(&r);
  if (r.short_read || img_len > bytes_left(&r)) {
    st = err_at(err, MP_INPUT, path, NULL, "truncated checkpoint");
    goto cleanup;
  }
  if ((st = check_progress(t, count, path, err)) != MP_OK) goto cleanup;
  if (!(clock >= 0.0 && clock <= RL_CKPT_CLOCK_MAX)) {
    st = err_at(err, MP_INPUT, path, "sim clock", "the simulator's clock %g s is not one a run reaches (0 to %g s)",
                clock, RL_CKPT_CLOCK_MAX);
    goto cleanup;
  }
  t->episodes_done = (long)count[0];
  t->iterations = (long)count[1];
  t->evaluations = (long)count[2];
  t->steps = (long)count[3];
  size_t used = 0;
  st = rl_policy_from_bytes(r.data + r.pos, (size_t)img_len, path, &pol, &used, err);
  if (st != MP_OK) goto cleanup;
  if (used != img_len || img_len != bytes_left(&r) || pol->n_params != t->policy->n_params ||
      pol->n_in != RL_PAIR_FEATURES || pol->n_out != RL_PAIR_ACTIONS) {
    st = err_at(err, MP_INPUT, path, "policy", "the policy in the checkpoint does not fit this run");
    goto cleanup;
  }
  rl_policy_free(t->policy);
  t->policy = pol;
  pol = NULL;
  *out = t;
  t = NULL;
  if (sim_clock) *sim_clock = clock;
cleanup:
  strbuf_clear(&want);
  rl_policy_free(pol);
  rl_trainer_free(t);
  return st;
}
