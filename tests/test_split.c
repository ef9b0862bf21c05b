/* test_split: the Send/Recv rewrite of a plan, by hand and against a brute-force count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "jsonio.h"
#include "plan.h"
#include "rng.h"
#include "split.h"
#include "testutil.h"

/* testutil's temporary paths live in a few rotating buffers: keep a copy of each for the test. */
static const char *keep(const char *path) {
  static char kept[32][1024];
  static int n;
  char *copy = kept[n++ % 32];
  snprintf(copy, sizeof kept[0], "%s", path);
  return copy;
}

static graph *parse_graph(const char *text) {
  cJSON *root = NULL;
  graph *g = NULL;
  mp_error err;
  if (jsonio_parse("test-graph", text, strlen(text), &root, &err) == MP_OK)
    graph_from_json(root, "test-graph", &g, &err);
  cJSON_Delete(root);
  return g;
}

static plan *make_plan(const int *arranged, int n_cores, int n_layers) {
  plan *p = NULL;
  mp_error err;
  plan_new(arranged, n_cores, n_layers, &p, &err);
  return p;
}

/* x -> A -> t; B and C read t; D reads C's output.  s -> skip: E makes s, read by F, G, H. */
static const char two_consumers[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"two\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"A\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"t\",\"bytes\":100}],"
    "\"macs\":1,\"flops\":2,\"weight_bytes\":0},"
    "{\"name\":\"B\",\"type\":\"Conv\",\"inputs\":[\"t\"],\"outputs\":[{\"name\":\"b\",\"bytes\":10}],"
    "\"macs\":1,\"flops\":2,\"weight_bytes\":0},"
    "{\"name\":\"C\",\"type\":\"Conv\",\"inputs\":[\"t\",\"x\"],\"outputs\":[{\"name\":\"c\",\"bytes\":10}],"
    "\"macs\":1,\"flops\":2,\"weight_bytes\":0},"
    "{\"name\":\"D\",\"type\":\"Add\",\"inputs\":[\"b\",\"c\"],\"outputs\":[{\"name\":\"y\",\"bytes\":10}],"
    "\"macs\":0,\"flops\":2,\"weight_bytes\":0}]}";

static void split_should_give_a_tensor_with_two_consumers_in_another_group_one_pair(void) {
  graph *g = parse_graph(two_consumers);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  int arranged[2] = {1, 3}; /* group 0: A; group 1: B, C, D */
  plan *p = make_plan(arranged, 2, 4);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  split *s = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(split_new(g, p, &s, &err), MP_OK);
  CU_ASSERT_EQUAL(s->n_groups, 2);
  CU_ASSERT_EQUAL(s->n_pairs, 1);
  CU_ASSERT_EQUAL_FATAL(s->groups[0].n_sends, 1);
  CU_ASSERT_EQUAL(s->groups[0].n_recvs, 0); /* the graph input x is fed by the host, never cut */
  CU_ASSERT_EQUAL_FATAL(s->groups[1].n_recvs, 1);
  CU_ASSERT_EQUAL(s->groups[1].n_sends, 0);
  const split_send *sd = &s->groups[0].sends[0];
  const split_recv *rv = &s->groups[1].recvs[0];
  CU_ASSERT_EQUAL(sd->tensor, graph_find_tensor(g, "t"));
  CU_ASSERT_EQUAL(sd->layer, 0);
  CU_ASSERT_EQUAL(sd->dst_group, 1);
  CU_ASSERT_EQUAL(sd->dst_recv, 0);
  CU_ASSERT_EQUAL(rv->tensor, sd->tensor);
  CU_ASSERT_EQUAL(rv->src_group, 0);
  CU_ASSERT_EQUAL(rv->src_send, 0);
  CU_ASSERT_EQUAL_FATAL(rv->n_consumers, 2);
  CU_ASSERT_EQUAL(rv->consumers[0], 1);
  CU_ASSERT_EQUAL(rv->consumers[1], 2);
  /* the JSON: both consumers read recv:t */
  cJSON *j = split_to_json(s, g, p, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(j, "format")->valuestring, SPLIT_FORMAT);
  CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(j, "send_recv_pairs")->valueint, 1);
  const cJSON *g1 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(j, "groups"), 1);
  const cJSON *layers = cJSON_GetObjectItemCaseSensitive(g1, "layers");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(layers), 3);
  const cJSON *in_b = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(layers, 0), "inputs");
  const cJSON *in_c = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(layers, 1), "inputs");
  CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(in_b, 0)->valuestring, "recv:t");
  CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(in_c, 0)->valuestring, "recv:t");
  CU_ASSERT_STRING_EQUAL(cJSON_GetArrayItem(in_c, 1)->valuestring, "x");
  const cJSON *recvs = cJSON_GetObjectItemCaseSensitive(g1, "recvs");
  CU_ASSERT_EQUAL(cJSON_GetArraySize(recvs), 1);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(recvs, 0), "consumers")), 2);
  cJSON_Delete(j);
  split_free(s);
  plan_free(p);
  graph_free(g);
}

/* E makes s; F reads s; G reads F's output and s; H reads G's output and s: with one layer per
 * group from F on, s is sent to three groups. */
static const char skip[] =
    "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"skip\",\"inputs\":[{\"name\":\"x\",\"bytes\":8}],"
    "\"ops\":["
    "{\"name\":\"E\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[{\"name\":\"s\",\"bytes\":100}],"
    "\"macs\":1,\"flops\":2,\"weight_bytes\":0},"
    "{\"name\":\"F\",\"type\":\"Conv\",\"inputs\":[\"s\"],\"outputs\":[{\"name\":\"f\",\"bytes\":10}],"
    "\"macs\":1,\"flops\":2,\"weight_bytes\":0},"
    "{\"name\":\"G\",\"type\":\"Add\",\"inputs\":[\"f\",\"s\"],\"outputs\":[{\"name\":\"g\",\"bytes\":10}],"
    "\"macs\":0,\"flops\":2,\"weight_bytes\":0},"
    "{\"name\":\"H\",\"type\":\"Add\",\"inputs\":[\"g\",\"s\"],\"outputs\":[{\"name\":\"y\",\"bytes\":10}],"
    "\"macs\":0,\"flops\":2,\"weight_bytes\":0}]}";

static void split_should_give_a_skip_connection_one_pair_per_destination_group(void) {
  graph *g = parse_graph(skip);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  int arranged[4] = {1, 1, 1, 1};
  plan *p = make_plan(arranged, 4, 4);
  split *s = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(split_new(g, p, &s, &err), MP_OK);
  int ts = graph_find_tensor(g, "s");
  /* group 0 sends s to groups 1, 2, 3 (in that order); groups 1 and 2 also pass f and g on */
  CU_ASSERT_EQUAL_FATAL(s->groups[0].n_sends, 3);
  for (int k = 0; k < 3; k++) {
    CU_ASSERT_EQUAL(s->groups[0].sends[k].tensor, ts);
    CU_ASSERT_EQUAL(s->groups[0].sends[k].dst_group, k + 1);
  }
  CU_ASSERT_EQUAL(s->n_pairs, 5);
  CU_ASSERT_EQUAL(s->groups[2].n_recvs, 2);
  CU_ASSERT_EQUAL(s->groups[3].n_recvs, 2);
  /* group 2's recvs are ordered by first consumer, then tensor: both feed G, s has the lower index */
  CU_ASSERT_EQUAL(s->groups[2].recvs[0].tensor, ts);
  CU_ASSERT_EQUAL(s->groups[2].recvs[1].tensor, graph_find_tensor(g, "f"));
  split_free(s);
  plan_free(p);
  /* three groups, G and H together: s crosses to each destination group once */
  int arranged3[3] = {1, 1, 2};
  p = make_plan(arranged3, 3, 4);
  CU_ASSERT_EQUAL_FATAL(split_new(g, p, &s, &err), MP_OK);
  CU_ASSERT_EQUAL(s->groups[0].n_sends, 2);
  CU_ASSERT_EQUAL(s->n_pairs, 3); /* s -> 1, s -> 2, f -> 2 */
  CU_ASSERT_EQUAL_FATAL(s->groups[2].n_recvs, 2);
  const split_recv *rs = s->groups[2].recvs[0].tensor == ts ? &s->groups[2].recvs[0] : &s->groups[2].recvs[1];
  CU_ASSERT_EQUAL(rs->n_consumers, 2); /* G and H share it */
  split_free(s);
  plan_free(p);
  /* everything in one group: nothing to cut */
  int arranged1[2] = {0, 4};
  p = make_plan(arranged1, 2, 4);
  CU_ASSERT_EQUAL_FATAL(split_new(g, p, &s, &err), MP_OK);
  CU_ASSERT_EQUAL(s->n_pairs, 0);
  CU_ASSERT_EQUAL(s->n_groups, 1);
  split_free(s);
  plan_free(p);
  graph_free(g);
}

/* Training: every forward pair runs backward.  On the skip graph, one layer per group, s reaches groups
 * 1, 2 and 3, so group 0 receives three gradients of s (one per consumer group, added up before E's
 * backward), and group 2 sends two back: s's to group 0 and f's to group 1, once G's backward is done;
 * the inference JSON has none of it. */
static void split_json_in_training_should_mirror_every_pair_with_a_gradient_pair(void) {
  graph *g = parse_graph(skip);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  int arranged[4] = {1, 1, 1, 1};
  plan *p = make_plan(arranged, 4, 4);
  split *s = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(split_new(g, p, &s, &err), MP_OK);
  cJSON *j = split_to_json(s, g, p, NULL, 1), *inf = split_to_json(s, g, p, NULL, 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(j);
  CU_ASSERT_PTR_NOT_NULL_FATAL(inf);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(j, "mode")->valuestring, "train");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(j, "gradient_pairs")->valueint, 5);
  const cJSON *groups = cJSON_GetObjectItem(j, "groups");
  const cJSON *r0 = cJSON_GetObjectItem(cJSON_GetArrayItem(groups, 0), "grad_recvs");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(r0), 3);
  for (int k = 0; k < 3; k++) {
    const cJSON *x = cJSON_GetArrayItem(r0, k);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(x, "tensor")->valuestring, "s");
    CU_ASSERT_EQUAL(cJSON_GetObjectItem(x, "from_group")->valueint, k + 1);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(x, "before_backward_of")->valuestring, "E");
  }
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(cJSON_GetArrayItem(groups, 0), "grad_sends")), 0);
  const cJSON *s2 = cJSON_GetObjectItem(cJSON_GetArrayItem(groups, 2), "grad_sends");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(s2), 2);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(s2, 0), "name")->valuestring, "send:grad:s>0");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(s2, 1), "name")->valuestring, "send:grad:f>1");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(s2, 1), "after_backward_of")->valuestring, "G");
  int sends = 0, recvs = 0; /* one gradient pair per forward pair, both ends */
  for (int i = 0; i < 4; i++) {
    const cJSON *gi = cJSON_GetArrayItem(groups, i);
    sends += cJSON_GetArraySize(cJSON_GetObjectItem(gi, "grad_sends"));
    recvs += cJSON_GetArraySize(cJSON_GetObjectItem(gi, "grad_recvs"));
    CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(inf, "groups"), i), "grad_sends"));
  }
  CU_ASSERT_EQUAL(sends, 5);
  CU_ASSERT_EQUAL(recvs, 5);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(inf, "mode")->valuestring, "infer");
  cJSON_Delete(j);
  cJSON_Delete(inf);
  split_free(s);
  plan_free(p);
  graph_free(g);
}

static void split_should_refuse_a_plan_for_another_graph(void) {
  graph *g = parse_graph(skip);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  int arranged[2] = {2, 3};
  plan *p = make_plan(arranged, 2, 5);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  split *s = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(split_new(g, p, &s, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "5 layers"));
  plan_free(p);
  graph_free(g);
}

/* Random DAGs and plans: the pairs are exactly the distinct (tensor, consumer group) with the
 * consumer's group not the producer's, every send matches its recv, and recv consumers are exact. */
static void split_should_match_a_brute_force_count_on_random_dags(void) {
  rng r;
  rng_seed(&r, 2024);
  for (int trial = 0; trial < 300; trial++) {
    int n = 2 + (int)rng_below(&r, 14);
    char *text = malloc(65536);
    size_t len = 0;
    len += (size_t)snprintf(text + len, 65536 - len,
                            "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"r\",\"inputs\":"
                            "[{\"name\":\"x\",\"bytes\":8}],\"ops\":[");
    for (int i = 0; i < n; i++) {
      /* inputs: 1-3 distinct earlier tensors among x (-1) and o0..o(i-1) */
      int k = 1 + (int)rng_below(&r, 3), picked[3], np = 0;
      for (int q = 0; q < k; q++) {
        int t = (int)rng_below(&r, (uint64_t)i + 1) - 1, dup = 0;
        for (int z = 0; z < np; z++) dup |= picked[z] == t;
        if (!dup) picked[np++] = t;
      }
      len += (size_t)snprintf(text + len, 65536 - len, "%s{\"name\":\"L%d\",\"type\":\"Conv\",\"inputs\":[",
                              i ? "," : "", i);
      for (int z = 0; z < np; z++) {
        if (picked[z] < 0)
          len += (size_t)snprintf(text + len, 65536 - len, "%s\"x\"", z ? "," : "");
        else
          len += (size_t)snprintf(text + len, 65536 - len, "%s\"o%d\"", z ? "," : "", picked[z]);
      }
      len += (size_t)snprintf(text + len, 65536 - len,
                              "],\"outputs\":[{\"name\":\"o%d\",\"bytes\":16}],\"macs\":1,\"flops\":2,"
                              "\"weight_bytes\":0}",
                              i);
    }
    snprintf(text + len, 65536 - len, "]}");
    graph *g = parse_graph(text);
    free(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    /* random plan: k stages over k..k+3 cores */
    int k = 1 + (int)rng_below(&r, (uint64_t)n), cores = k + (int)rng_below(&r, 4);
    int *arranged = calloc((size_t)cores, sizeof *arranged);
    int *layer_counts = calloc((size_t)k, sizeof *layer_counts);
    for (int i = 0; i < k; i++) layer_counts[i] = 1;
    for (int i = k; i < n; i++) layer_counts[rng_below(&r, (uint64_t)k)]++;
    /* stage ends on k distinct cores, the last on the last core: mark k-1 of the others */
    int *end = calloc((size_t)cores, sizeof *end), marked = 0;
    end[cores - 1] = 1;
    while (marked < k - 1) {
      int c = (int)rng_below(&r, (uint64_t)(cores - 1));
      if (!end[c]) {
        end[c] = 1;
        marked++;
      }
    }
    for (int c = 0, i = 0; c < cores; c++)
      if (end[c]) arranged[c] = layer_counts[i++];
    free(end);
    plan *p = make_plan(arranged, cores, n);
    CU_ASSERT_PTR_NOT_NULL_FATAL(p);
    split *s = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(split_new(g, p, &s, &err), MP_OK);
    int want = 0;
    for (int t = g->n_inputs; t < g->n_tensors; t++) {
      int src = plan_stage_of_layer(p, g->tensors[t].producer);
      for (int grp = 0; grp < p->n_stages; grp++) {
        if (grp == src) continue;
        int consumers = 0;
        for (int c = 0; c < g->tensors[t].n_consumers; c++)
          consumers += plan_stage_of_layer(p, g->tensors[t].consumers[c]) == grp;
        if (!consumers) continue;
        want++;
        /* exactly one recv of t in grp, with those consumers */
        int found = 0;
        for (int q = 0; q < s->groups[grp].n_recvs; q++)
          if (s->groups[grp].recvs[q].tensor == t) {
            found++;
            CU_ASSERT_EQUAL(s->groups[grp].recvs[q].n_consumers, consumers);
            CU_ASSERT_EQUAL(s->groups[grp].recvs[q].src_group, src);
            const split_send *sd = &s->groups[src].sends[s->groups[grp].recvs[q].src_send];
            CU_ASSERT_EQUAL(sd->tensor, t);
            CU_ASSERT_EQUAL(sd->dst_group, grp);
            CU_ASSERT_EQUAL(sd->dst_recv, q);
          }
        CU_ASSERT_EQUAL(found, 1);
      }
    }
    CU_ASSERT_EQUAL(s->n_pairs, want);
    split_free(s);
    plan_free(p);
    free(arranged);
    free(layer_counts);
    graph_free(g);
  }
}

static void split_cli_should_write_the_groups_and_refuse_bad_plans(void) {
  const char *gp = keep(testutil_write_temp("two.json", two_consumers));
  const char *cp = keep(testutil_write_temp(
      "line2.json",
      "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"line2\",\"mesh\":{\"width\":2,\"height\":1},"
      "\"core\":{\"flops\":1e12,\"sram_bytes\":1048576},\"noc\":{\"bandwidth\":1e10,\"latency\":1e-9}}\n"));
  const char *pp = keep(
      testutil_write_temp("plan13.json", "{\"format\":\"meshpipe-plan\",\"version\":1,\"arranged_core\":[1,3]}\n"));
  const char *bad = keep(
      testutil_write_temp("plan22.json", "{\"format\":\"meshpipe-plan\",\"version\":1,\"arranged_core\":[2,3]}\n"));
  const char *outp = keep(testutil_temp_path("parts.json"));
  char args[2048];
  char *out = NULL, *errout = NULL;
  snprintf(args, sizeof args, "split -g '%s' -c '%s' -p '%s' -o '%s'", gp, cp, pp, outp);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 0);
  free(out);
  free(errout);
  cJSON *root = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(jsonio_load(outp, &root, &err), MP_OK);
  CU_ASSERT_EQUAL(cJSON_GetObjectItemCaseSensitive(root, "send_recv_pairs")->valueint, 1);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(root, "chip")->valuestring, "line2");
  const cJSON *g0 = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(root, "groups"), 0);
  const cJSON *send = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(g0, "sends"), 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(send, "name")->valuestring, "send:t>1");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItemCaseSensitive(send, "after")->valuestring, "A");
  cJSON_Delete(root);
  snprintf(args, sizeof args, "split -g '%s' -c '%s' -p '%s'", gp, cp, bad);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "plan22.json"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "split -g '%s' -c '%s'", gp, cp);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(errout && strstr(errout, "needs a plan"));
  free(out);
  free(errout);
  snprintf(args, sizeof args, "split -g '%s' -c '%s' -p '%s' -o /nonexistent-dir/parts.json", gp, cp, pp);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 1);
  free(out);
  free(errout);
}

static CU_TestInfo tests[] = {
    {"split_should_give_a_tensor_with_two_consumers_in_another_group_one_pair",
     split_should_give_a_tensor_with_two_consumers_in_another_group_one_pair},
    {"split_should_give_a_skip_connection_one_pair_per_destination_group",
     split_should_give_a_skip_connection_one_pair_per_destination_group},
    {"split_json_in_training_should_mirror_every_pair_with_a_gradient_pair",
     split_json_in_training_should_mirror_every_pair_with_a_gradient_pair},
    {"split_should_refuse_a_plan_for_another_graph", split_should_refuse_a_plan_for_another_graph},
    {"split_should_match_a_brute_force_count_on_random_dags", split_should_match_a_brute_force_count_on_random_dags},
    {"split_cli_should_write_the_groups_and_refuse_bad_plans", split_cli_should_write_the_groups_and_refuse_bad_plans},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("split", tests, argc, argv); }
