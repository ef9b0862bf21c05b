/* meshpipe split: write a plan's per-group subgraphs with their Send/Recv nodes. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonio.h"
#include "plan.h"
#include "split.h"

static const char usage[] =
    "usage: meshpipe split -g GRAPH [-c CHIP] -p PLAN [-o PARTS.json] [--dtype T] [--batch N] [--no-fuse]\n"
    "\n"
    "Rewrites the plan as distributed TensorFlow does: every tensor that crosses core groups is cut\n"
    "into a Send node in the producer's group and a Recv node in the consumer's group (one Recv per\n"
    "tensor per destination group, shared by all its consumers there).  Writes, per group, its cores,\n"
    "its layers (inputs renamed recv:TENSOR where they arrive from another group), its Recv and its\n"
    "Send nodes.  Without -o the JSON goes to stdout.\n"
    "\n"
    "  -g, --graph GRAPH    workload graph (.json, or .onnx imported on the fly)\n"
    "  -c, --chip CHIP      chip file (default: platforms/mesh8x8.json)\n"
    "  -p, --plan PLAN      plan file (meshpipe partition -o PLAN)\n"
    "  -o, --output FILE    write the groups there, atomically\n"
    "  --dtype T, --batch N, --no-fuse\n"
    "                       ONNX graphs only: as for 'meshpipe import'\n"
    "  --mode MODE          infer (default) or train: every pair also runs backward - per group\n"
    "                       grad_sends (a Recv's tensor's gradient back to its producer's group) and\n"
    "                       grad_recvs (a Send's gradient from each consumer group, added up before the\n"
    "                       producer's backward), as the training simulator moves them\n";

static int run(int argc, char **argv) {
  static const struct option options[] = {
      {"graph", required_argument, NULL, 'g'}, {"chip", required_argument, NULL, 'c'},
      {"plan", required_argument, NULL, 'p'},  {"output", required_argument, NULL, 'o'},
      {"help", no_argument, NULL, 'h'},        CLI_GRAPH_OPTIONS,
      {"mode", required_argument, NULL, CLI_OPT_MODE}, {NULL, 0, NULL, 0}};
  const char *graph_path = NULL, *chip_path = CLI_DEFAULT_CHIP, *plan_path = NULL, *output = NULL;
  int opt;
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  cli_train_opts to;
  cli_train_opts_init(&to);
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":g:c:p:o:h", options, NULL)) != -1) {
    switch (opt) {
    case 'h': return cli_help(usage);
    case 'g': graph_path = optarg; break;
    case 'c': chip_path = optarg; break;
    case 'p': plan_path = optarg; break;
    case 'o': output = optarg; break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("split", opt, optarg, &go)) return 2;
      break;
    case CLI_OPT_MODE:
      if (cli_train_option("split", opt, optarg, &to)) return 2;
      break;
    case ':': return cli_usage("split", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("split", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc) return cli_usage("split", "unexpected argument '%s'", argv[optind]);
  if (!graph_path) return cli_usage("split", "needs a graph (-g GRAPH)");
  if (!plan_path) return cli_usage("split", "needs a plan (-p PLAN)");
  graph *g = NULL;
  chip *c = NULL;
  plan *p = NULL;
  split *s = NULL;
  cJSON *root = NULL;
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (cli_load_graph(graph_path, &go, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      plan_load(plan_path, g, c, &p, &err) != MP_OK || split_new(g, p, &s, &err) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  root = split_to_json(s, g, p, c, to.train);
  if (!root) {
    err_nomem(&err);
    rc = cli_fail(&err);
    goto cleanup;
  }
  if ((output ? jsonio_save(output, root, &err) : jsonio_print(root, &err)) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  if (output) {
    char a[48], b[48];
    fprintf(stderr, "meshpipe split: %s, %s%s written to %s\n", cli_count(s->n_groups, "group", "groups", a, sizeof a),
            cli_count(s->n_pairs, "Send/Recv pair", "Send/Recv pairs", b, sizeof b),
            to.train ? " (and as many gradient pairs)" : "", output);
  }
cleanup:
  cJSON_Delete(root);
  split_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return rc;
}

const cli_command cmd_split = {"split", "write a plan's per-group subgraphs with their Send/Recv nodes", run};
