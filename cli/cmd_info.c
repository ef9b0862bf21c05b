/* meshpipe info: totals of a workload graph, its layer list, and its cost per operator type. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fileio.h"
#include "jsonio.h"

static const char usage[] =
    "usage: meshpipe info GRAPH [--json] [--layers] [--by-type] [--dtype T] [--batch N] [--no-fuse]\n"
    "\n"
    "Reads a workload graph (.json, or an .onnx model imported on the fly), sorts it into layers and\n"
    "prints its totals: ops, layers, multiply-accumulates, flops, weight bytes and the peak of live\n"
    "activation bytes (the tensors held while one layer runs).\n"
    "\n"
    "  --json        one JSON object: ops, layers, macs, flops, weight_bytes, peak_activation_bytes, ...\n"
    "  --layers      also list every layer: index, name, type, macs, flops, weight bytes and its outputs\n"
    "                (bytes, and the last layer that reads each, -1 for a graph output); in JSON the\n"
    "                list is \"layer_list\"\n"
    "  --by-type     macs and weight bytes per operator type (\"by_type\" in JSON); a fused layer such\n"
    "                as Conv+Add+Relu counts under its leading operator (Conv)\n"
    "  --dtype T     ONNX only: bytes per element the chip stores: fp32, fp16 (default), bf16, int8\n"
    "  --batch N     ONNX only: batch size (default: the model's own)\n"
    "  --no-fuse     ONNX only: keep every node as a layer instead of fusing activations and norms\n";

typedef struct type_total {
  const char *type; /* points into an op's type; only the first type_len characters count */
  int type_len;
  int count;
  uint64_t macs, flops, weight_bytes;
} type_total;

static int cmp_type_total(const void *a, const void *b) {
  const type_total *x = a, *y = b;
  if (x->macs != y->macs) return x->macs < y->macs ? 1 : -1;
  int c = strncmp(x->type, y->type, (size_t)(x->type_len < y->type_len ? x->type_len : y->type_len));
  return c ? c : x->type_len - y->type_len;
}

/* Totals per operator type, sorted by MACs (descending) then name.  A fused layer ("Conv+Add+Relu")
 * counts under its leading operator, the one that does its work.  Owned array; *n its length. */
static type_total *totals_by_type(const graph *g, int *n) {
  type_total *t = calloc((size_t)g->n_ops, sizeof *t);
  *n = 0;
  if (!t) return NULL;
  for (int l = 0; l < g->n_ops; l++) {
    const graph_op *op = &g->ops[l];
    int len = (int)strcspn(op->type, "+"), k = 0;
    while (k < *n && !(t[k].type_len == len && strncmp(t[k].type, op->type, (size_t)len) == 0)) k++;
    if (k == *n) {
      t[*n].type = op->type;
      t[(*n)++].type_len = len;
    }
    t[k].count++;
    t[k].macs += op->macs;
    t[k].flops += op->flops;
    t[k].weight_bytes += op->weight_bytes;
  }
  qsort(t, (size_t)*n, sizeof *t, cmp_type_total);
  return t;
}

static cJSON *info_json(const graph *g, const graph_totals *t, int layers, int by_type) {
  char hex[17];
  cJSON *o = cJSON_CreateObject();
  if (!o) return NULL;
  cJSON_AddStringToObject(o, "graph", g->name);
  cJSON_AddStringToObject(o, "file", g->file);
  cJSON_AddStringToObject(o, "graph_hash", fileio_hash_hex(g->hash, hex));
  cJSON_AddNumberToObject(o, "ops", t->ops);
  cJSON_AddNumberToObject(o, "layers", t->layers);
  cJSON_AddNumberToObject(o, "inputs", t->inputs);
  cJSON_AddNumberToObject(o, "tensors", t->tensors);
  jsonio_add_u64(o, "macs", t->macs);
  jsonio_add_u64(o, "flops", t->flops);
  jsonio_add_u64(o, "weight_bytes", t->weight_bytes);
  jsonio_add_u64(o, "peak_activation_bytes", t->peak_activation_bytes);
  cJSON_AddNumberToObject(o, "peak_layer", t->peak_layer);
  if (g->source) cJSON_AddItemToObject(o, "source", cJSON_Duplicate(g->source, 1));
  if (layers) {
    cJSON *list = cJSON_AddArrayToObject(o, "layer_list");
    for (int l = 0; list && l < g->n_ops; l++) {
      const graph_op *op = &g->ops[l];
      cJSON *e = cJSON_CreateObject(), *outs;
      cJSON_AddItemToArray(list, e);
      cJSON_AddNumberToObject(e, "index", l);
      cJSON_AddStringToObject(e, "name", op->name);
      cJSON_AddStringToObject(e, "type", op->type);
      jsonio_add_u64(e, "macs", op->macs);
      jsonio_add_u64(e, "flops", op->flops);
      jsonio_add_u64(e, "weight_bytes", op->weight_bytes);
      outs = cJSON_AddArrayToObject(e, "outputs");
      for (int k = 0; outs && k < op->n_outputs; k++) {
        const graph_tensor *x = &g->tensors[op->outputs[k]];
        cJSON *to = cJSON_CreateObject();
        cJSON_AddItemToArray(outs, to);
        cJSON_AddStringToObject(to, "name", x->name);
        jsonio_add_u64(to, "bytes", x->bytes);
        cJSON_AddNumberToObject(to, "last_consumer", x->last_consumer);
      }
    }
  }
  if (by_type) {
    int n;
    type_total *tt = totals_by_type(g, &n);
    cJSON *arr = cJSON_AddArrayToObject(o, "by_type");
    for (int k = 0; arr && tt && k < n; k++) {
      cJSON *e = cJSON_CreateObject();
      cJSON_AddItemToArray(arr, e);
      char type[128];
      snprintf(type, sizeof type, "%.*s", tt[k].type_len, tt[k].type);
      cJSON_AddStringToObject(e, "type", type);
      cJSON_AddNumberToObject(e, "count", tt[k].count);
      jsonio_add_u64(e, "macs", tt[k].macs);
      jsonio_add_u64(e, "flops", tt[k].flops);
      jsonio_add_u64(e, "weight_bytes", tt[k].weight_bytes);
    }
    free(tt);
  }
  return o;
}

static void print_text(const graph *g, const graph_totals *t, int layers, int by_type) {
  char a[32], b[32];
  printf("graph %s (%s)\n", g->name, g->file);
  printf("  ops                 %d\n", t->ops);
  printf("  layers              %d\n", t->layers);
  printf("  graph inputs        %d\n", t->inputs);
  printf("  MACs                %llu (%s MAC)\n", (unsigned long long)t->macs, cli_fmt_si((double)t->macs, a, sizeof a));
  printf("  flops               %llu (%s flop)\n", (unsigned long long)t->flops, cli_fmt_si((double)t->flops, a, sizeof a));
  printf("  weight bytes        %llu (%s)\n", (unsigned long long)t->weight_bytes,
         cli_fmt_bytes((double)t->weight_bytes, a, sizeof a));
  printf("  peak activations    %llu bytes (%s) at layer %d '%s'\n", (unsigned long long)t->peak_activation_bytes,
         cli_fmt_bytes((double)t->peak_activation_bytes, a, sizeof a), t->peak_layer,
         t->layers ? g->ops[t->peak_layer].name : "");
  if (layers) {
    printf("\n%5s  %-32s %-18s %12s %12s %12s  %s\n", "layer", "name", "type", "MACs", "flops", "weights", "outputs (bytes -> last reader)");
    for (int l = 0; l < g->n_ops; l++) {
      const graph_op *op = &g->ops[l];
      printf("%5d  %-32.32s %-18.18s %12s", l, op->name, op->type, cli_fmt_si((double)op->macs, a, sizeof a));
      printf(" %12s %12s ", cli_fmt_si((double)op->flops, a, sizeof a), cli_fmt_bytes((double)op->weight_bytes, b, sizeof b));
      for (int k = 0; k < op->n_outputs; k++) {
        const graph_tensor *x = &g->tensors[op->outputs[k]];
        printf(" %s -> %d", cli_fmt_bytes((double)x->bytes, a, sizeof a), x->last_consumer);
      }
      printf("\n");
    }
  }
  if (by_type) {
    int n;
    type_total *tt = totals_by_type(g, &n);
    printf("\n%-20s %6s %14s %8s %14s\n", "type", "count", "MACs", "share", "weights");
    for (int k = 0; tt && k < n; k++)
      printf("%-20.*s %6d %14s %7.2f%% %14s\n", tt[k].type_len < 20 ? tt[k].type_len : 20, tt[k].type, tt[k].count, cli_fmt_si((double)tt[k].macs, a, sizeof a),
             t->macs ? 100.0 * (double)tt[k].macs / (double)t->macs : 0.0,
             cli_fmt_bytes((double)tt[k].weight_bytes, b, sizeof b));
    free(tt);
  }
}

static int run(int argc, char **argv) {
  enum { OPT_BY_TYPE = CLI_OPT_FIRST_FREE };
  static const struct option options[] = {
      {"json", no_argument, NULL, 'j'}, {"layers", no_argument, NULL, 'l'}, {"by-type", no_argument, NULL, OPT_BY_TYPE},
      CLI_GRAPH_OPTIONS,                {"help", no_argument, NULL, 'h'},   {NULL, 0, NULL, 0}};
  int json = 0, layers = 0, by_type = 0, c;
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, "hjl", options, NULL)) != -1) {
    switch (c) {
    case 'h': return cli_help(usage);
    case 'j': json = 1; break;
    case 'l': layers = 1; break;
    case OPT_BY_TYPE: by_type = 1; break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("info", c, optarg, &go)) return 2;
      break;
    default: return cli_usage("info", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli_usage("info", optind >= argc ? "expects one graph file" : "expects one graph file, got more");
  graph *g = NULL;
  mp_error err;
  err_clear(&err);
  if (cli_load_graph(argv[optind], &go, &g, &err) != MP_OK) return cli_fail(&err);
  graph_totals t;
  graph_get_totals(g, &t);
  int rc = 0;
  if (json) {
    cJSON *o = info_json(g, &t, layers, by_type);
    if (!o) err_nomem(&err);
    else jsonio_print(o, &err);
    cJSON_Delete(o);
    if (err.status != MP_OK) rc = cli_fail(&err);
  } else {
    print_text(g, &t, layers, by_type);
  }
  graph_free(g);
  return rc;
}

const cli_command cmd_info = {"info", "totals, layers and cost per operator type of a workload graph", run};
