/* meshpipe import: turns an ONNX model into a meshpipe workload graph with a cost per operator. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonio.h"
#include "onnx_import.h"

static const char usage[] =
    "usage: meshpipe import MODEL.onnx [-o GRAPH.json] [--dtype T] [--batch N] [--no-fuse]\n"
    "\n"
    "Reads an ONNX model, gives every tensor a static shape (the file's value_info, else inferred),\n"
    "costs every node (macs, flops, weight bytes; formulas in traces/README.md), folds constants,\n"
    "drops Identity/Dropout and, by default, fuses each normalisation, activation, bias or residual\n"
    "add into the op producing its input.  Operators outside the cost model are kept at zero cost\n"
    "and listed in one warning.  The graph is validated like any graph file before it is written.\n"
    "\n"
    "  -o, --output FILE  write the graph there (atomically) and print a summary; without it the\n"
    "                     graph goes to stdout and the summary to stderr\n"
    "  --dtype T          bytes per element of activations and weights: fp32, fp16 (default), bf16, int8\n"
    "  --batch N          batch size (default: the model's own; a symbolic batch dimension counts as 1)\n"
    "  --no-fuse          keep every node as a layer\n";

static void summary(FILE *f, const char *path, const onnx_report *r) {
  fprintf(f,
          "%s: %d nodes -> %d layers (%d fused, %d constants folded, %d identities removed), batch %d, "
          "%d bytes/element\n"
          "  %.4f G MACs, %.4f G flops, %.4f M params, %.2f MB weights\n",
          path, r->nodes, r->layers, r->fused, r->folded, r->removed, r->batch, r->dtype_bytes, (double)r->macs / 1e9,
          (double)r->flops / 1e9, (double)r->params / 1e6, (double)r->weight_bytes / 1e6);
}

static int run(int argc, char **argv) {
  static const struct option longopts[] = {{"output", required_argument, NULL, 'o'},
                                           {"dtype", required_argument, NULL, 'd'},
                                           {"batch", required_argument, NULL, 'b'},
                                           {"no-fuse", no_argument, NULL, 'n'},
                                           {"help", no_argument, NULL, 'h'},
                                           {NULL, 0, NULL, 0}};
  const char *output = NULL;
  onnx_options o = {NULL, 0, 0};
  long batch = 0;
  int c;
  optind = 1;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': output = optarg; break;
    case 'd':
      if (!onnx_dtype_bytes(optarg)) return cli_usage("import", "--dtype must be fp32, fp16, bf16 or int8, got '%s'", optarg);
      o.dtype = optarg;
      break;
    case 'b':
      if (cli_parse_int("import", "--batch", optarg, 1, 1 << 20, &batch)) return 2;
      o.batch = (int)batch;
      break;
    case 'n': o.no_fuse = 1; break;
    case 'h': return cli_help(usage);
    default: return cli_usage("import", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1) return cli_usage("import", "expected one MODEL.onnx");
  const char *path = argv[optind];

  mp_error err;
  onnx_report rep;
  graph *g = NULL;
  mp_status st = onnx_import(path, &o, &g, &rep, &err);
  if (st != MP_OK) return cli_fail(&err);
  char warning[1024];
  if (onnx_report_warning(&rep, warning, sizeof warning)) fprintf(stderr, "meshpipe import: warning: %s\n", warning);
  if (output) {
    st = graph_write(g, output, &err);
    if (st == MP_OK) summary(stdout, output, &rep);
  } else {
    cJSON *doc = graph_to_json(g);
    st = doc ? jsonio_print(doc, &err) : err_nomem(&err);
    cJSON_Delete(doc);
    if (st == MP_OK) summary(stderr, path, &rep);
  }
  graph_free(g);
  onnx_report_free(&rep);
  return st == MP_OK ? 0 : cli_fail(&err);
}

const cli_command cmd_import = {"import", "turn an ONNX model into a workload graph with per-op costs", run};
