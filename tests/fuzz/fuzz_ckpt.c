/* Fuzz target: the RL trainer's checkpoint, resumed as 'meshpipe train -g traces/tiny_resnet.json
 * -c platforms/mesh4x4.json --reward model --episodes 16' resumes it (scripts/fuzz writes a seed
 * checkpoint with that command); a resumed trainer plays one more iteration. */
#include "cost.h"
#include "fuzz.h"
#include "method.h"
#include "rl_ckpt.h"
#include "rl_env.h"
#include "rl_method.h"
#include "rl_reward.h"

static graph *g;
static chip *c;
static cost_model *model;
static plan *init;
static rl_env *env;
static rl_reward reward;
static rl_instance inst;
static rl_train_config cfg;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  g = fuzz_graph("traces/tiny_resnet.json");
  c = fuzz_chip("platforms/mesh4x4.json");
  method_options mo;
  method_options_default(&mo);
  method_report rep;
  rl_reward_weights rw;
  rl_reward_weights_default(&rw, 0);
  mp_error err;
  if (method_run("even", g, c, &mo, &init, &rep, &err) != MP_OK || rl_env_from_graph(g, c->n_cores, &env, &err) != MP_OK ||
      cost_model_new(g, c, &model, &err) != MP_OK ||
      rl_reward_init_model(&reward, model, c->n_cores, g->n_ops, init->arranged, &rw, &err) != MP_OK) {
    fprintf(stderr, "fuzz: %s\n", err.msg);
    abort();
  }
  inst = (rl_instance){env, init->arranged, rl_reward_eval, &reward, g->hash ^ (c->hash * UINT64_C(0x9e3779b97f4a7c15)) ^ 1};
  rl_method_config(&cfg, c->n_cores, 1);
  cfg.episodes = 16;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g) LLVMFuzzerInitialize(NULL, NULL);
  rl_trainer *t = NULL;
  mp_error err;
  rl_train_config more = cfg;
  more.episodes = 24; /* one more batch than the seed's run */
  mp_status st = rl_ckpt_resume_mem(&more, &inst, 1, "fuzz.ckpt", data, size, &t, NULL, &err);
  fuzz_check_refusal(st, &err, "fuzz.ckpt");
  if (t) {
    rl_train_stats s;
    rl_trainer_get_stats(t, &s);
    if (s.episodes < more.episodes) {
      st = rl_trainer_iterate(t, &err);
      if (st != MP_OK && st != MP_RUN) abort();
    }
  }
  rl_trainer_free(t);
  return 0;
}
