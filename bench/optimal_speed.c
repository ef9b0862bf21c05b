/* optimal_speed: how long `optimal` takes on a ResNet-152-sized graph.
 *
 * Builds a synthetic ResNet-152-like graph (stem, 3 + 8 + 36 + 3 bottleneck blocks, each conv
 * followed by its own batch-norm and ReLU layers, the residual add, a projection conv per stage,
 * pooling and the classifier, with skip connections, fp16 figures of a 224x224 image; it prints its
 * layer count) and solves it with `optimal` on each chip given (default: the bundled 32x32 mesh, where
 * the largest activations exceed a core's 1 MiB so some stages stream from DRAM, and the same mesh with
 * 4 MiB per core; "+arch" adds a core model to a chip: see load_chip), printing the layer and core counts, the solve time (best of --repeat runs), the
 * stages and the model's period of the plan found.
 *
 * usage: optimal_speed [--repeat N] [CHIP.json ...]   (run from the source tree for the default)
 *        optimal_speed --write GRAPH.json                 writes the graph, for meshpipe's own commands
 *                                                         (the simulator's start-up figure in the README) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "chip.h"
#include "cost.h"
#include "graph.h"
#include "jsonio.h"
#include "method.h"

typedef struct text {
  char *s;
  size_t len, cap;
} text;

static int add(text *t, const char *s) {
  size_t n = strlen(s);
  if (t->len + n + 1 > t->cap) {
    size_t cap = (t->cap + n + 1) * 2;
    char *p = realloc(t->s, cap);
    if (!p) return 0;
    t->s = p;
    t->cap = cap;
  }
  memcpy(t->s + t->len, s, n + 1);
  t->len += n;
  return 1;
}

static int n_layers;

/* The products of the next layer's MACs (dims m, n, k; 0: none), set just before it. */
static unsigned long long dim_m, dim_n, dim_k;

/* One layer reading in1 (and in2 if not NULL), writing a tensor of out_bytes named after it. */
static int layer(text *t, const char *name, const char *in1, const char *in2, unsigned long long macs,
                 unsigned long long extra_flops, unsigned long long weights, unsigned long long out_bytes) {
  char buf[640], dims[128] = "";
  if (dim_m && macs == dim_m * dim_n * dim_k)
    snprintf(dims, sizeof dims, ",\"dims\":{\"g\":1,\"m\":%llu,\"n\":%llu,\"k\":%llu}", dim_m, dim_n, dim_k);
  dim_m = dim_n = dim_k = 0;
  char ins[160];
  if (in2)
    snprintf(ins, sizeof ins, "\"%s\",\"%s\"", in1, in2);
  else
    snprintf(ins, sizeof ins, "\"%s\"", in1);
  snprintf(buf, sizeof buf,
           "%s{\"name\":\"%s\",\"type\":\"L\",\"inputs\":[%s],\"outputs\":[{\"name\":\"%s\",\"bytes\":%llu}],"
           "\"macs\":%llu,\"flops\":%llu,\"weight_bytes\":%llu%s}",
           n_layers ? "," : "", name, ins, name, out_bytes, macs, 2 * macs + extra_flops, weights, dims);
  n_layers++;
  return add(t, buf);
}

/* conv (k x k, cin -> cout on an hw x hw output) + bn + relu (relu optional); returns the last name. */
static int conv_bn(text *t, const char *prefix, const char *in, int k, int cin, int cout, int hw, int relu,
                   char *last) {
  char a[96], b[96], c[96];
  unsigned long long elems = (unsigned long long)cout * hw * hw;
  snprintf(a, sizeof a, "%s.conv", prefix);
  snprintf(b, sizeof b, "%s.bn", prefix);
  snprintf(c, sizeof c, "%s.relu", prefix);
  dim_m = (unsigned long long)hw * hw, dim_n = (unsigned long long)cout, dim_k = (unsigned long long)(k * k * cin);
  int ok = layer(t, a, in, NULL, elems * (unsigned long long)(k * k * cin), 0,
                 2ULL * (unsigned long long)(k * k * cin * cout), 2 * elems) &&
           layer(t, b, a, NULL, 0, 2 * elems, 2ULL * 4 * cout, 2 * elems);
  if (relu) ok = ok && layer(t, c, b, NULL, 0, elems, 0, 2 * elems);
  strcpy(last, relu ? c : b);
  return ok;
}

static graph *resnet152_like(void) {
  text t = {NULL, 0, 0};
  n_layers = 0;
  int ok = add(&t, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"resnet152-like\","
                   "\"inputs\":[{\"name\":\"image\",\"bytes\":301056}],\"ops\":[");
  char x[96];
  ok = ok && conv_bn(&t, "stem", "image", 7, 3, 64, 112, 1, x);
  ok = ok && layer(&t, "stem.pool", x, NULL, 0, 64ULL * 56 * 56 * 9, 0, 2ULL * 64 * 56 * 56);
  strcpy(x, "stem.pool");
  const int blocks[4] = {3, 8, 36, 3}, width[4] = {64, 128, 256, 512}, hw[4] = {56, 28, 14, 7};
  int cin = 64;
  for (int s = 0; s < 4 && ok; s++)
    for (int b = 0; b < blocks[s] && ok; b++) {
      int w = width[s], cout = 4 * w;
      char p[64], a[96], bb[96], c[96], skip[96], sum[96], out[96];
      snprintf(p, sizeof p, "s%d.b%d", s, b);
      strcpy(skip, x);
      if (b == 0) {
        char q[80];
        snprintf(q, sizeof q, "%s.proj", p);
        ok = ok && conv_bn(&t, q, x, 1, cin, cout, hw[s], 0, skip);
      }
      char pa[80], pb[80], pc[80];
      snprintf(pa, sizeof pa, "%s.a", p);
      snprintf(pb, sizeof pb, "%s.b", p);
      snprintf(pc, sizeof pc, "%s.c", p);
      ok = ok && conv_bn(&t, pa, x, 1, cin, w, hw[s], 1, a) && conv_bn(&t, pb, a, 3, w, w, hw[s], 1, bb) &&
           conv_bn(&t, pc, bb, 1, w, cout, hw[s], 0, c);
      unsigned long long elems = (unsigned long long)cout * hw[s] * hw[s];
      snprintf(sum, sizeof sum, "%s.add", p);
      snprintf(out, sizeof out, "%s.relu", p);
      ok = ok && layer(&t, sum, c, skip, 0, elems, 0, 2 * elems) && layer(&t, out, sum, NULL, 0, elems, 0, 2 * elems);
      strcpy(x, out);
      cin = cout;
    }
  ok = ok && layer(&t, "pool", x, NULL, 0, 2048ULL * 49, 0, 2 * 2048);
  dim_m = 1, dim_n = 1000, dim_k = 2048;
  ok = ok && layer(&t, "fc", "pool", NULL, 2048ULL * 1000, 1000, 2ULL * 2049 * 1000, 2000) && add(&t, "]}");
  graph *g = NULL;
  if (ok) {
    cJSON *root = cJSON_Parse(t.s);
    mp_error err;
    if (root && graph_from_json(root, "resnet152-like", &g, &err) != MP_OK) fprintf(stderr, "optimal_speed: %s\n", err.msg);
    cJSON_Delete(root);
  }
  free(t.s);
  return g;
}

/* A chip file, or "FILE+4MiB": that chip with 4 MiB of SRAM per core, and/or "FILE+arch": with a core
 * model of the same 1 TFLOP/s peak (a 32 x 16 MAC array at 976.5625 MHz, 64 vector lanes, 250 GB/s of
 * SRAM), whose per-op times step with the array's tiles. */
static mp_status load_chip(const char *arg, chip **out, mp_error *err) {
  const char *plus = strchr(arg, '+');
  if (!plus) return chip_load(arg, out, err);
  char path[512], label[128];
  snprintf(path, sizeof path, "%.*s", (int)(plus - arg), arg);
  cJSON *root = NULL;
  mp_status st = jsonio_load(path, &root, err);
  if (st != MP_OK) return st;
  cJSON *core = cJSON_GetObjectItemCaseSensitive(root, "core");
  cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
  snprintf(label, sizeof label, "%s%s%s", name ? name->valuestring : "chip", strstr(plus, "4MiB") ? "-4MiB" : "",
           strstr(plus, "arch") ? "-arch" : "");
  if (core && strstr(plus, "4MiB")) cJSON_ReplaceItemInObjectCaseSensitive(core, "sram_bytes", cJSON_CreateNumber(4194304));
  if (core && strstr(plus, "arch")) {
    cJSON *m = cJSON_CreateObject();
    cJSON_AddNumberToObject(m, "rows", 32);
    cJSON_AddNumberToObject(m, "cols", 16);
    cJSON_DeleteItemFromObjectCaseSensitive(core, "flops");
    cJSON_AddNumberToObject(core, "clock_hz", 976562500);
    cJSON_AddItemToObject(core, "matrix", m);
    cJSON_AddNumberToObject(core, "vector_lanes", 64);
    cJSON_AddNumberToObject(core, "sram_bandwidth", 2.5e11);
  }
  if (name) cJSON_ReplaceItemInObjectCaseSensitive(root, "name", cJSON_CreateString(label));
  st = chip_from_json(root, arg, out, err);
  cJSON_Delete(root);
  return st;
}

static const char usage[] = "usage: optimal_speed [--repeat N] [CHIP.json ...]   (from the source tree)\n"
                            "       optimal_speed --write GRAPH.json";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  int repeat = 3, first = 1;
  if (argc > 1 && strcmp(argv[1], "--repeat") == 0) {
    if (argc < 3) {
      fprintf(stderr, "optimal_speed: --repeat needs a count\n%s\n", usage);
      return 2;
    }
    if (!bench_int("optimal_speed", usage, "--repeat", argv[2], 1, 1000, &repeat)) return 2;
    first = 3;
  }
  graph *g = resnet152_like();
  if (!g) {
    fprintf(stderr, "optimal_speed: cannot build the synthetic graph\n");
    return 1;
  }
  if (argc == 3 && strcmp(argv[1], "--write") == 0) {
    mp_error err;
    int rc = graph_write(g, argv[2], &err) == MP_OK ? 0 : 1;
    if (rc) fprintf(stderr, "optimal_speed: %s\n", err.msg);
    graph_free(g);
    return rc;
  }
  const char *default_chip[] = {"platforms/mesh32x32.json", "platforms/mesh32x32.json+4MiB",
                                "platforms/mesh32x32.json+arch", "platforms/mesh32x32.json+4MiB+arch"};
  const char **chips = argc > first ? (const char **)argv + first : default_chip;
  int n_chips = argc > first ? argc - first : 4;
  printf("graph %s: %d layers, %d tensors\n", g->name, g->n_ops, g->n_tensors);
  int status = 0;
  for (int i = 0; i < n_chips; i++) {
    chip *c = NULL;
    mp_error err;
    if (load_chip(chips[i], &c, &err) != MP_OK) {
      fprintf(stderr, "optimal_speed: %s\n", err.msg);
      status = 1;
      continue;
    }
    method_options o;
    method_options_default(&o);
    double best = 1e300;
    plan *p = NULL;
    method_report rep;
    for (int r = 0; r < repeat; r++) {
      plan_free(p);
      p = NULL;
      if (method_run("optimal", g, c, &o, &p, &rep, &err) != MP_OK) {
        fprintf(stderr, "optimal_speed: %s\n", err.msg);
        status = 1;
        break;
      }
      if (rep.solve_s < best) best = rep.solve_s;
    }
    if (p) {
      cost_result *res = NULL;
      cost_bound lb;
      cost_lower_bound(g, c, &lb);
      if (cost_evaluate(g, c, p, &res, &err) == MP_OK)
        printf("chip %s (%d cores): optimal solve %.4f s (best of %d), %d stages, period %.6g s, lower bound %.6g s "
               "(gap %.1f%%), feasible %d\n  %s\n",
               c->name, c->n_cores, best, repeat, p->n_stages, res->period_s, lb.bound_s,
               100.0 * (res->period_s / lb.bound_s - 1), res->feasible, rep.notes);
      cost_result_free(res);
    }
    plan_free(p);
    chip_free(c);
  }
  graph_free(g);
  return status;
}
