/* meshpipe simulate: run a plan of a graph on a chip in the SimGrid pipeline simulator. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonio.h"
#include "optimes.h"
#include "plan.h"
#include "report.h"
#include "report_train.h"
#include "sim.h"
#include "timeline.h"

static const char usage[] =
    "usage: meshpipe simulate -g GRAPH [-c CHIP] -p PLAN [--microbatches M] [--fast-gather] [--fast-streams]\n"
    "                         [--json] [--verbose] [--timeline RUN.json] [--paje RUN.trace] [--op-times FILE]\n"
    "                         [--dtype T] [--batch N] [--no-fuse] [--mode train [--schedule S] [--optimizer O]\n"
    "                         [--recompute]]\n"
    "\n"
    "Simulates the plan as a pipeline on the chip with SimGrid: every group of cores runs its layers\n"
    "for M micro-batches (each layer's work split over the group, then its output all-gathered), and\n"
    "tensors crossing groups travel as Send/Recv transfers on the XY routes of the NoC, sharing links.\n"
    "Prints the steady-state throughput in samples/s (micro-batches/s x the graph's batch), the latency\n"
    "of one micro-batch, the makespan, per stage its compute, communication and idle time, the\n"
    "bottleneck, per-core SRAM and the busiest links; on a chip with energy figures also the joules per\n"
    "sample (in total, by kind and per stage), the average power, samples/J and effective TOPS/W\n"
    "(traces/README.md, \"Energy per sample\").  The plan must have been made for this graph (its\n"
    "recorded graph hash is checked); the chip may differ from the one it was made for.\n"
    "With --mode train it simulates one mini-batch of M micro-batches (-M, default 8) trained under the\n"
    "schedule: forward and backward passes in the schedule's order, activations forward and gradients\n"
    "backward through Send/Recv pairs, the weight update at the end; it prints samples/s, the bubble, per\n"
    "stage its forward, backward, update and idle time and the peak of each core's SRAM over the schedule.\n"
    "\n"
    "  -g, --graph GRAPH       workload graph (.json, or .onnx imported on the fly)\n"
    "  -c, --chip CHIP         chip file (default: platforms/mesh8x8.json)\n"
    "  -p, --plan PLAN         plan file (meshpipe partition -o PLAN)\n"
    CLI_SIM_HELP
    "  -j, --json              print one JSON object (samples_per_s, microbatches_per_s, batch, makespan_s,\n"
    "                          latency_s, bottleneck_stage, feasible, stages, cores, links, mesh, ...;\n"
    "                          with energy figures energy_j_per_sample, power_w, samples_per_j,\n"
    "                          tops_per_w, energy by kind and per stage energy_j)\n"
    "  -T, --timeline FILE     also write the run as Chrome trace events (Perfetto, chrome://tracing):\n"
    "                          a track per core and per busy NoC link, Send/Recv arrows, SRAM counters;\n"
    "                          with --mode train each forward, backward ('OP (backward)'), gradient sent\n"
    "                          back ('grad TENSOR') and update of the mini-batch\n"
    "  -P, --paje FILE         also write SimGrid's own Paje trace of the run (ViTE, PajeNG)\n"
    "  -t, --op-times FILE     measured op times (CSV 'op,seconds' lines under an optional header 'op,UNIT',\n"
    "                          UNIT seconds, ms, us or ns; or JSON {\"op\": seconds}), on one core of the\n"
    "                          chip's typical type: those ops take them in the simulation and in the model\n"
    "                          figures printed beside it; the report says how many\n"
    "  --dtype T, --batch N, --no-fuse\n"
    "                          ONNX graphs only: as for 'meshpipe import'\n"
    CLI_TRAIN_HELP;

static void print_timeline(const timeline *tl, const char *path) {
  printf("timeline     %zu simulated activities written to %s (Chrome trace events, ts in us of\n"
         "             simulated time; each becomes a slice, a counter or a flow arrow)\n",
         timeline_count(tl), path);
}

/* --mode train: one mini-batch under the schedule. */
static int simulate_train(const graph *g, const chip *c, const plan *p, const sim_options *so, const train_options *o,
                          const char *timeline_path, int json) {
  sim *s = NULL;
  train *t = NULL;
  timeline *tl = NULL;
  sim_train_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (train_new(g, o, &t, &err) != MP_OK || sim_new(c, so, &s, &err) != MP_OK ||
      (timeline_path && timeline_new(c, g->name, &tl, &err) != MP_OK) ||
      (tl ? sim_train_evaluate_timeline(s, t, p, tl, &r, &err) : sim_train_evaluate(s, t, p, &r, &err)) != MP_OK ||
      (tl && timeline_write(tl, timeline_path, &err) != MP_OK)) {
    rc = cli_fail(&err);
    sim_train_result_clear(&r);
  } else if (json) {
    cJSON *root = sim_train_result_to_json(&r);
    if (!root || !report_add_mesh_json(root, c) || jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
    sim_train_result_clear(&r);
  } else {
    report_train_sim(g->name, c, &r);
    sim_train_result_clear(&r);
    if (tl) print_timeline(tl, timeline_path);
    if (so->paje_file) printf("paje         SimGrid's Paje trace goes to %s\n", so->paje_file);
  }
  sim_free(s);
  timeline_free(tl);
  train_free(t);
  return rc;
}

static int run(int argc, char **argv) {
  static const struct option options[] = {{"graph", required_argument, NULL, 'g'},
                                          {"chip", required_argument, NULL, 'c'},
                                          {"plan", required_argument, NULL, 'p'},
                                          CLI_SIM_OPTIONS,
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          {"timeline", required_argument, NULL, 'T'},
                                          {"paje", required_argument, NULL, 'P'},
                                          {"op-times", required_argument, NULL, 't'},
                                          CLI_GRAPH_OPTIONS,
                                          CLI_TRAIN_OPTIONS,
                                          {NULL, 0, NULL, 0}};
  const char *graph_path = NULL, *chip_path = CLI_DEFAULT_CHIP, *plan_path = NULL, *timeline_path = NULL,
             *times_path = NULL;
  int json = 0, opt;
  sim_options so;
  sim_options_init(&so);
  so.cache_size = 0;
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  cli_train_opts to;
  cli_train_opts_init(&to);
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:p:jhT:P:t:" CLI_SIM_SHORT, options, NULL)) != -1) {
    switch (opt) {
    case 'h': return cli_help(usage);
    case 'g': graph_path = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'p': plan_path = optarg; break;
    CLI_SIM_OPTION_CASES:
      if (cli_sim_option("simulate", opt, optarg, &so)) return 2;
      break;
    case 'j': json = 1; break;
    case 'T': timeline_path = optarg; break;
    case 'P': so.paje_file = optarg; break;
    case 't': times_path = optarg; break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("simulate", opt, optarg, &go)) return 2;
      break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("simulate", opt, optarg, &to)) return 2;
      break;
    case ':': return cli_usage("simulate", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("simulate", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("simulate", "unexpected argument '%s'", argv[optind]);
  if (!graph_path) return cli_usage("simulate", "needs a graph (-g GRAPH)");
  if (!plan_path) return cli_usage("simulate", "needs a plan (-p PLAN)");
  if (cli_train_check("simulate", &to, so.microbatches)) return 2;
  if (to.train) so.microbatches = 0;
  graph *g = NULL, *timed = NULL;
  chip *c = NULL;
  plan *p = NULL;
  sim *s = NULL;
  optimes *ot = NULL;
  timeline *tl = NULL;
  sim_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (cli_load_graph(graph_path, &go, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      plan_load(plan_path, g, c, &p, &err) != MP_OK || cli_op_times(times_path, g, c, &timed, &ot, &err) != MP_OK ||
      (timeline_path && !to.train && timeline_new(c, g->name, &tl, &err) != MP_OK)) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  const graph *work = timed ? timed : g; /* the model and the simulator both see the measured times */
  if (to.train) {
    rc = simulate_train(work, c, p, &so, &to.o, timeline_path, json);
    goto cleanup;
  }
  if (sim_new(c, &so, &s, &err) != MP_OK ||
      (tl ? sim_evaluate_timeline(s, work, p, so.microbatches, tl, &r, &err) : sim_evaluate(s, work, p, &r, &err)) !=
          MP_OK ||
      (tl && timeline_write(tl, timeline_path, &err) != MP_OK)) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  if (ot) r.op_times_overridden = ot->n_overridden;
  if (json) {
    cJSON *root = sim_result_to_json(&r);
    if (!root || !report_add_mesh_json(root, c) || jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    report_print(g->name, c, &r, ot);
    if (tl) print_timeline(tl, timeline_path);
    if (so.paje_file) printf("paje         SimGrid's Paje trace goes to %s\n", so.paje_file);
  }
cleanup:
  sim_result_clear(&r);
  sim_free(s);
  timeline_free(tl);
  optimes_free(ot);
  plan_free(p);
  chip_free(c);
  graph_free(timed);
  graph_free(g);
  return rc;
}

const cli_command cmd_simulate = {"simulate", "simulate a plan on a chip with SimGrid (throughput, latency, links)",
                                  run};
