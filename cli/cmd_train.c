/* meshpipe train: train the RL partitioner's policy on one or more graphs, rewarded by the simulator. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cost.h"
#include "fileio.h"
#include "jsonio.h"
#include "method.h"
#include "progress.h"
#include "ranks.h"
#include "rl_ckpt.h"
#include "rl_method.h"
#include "rl_search.h"
#include "sim.h"
#include "train.h"

static const char usage[] =
    "usage: meshpipe train -g GRAPH[,GRAPH...] [-c CHIP] -o POLICY [options]\n"
    "\n"
    "Trains the RL partitioner's policy by REINFORCE (partitioner/README.md, \"RL partitioner\"): episodes\n"
    "start from each graph's initial plan or from the best plan found before their batch, the policy\n"
    "proposes moves of layers and cores between neighbouring core groups, and every proposal is\n"
    "simulated (the simulator caches repeated plans).  Prints the best plan found per graph and writes\n"
    "the policy, which 'meshpipe partition -m rl --policy POLICY' fine-tunes or, with --episodes 0,\n"
    "applies as it is.\n"
    "A checkpoint (POLICY.ckpt) is written every --checkpoint-every episodes and at the end; after a\n"
    "crash or kill, the same command with --resume continues to exactly the result of an uninterrupted\n"
    "run (the checkpoint holds the simulator's clock, which the resumed run restores), and --resume with\n"
    "a larger --episodes extends a finished run.\n"
    "With --jobs N (N processes forked on this machine) or under 'mpirun -np N meshpipe train ...'\n"
    "(meshpipe built with Open MPI) each batch's episodes and the final polish's moves are dealt over the\n"
    "N processes, each with its own simulator, and the first alone prints, checkpoints and writes the\n"
    "policy.  With --isolate the policy and plans are bit for bit those of one process with the same\n"
    "seed; without it they are too unless a simulated figure's last digits (which move with the\n"
    "engine's history, about 1e-11 relative) cross the 1e-6 grid rewards are rounded to.\n"
    "\n"
    "  -g, --graph LIST       graphs to train on, comma-separated (all on one chip; episodes take turns)\n"
    "  -c, --chip CHIP        chip file (default: platforms/mesh8x8.json)\n"
    "  -o, --output POLICY    where to write the policy (atomically)\n"
    "  --episodes N           episodes in all (default %ld; beyond 64 cores %ld x 64 / cores, at least 8)\n"
    "  --seed S               seed of the run (default 1): same seed, same policy, bit for bit\n"
    "  --init METHOD          partitioner whose plan starts the episodes (default even)\n"
    "  --policy FILE          start from this policy instead of a fresh one\n"
    "  --checkpoint-every K   episodes between checkpoints (default 64; 0: only at the end)\n"
    "  --resume               continue from POLICY.ckpt (same options as the interrupted run)\n"
    "  --reward KIND          sim (default): the SimGrid simulator; model: the analytical model (fast)\n"
    "  -M, --microbatches M   micro-batches per simulation (default: until steady state); with --mode\n"
    "                         train, per mini-batch (default 8)\n"
    "  --objective O          what the reward measures: time (default), energy or edp, as for 'meshpipe\n"
    "                         partition' (energy and edp need a chip with energy figures and inference)\n"
    "  --episodes-per-update B  episodes per policy update (default 8)\n"
    "  --steps T              moves per episode (default min(2 x cores, 16))\n"
    "  --samples K            proposals simulated per move (default 8)\n"
    "  --lr X                 Adam's learning rate (default 0.003)\n"
    "  --entropy X            entropy bonus (default 0.01)\n"
    "  --hidden H             hidden width of a fresh policy (default 16)\n"
    "  --w-period A           reward weight of the period, relative to the initial plan's (default 1)\n"
    "  --w-memory B           weight of the largest per-core memory excess over SRAM (default 0: the\n"
    "                         simulator and the model both charge DRAM streaming in time)\n"
    "  --w-storage C          weight of the largest per-core memory / SRAM (default 0)\n"
    "  --w-routing D          weight of the busiest NoC link's utilisation (default 0)\n"
    "  --polish R             steepest-ascent rounds on each best plan at the end (default %d)\n"
    "  --feasible-first       a plan that fits memory beats any that does not (default: plans are ranked\n"
    "                         by reward alone; the simulator charges an over-full core its DRAM streams)\n"
    "  --isolate              simulate every plan in a fork of the idle engine: figures bit-identical\n"
    "                         in any process whatever ran before (about 1.5x slower; see below)\n"
    "  --jobs N               play each batch's episodes and score the polish's moves in N processes on\n"
    "                         this machine (default 1)\n"
    "  -j, --json             print the summary as one JSON object\n"
    "  -q, --quiet            no progress line\n"
    "  --dtype T, --batch N, --no-fuse\n"
    "                         ONNX graphs only: as for 'meshpipe import' (--batch is the graph's batch\n"
    "                         size; --episodes-per-update is the policy's)\n"
    CLI_TRAIN_HELP
    "                         With --mode train every reward is a training one: a mini-batch's time\n"
    "                         over its micro-batches, simulated (or on the training model with\n"
    "                         --reward model); a checkpoint resumes only under the same options\n"
    "\n"
    "Progress goes to stderr: one updating line on a terminal, a plain line every 5 s otherwise.\n";

enum {
  OPT_EPISODES = 256,
  OPT_JOBS,
  OPT_SEED,
  OPT_INIT,
  OPT_POLICY,
  OPT_CKPT,
  OPT_RESUME,
  OPT_REWARD,
  OPT_BATCH,
  OPT_STEPS,
  OPT_SAMPLES,
  OPT_LR,
  OPT_ENTROPY,
  OPT_HIDDEN,
  OPT_WP,
  OPT_WM,
  OPT_WS,
  OPT_WR,
  OPT_POLISH,
  OPT_FEASIBLE_FIRST,
  OPT_ISOLATE,
  OPT_OBJECTIVE,
};

#define MAX_GRAPHS 32

/* One graph being trained on, and its reward. */
typedef struct item {
  const char *path;
  graph *g;
  plan *init;
  rl_env *env;
  train *trained; /* --mode train: the graph trained under the options (its rewards are training ones) */
  rl_reward reward;
} item;

/* A checkpoint with the simulator's clock (sim_checkpoint, which also empties its cache: a resumed
 * run starts with an empty one), so that a run resumed from it gives the same figures bit for bit. */
static mp_status save_checkpoint(const rl_trainer *t, sim *engine, const char *path, mp_error *err) {
  double clock = 0;
  mp_status st = engine ? sim_checkpoint(engine, &clock, err) : MP_OK;
  return st == MP_OK ? rl_ckpt_save(t, clock, path, err) : st;
}

/* The command on one rank of `size` (0 of 1 without mpirun): every rank plays its share of each
 * batch's episodes and the polish's moves and holds the whole trainer; rank 0 alone reports,
 * checkpoints and writes the policy. */
static int train_policy(int argc, char **argv, int rank, int size) {
  static const struct option options[] = {
      {"graph", required_argument, NULL, 'g'},      {"chip", required_argument, NULL, 'c'},
      {"output", required_argument, NULL, 'o'},     {"episodes", required_argument, NULL, OPT_EPISODES},
      {"seed", required_argument, NULL, OPT_SEED},  {"init", required_argument, NULL, OPT_INIT},
      {"policy", required_argument, NULL, OPT_POLICY}, {"checkpoint-every", required_argument, NULL, OPT_CKPT},
      {"resume", no_argument, NULL, OPT_RESUME},    {"reward", required_argument, NULL, OPT_REWARD},
      {"microbatches", required_argument, NULL, 'M'}, {"episodes-per-update", required_argument, NULL, OPT_BATCH},
      {"steps", required_argument, NULL, OPT_STEPS}, {"samples", required_argument, NULL, OPT_SAMPLES},
      {"lr", required_argument, NULL, OPT_LR},      {"entropy", required_argument, NULL, OPT_ENTROPY},
      {"hidden", required_argument, NULL, OPT_HIDDEN}, {"w-period", required_argument, NULL, OPT_WP},
      {"w-memory", required_argument, NULL, OPT_WM}, {"w-storage", required_argument, NULL, OPT_WS},
      {"w-routing", required_argument, NULL, OPT_WR}, {"polish", required_argument, NULL, OPT_POLISH},
      {"feasible-first", no_argument, NULL, OPT_FEASIBLE_FIRST}, {"isolate", no_argument, NULL, OPT_ISOLATE},
      {"json", no_argument, NULL, 'j'},             {"quiet", no_argument, NULL, 'q'},
      {"jobs", required_argument, NULL, OPT_JOBS},
      {"objective", required_argument, NULL, OPT_OBJECTIVE},
      {"help", no_argument, NULL, 'h'},             CLI_GRAPH_OPTIONS, CLI_TRAIN_OPTIONS,
      {NULL, 0, NULL, 0}};
  const char *graph_list = NULL, *chip_path = CLI_DEFAULT_CHIP, *output = NULL, *init_name = "even",
             *policy_path = NULL;
  long episodes = -1, ckpt_every = 64, seed = 1, batch = -1, steps = -1, samples = -1, hidden = -1, polish = -1, v;
  double lr = -1, entropy = -1, w[4] = {-1, -1, -1, -1};
  int resume = 0, use_sim = 1, json = 0, quiet = 0, feasible_first = 0, opt;
  sim_options so;
  sim_options_init(&so);
  so.routing = SIM_ROUTING_MANY; /* thousands of evaluations repay a slower start */
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  cli_train_opts to;
  cli_train_opts_init(&to);
  objective obj = OBJECTIVE_TIME;
  /* Every rank meets the same usage and input errors: rank 0 alone says so. */
  int muted = rank > 0 ? ranks_mute() : -1, agreed = size == 1;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:o:M:jqh", options, NULL)) != -1) {
    switch (opt) {
    case 'h':
      if (rank == 0) {
        printf(usage, (long)RL_METHOD_EPISODES, (long)RL_METHOD_EPISODES, RL_METHOD_POLISH_ROUNDS);
        ranks_print_build();
      }
      return 0;
    case 'g': graph_list = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'o': output = optarg; break;
    case 'j': json = 1; break;
    case 'q': quiet = 1; break;
    case OPT_JOBS: break; /* taken by ranks_start */
    case OPT_EPISODES:
      if (cli_parse_int("train", "--episodes", optarg, 0, 1000000000L, &episodes)) return 2;
      break;
    case OPT_SEED:
      if (cli_parse_int("train", "--seed", optarg, 0, 9007199254740991L, &seed)) return 2;
      break;
    case OPT_INIT: init_name = optarg; break;
    case OPT_POLICY: policy_path = optarg; break;
    case OPT_CKPT:
      if (cli_parse_int("train", "--checkpoint-every", optarg, 0, 1000000000L, &ckpt_every)) return 2;
      break;
    case OPT_RESUME: resume = 1; break;
    case OPT_FEASIBLE_FIRST: feasible_first = 1; break;
    case OPT_ISOLATE: so.isolate = 1; break;
    case OPT_REWARD:
      if (strcmp(optarg, "sim") == 0)
        use_sim = 1;
      else if (strcmp(optarg, "model") == 0)
        use_sim = 0;
      else
        return cli_usage("train", "--reward must be 'sim' or 'model', got '%s'", optarg);
      break;
    case 'M':
      if (cli_parse_int("train", "--microbatches", optarg, 1, 1000000L, &v)) return 2;
      so.microbatches = (int)v;
      break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("train", opt, optarg, &go)) return 2;
      break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("train", opt, optarg, &to)) return 2;
      break;
    case OPT_OBJECTIVE:
      if (!objective_parse(optarg, &obj))
        return cli_usage("train", "--objective must be time, energy or edp, not '%s'", optarg);
      break;
    case OPT_BATCH:
      if (cli_parse_int("train", "--episodes-per-update", optarg, 2, 100000L, &batch)) return 2;
      break;
    case OPT_STEPS:
      if (cli_parse_int("train", "--steps", optarg, 1, 1000000L, &steps)) return 2;
      break;
    case OPT_SAMPLES:
      if (cli_parse_int("train", "--samples", optarg, 1, 1024L, &samples)) return 2;
      break;
    case OPT_HIDDEN:
      if (cli_parse_int("train", "--hidden", optarg, 1, 4096L, &hidden)) return 2;
      break;
    case OPT_POLISH:
      if (cli_parse_int("train", "--polish", optarg, 0, 1000000L, &polish)) return 2;
      break;
    case OPT_LR:
      if (cli_parse_double("train", "--lr", optarg, 1e-12, &lr)) return 2;
      break;
    case OPT_ENTROPY:
      if (cli_parse_double("train", "--entropy", optarg, 0, &entropy)) return 2;
      break;
    case OPT_WP:
    case OPT_WM:
    case OPT_WS:
    case OPT_WR:
      if (cli_parse_double("train", argv[optind - 1], optarg, 0, &w[opt - OPT_WP])) return 2;
      break;
    case ':': return cli_usage("train", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("train", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("train", "unexpected argument '%s'", argv[optind]);
  if (!graph_list) return cli_usage("train", "needs at least one graph (-g GRAPH[,GRAPH...])");
  if (!output) return cli_usage("train", "needs a file for the policy (-o POLICY)");
  if (!method_find(init_name))
    return cli_usage("train", "--init: no method '%s' (see 'meshpipe partition --help')", init_name);
  if (strcmp(init_name, "rl") == 0) return cli_usage("train", "--init cannot be rl itself");
  if (cli_train_check("train", &to, so.microbatches)) return 2;
  if (to.train) so.microbatches = 0; /* -M is the mini-batch's; a training simulation runs one mini-batch */
  if (to.train && obj != OBJECTIVE_TIME)
    return cli_usage("train", "--objective %s is for inference: the training model has no energy",
                     objective_name(obj));
  /* what the rewards measure, in every instance's key: a checkpoint resumes only under the same */
  uint64_t what = (uint64_t)obj + 3 * (to.train ? 1 + (uint64_t)to.o.schedule + 2 * ((uint64_t)to.o.optimizer +
                                                   3 * ((uint64_t)to.o.recompute + 2 * (uint64_t)to.o.microbatches))
                                                : 0);

  char *list = strdup(graph_list), *save = NULL;
  item items[MAX_GRAPHS];
  rl_instance inst[MAX_GRAPHS];
  memset(items, 0, sizeof items);
  int n = 0;
  if (!list) {
    mp_error e;
    err_nomem(&e);
    return cli_fail(&e);
  }
  for (char *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    if (n == MAX_GRAPHS) {
      free(list);
      return cli_usage("train", "at most %d graphs", MAX_GRAPHS);
    }
    items[n++].path = tok;
  }
  if (n == 0) {
    free(list);
    return cli_usage("train", "needs at least one graph (-g GRAPH[,GRAPH...])");
  }

  char ckpt[4096];
  snprintf(ckpt, sizeof ckpt, "%s.ckpt", output);
  chip *c = NULL;
  sim *engine = NULL;
  cost_model *models[MAX_GRAPHS] = {NULL};
  rl_policy *start = NULL;
  rl_trainer *t = NULL;
  mp_error err;
  err_clear(&err);
  int rc = 0;
  /* The policy and its checkpoints are written after minutes of training (by rank 0): find out now
   * that they can be. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", output);
  char *slash = strrchr(dir, '/');
  if (slash) *(slash == dir ? slash + 1 : slash) = '\0';
  if (rank == 0 && access(slash ? dir : ".", W_OK) != 0) {
    err_set(&err, MP_OUTPUT, "%s: cannot write the policy there: %s", output, strerror(errno));
    goto fail;
  }
  if (chip_load(chip_path, &c, &err) != MP_OK) goto fail;
  if (obj != OBJECTIVE_TIME && !c->has_energy) {
    rc = cli_usage("train", "--objective %s needs a chip with energy figures, and %s has none (platforms/README.md, "
                   "\"Energy\")", objective_name(obj), c->name);
    goto cleanup;
  }
  if (c->n_cores < 2) {
    rc = cli_usage("train", "the chip '%s' has one core: there is nothing to partition", c->name);
    goto cleanup;
  }
  if (policy_path && rl_policy_load_shaped(policy_path, RL_PAIR_FEATURES, RL_PAIR_ACTIONS, &start, &err) != MP_OK)
    goto fail;
  if (use_sim && sim_new(c, &so, &engine, &err) != MP_OK) goto fail;
  rl_reward_weights rw;
  rl_reward_weights_default(&rw, use_sim);
  rw.objective = obj;
  if (w[0] >= 0) rw.period = w[0];
  if (w[1] >= 0) rw.memory = w[1];
  if (w[2] >= 0) rw.storage = w[2];
  if (w[3] >= 0) rw.routing = w[3];
  for (int i = 0; i < n; i++) {
    item *it = &items[i];
    method_options mo;
    method_options_default(&mo);
    mo.seed = (uint64_t)seed;
    method_report mr;
    if (cli_load_graph(it->path, &go, &it->g, &err) != MP_OK ||
        method_run(init_name, it->g, c, &mo, &it->init, &mr, &err) != MP_OK ||
        rl_env_from_graph(it->g, c->n_cores, &it->env, &err) != MP_OK)
      goto fail;
    if (to.train) {
      if (train_new(it->g, &to.o, &it->trained, &err) != MP_OK ||
          (use_sim ? rl_reward_init_train_sim(&it->reward, engine, it->trained, it->init->arranged, &rw, &err)
                   : rl_reward_init_train_model(&it->reward, it->trained, c, it->g->n_ops, it->init->arranged, &rw,
                                                &err)) != MP_OK)
        goto fail;
    } else if (use_sim) {
      if (rl_reward_init_sim(&it->reward, engine, it->g, it->init->arranged, &rw, &err) != MP_OK) goto fail;
    } else {
      if (cost_model_new(it->g, c, &models[i], &err) != MP_OK ||
          rl_reward_init_model(&it->reward, models[i], c->n_cores, it->g->n_ops, it->init->arranged, &rw, &err) !=
              MP_OK)
        goto fail;
    }
    inst[i] = (rl_instance){it->env, it->init->arranged, rl_reward_eval, &it->reward, 0};
    inst[i].key = it->g->hash ^ (c->hash * UINT64_C(0x9e3779b97f4a7c15)) ^ (use_sim ? 0 : UINT64_C(1)) ^
                  (what * UINT64_C(0xbf58476d1ce4e5b9));
  }

  rl_train_config cfg;
  rl_method_config(&cfg, c->n_cores, (uint64_t)seed);
  if (episodes >= 0) cfg.episodes = episodes;
  if (batch > 0) cfg.batch = (int)batch;
  if (steps > 0) cfg.max_steps = (int)steps;
  if (samples > 0) cfg.samples = (int)samples;
  if (hidden > 0) cfg.hidden = (int)hidden;
  if (lr > 0) cfg.lr = lr;
  if (entropy >= 0) cfg.entropy = entropy;
  if (feasible_first) cfg.feasible_first = 1;
  int polish_rounds = polish >= 0 ? (int)polish : RL_METHOD_POLISH_ROUNDS;
  if (resume) {
    if (access(ckpt, F_OK) != 0) {
      rc = cli_usage("train", "--resume: no checkpoint '%s' (it is written every --checkpoint-every episodes)", ckpt);
      goto cleanup;
    }
    double clock = 0;
    if (rl_ckpt_resume(&cfg, inst, n, ckpt, &t, &clock, &err) != MP_OK) goto fail;
    /* The engine as the interrupted run left it at the checkpoint, so that figures agree bit for bit */
    mp_error why;
    mp_status restored = engine ? sim_restore(engine, clock, &why) : MP_OK;
    if (restored != MP_OK) {
      err_at(&err, restored, ckpt, "sim clock", "%s", why.msg);
      goto fail;
    }
  } else if (rl_trainer_new(&cfg, inst, n, start, &t, &err) != MP_OK) {
    goto fail;
  }
  if (size > 1) {
    agreed = 1;
    if (ranks_max(0) != 0) { /* another rank could not set up: it said why */
      rc = 1;
      goto cleanup;
    }
    rl_trainer_distribute(t, rank, size, ranks_gather, NULL);
    ranks_unmute(muted);
    muted = -1;
    quiet = quiet || rank > 0;
  }

  progress pr;
  progress_init(&pr, stderr, "train: episode", cfg.episodes, 5.0, -1);
  rl_train_stats ts;
  rl_trainer_get_stats(t, &ts);
  long evals0 = ts.evaluations, last_ckpt = ts.episodes;
  while (!rl_trainer_done(t)) {
    mp_status st = rl_trainer_iterate(t, &err);
    rl_trainer_get_stats(t, &ts);
    if (st == MP_OK && rank == 0 && ckpt_every > 0 && ts.episodes / ckpt_every > last_ckpt / ckpt_every) {
      st = save_checkpoint(t, engine, ckpt, &err);
      last_ckpt = ts.episodes;
    }
    if (st != MP_OK && size > 1) { /* the other ranks would wait for this one's records: end them all */
      cli_fail(&err);
      ranks_abort(err_exit_code(st));
    }
    if (st != MP_OK) goto fail;
    if (!quiet) {
      rl_eval b0;
      rl_trainer_best(t, 0, &b0);
      double rate = (double)(ts.evaluations - evals0) / fmax(progress_elapsed(&pr), 1e-9);
      progress_update(&pr, ts.episodes, "best %.5g samples/s%s, mean reward %.4f, %.0f evals/s",
                      b0.figure * graph_batch(items[0].g), n > 1 ? " (graph 1)" : "", ts.mean_final_reward, rate);
    }
  }
  mp_status st = rank == 0 ? save_checkpoint(t, engine, ckpt, &err) : MP_OK; /* the end state, for --resume */
  double train_s = progress_elapsed(&pr);
  /* every rank polishes: each scores its share of the moves (rl_trainer_evaluate_actions) */
  for (int i = 0; st == MP_OK && i < n && polish_rounds > 0; i++) st = rl_search_polish(t, i, polish_rounds, &err);
  if (st != MP_OK && size > 1) { /* the other ranks would wait for this one's scores: end them all */
    cli_fail(&err);
    ranks_abort(err_exit_code(st));
  }
  if (st != MP_OK) goto fail;
  if (rank > 0) goto cleanup;
  if (rl_policy_save(rl_trainer_policy(t), 1, output, &err) != MP_OK) goto fail;
  rl_trainer_get_stats(t, &ts);
  double total_s = progress_elapsed(&pr);
  if (!quiet) progress_finish(&pr, ts.episodes, "%ld evaluations in %.1f s", ts.evaluations - evals0, total_s);
  sim_stats ss;
  memset(&ss, 0, sizeof ss);
  if (engine) sim_get_stats(engine, &ss);
  double hit = ss.evaluations > 0 ? (double)ss.cache_hits / (double)ss.evaluations : 0.0;

  cJSON *root = json ? cJSON_CreateObject() : NULL, *arr = json ? cJSON_AddArrayToObject(root, "graphs") : NULL;
  if (!json) {
    printf("trained %ld episodes (%ld iterations) on %d graph%s over %s (%d cores) in %.1f s (+%.1f s polish), "
           "seed %ld",
           ts.episodes, ts.iterations, n, n == 1 ? "" : "s", c->name, c->n_cores, train_s, total_s - train_s, seed);
    if (to.train)
      printf(", rewards for training (%s, %s, %d micro-batches per mini-batch%s)", train_schedule_name(to.o.schedule),
             train_optimizer_name(to.o.optimizer), to.o.microbatches, to.o.recompute ? ", recompute" : "");
    if (obj != OBJECTIVE_TIME) printf(", rewards by %s", objective_name(obj));
    printf(size > 1 ? ", on %d processes\n" : "\n", size);
    printf("%ld reward evaluations", ts.evaluations - evals0);
    if (engine) printf(", %ld simulations, %.1f%% from the simulator's cache", ss.evaluations, 100 * hit);
    printf("\npolicy written to %s (checkpoint %s)\n", output, ckpt);
  }
  for (int i = 0; i < n; i++) {
    rl_eval b, s0;
    const int *best = rl_trainer_best(t, i, &b);
    rl_trainer_init_eval(t, i, &s0);
    if (json) {
      cJSON *o = cJSON_CreateObject(), *a = o ? cJSON_AddArrayToObject(o, "arranged_core") : NULL;
      for (int k = 0; a && k < c->n_cores; k++) cJSON_AddItemToArray(a, cJSON_CreateNumber(best[k]));
      if (o) {
        char gh[17];
        cJSON_AddStringToObject(o, "graph", items[i].g->name);
        cJSON_AddStringToObject(o, "graph_hash", fileio_hash_hex(items[i].g->hash, gh));
        cJSON_AddStringToObject(o, "file", items[i].path);
        cJSON_AddNumberToObject(o, "batch", graph_batch(items[i].g));
        cJSON_AddNumberToObject(o, "initial_samples_per_s", s0.figure * graph_batch(items[i].g));
        cJSON_AddNumberToObject(o, "best_samples_per_s", b.figure * graph_batch(items[i].g));
        cJSON_AddNumberToObject(o, "best_reward", b.reward);
        cJSON_AddBoolToObject(o, "feasible", b.feasible);
        cJSON_AddItemToArray(arr, o);
      }
    } else {
      printf("%s: %s %.6g samples/s from %s's plan, best %.6g (%+.1f%%)%s\n  arranged_core [", items[i].g->name,
             engine ? "simulated" : "analytical", s0.figure * graph_batch(items[i].g), init_name,
             b.figure * graph_batch(items[i].g), 100 * (b.figure / s0.figure - 1),
             b.feasible ? "" : ", does not fit memory");
      for (int k = 0; k < c->n_cores; k++) printf("%s%d", k ? "," : "", best[k]);
      printf("]\n");
    }
  }
  if (json) {
    char hex[17];
    if (root) {
      cJSON_AddStringToObject(root, "chip", c->name);
      cJSON_AddStringToObject(root, "chip_hash", fileio_hash_hex(c->hash, hex));
      jsonio_add_u64(root, "seed", (uint64_t)seed);
      cJSON_AddStringToObject(root, "mode", to.train ? "train" : "infer");
      cJSON_AddStringToObject(root, "objective", objective_name(obj));
      cJSON_AddNumberToObject(root, "episodes", (double)ts.episodes);
      cJSON_AddNumberToObject(root, "evaluations", (double)(ts.evaluations - evals0));
      cJSON_AddNumberToObject(root, "cache_hit_rate", hit);
      cJSON_AddNumberToObject(root, "train_s", train_s);
      cJSON_AddNumberToObject(root, "total_s", total_s);
      cJSON_AddStringToObject(root, "policy", output);
    }
    if (!root || jsonio_print(root, &err) != MP_OK) {
      if (!root) err_nomem(&err);
      cJSON_Delete(root);
      goto fail;
    }
    cJSON_Delete(root);
  }
  goto cleanup;
fail:
  rc = cli_fail(&err);
cleanup:
  if (!agreed) ranks_max(1); /* a rank that failed before the agreement still takes part in it */
  ranks_unmute(muted);
  rl_trainer_free(t);
  rl_policy_free(start);
  for (int i = 0; i < n; i++) {
    rl_reward_clear(&items[i].reward);
    rl_env_free(items[i].env);
    train_free(items[i].trained);
    plan_free(items[i].init);
    graph_free(items[i].g);
    cost_model_free(models[i]);
  }
  sim_free(engine);
  chip_free(c);
  free(list);
  return rc;
}

static int run(int argc, char **argv) {
  int jobs = ranks_jobs_option("train", argc, argv);
  if (jobs == 0) return 2;
  int rank, size, code = ranks_start("train", jobs, &rank, &size);
  if (code != 0) return code;
  return ranks_finish(train_policy(argc, argv, rank, size));
}

const cli_command cmd_train = {"train", "train the RL partitioner's policy on graphs (REINFORCE on the simulator)",
                               run};
