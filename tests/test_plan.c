/* Tests of plan: the [0,3,5,0,0,2] example, every rejection of a list and of a plan file, an
 * exhaustive check over all small lists that the stages tile layers and cores, and write/load round
 * trips against a graph and a chip built in the test. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "jsonio.h"
#include "plan.h"
#include "testutil.h"

/* A chain of n ops l0 .. l(n-1), named "chain<n>", each writing `bytes` (64 in chain_graph). */
static graph *chain_graph_of(int n, int bytes) {
  size_t cap = 256 + (size_t)n * 200;
  char *text = malloc(cap);
  size_t used = (size_t)snprintf(text, cap,
                                 "{\"format\": \"meshpipe-graph\", \"version\": 1, \"name\": \"chain%d\", "
                                 "\"inputs\": [{\"name\": \"x\", \"bytes\": 64}], \"ops\": [",
                                 n);
  for (int i = 0; i < n; i++) {
    char input[32] = "x";
    if (i > 0) snprintf(input, sizeof input, "t%d", i - 1);
    used += (size_t)snprintf(text + used, cap - used,
                             "%s{\"name\": \"l%d\", \"type\": \"MatMul\", \"inputs\": [\"%s\"], \"outputs\": "
                             "[{\"name\": \"t%d\", \"bytes\": %d}], \"macs\": 100, \"flops\": 200, "
                             "\"weight_bytes\": 32}",
                             i ? ", " : "", i, input, i, bytes);
  }
  snprintf(text + used, cap - used, "]}");
  cJSON *root = NULL;
  graph *g = NULL;
  mp_error err;
  if (jsonio_parse("chain.json", text, strlen(text), &root, &err) != MP_OK ||
      graph_from_json(root, "chain.json", &g, &err) != MP_OK)
    fprintf(stderr, "\nchain_graph: %s\n", err.msg);
  cJSON_Delete(root);
  free(text);
  return g;
}

static graph *chain_graph(int n) { return chain_graph_of(n, 64); }

/* A w x h chip named "t<w*h>". */
static chip *mesh_chip(int w, int h) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"t%d\", \"mesh\": {\"width\": %d, "
           "\"height\": %d}, \"core\": {\"flops\": 1e12, \"sram_bytes\": 1048576}, \"noc\": {\"bandwidth\": "
           "6.4e10, \"latency\": 5e-9}}",
           w * h, w, h);
  cJSON *root = NULL;
  chip *c = NULL;
  mp_error err;
  if (jsonio_parse("chip.json", text, strlen(text), &root, &err) != MP_OK ||
      chip_from_json(root, "chip.json", &c, &err) != MP_OK)
    fprintf(stderr, "\nmesh_chip: %s\n", err.msg);
  cJSON_Delete(root);
  return c;
}

static const int example[] = {0, 3, 5, 0, 0, 2};

static void the_example_should_make_three_stages(void) {
  plan *p = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new(example, 6, 10, &p, &err), MP_OK);
  CU_ASSERT_EQUAL(p->n_cores, 6);
  CU_ASSERT_EQUAL(p->n_layers, 10);
  CU_ASSERT_EQUAL_FATAL(p->n_stages, 3);
  const plan_stage want[] = {{0, 3, 0, 2}, {3, 5, 2, 1}, {8, 2, 3, 3}};
  for (int s = 0; s < 3; s++) {
    CU_ASSERT_EQUAL(p->stages[s].first_layer, want[s].first_layer);
    CU_ASSERT_EQUAL(p->stages[s].n_layers, want[s].n_layers);
    CU_ASSERT_EQUAL(p->stages[s].first_core, want[s].first_core);
    CU_ASSERT_EQUAL(p->stages[s].n_cores, want[s].n_cores);
  }
  const int layer_stage[] = {0, 0, 0, 1, 1, 1, 1, 1, 2, 2}, core_stage[] = {0, 0, 1, 2, 2, 2};
  for (int l = 0; l < 10; l++) CU_ASSERT_EQUAL(plan_stage_of_layer(p, l), layer_stage[l]);
  for (int k = 0; k < 6; k++) CU_ASSERT_EQUAL(plan_stage_of_core(p, k), core_stage[k]);
  CU_ASSERT_EQUAL(plan_stage_of_layer(p, -1), -1);
  CU_ASSERT_EQUAL(plan_stage_of_layer(p, 10), -1);
  CU_ASSERT_EQUAL(plan_stage_of_core(p, 6), -1);
  CU_ASSERT_EQUAL(memcmp(p->arranged, example, sizeof example), 0);
  plan_free(p);
  plan_free(NULL);
}

static void plan_validate_should_reject_bad_lists_naming_the_entry(void) {
  static const struct {
    int list[6], n_cores, n_layers;
    const char *want;
  } cases[] = {
      {{0, 3, -1, 0, 0, 8}, 6, 10, "p.json: arranged_core[2]: -1 is negative"},
      {{0, 3, 5, 0, 0, 1}, 6, 10, "p.json: arranged_core: the entries sum to 9 layers, but the graph has 10"},
      {{0, 3, 5, 0, 0, 3}, 6, 10, "p.json: arranged_core: the entries sum to 11 layers, but the graph has 10"},
      {{3, 5, 2, 0, 0, 0}, 6, 10, "p.json: arranged_core[5]: the last entry is 0, so cores 3-5 join no group"},
      {{3, 5, 0, 0, 2, 0}, 6, 10, "p.json: arranged_core[5]: the last entry is 0, so core 5 joins no group"},
      {{0, 0, 0, 0, 0, 0}, 6, 10, "p.json: arranged_core[5]: the last entry is 0, so cores 0-5 join no group"},
      {{1}, 0, 1, "p.json: arranged_core: empty"},
      {{1}, 1, 0, "p.json: arranged_core: the graph has no layers"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mp_error err;
    err_clear(&err);
    mp_status st = plan_validate(cases[i].list, cases[i].n_cores, cases[i].n_layers, "p.json", &err);
    int ok = st == MP_INPUT && strstr(err.msg, cases[i].want) == err.msg;
    if (!ok) fprintf(stderr, "\ncase %zu: '%s', wanted '%s'\n", i, err.msg, cases[i].want);
    CU_ASSERT(ok);
    plan *p = (plan *)1;
    CU_ASSERT_EQUAL(plan_new(cases[i].list, cases[i].n_cores, cases[i].n_layers, &p, &err), MP_INPUT);
    CU_ASSERT_PTR_NULL(p);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "plan: arranged_core"));
  }
  mp_error err;
  CU_ASSERT_EQUAL(plan_validate(example, 6, 10, "p.json", &err), MP_OK);
}

static void plan_from_stages_should_build_the_same_plan_as_its_arranged_list(void) {
  const int layers[] = {3, 5, 2}, cores[] = {2, 1, 3};
  plan *a = NULL, *b = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_from_stages(layers, cores, 3, &a, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_new(example, 6, 10, &b, &err), MP_OK);
  CU_ASSERT(plan_equal(a, b));
  CU_ASSERT_EQUAL(plan_hash(a), plan_hash(b));
  plan_free(a);
  plan_free(b);

  const int zero_layers[] = {3, 0, 2}, negative_cores[] = {2, 1, -3};
  plan *p = (plan *)1;
  CU_ASSERT_EQUAL(plan_from_stages(zero_layers, cores, 3, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stages[1]: the layer count must be >= 1 (got 0)"));
  CU_ASSERT_EQUAL(plan_from_stages(layers, negative_cores, 3, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stages[2]: the core count must be >= 1 (got -3)"));
  CU_ASSERT_EQUAL(plan_from_stages(layers, cores, 0, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "stages: empty"));
}

static void plan_hash_and_equal_should_follow_the_list(void) {
  const int other[] = {3, 0, 5, 0, 0, 2}, shorter[] = {3, 5, 2};
  plan *a = NULL, *b = NULL, *c = NULL, *d = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new(example, 6, 10, &a, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_new(example, 6, 10, &b, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_new(other, 6, 10, &c, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_new(shorter, 3, 10, &d, &err), MP_OK);
  CU_ASSERT(plan_equal(a, b));
  CU_ASSERT_EQUAL(plan_hash(a), plan_hash(b));
  CU_ASSERT(!plan_equal(a, c));
  CU_ASSERT_NOT_EQUAL(plan_hash(a), plan_hash(c));
  CU_ASSERT(!plan_equal(a, d));
  CU_ASSERT_NOT_EQUAL(plan_hash(a), plan_hash(d));
  plan_free(a);
  plan_free(b);
  plan_free(c);
  plan_free(d);
}

static long binomial(int n, int k) {
  long r = 1;
  for (int i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

/* Checks every list of n entries in [-1, n_layers]: validation agrees with the definition, the number
 * of valid lists is the number of compositions, and each valid plan's stages tile layers and cores. */
static void every_small_list_should_validate_as_defined_and_tile_layers_and_cores(void) {
  for (int n = 1; n <= 5; n++)
    for (int layers = 1; layers <= 6; layers++) {
      int list[5], base = layers + 2;
      long total = 1, valid = 0;
      for (int i = 0; i < n; i++) total *= base;
      for (long code = 0; code < total; code++) {
        long rest = code;
        int sum = 0, negative = 0;
        for (int i = 0; i < n; i++) {
          list[i] = (int)(rest % base) - 1;
          rest /= base;
          sum += list[i];
          negative |= list[i] < 0;
        }
        int want = !negative && sum == layers && list[n - 1] > 0;
        mp_error err;
        mp_status st = plan_validate(list, n, layers, NULL, &err);
        CU_ASSERT_EQUAL(st == MP_OK, want);
        if (!want) continue;
        valid++;
        plan *p = NULL, *q = NULL;
        CU_ASSERT_EQUAL_FATAL(plan_new(list, n, layers, &p, &err), MP_OK);
        int next_layer = 0, next_core = 0, nonzero = 0;
        for (int i = 0; i < n; i++) nonzero += list[i] > 0;
        CU_ASSERT_EQUAL(p->n_stages, nonzero);
        int sl[5], sc[5];
        for (int s = 0; s < p->n_stages; s++) {
          const plan_stage *st_ = &p->stages[s];
          CU_ASSERT(st_->first_layer == next_layer && st_->n_layers >= 1);
          CU_ASSERT(st_->first_core == next_core && st_->n_cores >= 1);
          int last = st_->first_core + st_->n_cores - 1; /* the group ends at its non-zero entry */
          CU_ASSERT_EQUAL(list[last], st_->n_layers);
          for (int k = st_->first_core; k < last; k++) CU_ASSERT_EQUAL(list[k], 0);
          for (int l = st_->first_layer; l < st_->first_layer + st_->n_layers; l++)
            CU_ASSERT_EQUAL(plan_stage_of_layer(p, l), s);
          for (int k = st_->first_core; k <= last; k++) CU_ASSERT_EQUAL(plan_stage_of_core(p, k), s);
          next_layer += st_->n_layers;
          next_core += st_->n_cores;
          sl[s] = st_->n_layers;
          sc[s] = st_->n_cores;
        }
        CU_ASSERT_EQUAL(next_layer, layers);
        CU_ASSERT_EQUAL(next_core, n);
        CU_ASSERT_EQUAL_FATAL(plan_from_stages(sl, sc, p->n_stages, &q, &err), MP_OK);
        CU_ASSERT(plan_equal(p, q) && plan_hash(p) == plan_hash(q));
        plan_free(p);
        plan_free(q);
      }
      /* lists of n non-negative entries summing to `layers` with a positive last entry */
      CU_ASSERT_EQUAL(valid, binomial(layers + n - 2, n - 1));
    }
}

static char *read_text(const char *path) {
  char *text = NULL;
  size_t len;
  mp_error err;
  return fileio_read_all(path, &text, &len, &err) == MP_OK ? text : NULL;
}

static void plan_write_then_load_should_round_trip_with_names_and_hashes(void) {
  graph *g = chain_graph(10);
  chip *c = mesh_chip(3, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  plan *p = NULL, *back = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new(example, 6, 10, &p, &err), MP_OK);
  const char *path = testutil_temp_path("example.plan.json");
  CU_ASSERT_EQUAL_FATAL(plan_write(p, g, c, path, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(plan_load(path, g, c, &back, &err), MP_OK);
  CU_ASSERT(plan_equal(p, back));
  CU_ASSERT_EQUAL(back->n_stages, 3);
  plan_free(back);
  CU_ASSERT_EQUAL_FATAL(plan_load(path, NULL, NULL, &back, &err), MP_OK); /* counts from the list */
  CU_ASSERT(plan_equal(p, back));
  plan_free(back);

  cJSON *j = NULL;
  CU_ASSERT_EQUAL_FATAL(jsonio_load(path, &j, &err), MP_OK);
  char hex[17];
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(j, "format")), PLAN_FORMAT);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "version")), PLAN_VERSION);
  cJSON *s1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "stages"), 1);
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(s1, "first_op")), "l3");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(s1, "last_op")), "l7");
  cJSON *layers = cJSON_GetObjectItem(s1, "layers"), *cores = cJSON_GetObjectItem(s1, "cores");
  CU_ASSERT(cJSON_GetArrayItem(layers, 0)->valueint == 3 && cJSON_GetArrayItem(layers, 1)->valueint == 7);
  CU_ASSERT(cJSON_GetArrayItem(cores, 0)->valueint == 2 && cJSON_GetArrayItem(cores, 1)->valueint == 2);
  cJSON *gj = cJSON_GetObjectItem(j, "graph"), *cj = cJSON_GetObjectItem(j, "chip");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(gj, "name")), "chain10");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(gj, "hash")), fileio_hash_hex(g->hash, hex));
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(cj, "name")), "t6");
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(cj, "hash")), fileio_hash_hex(c->hash, hex));
  cJSON_Delete(j);

  /* Without a graph or chip: no op names and no records of them. */
  j = plan_to_json(p, NULL, NULL);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(j, "graph"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(j, "chip"));
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(j, "stages"), 0), "first_op"));
  cJSON_Delete(j);

  /* A failed write leaves nothing behind and the old file intact. */
  char *before = read_text(path);
  CU_ASSERT_EQUAL(plan_write(p, g, c, testutil_temp_path("no/such/dir/p.json"), &err), MP_OUTPUT);
  CU_ASSERT(!testutil_exists(testutil_temp_path("no/such/dir/p.json")));
  char *after = read_text(path);
  CU_ASSERT(before && after && strcmp(before, after) == 0);
  free(before);
  free(after);
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* Bad plan files, checked against chain10 on a 3x2 chip: the text and the start of the message
 * after the file name. */
#define PLAN_HEAD "{\"format\": \"meshpipe-plan\", \"version\": 1, "
static const struct {
  const char *text, *want;
} bad_plans[] = {
    {"[0, 3, 5, 0, 0, 2]", "expected a JSON object"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"owner\": \"me\"}", "owner: unknown key"},
    {"{\"version\": 1, \"arranged_core\": [0, 3, 5, 0, 0, 2]}", "format: missing (required)"},
    {"{\"format\": \"meshpipe-chip\", \"version\": 1, \"arranged_core\": [0, 3, 5, 0, 0, 2]}",
     "format: expected \"meshpipe-plan\", got \"meshpipe-chip\""},
    {"{\"format\": \"meshpipe-plan\", \"version\": 3, \"arranged_core\": [0, 3, 5, 0, 0, 2]}",
     "version: version 3 is not supported"},
    {PLAN_HEAD "\"stages\": []}", "arranged_core: missing (required)"},
    {PLAN_HEAD "\"arranged_core\": []}", "arranged_core: empty"},
    {PLAN_HEAD "\"arranged_core\": {\"0\": 10}}", "arranged_core: expected an array"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5.5, 0, 0, 1.5]}", "arranged_core[2]: expected a whole number (got 5.5)"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, \"5\", 0, 0, 2]}", "arranged_core[2]: expected a whole number"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2, 0, 0], \"chip\": {\"name\": \"mesh4x2\", \"hash\": "
               "\"0123456789abcdef\"}}",
     "arranged_core: 8 entries (one per core), but chip 't6' has 6 cores; the plan was made for chip 'mesh4x2'"},
    {PLAN_HEAD "\"arranged_core\": [3, 5, 2]}", "arranged_core: 3 entries (one per core), but chip 't6' has 6 cores"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 4], \"graph\": {\"name\": \"chain12\", \"hash\": "
               "\"0123456789abcdef\"}}",
     "arranged_core: the entries sum to 12 layers, but graph 'chain10' has 10; the plan was made for graph 'chain12'"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 1]}", "arranged_core: the entries sum to 9 layers, but graph 'chain10' has 10"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, -5, 0, 0, 12]}", "arranged_core[2]: -5 is negative"},
    {PLAN_HEAD "\"arranged_core\": [3, 5, 2, 0, 0, 0]}", "arranged_core[5]: the last entry is 0, so cores 3-5 join no group"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"graph\": {\"name\": \"chain10\"}}", "graph.hash: missing (required)"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"chip\": {\"name\": \"t6\", \"hash\": \"xyz\"}}",
     "chip.hash: expected 16 lowercase hex digits"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"chip\": {\"name\": \"t6\", \"hash\": \"0123456789abcdef\", "
               "\"cores\": 6}}",
     "chip.cores: unknown key"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 1]}]}",
     "stages: 1 stage, but arranged_core makes 3"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 1]}, "
               "{\"layers\": [3, 6], \"cores\": [2, 2]}, {\"layers\": [7, 9], \"cores\": [3, 5]}]}",
     "stages[1]: layers [3, 6] disagree with arranged_core, which gives layers 3-7"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 0]}, "
               "{\"layers\": [3, 7], \"cores\": [1, 2]}, {\"layers\": [8, 9], \"cores\": [3, 5]}]}",
     "stages[0]: cores [0, 0] disagree with arranged_core, which gives cores 0-1"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 1], "
               "\"first_op\": \"l0\", \"last_op\": \"l2\"}, {\"layers\": [3, 7], \"cores\": [2, 2], \"first_op\": "
               "\"conv3\"}, {\"layers\": [8, 9], \"cores\": [3, 5]}]}",
     "stages[1].first_op: \"conv3\", but layer 3 of graph 'chain10' is \"l3\""},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0], \"cores\": [0, 1]}, "
               "{\"layers\": [3, 7], \"cores\": [2, 2]}, {\"layers\": [8, 9], \"cores\": [3, 5]}]}",
     "stages[0].layers: expected [first, last]"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 1]}, "
               "{\"layers\": [3, 7]}, {\"layers\": [8, 9], \"cores\": [3, 5]}]}",
     "stages[1].cores: missing (required)"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 1], "
               "\"speed\": 1}, {\"layers\": [3, 7], \"cores\": [2, 2]}, {\"layers\": [8, 9], \"cores\": [3, 5]}]}",
     "stages[0].speed: unknown key"},
    {PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [7, 8, 9]}", "stages[0]: expected an object"},
};

static void plan_load_should_reject_every_bad_plan_file(void) {
  graph *g = chain_graph(10);
  chip *c = mesh_chip(3, 2);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  for (size_t i = 0; i < sizeof bad_plans / sizeof bad_plans[0]; i++) {
    const char *path = testutil_write_temp("bad.plan.json", bad_plans[i].text);
    char want[512];
    snprintf(want, sizeof want, "%s: %s", path, bad_plans[i].want);
    plan *p = (plan *)1;
    mp_error err;
    err_clear(&err);
    mp_status st = plan_load(path, g, c, &p, &err);
    int ok = st == MP_INPUT && p == NULL && strstr(err.msg, want) == err.msg && !strchr(err.msg, '\n');
    if (!ok) fprintf(stderr, "\nbad plan %zu: %s '%s'\n  wanted '%s'\n", i, err_name(st), err.msg, want);
    CU_ASSERT(ok);
  }
  plan *p = (plan *)1;
  mp_error err;
  CU_ASSERT_EQUAL(plan_load(testutil_temp_path("missing.plan.json"), g, c, &p, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(p);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.plan.json"));
  /* A hand-written plan with matching stages and op names loads. */
  const char *good = testutil_write_temp(
      "good.plan.json",
      PLAN_HEAD "\"arranged_core\": [0, 3, 5, 0, 0, 2], \"stages\": [{\"layers\": [0, 2], \"cores\": [0, 1], "
                "\"first_op\": \"l0\", \"last_op\": \"l2\"}, {\"layers\": [3, 7], \"cores\": [2, 2]}, {\"layers\": "
                "[8, 9], \"cores\": [3, 5], \"last_op\": \"l9\"}]}");
  CU_ASSERT_EQUAL(plan_load(good, g, c, &p, &err), MP_OK);
  CU_ASSERT(p && p->n_stages == 3);
  plan_free(p);
  graph_free(g);
  chip_free(c);
}

/* The same ten layers with 8x the activation bytes (a batch-8 import of the same network): the counts
 * and op names agree, the hash does not, and the plan must not run on it silently. */
static void a_plan_made_for_another_graph_hash_should_be_refused_naming_both_hashes(void) {
  graph *g = chain_graph(10), *g8 = chain_graph_of(10, 512);
  chip *c = mesh_chip(3, 2), *c2 = mesh_chip(2, 3);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g8);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c2);
  CU_ASSERT_NOT_EQUAL(g->hash, g8->hash);
  plan *p = NULL, *back = (plan *)1;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(plan_new(example, 6, 10, &p, &err), MP_OK);
  const char *path = testutil_temp_path("batch8.plan.json");
  CU_ASSERT_EQUAL_FATAL(plan_write(p, g8, c, path, &err), MP_OK);
  CU_ASSERT_EQUAL(plan_load(path, g, c, &back, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(back);
  char a[17], b[17], want[512];
  snprintf(want, sizeof want, "%s: graph.hash: the plan was made for graph 'chain10' of hash %s, but graph 'chain10' "
           "(chain.json) has hash %s", path, fileio_hash_hex(g8->hash, a), fileio_hash_hex(g->hash, b));
  if (strstr(err.msg, want) != err.msg) fprintf(stderr, "\n got '%s'\nwant '%s'\n", err.msg, want);
  CU_ASSERT(strstr(err.msg, want) == err.msg && !strchr(err.msg, '\n'));
  /* The graph it was made for loads it, on its chip and on another chip of as many cores. */
  CU_ASSERT_EQUAL(plan_load(path, g8, c, &back, &err), MP_OK);
  plan_free(back);
  CU_ASSERT_EQUAL(plan_load(path, g8, c2, &back, &err), MP_OK);
  plan_free(back);
  plan_free(p);
  graph_free(g);
  graph_free(g8);
  chip_free(c);
  chip_free(c2);
}

static CU_TestInfo tests[] = {
    {"the_example_should_make_three_stages", the_example_should_make_three_stages},
    {"plan_validate_should_reject_bad_lists_naming_the_entry", plan_validate_should_reject_bad_lists_naming_the_entry},
    {"plan_from_stages_should_build_the_same_plan_as_its_arranged_list",
     plan_from_stages_should_build_the_same_plan_as_its_arranged_list},
    {"plan_hash_and_equal_should_follow_the_list", plan_hash_and_equal_should_follow_the_list},
    {"every_small_list_should_validate_as_defined_and_tile_layers_and_cores",
     every_small_list_should_validate_as_defined_and_tile_layers_and_cores},
    {"plan_write_then_load_should_round_trip_with_names_and_hashes",
     plan_write_then_load_should_round_trip_with_names_and_hashes},
    {"a_plan_made_for_another_graph_hash_should_be_refused_naming_both_hashes",
     a_plan_made_for_another_graph_hash_should_be_refused_naming_both_hashes},
    {"plan_load_should_reject_every_bad_plan_file", plan_load_should_reject_every_bad_plan_file},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("plan", tests, argc, argv); }
