/* rl_method: the `rl` entry of the partitioner table and its defaults.  See rl_method.h.
 *
 * The rl method is a policy-guided search: episodes start from the initial plan (the `even`
 * partitioner's unless o->init names another) or from the best plan so far, the policy proposes
 * moves, every proposal is simulated (repeats come from the simulator's cache), and the method
 * returns the best plan seen — so it never returns anything worse than its initial plan, nor than
 * optimal's plan, which is offered as a candidate before the episodes (the best the model knows).  A short
 * steepest-ascent polish ends the run.  SimGrid allows one engine per process: the method uses the
 * sim lent in o->sim, else it searches in a forked child with an engine of its own (proc.h; with
 * o->sim_options) and reads the answer back, leaving the caller free to start its own simulator.  With o->train every reward
 * is a training one (rl_reward.h): a mini-batch's time over its micro-batches, on the training model in
 * the warm-up and simulated (sim_train.h) after it. */
#include "rl_method.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "cost.h"
#include "method_int.h"
#include "proc.h"
#include "rl_search.h"
#include "sim.h"
#include "train.h"

/* Beyond 64 cores every simulation and every move costs more (more stages, more rows), so the
 * defaults shrink in proportion to keep a run's time near the 8x8 one. */
static long scaled(long base, int n_cores, long floor) {
  if (n_cores <= 64) return base;
  long v = base * 64 / n_cores;
  return v > floor ? v : floor;
}

/* The phases of a run as the caller's progress sees them (one pointer each: the caller may tell a new
 * phase by its pointer). */
static const char phase_warmup[] = "episodes on the model", phase_regroup[] = "rounds of regrouping on the model",
                  phase_kicks[] = "kicks of the model search",
                  phase_regroup2[] = "rounds of regrouping after the kicks",
                  phase_pairs[] = "rounds of the model's pair polish", phase_sim[] = "episodes on the simulator",
                  phase_polish[] = "rounds of the final polish on the simulator";

/* Tells the caller (o->progress) that done of total units of a phase are done, and trainer t's best. */
static void report(const method_options *o, const char *phase, const rl_trainer *t, long done, long total) {
  if (!o->progress) return;
  rl_eval best;
  rl_trainer_best(t, 0, &best);
  o->progress(o->progress_ctx, phase, done, total, best.figure);
}

/* The same with trainer t's episodes as done. */
static void report_episodes(const method_options *o, const char *phase, const rl_trainer *t, long total) {
  rl_train_stats ts;
  rl_trainer_get_stats(t, &ts);
  report(o, phase, t, ts.episodes, total);
}

long rl_method_default_episodes(int n_cores) {
  return n_cores <= 16 ? RL_METHOD_EPISODES_SMALL : scaled(RL_METHOD_EPISODES, n_cores, 8);
}

long rl_method_warmup_episodes(int n_cores) { return scaled(RL_METHOD_WARMUP_EPISODES, n_cores, 50); }

long rl_method_model_kicks(int n_cores) { return scaled(RL_METHOD_MODEL_KICKS, n_cores, 50); }

void rl_method_config(rl_train_config *cfg, int n_cores, uint64_t seed) {
  rl_train_config_default(cfg, n_cores);
  cfg->seed = seed;
  cfg->episodes = rl_method_default_episodes(n_cores);
}

/* A search from instance i's best plan in rounds (rl_search.h's searches). */
typedef mp_status (*search_rounds_fn)(rl_trainer *t, int i, int max_rounds, mp_error *err);

/* fn up to max_rounds rounds, one at a time for the progress: the rounds of one call, which also stops
 * after the first round that finds nothing better. */
static mp_status rounds(rl_trainer *w, search_rounds_fn fn, int max_rounds, const method_options *o,
                        const char *phase, mp_error *err) {
  mp_status st = MP_OK;
  for (int r = 0; r < max_rounds && st == MP_OK; r++) {
    report(o, phase, w, r, max_rounds);
    rl_eval before, after;
    rl_trainer_best(w, 0, &before);
    st = fn(w, 0, 1, err);
    rl_trainer_best(w, 0, &after);
    if (!rl_trainer_better(w, &after, &before)) break;
  }
  if (st == MP_OK) report(o, phase, w, max_rounds, max_rounds);
  return st;
}

/* The search of the model around the warm-up's best plan (see partitioner/README.md): the warm-up
 * stops in a local optimum of the bottleneck whose better plans are groups split, merged or re-split,
 * many moves away through far worse plans; a model evaluation costs microseconds (ResNet-50 on 16x16,
 * 41 stages: 12 us), a simulation milliseconds. */
static mp_status model_search(rl_trainer *w, int n_cores, const method_options *o, mp_error *err) {
  long kicks = rl_method_model_kicks(n_cores);
  mp_status st = rounds(w, rl_search_regroup, RL_METHOD_MODEL_REGROUP_ROUNDS, o, phase_regroup, err);
  /* the kicks a few at a time, for the progress: each kick starts from the best plan so far and draws
   * from the trainer's rng, so kicks in chunks are the kicks of one call */
  for (long done = 0; st == MP_OK && done < kicks;) {
    report(o, phase_kicks, w, done, kicks);
    long now = kicks - done < RL_METHOD_KICKS_REPORTED ? kicks - done : RL_METHOD_KICKS_REPORTED;
    st = rl_search_kick(w, 0, (int)now, RL_METHOD_MODEL_KICK_MOVES, err);
    done += now;
  }
  if (st == MP_OK) report(o, phase_kicks, w, kicks, kicks);
  if (st == MP_OK) st = rounds(w, rl_search_regroup, RL_METHOD_MODEL_REGROUP_ROUNDS, o, phase_regroup2, err);
  if (st == MP_OK) st = rounds(w, rl_search_polish_pairs, RL_METHOD_MODEL_PAIR_ROUNDS, o, phase_pairs, err);
  return st;
}

/* The search itself, on simulator s: fills best[n_cores] with the best plan seen. */
static mp_status search(sim *s, const graph *g, const chip *c, const method_options *o, int *best_out,
                        method_report *rep, mp_error *err) {
  const char *init_name = o->init ? o->init : "even";
  plan *init = NULL;
  rl_env *env = NULL;
  rl_policy *pol = NULL;
  rl_trainer *t = NULL, *warm = NULL;
  cost_model *model = NULL;
  train *trained = NULL;
  method_report init_rep;
  rl_eval warm_rl = {0}, warm_best = {0};
  rl_reward creward = {0}, reward = {0}; /* the model's (warm-up) and the simulator's */
  mp_status st = method_run(init_name, g, c, o, &init, &init_rep, err);
  if (st != MP_OK) return st;
  st = rl_env_from_graph(g, c->n_cores, &env, err);
  if (st != MP_OK) goto cleanup;
  if (o->policy) {
    st = rl_policy_load_shaped(o->policy, RL_PAIR_FEATURES, RL_PAIR_ACTIONS, &pol, err);
    if (st != MP_OK) goto cleanup;
  }
  rl_train_config cfg;
  rl_method_config(&cfg, c->n_cores, o->seed);
  if (o->episodes >= 0) cfg.episodes = o->episodes;
  uint64_t key = g->hash ^ (c->hash * UINT64_C(0x9e3779b97f4a7c15));
  rl_reward_weights rw; /* inference: the reward measures o->objective */
  rl_reward_weights_default(&rw, 1);
  rw.objective = o->objective;
  rl_instance win;
  rl_train_config wcfg = cfg;
  /* training: one trained graph for the model's and the simulator's rewards, M micro-batches a mini-batch */
  if (o->train && (st = train_new(g, o->train, &trained, err)) != MP_OK) goto cleanup;
  if (cfg.episodes > 0) { /* warm-up on the analytical model: same moves, a thousand times cheaper */
    wcfg.episodes = rl_method_warmup_episodes(c->n_cores);
    wcfg.max_steps = 2 * cfg.max_steps; /* cheap moves: longer walks reach coordinated changes */
    if (o->train) {
      st = rl_reward_init_train_model(&creward, trained, c, g->n_ops, init->arranged, NULL, err);
    } else {
      st = cost_model_new(g, c, &model, err);
      if (st == MP_OK) st = rl_reward_init_model(&creward, model, c->n_cores, g->n_ops, init->arranged, &rw, err);
    }
    if (st != MP_OK) goto cleanup;
    win = (rl_instance){env, init->arranged, rl_reward_eval, &creward, key ^ 1};
    st = rl_trainer_new(&wcfg, &win, 1, pol, &warm, err);
    if (st == MP_OK && o->ranks > 1 && o->gather)
      rl_trainer_distribute(warm, o->rank, o->ranks, o->gather, o->gather_ctx);
    while (st == MP_OK && !rl_trainer_done(warm)) {
      st = rl_trainer_iterate(warm, err);
      report_episodes(o, phase_warmup, warm, wcfg.episodes);
    }
    if (st == MP_OK) rl_trainer_best(warm, 0, &warm_rl);
    if (st == MP_OK) st = model_search(warm, c->n_cores, o, err);
    if (st == MP_OK) rl_trainer_best(warm, 0, &warm_best);
    if (st != MP_OK) goto cleanup;
  }
  st = o->train ? rl_reward_init_train_sim(&reward, s, trained, init->arranged, NULL, err)
               : rl_reward_init_sim(&reward, s, g, init->arranged, &rw, err);
  if (st != MP_OK) goto cleanup;
  rl_instance in = {env, init->arranged, rl_reward_eval, &reward, key};
  sim_stats before, after;
  sim_get_stats(s, &before);
  st = rl_trainer_new(&cfg, &in, 1, warm ? rl_trainer_policy(warm) : pol, &t, err);
  if (st == MP_OK) report(o, phase_sim, t, 0, cfg.episodes); /* before the offers' simulations */
  if (st == MP_OK && o->ranks > 1 && o->gather) rl_trainer_distribute(t, o->rank, o->ranks, o->gather, o->gather_ctx);
  if (st == MP_OK && warm) st = rl_trainer_offer(t, 0, rl_trainer_best(warm, 0, NULL), err);
  /* the best plan the model knows: optimal's, simulated like every other candidate */
  plan *opt = NULL;
  method_report opt_rep;
  if (st == MP_OK && strcmp(init_name, "optimal") != 0) st = method_run("optimal", g, c, o, &opt, &opt_rep, err);
  if (st == MP_OK && opt) st = rl_trainer_offer(t, 0, opt->arranged, err);
  plan_free(opt);
  if (st != MP_OK) goto cleanup;
  while (!rl_trainer_done(t) && st == MP_OK) {
    st = rl_trainer_iterate(t, err);
    report_episodes(o, phase_sim, t, cfg.episodes);
  }
  if (st == MP_OK && cfg.episodes == 0) st = rl_trainer_greedy(t, 0, 2 * c->n_cores, err);
  if (st == MP_OK) st = rounds(t, rl_search_polish, RL_METHOD_POLISH_ROUNDS, o, phase_polish, err);
  if (st != MP_OK) goto cleanup;
  rl_eval best, start;
  memcpy(best_out, rl_trainer_best(t, 0, &best), (size_t)c->n_cores * sizeof *best_out);
  rl_trainer_init_eval(t, 0, &start);
  rl_train_stats ts;
  rl_trainer_get_stats(t, &ts);
  sim_get_stats(s, &after);
  long evals = after.evaluations - before.evaluations, hits = after.cache_hits - before.cache_hits;
  method_note(rep,
              "REINFORCE%s%s from %s's plan: %ld episodes on the analytical model, then %ld on the simulator: %ld "
              "simulations%s (%.0f%% from the simulator's cache);",
              pol ? " fine-tuning the given policy" : "", o->train ? " for training (mini-batch time over M)" : "",
              init_name, warm ? rl_method_warmup_episodes(c->n_cores) : 0L, ts.episodes, evals,
              o->ranks > 1 ? " in this process (its share)" : "",
              evals > 0 ? 100.0 * (double)hits / (double)evals : 0.0);
  if (warm)
    method_note(rep,
                "the analytical model's best: %.6g samples/s after its episodes, %.6g after regrouping, kicks and "
                "the pair polish (optimal's plan was offered too);",
                warm_rl.figure * graph_batch(g), warm_best.figure * graph_batch(g));
  method_note(rep, "best simulated %.6g samples/s against %.6g for the initial plan (%+.1f%%).",
              best.figure * graph_batch(g), start.figure * graph_batch(g), 100.0 * (best.figure / start.figure - 1.0));
  if (o->objective != OBJECTIVE_TIME) /* the reward is -X / X_ref: the best plan's X relative to the start's */
    method_note(rep, "Rewarded by the %s: the best plan's simulated %s is %.4f of the initial plan's.",
                objective_name(o->objective), objective_name(o->objective), -best.reward);
cleanup:
  rl_trainer_free(t);
  rl_trainer_free(warm);
  rl_reward_clear(&reward);
  rl_reward_clear(&creward);
  cost_model_free(model);
  train_free(trained);
  rl_policy_free(pol);
  rl_env_free(env);
  plan_free(init);
  return st;
}

/* A search in a child process: its inputs (borrowed) and the plan it fills. */
typedef struct search_job {
  const graph *g;
  const chip *c;
  const method_options *o;
  int *best; /* n_cores entries */
} search_job;

/* The child's work (a proc_fn): the search on an engine of its own; the answer is the best plan, one
 * u32 per core, then the report's notes. */
static mp_status search_child(void *ctx, strbuf *answer, mp_error *err) {
  const search_job *j = ctx;
  method_report rep;
  memset(&rep, 0, sizeof rep);
  sim *s = NULL;
  mp_status st = sim_new(j->c, j->o->sim_options, &s, err);
  if (st == MP_OK) st = search(s, j->g, j->c, j->o, j->best, &rep, err);
  if (st == MP_OK) {
    for (int k = 0; k < j->c->n_cores; k++) bytes_put_u32(answer, (uint32_t)j->best[k]);
    strbuf_append(answer, rep.notes, strlen(rep.notes));
  }
  sim_free(s);
  return st;
}

/* Runs the search in a child process with its own SimGrid engine, so the caller's process can still
 * start its own simulator afterwards (SimGrid allows one engine per process). */
static mp_status search_in_child(const graph *g, const chip *c, const method_options *o, int *best,
                                 method_report *rep, mp_error *err) {
  search_job job = {g, c, o, best};
  strbuf answer = {0};
  mp_status st = proc_run_child(search_child, &job, &answer, err);
  if (st == MP_OK) {
    bytes_reader r = bytes_reader_of(answer.s, answer.len);
    for (int k = 0; k < c->n_cores; k++) best[k] = (int)bytes_get_u32(&r);
    if (r.short_read)
      st = err_set(err, MP_RUN, "rl: the search process's answer was cut short");
    else
      snprintf(rep->notes, sizeof rep->notes, "%.*s", (int)bytes_left(&r), (const char *)r.data + r.pos);
  }
  strbuf_clear(&answer);
  return st;
}

mp_status method_rl(const graph *g, const chip *c, const method_options *o, plan **out, method_report *rep,
                    mp_error *err) {
  *out = NULL;
  if (o->init && strcmp(o->init, "rl") == 0)
    return err_set(err, MP_USAGE, "rl: the initial plan cannot come from rl itself");
  if (c->n_cores < 2) return err_set(err, MP_USAGE, "rl: the chip has one core: there is nothing to partition");
  int *best = malloc((size_t)c->n_cores * sizeof *best);
  if (!best) return err_nomem(err);
  mp_status st;
  if (o->sim) {
    if (sim_chip(o->sim)->hash != c->hash)
      st = err_set(err, MP_RUN, "rl: the simulator given to the rl method runs chip '%s', not '%s'",
                   sim_chip(o->sim)->name, c->name);
    else
      st = search(o->sim, g, c, o, best, rep, err);
  } else {
    st = search_in_child(g, c, o, best, rep, err);
  }
  if (st == MP_OK) st = plan_new(best, c->n_cores, g->n_ops, out, err);
  free(best);
  return st;
}
