/* meshpipe compare: every partitioner on one graph and chip, side by side. */
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
#include "report.h"
#include "report_train.h"
#include "sim.h"
#include "sim_train.h"
#include "train.h"

static const char usage[] =
    "usage: meshpipe compare -g GRAPH [-c CHIP] [--methods a,b,...] [--json] [options]\n"
    "\n"
    "Runs partitioners on the same graph and chip and prints one row each: the period of its plan in the\n"
    "analytical model and its gap to optimal's (the least the model knows), what binds the period and\n"
    "how many stages each cause binds (compute, all-gather, send, sram: waiting for weights or activations\n"
    "streamed from DRAM because SRAM is short; or a NoC link - noc - or a DRAM port - dram), whether the\n"
    "plan fits memory, the simulated steady-state throughput in samples/s (SimGrid), its speed-up over\n"
    "the 'even' split, and the solve time.  Optimal, the lower bound and the even split are computed even\n"
    "when not listed.\n"
    "\n"
    "  -g, --graph GRAPH     workload graph (.json, or .onnx imported on the fly)\n"
    "  -c, --chip CHIP       chip file (default: platforms/mesh8x8.json)\n"
    "  --methods LIST        comma-separated method names, or 'all' (default: every method of 'meshpipe\n"
    "                        partition --help' but the learning ones: rl trains on the simulator for\n"
    "                        seconds to minutes where the others take milliseconds; add it with\n"
    "                        --methods all or by name)\n"
    "  -j, --json            one JSON object: graph, batch, chip, optimum_s, lower_bound_s and a \"methods\"\n"
    "                        array: per method model_period_s, model_samples_per_s, binds, binds_stage,\n"
    "                        binds_link, why, stages_binding, stages (each with binds), feasible,\n"
    "                        simulated_samples_per_s (and on a chip with energy figures\n"
    "                        simulated_energy_j_per_sample, simulated_samples_per_j, simulated_power_w), ...\n"
    "  --seed S, --tau T, --max-step N, --episodes N, --policy FILE, --init METHOD, --objective O\n"
    "                        passed to every method (see 'meshpipe partition --help')\n"
    "  -M, --microbatches M, -l, --links N, -f, --fast-gather, --fast-streams, -v, --verbose\n"
    "                        simulator options, as for 'meshpipe simulate'\n"
    "  --no-simulate         analytical figures only\n"
    "  --dtype T, --batch N, --no-fuse\n"
    "                        ONNX graphs only: as for 'meshpipe import'; at --batch N a micro-batch is N\n"
    "                        samples\n"
    CLI_OP_TIMES_HELP
    CLI_TRAIN_HELP
    "                          With --mode train each row is the training model of the method's plan (its\n"
    "                          period per micro-batch, gap, samples/s over a mini-batch of -M micro-batches,\n"
    "                          default 8) and one simulated mini-batch: samples/s, bubble, SRAM peak per core\n";

#define MAX_ROWS 32

typedef struct row {
  const char *method;
  plan *p;
  cost_result *r;
  method_report rep;
  int simulated;
  double samples_per_s, period_s; /* simulated */
  energy_summary energy;          /* simulated, on a chip with energy figures */
} row;

#define fmt_s report_fmt_s

/* Splits list at commas into names (pointers into list, which is modified); returns the count or -1
 * naming the first unknown method in *bad. */
static int parse_methods(char *list, const char **names, int max, const char **bad) {
  int n = 0;
  for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!method_find(t) || n == max) {
      *bad = t;
      return -1;
    }
    names[n++] = t;
  }
  return n;
}

static mp_status run_one(const char *name, const graph *g, const chip *c, const method_options *o, row *out,
                         mp_error *err) {
  out->method = name;
  mp_status st = method_run(name, g, c, o, &out->p, &out->rep, err);
  if (st == MP_OK) st = cost_evaluate(g, c, out->p, &out->r, err);
  return st;
}

static void row_clear(row *r) {
  plan_free(r->p);
  cost_result_free(r->r);
  memset(r, 0, sizeof *r);
}

static double gap_pct(double v, double best) { return best > 0 ? 100 * (v / best - 1) : 0; }

/* What binds a method's plan, per run and per stage, into its JSON object e; 0 when out of memory. */
static int add_binds_json(cJSON *e, const cost_result *r, const chip *c, int batch) {
  char why[256];
  cJSON *stages = NULL;
  int ok = cJSON_AddNumberToObject(e, "model_samples_per_s", r->period_s > 0 ? batch / r->period_s : 0.0) &&
           binds_add_run_json(e, r, c) && cJSON_AddStringToObject(e, "why", report_binds(r, c, why, sizeof why)) &&
           (stages = cJSON_AddArrayToObject(e, "stages"));
  for (int i = 0; ok && i < r->n_stages; i++) {
    const cost_stage *s = &r->stages[i];
    int layers[2] = {s->first_layer, s->first_layer + s->n_layers - 1}, cores[2] = {s->first_core,
                                                                                    s->first_core + s->n_cores - 1};
    cJSON *o = cJSON_CreateObject();
    ok = o && cJSON_AddItemToArray(stages, o) && cJSON_AddItemToObject(o, "layers", cJSON_CreateIntArray(layers, 2)) &&
         cJSON_AddItemToObject(o, "cores", cJSON_CreateIntArray(cores, 2)) && cJSON_AddNumberToObject(o, "t_s", s->time_s) &&
         cJSON_AddBoolToObject(o, "fits", s->fits) && binds_add_stage_json(o, s);
  }
  return ok;
}

/* A method's plan trained: the training model and one simulated mini-batch (when simulated). */
typedef struct train_row {
  const char *method;
  plan *p;
  train_result *r;
  method_report rep;
  sim_train_result sr;
  int simulated;
} train_row;

static void train_row_clear(train_row *r) {
  plan_free(r->p);
  train_result_free(r->r);
  sim_train_result_clear(&r->sr);
  memset(r, 0, sizeof *r);
}

static mp_status train_one(const char *name, const graph *g, const chip *c, const method_options *o, train *t,
                           sim *engine, train_row *out, mp_error *err) {
  out->method = name;
  mp_status st = method_run(name, g, c, o, &out->p, &out->rep, err);
  if (st == MP_OK) st = train_evaluate(t, c, out->p, &out->r, err);
  if (st == MP_OK && engine) st = sim_train_evaluate(engine, t, out->p, &out->sr, err);
  out->simulated = st == MP_OK && engine;
  return st;
}

static int train_row_json(cJSON *arr, const train_row *r, double opt_s, const train_row *even) {
  cJSON *e = cJSON_CreateObject(), *ac = NULL;
  int ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "method", r->method) &&
           cJSON_AddNumberToObject(e, "model_period_s", r->r->period_s) &&
           cJSON_AddNumberToObject(e, "gap_to_optimum_pct", gap_pct(r->r->period_s, opt_s)) &&
           cJSON_AddNumberToObject(e, "model_minibatch_s", r->r->minibatch_s) &&
           cJSON_AddNumberToObject(e, "model_samples_per_s", r->r->samples_per_s) &&
           cJSON_AddNumberToObject(e, "model_bubble", r->r->bubble) && cJSON_AddBoolToObject(e, "feasible", r->r->feasible) &&
           cJSON_AddNumberToObject(e, "mem_ratio", r->r->mem_ratio) &&
           cJSON_AddNumberToObject(e, "n_stages", r->r->n_stages) && cJSON_AddNumberToObject(e, "solve_s", r->rep.solve_s) &&
           cJSON_AddStringToObject(e, "notes", r->rep.notes) && (ac = cJSON_AddArrayToObject(e, "arranged_core"));
  if (ok && r->simulated)
    ok = cJSON_AddNumberToObject(e, "simulated_samples_per_s", r->sr.samples_per_s) &&
         cJSON_AddNumberToObject(e, "simulated_minibatch_s", r->sr.minibatch_s) &&
         cJSON_AddNumberToObject(e, "simulated_bubble", r->sr.bubble) &&
         cJSON_AddNumberToObject(e, "sram_peak_bytes", (double)r->sr.sram_peak_bytes) &&
         cJSON_AddBoolToObject(e, "simulated_feasible", r->sr.feasible) &&
         cJSON_AddNumberToObject(e, "speedup_over_even", r->sr.samples_per_s / even->sr.samples_per_s);
  for (int k = 0; ok && k < r->p->n_cores; k++) ok = cJSON_AddItemToArray(ac, cJSON_CreateNumber(r->p->arranged[k]));
  return ok;
}

/* --mode train: the named methods' plans trained under o->train, beside optimal's and even's. */
static int compare_train(const char **names, int n, const graph *work, const graph *g, const chip *c,
                         const method_options *o, sim *engine, int json) {
  train_row rows[MAX_ROWS], best, even;
  memset(rows, 0, sizeof rows);
  memset(&best, 0, sizeof best);
  memset(&even, 0, sizeof even);
  train *t = NULL;
  mp_error err;
  err_clear(&err);
  int rc = 0;
  mp_status st = train_new(work, o->train, &t, &err);
  if (st == MP_OK) st = train_one("optimal", work, c, o, t, NULL, &best, &err);
  if (st == MP_OK) st = train_one("even", work, c, o, t, engine, &even, &err);
  for (int i = 0; i < n && st == MP_OK; i++) st = train_one(names[i], work, c, o, t, engine, &rows[i], &err);
  if (st != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  double opt_s = best.r->period_s;
  if (json) {
    char hex[17];
    cJSON *root = cJSON_CreateObject(), *arr = NULL;
    int ok = root && cJSON_AddStringToObject(root, "mode", "train") && cJSON_AddStringToObject(root, "graph", g->name) &&
             cJSON_AddStringToObject(root, "graph_hash", fileio_hash_hex(g->hash, hex)) &&
             cJSON_AddNumberToObject(root, "batch", graph_batch(work)) && cJSON_AddStringToObject(root, "chip", c->name) &&
             cJSON_AddStringToObject(root, "chip_hash", fileio_hash_hex(c->hash, hex)) &&
             jsonio_add_u64(root, "seed", o->seed) &&
             cJSON_AddStringToObject(root, "schedule", train_schedule_name(o->train->schedule)) &&
             cJSON_AddStringToObject(root, "optimizer", train_optimizer_name(o->train->optimizer)) &&
             cJSON_AddNumberToObject(root, "microbatches", o->train->microbatches) &&
             cJSON_AddBoolToObject(root, "recompute", o->train->recompute) &&
             cJSON_AddNumberToObject(root, "optimum_s", opt_s) &&
             cJSON_AddBoolToObject(root, "optimum_feasible", best.r->feasible) &&
             (arr = cJSON_AddArrayToObject(root, "methods"));
    for (int i = 0; ok && i < n; i++) ok = train_row_json(arr, &rows[i], opt_s, &even);
    if (!ok) err_nomem(&err);
    else jsonio_print(root, &err);
    if (err.status != MP_OK) rc = cli_fail(&err);
    cJSON_Delete(root);
  } else {
    char a[32], b[32], setup[256];
    printf("%s (%d layers) on %s (%d cores) trained: optimal's model period %s per micro-batch%s\n", g->name,
           g->n_ops, c->name, c->n_cores, fmt_s(opt_s, a, sizeof a), best.r->feasible ? "" : " (streaming from DRAM)");
    printf("training: %s\n", report_train_setup(t, setup, sizeof setup));
    printf("\n%-11s %12s %9s %7s %8s %11s %11s %7s %10s %9s %11s\n", "method", "model period", "gap", "stages",
           "memory", "model sps", "samples/s", "bubble", "SRAM peak", "vs even", "solve");
    for (int i = 0; i < n; i++) {
      const train_row *r = &rows[i];
      char mem[16] = "fits", thr[32] = "-", bub[16] = "-", peak[32] = "-", speedup[32] = "-";
      if (!r->r->feasible) snprintf(mem, sizeof mem, "%.2fx", r->r->mem_ratio);
      if (r->simulated) {
        snprintf(thr, sizeof thr, "%.4g", r->sr.samples_per_s);
        snprintf(bub, sizeof bub, "%.1f%%", 100 * r->sr.bubble);
        cli_fmt_bytes((double)r->sr.sram_peak_bytes, peak, sizeof peak);
        snprintf(speedup, sizeof speedup, "%.2fx", r->sr.samples_per_s / even.sr.samples_per_s);
      }
      printf("%-11s %12s %8.1f%% %7d %8s %11.4g %11s %7s %10s %9s %11s\n", r->method,
             fmt_s(r->r->period_s, a, sizeof a), gap_pct(r->r->period_s, opt_s), r->r->n_stages, mem,
             r->r->samples_per_s, thr, bub, peak, speedup, fmt_s(r->rep.solve_s, b, sizeof b));
    }
    printf("\n(model period: the training model's slowest stage per micro-batch, forward and backward; gap: over\n"
           " optimal's; memory: 'fits' or the largest per-core need over SRAM; model sps: samples/s over the\n"
           " model's mini-batch; samples/s, bubble, SRAM peak: one simulated mini-batch of %d micro-batches%s)\n",
           o->train->microbatches, engine ? "" : ", not run (--no-simulate)");
  }
cleanup:
  for (int i = 0; i < n; i++) train_row_clear(&rows[i]);
  train_row_clear(&best);
  train_row_clear(&even);
  train_free(t);
  return rc;
}

static int run(int argc, char **argv) {
  enum { OPT_METHODS = CLI_OPT_FIRST_FREE, OPT_NO_SIM };
  static const struct option options[] = {
      {"graph", required_argument, NULL, 'g'},   {"chip", required_argument, NULL, 'c'},
      {"methods", required_argument, NULL, OPT_METHODS}, {"json", no_argument, NULL, 'j'},
      CLI_METHOD_OPTIONS,
      CLI_SIM_OPTIONS, {"no-simulate", no_argument, NULL, OPT_NO_SIM},
      CLI_GRAPH_OPTIONS, CLI_OP_TIMES_OPTION, CLI_TRAIN_OPTIONS,
      {"help", no_argument, NULL, 'h'},          {NULL, 0, NULL, 0}};
  const char *graph_path = NULL, *chip_path = CLI_DEFAULT_CHIP, *times_path = NULL;
  char *methods_arg = NULL;
  int json = 0, simulate = 1, opt;
  sim_options so;
  sim_options_init(&so);
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  method_options o;
  method_options_default(&o);
  cli_train_opts to;
  cli_train_opts_init(&to);
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:jh" CLI_SIM_SHORT, options, NULL)) != -1) {
    switch (opt) {
    case 'h': return cli_help(usage);
    case 'g': graph_path = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'j': json = 1; break;
    case OPT_METHODS: methods_arg = optarg; break;
    CLI_METHOD_OPTION_CASES:
      if (cli_method_option("compare", opt, optarg, &o)) return 2;
      break;
    CLI_SIM_OPTION_CASES:
      if (cli_sim_option("compare", opt, optarg, &so)) return 2;
      break;
    case OPT_NO_SIM: simulate = 0; break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("compare", opt, optarg, &go)) return 2;
      break;
    case CLI_OPT_OP_TIMES: times_path = optarg; break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("compare", opt, optarg, &to)) return 2;
      break;
    case ':': return cli_usage("compare", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("compare", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("compare", "unexpected argument '%s'", argv[optind]);
  if (!graph_path) return cli_usage("compare", "needs a graph (-g GRAPH)");
  if (cli_train_check("compare", &to, so.microbatches)) return 2;
  if (to.train) {
    so.microbatches = 0;
    o.train = &to.o;
  }
  const char *names[MAX_ROWS];
  int n = 0;
  char *copy = NULL;
  if (methods_arg && strcmp(methods_arg, "all") == 0) {
    for (int i = 0; i < method_count() && n < MAX_ROWS; i++) names[n++] = method_at(i)->name;
  } else if (methods_arg) {
    const char *bad = NULL;
    copy = strdup(methods_arg);
    if (!copy) return cli_usage("compare", "out of memory");
    n = parse_methods(copy, names, MAX_ROWS, &bad);
    if (n <= 0) {
      int rc = cli_usage("compare", bad ? "no method '%s' (see 'meshpipe partition --help')" : "--methods is empty%s",
                         bad ? bad : "");
      free(copy);
      return rc;
    }
  } else {
    for (int i = 0; i < method_count() && n < MAX_ROWS; i++)
      if (!method_at(i)->learning) names[n++] = method_at(i)->name;
  }
  graph *g = NULL, *timed = NULL;
  optimes *ot = NULL;
  chip *c = NULL;
  row rows[MAX_ROWS], best, even;
  memset(rows, 0, sizeof rows);
  memset(&best, 0, sizeof best);
  memset(&even, 0, sizeof even);
  sim *engine = NULL;
  mp_error err;
  err_clear(&err);
  int rc = 0;
  /* One engine for the whole command (SimGrid starts once per process), up before any method runs and
   * lent to the methods that simulate (rl). */
  if (cli_load_graph(graph_path, &go, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      cli_op_times(times_path, g, c, &timed, &ot, &err) != MP_OK ||
      (simulate && sim_new(c, &so, &engine, &err) != MP_OK)) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  o.sim = engine;
  o.sim_options = &so;
  const graph *work = timed ? timed : g; /* every method, the model and the simulator see the measured times */
  int batch = graph_batch(g);
  if (to.train) {
    rc = compare_train(names, n, work, g, c, &o, engine, json);
    goto cleanup;
  }
  if (run_one("optimal", work, c, &o, &best, &err) != MP_OK || run_one("even", work, c, &o, &even, &err) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  for (int i = 0; i < n; i++)
    if (run_one(names[i], work, c, &o, &rows[i], &err) != MP_OK) {
      rc = cli_fail(&err);
      goto cleanup;
    }
  if (simulate) {
    for (int i = -1; i < n; i++) {
      row *r = i < 0 ? &even : &rows[i];
      sim_result sr;
      memset(&sr, 0, sizeof sr);
      if (sim_evaluate(engine, work, r->p, &sr, &err) != MP_OK) {
        rc = cli_fail(&err);
        goto cleanup;
      }
      r->simulated = 1;
      r->samples_per_s = sr.samples_per_s;
      r->period_s = sr.period_s;
      r->energy = sr.energy;
      sim_result_clear(&sr);
    }
  }
  cost_bound lb;
  cost_lower_bound(work, c, &lb);
  double opt_s = best.r->period_s;
  if (json) {
    char hex[17];
    cJSON *root = cJSON_CreateObject(), *arr = NULL;
    int ok = root && cJSON_AddStringToObject(root, "graph", g->name) &&
             cJSON_AddStringToObject(root, "graph_hash", fileio_hash_hex(g->hash, hex)) &&
             cJSON_AddNumberToObject(root, "batch", batch) &&
             (!ot || (cJSON_AddStringToObject(root, "op_times", ot->file) &&
                      cJSON_AddNumberToObject(root, "op_times_overridden", ot->n_overridden))) &&
             cJSON_AddStringToObject(root, "chip", c->name) &&
             cJSON_AddStringToObject(root, "chip_hash", fileio_hash_hex(c->hash, hex)) &&
             jsonio_add_u64(root, "seed", o.seed) && cJSON_AddNumberToObject(root, "optimum_s", opt_s) &&
             cJSON_AddBoolToObject(root, "optimum_feasible", best.r->feasible) &&
             cJSON_AddNumberToObject(root, "lower_bound_s", lb.bound_s) &&
             cJSON_AddNumberToObject(root, "microbatches", so.microbatches) &&
             (arr = cJSON_AddArrayToObject(root, "methods"));
    for (int i = 0; ok && i < n; i++) {
      const row *r = &rows[i];
      cJSON *e = cJSON_CreateObject(), *ac = NULL;
      ok = e && cJSON_AddItemToArray(arr, e) && cJSON_AddStringToObject(e, "method", r->method) &&
           cJSON_AddNumberToObject(e, "model_period_s", r->r->period_s) &&
           cJSON_AddStringToObject(e, "binding", cost_binding_name(r->r->binding)) &&
           cJSON_AddNumberToObject(e, "gap_to_optimum_pct", gap_pct(r->r->period_s, opt_s)) &&
           cJSON_AddBoolToObject(e, "feasible", r->r->feasible) &&
           cJSON_AddNumberToObject(e, "mem_ratio", r->r->mem_ratio) &&
           cJSON_AddNumberToObject(e, "n_stages", r->r->n_stages) && cJSON_AddNumberToObject(e, "solve_s", r->rep.solve_s) &&
           cJSON_AddStringToObject(e, "notes", r->rep.notes) && add_binds_json(e, r->r, c, batch) &&
           (ac = cJSON_AddArrayToObject(e, "arranged_core"));
      if (ok && r->simulated)
        ok = cJSON_AddNumberToObject(e, "simulated_samples_per_s", r->samples_per_s) &&
             cJSON_AddNumberToObject(e, "simulated_period_s", r->period_s) &&
             cJSON_AddNumberToObject(e, "speedup_over_even", r->samples_per_s / even.samples_per_s) &&
             (!c->has_energy || (cJSON_AddNumberToObject(e, "simulated_energy_j_per_sample", r->energy.j_per_sample) &&
                                 cJSON_AddNumberToObject(e, "simulated_samples_per_j", r->energy.samples_per_j) &&
                                 cJSON_AddNumberToObject(e, "simulated_power_w", r->energy.power_w)));
      for (int k = 0; ok && k < r->p->n_cores; k++) ok = cJSON_AddItemToArray(ac, cJSON_CreateNumber(r->p->arranged[k]));
    }
    if (!ok) err_nomem(&err);
    else jsonio_print(root, &err);
    if (err.status != MP_OK) rc = cli_fail(&err);
    cJSON_Delete(root);
  } else {
    char a[32], b[32], per[64] = "";
    if (batch > 1) snprintf(per, sizeof per, ", batch %d: a micro-batch is %d samples", batch, batch);
    printf("%s (%d layers%s) on %s (%d cores): optimal's model period %s%s, lower bound %s\n", g->name, g->n_ops, per,
           c->name, c->n_cores, fmt_s(opt_s, a, sizeof a), best.r->feasible ? "" : " (streaming from DRAM)",
           fmt_s(lb.bound_s, b, sizeof b));
    if (ot) printf("op times: %d of %d ops take the measured times of %s\n", ot->n_overridden, ot->n_layers, ot->file);
    int joules = c->has_energy && simulate; /* a samples/J column */
    printf("\n%-11s %12s %9s %-10s %7s %-26s %8s %11s %9s %11s%s\n", "method", "model period", "gap", "binds", "stages",
           "stages bound by", "memory", "samples/s", "vs even", "solve", joules ? "   samples/J" : "");
    for (int i = 0; i < n; i++) {
      const row *r = &rows[i];
      char mem[16] = "fits";
      if (!r->r->feasible) snprintf(mem, sizeof mem, "%.2fx", r->r->mem_ratio);
      char thr[32] = "-", speedup[32] = "-";
      if (r->simulated) {
        snprintf(thr, sizeof thr, "%.4g", r->samples_per_s);
        snprintf(speedup, sizeof speedup, "%.2fx", r->samples_per_s / even.samples_per_s);
      }
      binds_verdict v;
      binds_run(r->r, &v);
      char by[128];
      char spj[32] = "";
      if (joules) snprintf(spj, sizeof spj, " %11.4g", r->energy.samples_per_j);
      printf("%-11s %12s %8.1f%% %-10s %7d %-26s %8s %11s %9s %11s%s\n", r->method, fmt_s(r->r->period_s, a, sizeof a),
             gap_pct(r->r->period_s, opt_s), binds_name(v.kind), r->r->n_stages,
             report_stages_binding(r->r, by, sizeof by), mem, thr, speedup, fmt_s(r->rep.solve_s, b, sizeof b), spj);
    }
    printf("\n(gap: model period over optimal's; binds: what sets the period in the model - a stage's compute,\n"
           " all-gathers, Sends or sram (waiting for what its SRAM cannot hold, streamed from DRAM), or the load\n"
           " of a NoC link (noc) or a DRAM port (dram); stages bound by: the same per stage; memory: 'fits' or\n"
           " the largest per-core need over SRAM; samples/s: simulated, steady state%s.)\n",
           joules ? ";\n samples/J: simulated, with the chip's energy figures" : "");
  }
cleanup:
  for (int i = 0; i < n; i++) row_clear(&rows[i]);
  row_clear(&best);
  row_clear(&even);
  sim_free(engine);
  chip_free(c);
  optimes_free(ot);
  graph_free(timed);
  graph_free(g);
  free(copy);
  return rc;
}

const cli_command cmd_compare = {"compare", "every partitioner on one graph and chip, side by side", run};
