/* meshpipe info: totals of a workload graph, its layer list, and its cost per operator type. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fileio.h"
#include "jsonio.h"
#include "train.h"

static const char usage[] =
    "usage: meshpipe info GRAPH [--json] [--layers] [--by-type] [--dtype T] [--batch N] [--no-fuse]\n"
    "                  [--mode train [--optimizer O] [--schedule S] [--recompute] [-M M]]\n"
    "\n"
    "Reads a workload graph (.json, or an .onnx model imported on the fly), sorts it into layers and\n"
    "prints its totals: ops, layers, multiply-accumulates, flops, weight bytes and the peak of live\n"
    "activation bytes (the tensors held while one layer runs).  With --mode train also what training\n"
    "it costs (traces/README.md, \"Training\"): forward, input-gradient, weight-gradient, recompute and\n"
    "update flops; the parameters and the bytes each holds (weight, gradient, fp32 master, optimizer\n"
    "states); the stash one micro-batch leaves for its backward and the activation arena of a forward\n"
    "and backward, planned (co-share, in place) beside the naive sum; and the bytes the whole graph needs\n"
    "as one stage on one core under the schedule (\"train\" in JSON).\n"
    "\n"
    "  --json        one JSON object: ops, layers, macs, flops, weight_bytes, peak_activation_bytes, ...\n"
    "  --layers      also list every layer: index, name, type, macs, flops, weight bytes and its outputs\n"
    "                (bytes, and the last layer that reads each, -1 for a graph output); in JSON the\n"
    "                list is \"layer_list\"\n"
    "  --by-type     macs and weight bytes per operator type (\"by_type\" in JSON); a fused layer such\n"
    "                as Conv+Add+Relu counts under its leading operator (Conv)\n"
    "  --dtype T     ONNX only: bytes per element the chip stores: fp32, fp16 (default), bf16, int8\n"
    "  --batch N     ONNX only: batch size (default: the model's own)\n"
    "  --no-fuse     ONNX only: keep every node as a layer instead of fusing activations and norms\n"
    CLI_TRAIN_HELP
    "  -M, --microbatches M    training: micro-batches per mini-batch (default 8)\n";

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

/* What training the whole graph costs (train.h): its sums as one stage, and per-layer gradient work. */
typedef struct train_totals {
  const train *t;
  train_range r;
  uint64_t dx_flops, dw_flops;
  int in_flight;   /* stashes the graph holds as the one stage of a pipeline */
  double one_core; /* bytes it then needs on one core */
} train_totals;

static mp_status train_totals_of(train *t, train_totals *tt, mp_error *err) {
  memset(tt, 0, sizeof *tt);
  tt->t = t;
  for (int l = 0; l < t->g->n_ops; l++) {
    tt->dx_flops += t->layers[l].dx_flops;
    tt->dw_flops += t->layers[l].dw_flops;
  }
  mp_status st = train_range_of(t, 0, t->g->n_ops, &tt->r, err);
  tt->in_flight = train_in_flight(&t->opt, 0, 1);
  train_hold hold = train_hold_of(&t->opt, 0, 1);
  tt->one_core = train_hold_mem_bytes(&tt->r, 1, &hold);
  return st;
}

static int train_json(cJSON *o, const train_totals *tt) {
  const train *t = tt->t;
  const train_range *r = &tt->r;
  cJSON *j = cJSON_AddObjectToObject(o, "train");
  return j && cJSON_AddStringToObject(j, "optimizer", train_optimizer_name(t->opt.optimizer)) &&
         cJSON_AddStringToObject(j, "schedule", train_schedule_name(t->opt.schedule)) &&
         cJSON_AddNumberToObject(j, "microbatches", t->opt.microbatches) &&
         cJSON_AddBoolToObject(j, "recompute", t->opt.recompute) && jsonio_add_u64(j, "fwd_flops", r->fwd_flops) &&
         jsonio_add_u64(j, "dx_flops", tt->dx_flops) && jsonio_add_u64(j, "dw_flops", tt->dw_flops) &&
         jsonio_add_u64(j, "recompute_flops", r->recompute_flops) && jsonio_add_u64(j, "update_flops", r->update_flops) &&
         jsonio_add_u64(j, "params", r->params) && jsonio_add_u64(j, "bytes_per_param", t->bytes_per_param) &&
         cJSON_AddBoolToObject(j, "fp32_master", t->master) && jsonio_add_u64(j, "static_bytes", r->static_bytes) &&
         jsonio_add_u64(j, "stash_bytes", r->stash_bytes) && jsonio_add_u64(j, "peak_bytes", r->peak_bytes) &&
         jsonio_add_u64(j, "naive_bytes", r->naive_bytes) && cJSON_AddNumberToObject(j, "in_flight", tt->in_flight) &&
         cJSON_AddNumberToObject(j, "one_core_bytes", tt->one_core);
}

static void train_text(const train_totals *tt) {
  const train *t = tt->t;
  const train_range *r = &tt->r;
  char a[32], b[32], c[32];
  printf("\ntraining (%s, %s, %d micro-batches per mini-batch%s)\n", train_optimizer_name(t->opt.optimizer),
         train_schedule_name(t->opt.schedule), t->opt.microbatches, t->opt.recompute ? ", recompute" : "");
  printf("  forward flops       %s per micro-batch\n", cli_fmt_si((double)r->fwd_flops, a, sizeof a));
  printf("  backward flops      %s (input gradients %s, weight gradients %s)\n",
         cli_fmt_si((double)(tt->dx_flops + tt->dw_flops), a, sizeof a), cli_fmt_si((double)tt->dx_flops, b, sizeof b),
         cli_fmt_si((double)tt->dw_flops, c, sizeof c));
  if (t->opt.recompute) printf("  recompute flops     %s\n", cli_fmt_si((double)r->recompute_flops, a, sizeof a));
  printf("  update flops        %s per mini-batch\n", cli_fmt_si((double)r->update_flops, a, sizeof a));
  int states = t->opt.optimizer == TRAIN_ADAM ? 2 : t->opt.optimizer == TRAIN_MOMENTUM ? 1 : 0;
  printf("  parameters          %llu x %llu bytes (weight, gradient%s, %d %s state%s) = %s\n",
         (unsigned long long)r->params, (unsigned long long)t->bytes_per_param, t->master ? ", fp32 master" : "", states,
         train_optimizer_name(t->opt.optimizer), states == 1 ? "" : "s", cli_fmt_bytes((double)r->static_bytes, a, sizeof a));
  printf("  stash               %s per micro-batch in flight\n", cli_fmt_bytes((double)r->stash_bytes, a, sizeof a));
  printf("  activation arena    %s planned (co-share, in place) against %s naive\n",
         cli_fmt_bytes((double)r->peak_bytes, a, sizeof a), cli_fmt_bytes((double)r->naive_bytes, b, sizeof b));
  printf("  as one stage        %s on one core (%d stash%s in flight)\n", cli_fmt_bytes(tt->one_core, a, sizeof a),
         tt->in_flight, tt->in_flight == 1 ? "" : "es");
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
      {"microbatches", required_argument, NULL, 'M'}, CLI_GRAPH_OPTIONS, CLI_TRAIN_OPTIONS,
      {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
  int json = 0, layers = 0, by_type = 0, c;
  long micro = 0;
  cli_graph_opts go = CLI_GRAPH_OPTS_DEFAULT;
  cli_train_opts to;
  cli_train_opts_init(&to);
  optind = 0;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":hjlM:", options, NULL)) != -1) {
    switch (c) {
    case 'h': return cli_help(usage);
    case 'j': json = 1; break;
    case 'l': layers = 1; break;
    case OPT_BY_TYPE: by_type = 1; break;
    case 'M':
      if (cli_parse_int("info", "--microbatches", optarg, 1, 1000000L, &micro)) return 2;
      break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("info", c, optarg, &go)) return 2;
      break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("info", c, optarg, &to)) return 2;
      break;
    case ':': return cli_usage("info", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("info", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind != argc - 1)
    return cli_usage("info", optind >= argc ? "expects one graph file" : "expects one graph file, got more");
  if (cli_train_check("info", &to, (int)micro)) return 2;
  if (micro > 0 && !to.train) return cli_usage("info", "-M/--microbatches needs --mode train");
  graph *g = NULL;
  train *tr = NULL;
  train_totals tt;
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (cli_load_graph(argv[optind], &go, &g, &err) != MP_OK ||
      (to.train && (train_new(g, &to.o, &tr, &err) != MP_OK || train_totals_of(tr, &tt, &err) != MP_OK))) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  graph_totals t;
  graph_get_totals(g, &t);
  if (json) {
    cJSON *o = info_json(g, &t, layers, by_type);
    if (!o || (tr && !train_json(o, &tt))) err_nomem(&err);
    else jsonio_print(o, &err);
    cJSON_Delete(o);
    if (err.status != MP_OK) rc = cli_fail(&err);
  } else {
    print_text(g, &t, layers, by_type);
    if (tr) train_text(&tt);
  }
cleanup:
  train_free(tr);
  graph_free(g);
  return rc;
}

const cli_command cmd_info = {"info", "totals, layers and cost per operator type of a workload graph", run};
