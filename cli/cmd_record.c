/* meshpipe record: simulate a plan and write the program the simulator ran as a time-independent
 * trace (format: traces/README.md), to replay later on other chips with 'meshpipe replay'. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fileio.h"
#include "jsonio.h"
#include "optimes.h"
#include "plan.h"
#include "report.h"
#include "report_train.h"
#include "sim.h"
#include "sim_train.h"
#include "trace.h"

static const char usage[] =
    "usage: meshpipe record -g GRAPH [-c CHIP] -p PLAN -o RUN.trace [--microbatches M] [--op-times FILE]\n"
    "                       [--json] [--dtype T] [--batch N] [--no-fuse]\n"
    "                       [--mode train [--schedule S] [--optimizer O] [--recompute]]\n"
    "\n"
    "Simulates the plan like 'meshpipe simulate' and writes what every core group did, action by\n"
    "action and without times, as a time-independent trace: per group and micro-batch its computes\n"
    "(flops, all-gathered bytes), sends (bytes to a core), receives (from a core) and DRAM reads, with a\n"
    "header naming the graph, plan, chip and meshpipe version (format: traces/README.md).  'meshpipe\n"
    "replay RUN.trace -c CHIP' runs it on another chip; on this chip it reproduces this report exactly.\n"
    "With --mode train it records one mini-batch of M micro-batches (-M, default 8) as 'simulate --mode\n"
    "train' runs it: per group its forward and backward passes in the schedule's order (backward\n"
    "computes, gradients sent back and waited for), then its weight update, with each stage's training\n"
    "figures, so that a replay reports what 'simulate --mode train' reports on its chip.\n"
    "\n"
    "  -g, --graph GRAPH       workload graph (.json, or .onnx imported on the fly)\n"
    "  -c, --chip CHIP         chip file (default: platforms/mesh8x8.json)\n"
    "  -p, --plan PLAN         plan file (meshpipe partition -o PLAN)\n"
    "  -o, --output FILE       the trace to write (atomically)\n"
    "  -t, --op-times FILE     measured op times, as for 'meshpipe simulate': the trace holds the\n"
    "                          measured work, so a replay needs no times file\n"
    CLI_SIM_HELP
    "  -j, --json              print the report as one JSON object (as 'simulate --json', plus\n"
    "                          trace, trace_actions and trace_bytes)\n"
    "  --dtype T, --batch N, --no-fuse\n"
    "                          ONNX graphs only: as for 'meshpipe import'\n"
    CLI_TRAIN_HELP;

/* Writes t's text to path atomically; *len its size. */
static mp_status write_trace(const trace *t, const char *path, size_t *len, mp_error *err) {
  char *text = NULL;
  mp_status st = trace_to_string(t, &text, len, err);
  if (st == MP_OK) st = fileio_write_atomic(path, text, *len, err);
  free(text);
  return st;
}

static int add_trace_json(cJSON *root, const char *path, const trace *t, size_t len) {
  return cJSON_AddStringToObject(root, "trace", path) &&
         cJSON_AddNumberToObject(root, "trace_actions", (double)trace_count_actions(t)) &&
         cJSON_AddNumberToObject(root, "trace_bytes", (double)len);
}

static void print_recorded(const trace *t, const char *path, size_t len) {
  char b[32], n1[48], n2[48];
  printf("\nrecorded     %ld actions of %s x %s to %s (%s)\n", trace_count_actions(t),
         cli_count(t->n_groups, "group", "groups", n1, sizeof n1),
         cli_count(t->microbatches, "micro-batch", "micro-batches", n2, sizeof n2), path,
         cli_fmt_bytes((double)len, b, sizeof b));
}

/* --mode train: one mini-batch simulated, then recorded. */
static int record_train(const graph *g, const chip *c, const plan *p, const sim_options *so, const train_options *o,
                        const char *path, int json) {
  sim *s = NULL;
  train *t = NULL;
  trace *tr = NULL;
  size_t len = 0;
  sim_train_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (train_new(g, o, &t, &err) != MP_OK || sim_new(c, so, &s, &err) != MP_OK ||
      sim_train_evaluate(s, t, p, &r, &err) != MP_OK || sim_train_record(s, t, p, &tr, &err) != MP_OK ||
      write_trace(tr, path, &len, &err) != MP_OK) {
    rc = cli_fail(&err);
  } else if (json) {
    cJSON *root = sim_train_result_to_json(&r);
    if (!root || !report_add_mesh_json(root, c) || !add_trace_json(root, path, tr, len) ||
        jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    report_train_sim(g->name, c, &r);
    print_recorded(tr, path, len);
  }
  sim_train_result_clear(&r);
  trace_free(tr);
  sim_free(s);
  train_free(t);
  return rc;
}

static int run(int argc, char **argv) {
  static const struct option options[] = {{"graph", required_argument, NULL, 'g'},
                                          {"chip", required_argument, NULL, 'c'},
                                          {"plan", required_argument, NULL, 'p'},
                                          {"output", required_argument, NULL, 'o'},
                                          CLI_SIM_OPTIONS,
                                          {"op-times", required_argument, NULL, 't'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"help", no_argument, NULL, 'h'},
                                          CLI_GRAPH_OPTIONS,
                                          CLI_TRAIN_OPTIONS,
                                          {NULL, 0, NULL, 0}};
  const char *graph_path = NULL, *chip_path = CLI_DEFAULT_CHIP, *plan_path = NULL, *out_path = NULL, *times_path = NULL;
  int json = 0, opt;
  sim_options so;
  sim_options_init(&so);
  so.cache_size = 0;
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  cli_train_opts to;
  cli_train_opts_init(&to);
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:p:o:t:jh" CLI_SIM_SHORT, options, NULL)) != -1) {
    switch (opt) {
    case 'h': return cli_help(usage);
    case 'g': graph_path = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'p': plan_path = optarg; break;
    case 'o': out_path = optarg; break;
    case 't': times_path = optarg; break;
    CLI_SIM_OPTION_CASES:
      if (cli_sim_option("record", opt, optarg, &so)) return 2;
      break;
    case 'j': json = 1; break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("record", opt, optarg, &go)) return 2;
      break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("record", opt, optarg, &to)) return 2;
      break;
    case ':': return cli_usage("record", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("record", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("record", "unexpected argument '%s'", argv[optind]);
  if (!graph_path) return cli_usage("record", "needs a graph (-g GRAPH)");
  if (!plan_path) return cli_usage("record", "needs a plan (-p PLAN)");
  if (!out_path) return cli_usage("record", "needs an output file (-o RUN.trace)");
  if (cli_train_check("record", &to, so.microbatches)) return 2;
  if (to.train) so.microbatches = 0;
  graph *g = NULL, *timed = NULL;
  chip *c = NULL;
  plan *p = NULL;
  optimes *ot = NULL;
  sim *s = NULL;
  trace *t = NULL;
  size_t len = 0;
  sim_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (cli_load_graph(graph_path, &go, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      plan_load(plan_path, g, c, &p, &err) != MP_OK || cli_op_times(times_path, g, c, &timed, &ot, &err) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  const graph *work = timed ? timed : g; /* measured times are in the work the trace records */
  if (to.train) {
    rc = record_train(work, c, p, &so, &to.o, out_path, json);
    goto cleanup;
  }
  if (sim_new(c, &so, &s, &err) != MP_OK || sim_evaluate(s, work, p, &r, &err) != MP_OK ||
      sim_record(s, work, p, so.microbatches, &t, &err) != MP_OK || write_trace(t, out_path, &len, &err) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  if (ot) r.op_times_overridden = ot->n_overridden;
  if (json) {
    cJSON *root = sim_result_to_json(&r);
    if (!root || !report_add_mesh_json(root, c) || !add_trace_json(root, out_path, t, len) ||
        jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    report_print(g->name, c, &r, ot);
    print_recorded(t, out_path, len);
  }
cleanup:
  trace_free(t);
  sim_result_clear(&r);
  sim_free(s);
  optimes_free(ot);
  plan_free(p);
  chip_free(c);
  graph_free(timed);
  graph_free(g);
  return rc;
}

const cli_command cmd_record = {"record", "simulate a plan and write its time-independent trace", run};
