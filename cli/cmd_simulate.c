/* meshpipe simulate: run a plan of a graph on a chip in the SimGrid pipeline simulator. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jsonio.h"
#include "plan.h"
#include "sim.h"

static const char usage[] =
    "usage: meshpipe simulate -g GRAPH [-c CHIP] -p PLAN [--microbatches M] [--fast-gather] [--json] [--verbose]\n"
    "\n"
    "Simulates the plan as a pipeline on the chip with SimGrid: every group of cores runs its layers\n"
    "for M micro-batches (each layer's work split over the group, then its output all-gathered), and\n"
    "tensors crossing groups travel as Send/Recv transfers on the XY routes of the NoC, sharing links.\n"
    "Prints the steady-state throughput, the latency of one sample, the makespan, per stage its\n"
    "compute, communication and idle time, the bottleneck, per-core SRAM and the busiest links.\n"
    "\n"
    "  -g, --graph GRAPH       workload graph (.json, or .onnx imported on the fly)\n"
    "  -c, --chip CHIP         chip file (default: platforms/mesh8x8.json)\n"
    "  -p, --plan PLAN         plan file (meshpipe partition -o PLAN)\n"
    "  -m, --microbatches M    micro-batches to run (default 8)\n"
    "  -l, --links N           busiest links to list (default 8)\n"
    "  -f, --fast-gather       all-gathers load only their chain's two busiest links (faster; other\n"
    "                          transfers crossing a group then contend only at its ends)\n"
    "  -j, --json              print one JSON object (throughput_per_s, makespan_s, latency_s,\n"
    "                          bottleneck_stage, feasible, stages, cores, links, ...)\n"
    "  -v, --verbose           let SimGrid log to stderr\n";

static char *fmt_s(double s, char *buf, size_t n) {
  if (s >= 1 || s == 0)
    snprintf(buf, n, "%.6g s", s);
  else if (s >= 1e-3)
    snprintf(buf, n, "%.6g ms", s * 1e3);
  else if (s >= 1e-6)
    snprintf(buf, n, "%.6g us", s * 1e6);
  else
    snprintf(buf, n, "%.6g ns", s * 1e9);
  return buf;
}

static void print_text(const graph *g, const chip *c, const sim_result *r) {
  char a[32], b[32], d[32], e[32], f[32];
  printf("%s on %s: %d stage%s, %d micro-batches\n", g->name, c->name, r->n_stages, r->n_stages == 1 ? "" : "s",
         r->microbatches);
  printf("throughput   %.6g samples/s (period %s between micro-batch completions)\n", r->throughput_per_s,
         fmt_s(r->period_s, a, sizeof a));
  printf("latency      %s per sample\n", fmt_s(r->latency_s, a, sizeof a));
  printf("makespan     %s for %d micro-batches\n", fmt_s(r->makespan_s, a, sizeof a), r->microbatches);
  printf("analytical   bottleneck %s (%.6g samples/s)\n", fmt_s(r->analytical_bottleneck_s, a, sizeof a),
         r->analytical_bottleneck_s > 0 ? 1 / r->analytical_bottleneck_s : 0.0);
  printf("\n%5s %-11s %-11s %12s %12s %12s %12s %12s %21s\n", "stage", "layers", "cores", "compute", "comm", "dram",
         "idle", "model t_i", "SRAM/core");
  for (int i = 0; i < r->n_stages; i++) {
    const sim_stage_result *s = &r->stages[i];
    char layers[32], cores[32], mem[64];
    snprintf(layers, sizeof layers, "%d-%d", s->first_layer, s->first_layer + s->n_layers - 1);
    snprintf(cores, sizeof cores, "%d-%d", s->first_core, s->first_core + s->n_cores - 1);
    snprintf(mem, sizeof mem, "%s%s", cli_fmt_bytes((double)s->sram_bytes, b, sizeof b), s->fits ? "" : " (spills)");
    printf("%5d %-11s %-11s %12s %12s %12s %12s %12s %21s%s\n", i, layers, cores, fmt_s(s->compute_s, a, sizeof a),
           fmt_s(s->comm_s, d, sizeof d), fmt_s(s->dram_s, e, sizeof e), fmt_s(s->idle_s, f, sizeof f),
           fmt_s(s->analytical_t_s, b, sizeof b), mem, i == r->bottleneck_stage ? "  <- bottleneck" : "");
  }
  printf("(stage times are totals over the %d micro-batches; model t_i is per micro-batch)\n", r->microbatches);
  int over = 0;
  for (int k = 0; k < r->n_cores; k++) over += !r->cores[k].fits;
  if (r->feasible)
    printf("\nmemory       every core's SRAM holds its share\n");
  else
    printf("\nmemory       DOES NOT FIT on %d core%s: %s of weights streamed from DRAM\n", over, over == 1 ? "" : "s",
           cli_fmt_bytes((double)r->dram_bytes, a, sizeof a));
  if (r->n_links > 0) {
    printf("\nbusiest links (bytes over the run, utilisation of the makespan):\n");
    for (int k = 0; k < r->n_links; k++)
      printf("  %-22s %12s  %5.1f%%\n", r->links[k].name, cli_fmt_bytes((double)r->links[k].bytes, a, sizeof a),
             100 * r->links[k].utilisation);
  }
  printf("\nsimulated with %ld SimGrid activities\n", r->activities);
}

static int run(int argc, char **argv) {
  static const struct option options[] = {
      {"graph", required_argument, NULL, 'g'}, {"chip", required_argument, NULL, 'c'},
      {"plan", required_argument, NULL, 'p'},  {"microbatches", required_argument, NULL, 'm'},
      {"links", required_argument, NULL, 'l'}, {"fast-gather", no_argument, NULL, 'f'},
      {"json", no_argument, NULL, 'j'},        {"verbose", no_argument, NULL, 'v'},
      {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
  const char *graph_path = NULL, *chip_path = CLI_DEFAULT_CHIP, *plan_path = NULL;
  int json = 0, opt;
  long v;
  sim_options so;
  sim_options_init(&so);
  so.cache_size = 0;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:p:m:l:fjvh", options, NULL)) != -1) {
    switch (opt) {
    case 'h': return cli_help(usage);
    case 'g': graph_path = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'p': plan_path = optarg; break;
    case 'm':
      if (cli_parse_int("simulate", "--microbatches", optarg, 1, 1000000L, &v)) return 2;
      so.microbatches = (int)v;
      break;
    case 'l':
      if (cli_parse_int("simulate", "--links", optarg, 0, 100000L, &v)) return 2;
      so.top_links = (int)v;
      break;
    case 'f': so.fast_gather = 1; break;
    case 'j': json = 1; break;
    case 'v': so.verbose = 1; break;
    case ':': return cli_usage("simulate", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("simulate", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("simulate", "unexpected argument '%s'", argv[optind]);
  if (!graph_path) return cli_usage("simulate", "needs a graph (-g GRAPH)");
  if (!plan_path) return cli_usage("simulate", "needs a plan (-p PLAN)");
  graph *g = NULL;
  chip *c = NULL;
  plan *p = NULL;
  sim *s = NULL;
  sim_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (cli_load_graph(graph_path, NULL, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      plan_load(plan_path, g, c, &p, &err) != MP_OK || sim_new(c, &so, &s, &err) != MP_OK ||
      sim_evaluate(s, g, p, &r, &err) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  if (json) {
    cJSON *root = sim_result_to_json(&r);
    if (!root || jsonio_print(root, &err) != MP_OK) {
      if (!root) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    print_text(g, c, &r);
  }
cleanup:
  sim_result_clear(&r);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return rc;
}

const cli_command cmd_simulate = {"simulate", "simulate a plan on a chip with SimGrid (throughput, latency, links)",
                                  run};
