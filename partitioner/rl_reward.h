/* rl_reward: what the RL trainer maximises — a plan's reward, its tie-break and the figure users see —
 * from one of four backends: the SimGrid simulator or the analytical cost model, of inference or (for
 * --mode train) of training, where the period is a mini-batch's time over its M micro-batches.
 *
 * An rl_reward is filled by one init per backend (rl_reward_init_sim, rl_reward_init_model,
 * rl_reward_init_train_sim, rl_reward_init_train_model; rl_reward_clear frees what it holds), which
 * evaluates the reference plan once for T_ref; rl_reward_eval then scores any plan of the same graph
 * and chip with the same formula and weights.  The simulator's figures are snapped to a grid so that
 * the same plan scores the same whatever the engine simulated before (see rl_reward.c). */
#ifndef MESHPIPE_RL_REWARD_H
#define MESHPIPE_RL_REWARD_H

#include "err.h"
#include "graph.h"
#include "objective.h"

struct sim;
struct cost_model;
struct chip;
struct train;

/* What a reward callback says about one plan. */
typedef struct rl_eval {
  double reward;  /* higher is better */
  double balance; /* tie-break, higher is better: rl_reward_balance; 0 if the reward has none */
  double figure;  /* what users want to see: micro-batches/s, 1 / period (higher is better; samples/s
                     is that times graph_batch) */
  int feasible;   /* 1 when the plan fits memory */
} rl_eval;

/* Scores arranged (a valid state, n_cores entries, borrowed) into *out; ctx is the callback's. */
typedef mp_status (*rl_reward_fn)(void *ctx, const int *arranged, rl_eval *out, mp_error *err);

/* Weights of the plan reward  R = −period·(X / X_ref) − memory·max(0, m − 1) − storage·m − routing·u
 * with X the objective's value (objective.h) of the plan: its pipeline period T (seconds per micro-batch)
 * for time, its energy per micro-batch E for energy, E·T for edp; X_ref that of the reference (initial)
 * plan, m the largest per-core memory over its SRAM, u the largest NoC link utilisation.  Defaults:
 * objective time, period 1, storage 0, routing 0, memory 0: the simulator and the model both charge an
 * over-full core the DRAM streams of its excess (weights and spilled activations), so a penalty would
 * count it twice.  Energy and edp need the inference backends on a chip with energy figures. */
typedef struct rl_reward_weights {
  double period, memory, storage, routing;
  objective objective;
} rl_reward_weights;

void rl_reward_weights_default(rl_reward_weights *w, int simulated);

/* The tie-break of rl_eval.balance: −‖t‖₈ / T_ref − Σ_i max(0, m_i − 1), the 8-norm of the stage
 * times (close to the largest, but lowered by easing any near-largest stage) and the memory excess of
 * every stage (not only the worst).  stage_mem_ratio may be NULL. */
double rl_reward_balance(const double *stage_s, const double *stage_mem_ratio, int n_stages, double ref_period_s);

/* R of the formula above from its figures (value and ref_value: X and X_ref). */
double rl_reward_combine(const rl_reward_weights *w, double value, double ref_value, double mem_ratio,
                         double link_util);

typedef enum rl_reward_backend {
  RL_REWARD_SIM,  /* figure = 1 / simulated period, micro-batches/s */
  RL_REWARD_MODEL, /* figure = 1 / analytical bottleneck, micro-batches/s; no routing term */
  RL_REWARD_TRAIN_SIM,  /* training: figure = M / simulated mini-batch (sim_train.h), micro-batches/s */
  RL_REWARD_TRAIN_MODEL /* training: figure = M / the training model's mini-batch (train.h); no routing term */
} rl_reward_backend;

/* A reward of one graph on one chip.  Pointers are borrowed and must outlive it, but for its scratch,
 * which an init allocates (scoring a plan allocates nothing more) and rl_reward_clear frees. */
typedef struct rl_reward {
  rl_reward_backend backend;
  struct sim *sim;          /* RL_REWARD_SIM, RL_REWARD_TRAIN_SIM: the simulator, of the plan's chip */
  const graph *g;           /* RL_REWARD_SIM: the graph */
  struct cost_model *model; /* RL_REWARD_MODEL: the model of the graph on the chip (its scratch is used) */
  struct train *train;      /* RL_REWARD_TRAIN_*: the trained graph under its options (its memo is used) */
  const struct chip *chip;  /* RL_REWARD_TRAIN_MODEL: the chip */
  int n_cores, n_layers;
  rl_reward_weights w;
  double ref_period_s; /* T_ref, set by the init: the balance's scale */
  double ref_value;    /* X_ref, set by the init */
  struct plan_stage *stages; /* owned scratch, n_cores entries: the stages of the plan being scored */
  double *buf;               /* owned scratch, 2 n_cores entries: its per-stage times and memory ratios */
  struct rl_reward_memo *memo; /* owned, the model backends only: their scores of recent plans (the
                                  model is a function of the plan, so a repeated plan is looked up) */
  long memo_hits;              /* plans the memo answered */
} rl_reward;

/* Prepares r for g on sim's chip with reference plan ref (borrowed; evaluated once for T_ref).  w
 * (borrowed) may be NULL for the simulator's defaults. */
mp_status rl_reward_init_sim(rl_reward *r, struct sim *s, const graph *g, const int *ref, const rl_reward_weights *w,
                             mp_error *err);

/* Prepares r for the model m of a graph of n_layers layers on n_cores cores with reference plan ref
 * (borrowed); w (borrowed) may be NULL for the model's defaults. */
mp_status rl_reward_init_model(rl_reward *r, struct cost_model *m, int n_cores, int n_layers, const int *ref,
                               const rl_reward_weights *w, mp_error *err);

/* Training: as rl_reward_init_sim, each plan of t's graph simulated for one mini-batch under t's options
 * (t borrowed, built once for every plan). */
mp_status rl_reward_init_train_sim(rl_reward *r, struct sim *s, struct train *t, const int *ref,
                                   const rl_reward_weights *w, mp_error *err);

/* Training: the model of t (borrowed; its graph of n_layers layers) on c (borrowed). */
mp_status rl_reward_init_train_model(rl_reward *r, struct train *t, const struct chip *c, int n_layers, const int *ref,
                                     const rl_reward_weights *w, mp_error *err);

/* Frees r's scratch (r may be zeroed, or an init may have failed on it); r is then zeroed. */
void rl_reward_clear(rl_reward *r);
/* The rl_reward_fn of every backend: ctx is an initialised rl_reward (borrowed; the model backends
 * write the score into its memo). */
mp_status rl_reward_eval(void *ctx, const int *arranged, rl_eval *out, mp_error *err);

#endif
