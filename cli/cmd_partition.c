/* meshpipe partition: split a graph over a chip with one partitioner, and say how good the split is. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binds.h"
#include "cli.h"
#include "cost.h"
#include "fileio.h"
#include "jsonio.h"
#include "method.h"
#include "plan.h"
#include "progress.h"
#include "ranks.h"
#include "report.h"
#include "report_train.h"
#include "sim.h"

static const char usage[] =
    "usage: meshpipe partition -g GRAPH [-c CHIP] [-m METHOD] [-o PLAN.json] [--json] [options]\n"
    "\n"
    "Splits the graph's layers into contiguous pipeline stages on contiguous (snake-ordered) core groups\n"
    "with one partitioner and prints the plan: per stage its layers (first and last op), its cores, and in\n"
    "the analytical model (partitioner/README.md) its compute (work and all-gathers), DRAM streams, Sends\n"
    "(one per tensor per destination group), time t_i, what binds it (compute, all-gather, send, or sram:\n"
    "waiting for what its SRAM cannot hold, streamed from DRAM) and its per-core memory s_i; the model's\n"
    "period (the slowest stage, or the busiest NoC link or DRAM port - noc, dram - when that is slower)\n"
    "and what binds it, a lower bound on any plan's period and the gap to it, and - by running the\n"
    "SimGrid simulator on the plan - the simulated steady-state throughput, period and fill latency\n"
    "(and, on a chip with energy figures, joules per sample, watts, samples/J and TOPS/W).\n"
    "\n"
    "  -g, --graph GRAPH    workload graph (.json, or .onnx imported on the fly)\n"
    "  -c, --chip CHIP      chip file (default: platforms/mesh8x8.json)\n"
    "  -m, --method NAME    partitioner (default optimal):\n"
    "%s"
    "  -o, --output FILE    also write the plan (arranged_core and its stages), atomically\n"
    "  -j, --json           print one JSON object: method, objective, batch, arranged_core, stages (each\n"
    "                       with binds and binds_parts), period_s, model_samples_per_s (and on a chip\n"
    "                       with energy figures model_energy_j_per_sample, model_power_w,\n"
    "                       model_samples_per_j, model_tops_per_w, model_energy), binds, binds_stage,\n"
    "                       binds_link, stages_binding, why, lower_bound_s, feasible, solve_s, notes,\n"
    "                       simulated (as 'simulate --json'), ...\n"
    "  --seed S             seed for methods that draw random numbers (default 1)\n"
    "  --tau T              seed-split: split_compare's threshold on the standard deviation, seconds\n"
    "                       (default 1e-6)\n"
    "  --max-step N         seed-split: finetune_maximum's move limit (default 100)\n"
    "  --episodes N         learning methods: episodes to run (default: the method's own)\n"
    "  --policy FILE        learning methods: policy to start from\n"
    "  --init METHOD        learning methods: start from this method's plan\n"
    "  --objective O        what optimal and rl minimise: time (the period; the default), energy (joules\n"
    "                       per micro-batch, the cores' static power over the period included) or edp\n"
    "                       (energy x period); energy and edp need a chip with energy figures and\n"
    "                       inference; the other methods split by their own rule and say so in the notes\n"
    "  -q, --quiet          no progress on stderr (learning methods: one updating line on a terminal,\n"
    "                       a plain line every 5 s otherwise; other methods: a line every 10 s past 10 s)\n"
    "  --jobs N             learning methods: play each batch's episodes and score the searches' moves in\n"
    "                       N processes (forked here, each with its own simulator; the plan of one\n"
    "                       process, as for 'train --jobs')\n"
    "  -M, --microbatches M, -l, --links N, -f, --fast-gather, --fast-streams, -v, --verbose\n"
    "                       simulator options, as for 'meshpipe simulate'\n"
    "  --no-simulate        skip the SimGrid simulation (analytical figures only; \"simulated\" is null)\n"
    "  --dtype T, --batch N, --no-fuse\n"
    "                       ONNX graphs only: as for 'meshpipe import'; at --batch N a micro-batch is N\n"
    "                       samples and throughput is in samples/s (N x micro-batches/s)\n"
    CLI_OP_TIMES_HELP
    CLI_TRAIN_HELP
    "                          With --mode train, optimal minimises the training model's period (per\n"
    "                          micro-batch, with each stage's stashes in flight), rl a mini-batch's time\n"
    "                          (the training model's, then the simulator's), the other methods split as\n"
    "                          for inference; the plan is simulated for one mini-batch of -M micro-batches\n"
    "                          (default 8)\n";

#define fmt_s report_fmt_s

static void print_text(const char *method, const graph *g, const chip *c, const plan *p, const cost_result *r,
                       const cost_bound *lb, const method_report *rep, const sim_result *sr, const optimes *ot) {
  char a[32], b[32], d[32], e[32], f[32], why[256], thr[96];
  int batch = graph_batch(g);
  char per[64] = "";
  if (batch > 1) snprintf(per, sizeof per, ", batch %d: a micro-batch is %d samples", batch, batch);
  printf("%s on %s (%d layers%s) over %s (%d cores): %d stage%s, solved in %s\n", method, g->name, g->n_ops, per,
         c->name, c->n_cores, p->n_stages, p->n_stages == 1 ? "" : "s", fmt_s(rep->solve_s, a, sizeof a));
  if (ot)
    printf("(op times: %d of %d ops take the measured times of %s)\n", ot->n_overridden, ot->n_layers, ot->file);
  printf("\n%5s  %-11s %-48s %-11s %10s %10s %10s %6s %10s %-10s %21s\n", "stage", "layers", "ops", "cores", "compute",
         "dram", "send", "sends", "t_i", "binds", "s_i / SRAM");
  for (int i = 0; i < r->n_stages; i++) {
    const cost_stage *s = &r->stages[i];
    char layers[32], cores[32], ops[128], mem[48];
    snprintf(layers, sizeof layers, "%d-%d", s->first_layer, s->first_layer + s->n_layers - 1);
    snprintf(cores, sizeof cores, "%d-%d", s->first_core, s->first_core + s->n_cores - 1);
    snprintf(ops, sizeof ops, "%.22s .. %.22s", g->ops[s->first_layer].name,
             g->ops[s->first_layer + s->n_layers - 1].name);
    snprintf(mem, sizeof mem, "%s / %s%s", cli_fmt_bytes(s->mem_bytes, a, sizeof a),
             cli_fmt_bytes(s->sram_bytes, b, sizeof b), s->fits ? "" : " !");
    printf("%5d  %-11s %-48s %-11s %10s %10s %10s %6d %10s %-10s %21s%s\n", i, layers, ops, cores,
           fmt_s(s->compute_s, d, sizeof d), fmt_s(s->dram_s, e, sizeof e), fmt_s(s->send_s, f, sizeof f),
           s->n_transfers, fmt_s(s->time_s, a, sizeof a), binds_name(binds_stage(s)), mem,
           i == r->bottleneck_stage ? "  <- slowest" : "");
  }
  printf("\nmodel period           %s, %s\n", fmt_s(r->period_s, a, sizeof a),
         report_samples(r->period_s > 0 ? 1 / r->period_s : 0.0, batch, thr, sizeof thr));
  printf("what binds             %s\n", report_binds(r, c, why, sizeof why));
  printf("                       stages bound by %s; slowest stage %s (stage %d), busiest link %s\n",
         report_stages_binding(r, why, sizeof why), fmt_s(r->bottleneck_s, a, sizeof a), r->bottleneck_stage,
         fmt_s(r->link_bound_s, b, sizeof b));
  printf("lower bound            %s (%s: total flops / total speed %s, costliest layer %d on its best group %s); "
         "gap %.1f%%\n",
         fmt_s(lb->bound_s, a, sizeof a), lb->flops_s >= lb->layer_s ? "flops" : "layer", fmt_s(lb->flops_s, b, sizeof b),
         lb->layer, fmt_s(lb->layer_s, d, sizeof d), lb->bound_s > 0 ? 100 * (r->period_s / lb->bound_s - 1) : 0.0);
  if (r->feasible) {
    printf("memory                 fits (largest per-core need %.0f%% of SRAM)\n", 100 * r->mem_ratio);
  } else {
    double in = 0, out = 0;
    for (int i = 0; i < r->n_stages; i++) {
      in += r->stages[i].dram_in_bytes;
      out += r->stages[i].dram_out_bytes;
    }
    printf("memory                 DOES NOT FIT: largest per-core need %.3g x SRAM (stages marked !); per micro-batch "
           "%s read from DRAM, %s of spilled activations written back\n",
           r->mem_ratio, cli_fmt_bytes(in, a, sizeof a), cli_fmt_bytes(out, b, sizeof b));
  }
  if (sr) {
    printf("simulated              %s (period %s, %s; fill latency %s); model / simulated period %.4f\n",
           report_samples(sr->microbatches_per_s, sr->batch, thr, sizeof thr), fmt_s(sr->period_s, a, sizeof a),
           sr->period_kind == SIM_PERIOD_STEADY     ? "steady state"
           : sr->period_kind == SIM_PERIOD_UNSETTLED ? "NOT SETTLED: mean of the second half"
                                                     : "fixed run",
           fmt_s(sr->latency_s, b, sizeof b), sr->period_s > 0 ? r->period_s / sr->period_s : 0.0);
    if (sr->has_energy)
      printf("energy                 %s per sample, %.4g W, %.4g samples/J, %.4g TOPS/W (simulated; model %s)\n",
             report_fmt_j(sr->energy.j_per_sample, a, sizeof a), sr->energy.power_w, sr->energy.samples_per_j,
             sr->energy.tops_per_w, report_fmt_j(r->energy.j_per_sample, b, sizeof b));
  }
  if (rep->notes[0]) printf("notes                  %s\n", rep->notes);
}

/* The JSON report; NULL if out of memory. */
static cJSON *report_json(const char *method, const method_options *o, const graph *g, const chip *c, const plan *p,
                          const cost_result *r, const cost_bound *lb, const method_report *rep, const sim_result *sr,
                          const optimes *ot) {
  char hex[17];
  cJSON *root = cJSON_CreateObject(), *arr = NULL, *stages = cost_result_to_json(r, c), *bound = cost_bound_to_json(lb);
  int batch = graph_batch(g);
  int ok = root && stages && bound && cJSON_AddStringToObject(root, "method", method) &&
           cJSON_AddStringToObject(root, "graph", g->name) &&
           cJSON_AddStringToObject(root, "graph_hash", fileio_hash_hex(g->hash, hex)) &&
           cJSON_AddNumberToObject(root, "batch", batch) && cJSON_AddStringToObject(root, "chip", c->name) &&
           cJSON_AddStringToObject(root, "chip_hash", fileio_hash_hex(c->hash, hex)) &&
           jsonio_add_u64(root, "seed", o->seed) && cJSON_AddStringToObject(root, "objective", objective_name(o->objective)) &&
           (arr = cJSON_AddArrayToObject(root, "arranged_core"));
  if (ok && ot)
    ok = cJSON_AddStringToObject(root, "op_times", ot->file) &&
         cJSON_AddNumberToObject(root, "op_times_overridden", ot->n_overridden);
  for (int i = 0; ok && i < p->n_cores; i++) ok = cJSON_AddItemToArray(arr, cJSON_CreateNumber(p->arranged[i]));
  cJSON *list = stages ? cJSON_GetObjectItemCaseSensitive(stages, "stages") : NULL;
  for (int i = 0; ok && list && i < r->n_stages; i++) { /* name the ops, as the plan file does */
    cJSON *s = cJSON_GetArrayItem(list, i);
    const cost_stage *cs = &r->stages[i];
    ok = cJSON_AddStringToObject(s, "first_op", g->ops[cs->first_layer].name) &&
         cJSON_AddStringToObject(s, "last_op", g->ops[cs->first_layer + cs->n_layers - 1].name) &&
         binds_add_stage_json(s, cs);
  }
  const char *keys[] = {"period_s", "binding", "bottleneck_s", "bottleneck_stage", "link_bound_s", "busiest_link"};
  for (size_t k = 0; ok && k < sizeof keys / sizeof *keys; k++) { /* the model's verdict, at the top level */
    cJSON *v = cJSON_GetObjectItemCaseSensitive(stages, keys[k]);
    ok = v && cJSON_AddItemToObject(root, keys[k], cJSON_Duplicate(v, 1));
  }
  const char *energy_keys[] = {"energy_j_per_sample", "power_w", "samples_per_j", "tops_per_w", "energy"};
  for (size_t k = 0; ok && c->has_energy && k < sizeof energy_keys / sizeof *energy_keys; k++) { /* as model_* */
    char key[48];
    snprintf(key, sizeof key, "model_%s", energy_keys[k]);
    cJSON *v = cJSON_GetObjectItemCaseSensitive(stages, energy_keys[k]);
    ok = v && cJSON_AddItemToObject(root, key, cJSON_Duplicate(v, 1));
  }
  char why[256];
  ok = ok && cJSON_AddNumberToObject(root, "model_samples_per_s", r->period_s > 0 ? batch / r->period_s : 0.0) &&
       binds_add_run_json(root, r, c) && cJSON_AddStringToObject(root, "why", report_binds(r, c, why, sizeof why)) &&
       cJSON_AddNumberToObject(root, "n_stages", r->n_stages) &&
       cJSON_AddNumberToObject(root, "lower_bound_s", lb->bound_s) && cJSON_AddBoolToObject(root, "feasible", r->feasible) &&
       cJSON_AddNumberToObject(root, "mem_ratio", r->mem_ratio) && cJSON_AddNumberToObject(root, "solve_s", rep->solve_s) &&
       cJSON_AddStringToObject(root, "notes", rep->notes) && list &&
       cJSON_AddItemToObject(root, "stages", cJSON_DetachItemViaPointer(stages, list));
  if (ok) {
    ok = cJSON_AddItemToObject(root, "lower_bound", bound) != 0;
    if (ok) bound = NULL;
  }
  if (ok) {
    cJSON *simulated = sr ? sim_result_to_json(sr) : cJSON_CreateNull();
    ok = simulated && (!sr || report_add_mesh_json(simulated, c)) && cJSON_AddItemToObject(root, "simulated", simulated);
    if (!ok) cJSON_Delete(simulated);
  }
  cJSON_Delete(stages);
  cJSON_Delete(bound);
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* --mode train: the training model of the plan, one simulated mini-batch (when engine is not NULL), then
 * the plan file (a failed run leaves none).  work is the graph the method saw, g the one the plan file names. */
static int partition_train(const char *method, const method_options *o, const graph *work, const graph *g,
                           const chip *c, const plan *p, const method_report *rep, sim *engine, const char *output,
                           int json) {
  train *t = NULL;
  train_result *r = NULL;
  sim_train_result sr;
  memset(&sr, 0, sizeof sr);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (train_new(work, o->train, &t, &err) != MP_OK || train_evaluate(t, c, p, &r, &err) != MP_OK ||
      (engine && sim_train_evaluate(engine, t, p, &sr, &err) != MP_OK) ||
      (output && plan_write(p, g, c, output, &err) != MP_OK)) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  if (json) {
    char hex[17];
    cJSON *root = cJSON_CreateObject(), *arr = root ? cJSON_AddArrayToObject(root, "arranged_core") : NULL;
    cJSON *model = train_result_to_json(t, r), *simulated = engine ? sim_train_result_to_json(&sr) : cJSON_CreateNull();
    int ok = arr && model && simulated && cJSON_AddStringToObject(root, "method", method) &&
             cJSON_AddStringToObject(root, "mode", "train") && cJSON_AddStringToObject(root, "graph", g->name) &&
             cJSON_AddStringToObject(root, "graph_hash", fileio_hash_hex(g->hash, hex)) &&
             cJSON_AddNumberToObject(root, "batch", graph_batch(work)) &&
             cJSON_AddStringToObject(root, "chip", c->name) && jsonio_add_u64(root, "seed", o->seed) &&
             cJSON_AddNumberToObject(root, "n_stages", p->n_stages) &&
             cJSON_AddNumberToObject(root, "period_s", r->period_s) &&
             cJSON_AddNumberToObject(root, "model_samples_per_s", r->samples_per_s) &&
             cJSON_AddBoolToObject(root, "feasible", r->feasible) &&
             cJSON_AddNumberToObject(root, "solve_s", rep->solve_s) && cJSON_AddStringToObject(root, "notes", rep->notes);
    for (int i = 0; ok && i < p->n_cores; i++) ok = cJSON_AddItemToArray(arr, cJSON_CreateNumber(p->arranged[i]));
    if (ok && cJSON_AddItemToObject(root, "model", model)) model = NULL;
    if (ok && cJSON_AddItemToObject(root, "simulated", simulated)) simulated = NULL;
    ok = ok && !model && !simulated;
    cJSON_Delete(model);
    cJSON_Delete(simulated);
    if (!ok || jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    char a[32];
    printf("%s on %s (%d layers) over %s (%d cores), trained: %d stage%s, solved in %s\n", method, g->name, g->n_ops,
           c->name, c->n_cores, p->n_stages, p->n_stages == 1 ? "" : "s", fmt_s(rep->solve_s, a, sizeof a));
    report_train_model(work, c, t, r);
    if (engine)
      printf("simulated              %.5g samples/s (mini-batch %s, bubble %.1f%%, SRAM peak %s per core%s)\n",
             sr.samples_per_s, fmt_s(sr.minibatch_s, a, sizeof a), 100 * sr.bubble,
             cli_fmt_bytes((double)sr.sram_peak_bytes, (char[32]){0}, 32), sr.feasible ? "" : ", does not fit");
    if (rep->notes[0]) printf("notes                  %s\n", rep->notes);
    if (output) printf("plan written to %s\n", output);
  }
cleanup:
  sim_train_result_clear(&sr);
  train_result_free(r);
  train_free(t);
  return rc;
}

/* The progress line of a learning method's search (stderr). */
typedef struct search_bar {
  progress bar;
  const char *phase;
  int batch;
} search_bar;

static void search_progress(void *ctx, const char *phase, long done, long total, double best) {
  search_bar *b = ctx;
  if (b->phase != phase) { /* a new phase: a bar of its own */
    if (b->phase) progress_finish(&b->bar, b->bar.total, "%s", b->phase);
    progress_init(&b->bar, stderr, "rl", total, 5.0, -1);
    b->phase = phase;
  }
  progress_update(&b->bar, done, "%s, best %.5g samples/s", phase, best * b->batch);
}

/* The command on one rank of `size` (0 of 1 without --jobs or mpirun): a learning method deals its
 * episodes over the ranks; rank 0 alone prints and writes the plan. */
static int partition(int argc, char **argv, int rank, int size) {
  enum { OPT_NO_SIM = CLI_OPT_FIRST_FREE, OPT_JOBS };
  static const struct option options[] = {
      {"graph", required_argument, NULL, 'g'},   {"chip", required_argument, NULL, 'c'},
      {"method", required_argument, NULL, 'm'},  {"output", required_argument, NULL, 'o'},
      {"json", no_argument, NULL, 'j'},         {"jobs", required_argument, NULL, OPT_JOBS},
      {"quiet", no_argument, NULL, 'q'},
      CLI_METHOD_OPTIONS,
      CLI_SIM_OPTIONS,
      {"no-simulate", no_argument, NULL, OPT_NO_SIM},
      CLI_GRAPH_OPTIONS,
      CLI_OP_TIMES_OPTION,
      CLI_TRAIN_OPTIONS,
      {"help", no_argument, NULL, 'h'},
      {NULL, 0, NULL, 0}};
  const char *graph_path = NULL, *chip_path = CLI_DEFAULT_CHIP, *method = "optimal", *output = NULL,
             *times_path = NULL;
  const char *learning_opt = NULL; /* the first option given that only learning methods take */
  int json = 0, quiet = 0, simulate = 1, opt;
  sim_options so;
  sim_options_init(&so);
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  method_options o;
  method_options_default(&o);
  cli_train_opts to;
  cli_train_opts_init(&to);
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:m:o:jqh" CLI_SIM_SHORT, options, NULL)) != -1) {
    switch (opt) {
    case 'h': {
      char list[1024] = "";
      for (int i = 0; i < method_count(); i++) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "                         %-11s %s\n", method_at(i)->name,
                 method_at(i)->summary);
      }
      printf(usage, list);
      return 0;
    }
    case 'g': graph_path = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'm': method = optarg; break;
    case 'o': output = optarg; break;
    case 'j': json = 1; break;
    case 'q': quiet = 1; break;
    CLI_METHOD_OPTION_CASES:
      if (cli_method_option("partition", opt, optarg, &o)) return 2;
      if (!learning_opt)
        learning_opt = opt == CLI_OPT_EPISODES ? "--episodes"
                       : opt == CLI_OPT_POLICY ? "--policy"
                       : opt == CLI_OPT_INIT   ? "--init"
                                               : NULL;
      break;
    CLI_SIM_OPTION_CASES:
      if (cli_sim_option("partition", opt, optarg, &so)) return 2;
      break;
    case OPT_NO_SIM: simulate = 0; break;
    case OPT_JOBS: /* taken by ranks_start */
      if (!learning_opt && atoi(optarg) > 1) learning_opt = "--jobs";
      break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("partition", opt, optarg, &go)) return 2;
      break;
    case CLI_OPT_OP_TIMES: times_path = optarg; break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("partition", opt, optarg, &to)) return 2;
      break;
    case ':': return cli_usage("partition", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("partition", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("partition", "unexpected argument '%s'", argv[optind]);
  if (!graph_path) return cli_usage("partition", "needs a graph (-g GRAPH)");
  if (cli_train_check("partition", &to, so.microbatches)) return 2;
  if (to.train) {
    so.microbatches = 0;
    o.train = &to.o;
  }
  if (!method_find(method)) {
    char known[256] = "";
    for (int i = 0; i < method_count(); i++) {
      size_t used = strlen(known);
      snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", method_at(i)->name);
    }
    return cli_usage("partition", "no method '%s' (known: %s)", method, known);
  }
  if (learning_opt && !method_find(method)->learning)
    return cli_usage("partition", "%s is for learning methods (rl); %s does not learn", learning_opt, method);
  graph *g = NULL, *timed = NULL;
  optimes *ot = NULL;
  chip *c = NULL;
  plan *p = NULL;
  cost_result *r = NULL;
  sim *engine = NULL;
  sim_result sr;
  memset(&sr, 0, sizeof sr);
  int simulated = 0;
  mp_error err;
  err_clear(&err);
  method_report rep;
  int rc = 0;
  /* SimGrid starts once per process: the engine is up before the method runs and is lent to the
   * methods that simulate (rl), so they share it instead of starting their own. */
  const method_info *mi = method_find(method);
  if (mi && mi->learning) so.routing = SIM_ROUTING_MANY; /* thousands of evaluations repay a slower start */
  if (cli_load_graph(graph_path, &go, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      cli_op_times(times_path, g, c, &timed, &ot, &err) != MP_OK ||
      (simulate && sim_new(c, &so, &engine, &err) != MP_OK)) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  o.sim = engine;
  o.sim_options = &so; /* with --no-simulate rl starts its own engine: the same options */
  o.rank = rank;
  o.ranks = size;
  o.gather = ranks_gather;
  if (rank > 0) output = NULL; /* the first rank writes the plan */
  search_bar sb = {.batch = graph_batch(g)};
  if (mi && mi->learning && !quiet) {
    o.progress = search_progress;
    o.progress_ctx = &sb;
  }
  /* The method, the model and the simulator see the measured times; the plan file names the graph. */
  const graph *work = timed ? timed : g;
  /* The plan file comes last, once the simulation has run: a failed or killed run leaves none.  A
   * method that runs for long without a progress line of its own says so (optimal on thousands of
   * layers reports nothing of its own); learning methods report their episodes instead. */
  char label[96];
  snprintf(label, sizeof label, "meshpipe partition: %s", method);
  progress_ticker ticker = {0};
  if (!o.progress && !quiet && rank == 0) progress_ticker_start(&ticker, stderr, label, 10.0, 10.0);
  mp_status ran = method_run(method, work, c, &o, &p, &rep, &err);
  progress_ticker_stop(&ticker);
  if (sb.phase) progress_finish(&sb.bar, sb.bar.total, "%s", sb.phase); /* before any message */
  if (to.train) {
    rc = ran != MP_OK ? cli_fail(&err) : partition_train(method, &o, work, g, c, p, &rep, engine, output, json);
    goto cleanup;
  }
  if (ran != MP_OK || cost_evaluate(work, c, p, &r, &err) != MP_OK ||
      (simulate && sim_evaluate(engine, work, p, &sr, &err) != MP_OK) ||
      (output && plan_write(p, g, c, output, &err) != MP_OK)) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  if (simulate && ot) sr.op_times_overridden = ot->n_overridden;
  simulated = simulate;
  cost_bound lb;
  cost_lower_bound(work, c, &lb);
  if (json) {
    cJSON *root = report_json(method, &o, g, c, p, r, &lb, &rep, simulated ? &sr : NULL, ot);
    if (!root || jsonio_print(root, &err) != MP_OK) {
      if (!root) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    print_text(method, g, c, p, r, &lb, &rep, simulated ? &sr : NULL, ot);
    if (output) printf("plan written to %s\n", output);
  }
cleanup:
  sim_result_clear(&sr);
  sim_free(engine);
  cost_result_free(r);
  plan_free(p);
  chip_free(c);
  optimes_free(ot);
  graph_free(timed);
  graph_free(g);
  return rc;
}

static int run(int argc, char **argv) {
  int jobs = ranks_jobs_option("partition", argc, argv);
  if (jobs == 0) return 2;
  int rank, size, code = ranks_start("partition", jobs, &rank, &size);
  if (code != 0) return code;
  if (rank > 0) ranks_silence();
  return ranks_finish(partition(argc, argv, rank, size));
}

const cli_command cmd_partition = {"partition", "split a graph over a chip with one partitioner (--method)", run};
