/* Tests of rl_ckpt: a run resumed from a checkpoint ends bit-identical to an uninterrupted one, the
 * file's fields sit where partitioner/README.md says, and foreign or damaged checkpoints are refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "fileio.h"
#include "rl_ckpt.h"
#include "rl_train.h"
#include "test_rl_toy.h"
#include "testutil.h"

static void a_resumed_run_should_end_bit_identical_to_an_uninterrupted_one(void) {
  setup s;
  setup_toy(&s, 6, 11, 9);
  s.cfg.episodes = 80; /* 10 iterations of 8 */
  mp_error err;
  rl_trainer *whole = NULL, *part = NULL, *resumed = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &whole, &err), MP_OK);
  run_all(whole);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &part, &err), MP_OK);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(part, &err), MP_OK);
  const char *ck = testutil_temp_path("resume.ckpt");
  CU_ASSERT_EQUAL_FATAL(rl_ckpt_save(part, 0, ck, &err), MP_OK);
  rl_trainer_free(part); /* the "kill" */
  CU_ASSERT_EQUAL_FATAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, ck, &resumed, NULL, &err), MP_OK);
  rl_train_stats a, b;
  rl_trainer_get_stats(resumed, &b);
  CU_ASSERT_EQUAL(b.episodes, 32);
  run_all(resumed);
  CU_ASSERT_TRUE(rl_policy_identical(rl_trainer_policy(whole), rl_trainer_policy(resumed), 1));
  rl_eval ea, eb;
  const int *ba = rl_trainer_best(whole, 0, &ea), *bb = rl_trainer_best(resumed, 0, &eb);
  CU_ASSERT_EQUAL(memcmp(ba, bb, 6 * sizeof(int)), 0);
  CU_ASSERT_EQUAL(ea.reward, eb.reward);
  rl_trainer_get_stats(whole, &a);
  rl_trainer_get_stats(resumed, &b);
  CU_ASSERT_EQUAL(a.episodes, b.episodes);
  CU_ASSERT_EQUAL(a.steps, b.steps);
  CU_ASSERT_EQUAL(a.evaluations, b.evaluations); /* counters come back from the checkpoint too */
  /* The saved policies are byte-identical files. */
  const char *pa = testutil_temp_path("whole.pol"), *pb = testutil_temp_path("resumed.pol");
  CU_ASSERT_EQUAL(rl_policy_save(rl_trainer_policy(whole), 0, pa, &err), MP_OK);
  CU_ASSERT_EQUAL(rl_policy_save(rl_trainer_policy(resumed), 0, pb, &err), MP_OK);
  char *da = NULL, *db = NULL;
  size_t la = 0, lb = 0;
  fileio_read_all(pa, &da, &la, &err);
  fileio_read_all(pb, &db, &lb, &err);
  CU_ASSERT_TRUE(da && db && la == lb && memcmp(da, db, la) == 0);
  free(da);
  free(db);
  rl_trainer_free(whole);
  rl_trainer_free(resumed);
  rl_env_free(s.env);
}

/* Every field at its place in the order partitioner/README.md lists them, read back with the codec. */
static void a_checkpoint_should_hold_the_documented_fields_in_order(void) {
  setup s;
  setup_toy(&s, 4, 6, 77);
  s.cfg.episodes = 16;
  mp_error err;
  rl_trainer *t = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(t, &err), MP_OK);
  const char *ck = testutil_temp_path("layout.ckpt");
  CU_ASSERT_EQUAL_FATAL(rl_ckpt_save(t, 123.25, ck, &err), MP_OK);
  char *data = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(ck, &data, &len, &err), MP_OK);
  bytes_reader r = bytes_reader_of(data, len);
  char magic[8];
  bytes_get(&r, magic, sizeof magic);
  CU_ASSERT_EQUAL(memcmp(magic, "MPRLCKP1", 8), 0);
  CU_ASSERT_EQUAL(bytes_get_u32(&r), 3); /* version */
  const rl_train_config *c = &s.cfg;
  CU_ASSERT_EQUAL(bytes_get_u64(&r), 77);
  const int ints[6] = {c->batch, c->max_steps, c->hidden, c->n_hidden, c->samples, c->feasible_first};
  for (int k = 0; k < 6; k++) CU_ASSERT_EQUAL(bytes_get_u32(&r), (uint32_t)ints[k]);
  const double reals[7] = {c->lr, c->entropy, c->gamma, c->clip_norm, c->restart_best, c->balance_weight,
                           c->target_reward};
  for (int k = 0; k < 7; k++) CU_ASSERT_EQUAL(bytes_get_f64(&r), reals[k]);
  CU_ASSERT_EQUAL(bytes_get_u32(&r), 1); /* graphs */
  CU_ASSERT_EQUAL(bytes_get_u32(&r), 4); /* cores */
  CU_ASSERT_EQUAL(bytes_get_u64(&r), 0x1234); /* the instance's key */
  CU_ASSERT_EQUAL(bytes_get_u32(&r), 6);      /* its layers */
  rl_eval best;
  const int *plan = rl_trainer_best(t, 0, &best);
  for (int k = 0; k < 4; k++) CU_ASSERT_EQUAL(bytes_get_u32(&r), (uint32_t)plan[k]);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), best.reward);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), best.balance);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), best.figure);
  CU_ASSERT_EQUAL(bytes_get_u32(&r), (uint32_t)best.feasible);
  for (int k = 0; k < 4; k++) bytes_get_u64(&r); /* the rng's state */
  rl_train_stats ts;
  rl_trainer_get_stats(t, &ts);
  CU_ASSERT_EQUAL(ts.episodes, 8);
  const long counters[4] = {ts.episodes, ts.iterations, ts.evaluations, ts.steps};
  for (int k = 0; k < 4; k++) CU_ASSERT_EQUAL(bytes_get_u64(&r), (uint64_t)counters[k]);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), ts.mean_final_reward);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), ts.entropy);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), ts.grad_norm);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), 123.25); /* the simulator's clock */
  strbuf image = {0};
  CU_ASSERT_EQUAL_FATAL(rl_policy_to_bytes(rl_trainer_policy(t), 1, &image, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(bytes_get_u64(&r), image.len); /* the policy with Adam's state */
  CU_ASSERT_FATAL(bytes_left(&r) == image.len + 8);
  CU_ASSERT_EQUAL(memcmp(r.data + r.pos, image.s, image.len), 0);
  r.pos += image.len;
  CU_ASSERT_EQUAL(bytes_get_u64(&r), fileio_hash(FILEIO_HASH_INIT, data, len - 8));
  CU_ASSERT_FALSE(r.short_read);
  strbuf_clear(&image);
  free(data);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

static void resume_should_reject_foreign_or_damaged_checkpoints(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.cfg.episodes = 16;
  mp_error err;
  rl_trainer *t = NULL, *r = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(t, &err), MP_OK);
  const char *ck = testutil_temp_path("bad.ckpt");
  CU_ASSERT_EQUAL_FATAL(rl_ckpt_save(t, 0, ck, &err), MP_OK);
  rl_train_config other = s.cfg;
  other.seed = 3;
  CU_ASSERT_EQUAL(rl_ckpt_resume(&other, &s.inst, 1, ck, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "another configuration"));
  other = s.cfg;
  other.episodes = 40; /* extending a run is allowed */
  CU_ASSERT_EQUAL(rl_ckpt_resume(&other, &s.inst, 1, ck, &r, NULL, &err), MP_OK);
  rl_trainer_free(r);
  r = NULL;
  rl_instance moved = s.inst;
  moved.key = 99;
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &moved, 1, ck, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "differs from the checkpoint's run"));
  rl_instance two[2] = {s.inst, s.inst};
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, two, 2, ck, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "graphs on"));
  char *data = NULL;
  size_t len = 0;
  fileio_read_all(ck, &data, &len, &err);
  const char *dmg = testutil_temp_path("damaged.ckpt");
  data[len / 2] ^= 0x10;
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, dmg, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "checksum"));
  data[len / 2] ^= 0x10;
  data[0] = 'Z';
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, dmg, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "not a meshpipe RL checkpoint"));
  data[0] = 'M';
  data[8] = 7; /* version 7, resealed */
  uint64_t h = fileio_hash(FILEIO_HASH_INIT, data, len - 8);
  for (int i = 0; i < 8; i++) data[len - 8 + i] = (char)(h >> (8 * i));
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, dmg, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "version 7"));
  data[8] = 2; /* version 2 had no simulator's clock */
  h = fileio_hash(FILEIO_HASH_INIT, data, len - 8);
  for (int i = 0; i < 8; i++) data[len - 8 + i] = (char)(h >> (8 * i));
  fileio_write_atomic(dmg, data, len, &err);
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, dmg, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "version 2, this meshpipe reads 3"));
  data[8] = 3; /* the current version; a truncated body, resealed: the policy image no longer fits */
  size_t cut = len - 100;
  h = fileio_hash(FILEIO_HASH_INIT, data, cut - 8);
  for (int i = 0; i < 8; i++) data[cut - 8 + i] = (char)(h >> (8 * i));
  fileio_write_atomic(dmg, data, cut, &err);
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, dmg, &r, NULL, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "truncated"));
  CU_ASSERT_EQUAL(rl_ckpt_resume(&s.cfg, &s.inst, 1, testutil_temp_path("none.ckpt"), &r, NULL, &err), MP_INPUT);
  CU_ASSERT_EQUAL(rl_ckpt_save(t, 0, "/nonexistent-dir/x.ckpt", &err), MP_OUTPUT);
  CU_ASSERT_PTR_NULL(r);
  free(data);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

/* A checkpoint with a valid checksum may still carry a state no run leaves: its counters and figures
 * are checked before they are trusted (episodes = 2^63 + 5 once made train --resume spin forever). */
static void resume_should_reject_a_resealed_state_no_run_can_reach(void) {
  setup s;
  setup_toy(&s, 4, 6, 2);
  s.cfg.episodes = 16;
  mp_error err;
  rl_trainer *t = NULL, *r = NULL;
  CU_ASSERT_EQUAL_FATAL(rl_trainer_new(&s.cfg, &s.inst, 1, NULL, &t, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(rl_trainer_iterate(t, &err), MP_OK); /* 8 episodes in 1 iteration */
  const char *ck = testutil_temp_path("state.ckpt");
  CU_ASSERT_EQUAL_FATAL(rl_ckpt_save(t, 0, ck, &err), MP_OK);
  char *good = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(ck, &good, &len, &err), MP_OK);
  /* where the fields after the instances start (partitioner/README.md) */
  size_t at_rng = 8 + 4 + 8 + 4 * 6 + 8 * 7 + 4 + 4 + (8 + 4 + 4 * 4 + 8 * 3 + 4), at_count = at_rng + 32;
  size_t at_mean = at_count + 32, at_reward = at_rng - (8 * 3 + 4), at_clock = at_mean + 24;
  const struct {
    size_t at;
    uint64_t value;
    const char *want;
  } edits[] = {
      {at_count, UINT64_C(9223372036854775813), "progress: a counter past 2^53"},
      {at_count, 9, "9 episodes in 1 iterations of at most 8"},
      {at_count + 8, 0, "8 episodes in 0 iterations"},
      {at_count + 8, 9, "8 episodes in 9 iterations"},
      {at_count + 24, 8 * (uint64_t)s.cfg.max_steps + 1, "not a run's progress"},
      {at_mean, UINT64_C(0x7ff8000000000000), "the last mean reward, entropy or gradient norm is not finite"},
      {at_reward, UINT64_C(0x7ff0000000000000), "the best plan of graph 0 has a figure that is not finite"},
      {at_clock, UINT64_C(0x7ff8000000000000), "sim clock: the simulator's clock nan s is not one a run reaches"},
      {at_clock, UINT64_C(0xbff0000000000000), "sim clock: the simulator's clock -1 s"},
      {at_clock, UINT64_C(0x7e37e43c8800759c), "sim clock: the simulator's clock 1e+300 s"},
  };
  char *data = malloc(len);
  for (size_t k = 0; k < sizeof edits / sizeof *edits + 1; k++) {
    memcpy(data, good, len);
    if (k < sizeof edits / sizeof *edits)
      for (int i = 0; i < 8; i++) data[edits[k].at + i] = (char)(edits[k].value >> (8 * i));
    else
      memset(data + at_rng, 0, 32); /* an all-zero random generator */
    uint64_t h = fileio_hash(FILEIO_HASH_INIT, data, len - 8);
    for (int i = 0; i < 8; i++) data[len - 8 + i] = (char)(h >> (8 * i));
    const char *want = k < sizeof edits / sizeof *edits ? edits[k].want : "rng: the random generator's state is all zero";
    CU_ASSERT_EQUAL(rl_ckpt_resume_mem(&s.cfg, &s.inst, 1, "x.ckpt", (const unsigned char *)data, len, &r, NULL, &err),
                    MP_INPUT);
    CU_ASSERT_PTR_NULL(r);
    if (!strstr(err.msg, want)) fprintf(stderr, "\n  edit %zu: got %s\n", k, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want));
    CU_ASSERT_EQUAL(strncmp(err.msg, "x.ckpt: ", 8), 0);
  }
  /* the unedited bytes resume, and hand back the clock */
  double clock = -1;
  CU_ASSERT_EQUAL(rl_ckpt_resume_mem(&s.cfg, &s.inst, 1, "x.ckpt", (const unsigned char *)good, len, &r, &clock, &err),
                  MP_OK);
  CU_ASSERT_EQUAL(clock, 0.0);
  rl_trainer_free(r);
  free(data);
  free(good);
  rl_trainer_free(t);
  rl_env_free(s.env);
}

static CU_TestInfo tests[] = {
    {"a_resumed_run_should_end_bit_identical_to_an_uninterrupted_one",
     a_resumed_run_should_end_bit_identical_to_an_uninterrupted_one},
    {"a_checkpoint_should_hold_the_documented_fields_in_order",
     a_checkpoint_should_hold_the_documented_fields_in_order},
    {"resume_should_reject_foreign_or_damaged_checkpoints", resume_should_reject_foreign_or_damaged_checkpoints},
    {"resume_should_reject_a_resealed_state_no_run_can_reach", resume_should_reject_a_resealed_state_no_run_can_reach},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_ckpt", tests, argc, argv); }
