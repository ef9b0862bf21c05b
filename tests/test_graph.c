/* Tests of graph.c: hand-counted totals, linearisation order, consumers, serialisation, and a table
 * of bad inputs, each of which must be refused with a message naming the file, the place and the
 * problem. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "graph.h"
#include "testutil.h"

/* A graph document from an ops array (and optionally other members), in the current format. */
#define DOC(inputs, ops) "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":" inputs ",\"ops\":" ops "}"
#define OP(name, ins, outs) \
  "{\"name\":\"" name "\",\"type\":\"X\",\"inputs\":" ins ",\"outputs\":" outs ",\"macs\":1,\"flops\":2,\"weight_bytes\":0}"
#define OUT(name) "{\"name\":\"" name "\",\"bytes\":8}"
#define IN_X "[{\"name\":\"x\",\"bytes\":4}]"

static graph *load_text(const char *text, mp_error *err) {
  const char *path = testutil_write_temp("graph.json", text);
  graph *g = NULL;
  err_clear(err);
  if (graph_load(path, &g, err) != MP_OK) return NULL;
  return g;
}

/* The bundled tiny_resnet graph, counted by hand (fp16, 2 bytes per element, 32x32 maps):
 *   conv1  3->16 3x3: MACs 16*1024 * 3*9 = 442,368; flops 2*MACs + 2*16,384 (bias, relu) = 917,504;
 *          weights (16*27 + 16) * 2 = 896 B; output 16*1024*2 = 32,768 B
 *   conv_a 16->16 3x3: MACs 16,384 * 144 = 2,359,296; flops 4,718,592 + 32,768 = 4,751,360; weights 4,640 B
 *   conv_b the same without relu: flops 4,718,592 + 16,384 = 4,734,976
 *   add+relu: flops 32,768; pool: 16,384 adds + 16 divides = 16,400; fc 16->10: MACs 160, flops 330, 340 B
 * Totals: MACs 5,161,120; flops 10,453,338; weights 10,516 B.
 * Live activations: layer 2 holds conv1's output (read again by the add), conv_a's and its own:
 * 3 * 32,768 = 98,304 B, the peak (layer 3 holds as much, the first peak is reported). */
static void graph_load_should_match_the_hand_count_of_tiny_resnet(void) {
  graph *g = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  graph_totals t;
  graph_get_totals(g, &t);
  CU_ASSERT_EQUAL(t.ops, 6);
  CU_ASSERT_EQUAL(t.layers, 6);
  CU_ASSERT_EQUAL(t.inputs, 1);
  CU_ASSERT_EQUAL(t.macs, 5161120);
  CU_ASSERT_EQUAL(t.flops, 10453338);
  CU_ASSERT_EQUAL(t.weight_bytes, 10516);
  CU_ASSERT_EQUAL(t.peak_activation_bytes, 98304);
  CU_ASSERT_EQUAL(t.peak_layer, 2);
  CU_ASSERT_STRING_EQUAL(g->ops[0].name, "conv1");
  CU_ASSERT_EQUAL(g->ops[0].out_bytes, 32768);
  /* conv1's output skips to the add (layer 3): read by layers 1 and 3. */
  const graph_tensor *skip = &g->tensors[g->ops[0].outputs[0]];
  CU_ASSERT_EQUAL(skip->n_consumers, 2);
  CU_ASSERT_EQUAL(skip->consumers[0], 1);
  CU_ASSERT_EQUAL(skip->consumers[1], 3);
  CU_ASSERT_EQUAL(skip->last_consumer, 3);
  CU_ASSERT_EQUAL(g->tensors[g->ops[5].outputs[0]].last_consumer, -1);
  graph_free(g);
}

static void graph_load_should_sort_ops_topologically_breaking_ties_by_file_order(void) {
  /* File order: d(b), c(), b(a), a(x), e(): ready ops are taken earliest-in-file first. */
  const char *text = DOC(IN_X, "[" OP("d", "[\"tb\"]", "[" OUT("td") "]") "," OP("c", "[]", "[" OUT("tc") "]") ","
                                   OP("b", "[\"ta\"]", "[" OUT("tb") "]") "," OP("a", "[\"x\"]", "[" OUT("ta") "]") ","
                                   OP("e", "[]", "[" OUT("te") "]") "]");
  mp_error err;
  graph *g = load_text(text, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  const char *want[] = {"c", "a", "b", "d", "e"};
  for (int i = 0; i < 5; i++) CU_ASSERT_STRING_EQUAL(g->ops[i].name, want[i]);
  CU_ASSERT_EQUAL(g->ops[0].file_index, 1);
  /* Tensors: the graph input, then outputs in layer order. */
  CU_ASSERT_STRING_EQUAL(g->tensors[0].name, "x");
  CU_ASSERT_STRING_EQUAL(g->tensors[1].name, "tc");
  CU_ASSERT_STRING_EQUAL(g->tensors[2].name, "ta");
  CU_ASSERT_EQUAL(g->tensors[2].producer, 1);
  graph_free(g);
}

static void graph_load_should_count_a_tensor_read_twice_by_one_op_once(void) {
  const char *text = DOC(IN_X, "[" OP("sq", "[\"x\",\"x\"]", "[" OUT("y") "]") "]");
  mp_error err;
  graph *g = load_text(text, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->ops[0].n_inputs, 2);
  CU_ASSERT_EQUAL(g->tensors[0].n_consumers, 1);
  CU_ASSERT_EQUAL(g->tensors[0].last_consumer, 0);
  graph_free(g);
}

static void graph_write_should_round_trip_to_an_equal_hash(void) {
  graph *g = NULL, *h = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  const char *path = testutil_temp_path("roundtrip.json");
  CU_ASSERT_EQUAL_FATAL(graph_write(g, path, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(graph_load(path, &h, &err), MP_OK);
  CU_ASSERT_EQUAL(g->hash, h->hash);
  CU_ASSERT_EQUAL(h->n_ops, g->n_ops);
  CU_ASSERT_PTR_NOT_NULL(h->source);
  graph_free(h);
  graph_free(g);
}

static void graph_hash_should_change_when_a_cost_changes(void) {
  mp_error err;
  graph *a = load_text(DOC(IN_X, "[" OP("a", "[\"x\"]", "[" OUT("y") "]") "]"), &err);
  graph *b = load_text(DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[\"x\"],\"outputs\":[" OUT("y") "],"
                                 "\"macs\":1,\"flops\":3,\"weight_bytes\":0}]"), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b);
  CU_ASSERT_NOT_EQUAL(a->hash, b->hash);
  graph_free(a);
  graph_free(b);
}

static void graph_write_should_leave_no_file_when_it_cannot_write(void) {
  graph *g = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  const char *path = testutil_temp_path("no-such-dir/out.json");
  CU_ASSERT_EQUAL(graph_write(g, path, &err), MP_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no-such-dir/out.json"));
  CU_ASSERT_FALSE(testutil_exists(path));
  graph_free(g);
}

/* dims are optional (a graph written before them loads, without), read back and written out, and an op
 * knows the bytes it reads: each distinct input tensor once. */
static void graph_load_should_keep_dims_and_count_the_bytes_an_op_reads(void) {
  mp_error err;
  graph *old = load_text(DOC(IN_X, "[" OP("a", "[\"x\",\"x\"]", "[" OUT("y") "]") "]"), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(old);
  CU_ASSERT_EQUAL(old->ops[0].dims.g, 0);
  CU_ASSERT_EQUAL(old->ops[0].in_bytes, old->tensors[0].bytes); /* x read twice, counted once */
  graph *g = load_text(DOC(IN_X, "[{\"name\":\"a\",\"type\":\"Conv\",\"inputs\":[\"x\"],\"outputs\":[" OUT("y") "],"
                                  "\"macs\":24,\"flops\":48,\"weight_bytes\":0,\"dims\":{\"g\":2,\"m\":3,\"n\":1,\"k\":4}}]"),
                       &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT(g->ops[0].dims.g == 2 && g->ops[0].dims.m == 3 && g->ops[0].dims.n == 1 && g->ops[0].dims.k == 4);
  cJSON *doc = graph_to_json(g);
  graph *back = NULL;
  CU_ASSERT_EQUAL_FATAL(graph_from_json(doc, "back", &back, &err), MP_OK);
  CU_ASSERT_EQUAL(back->hash, g->hash);
  CU_ASSERT_EQUAL(back->ops[0].dims.k, 4);
  CU_ASSERT_NOT_EQUAL(old->hash, g->hash);
  cJSON_Delete(doc);
  graph_free(back);
  graph_free(g);
  graph_free(old);
}

static void graph_find_should_return_indices_or_minus_one(void) {
  graph *g = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err), MP_OK);
  CU_ASSERT_EQUAL(graph_find_op(g, "pool"), 4);
  CU_ASSERT_EQUAL(graph_find_op(g, "nope"), -1);
  CU_ASSERT_EQUAL(graph_find_tensor(g, "image"), 0);
  CU_ASSERT_EQUAL(graph_find_tensor(g, "nope"), -1);
  graph_free(g);
}

/* ---- bad inputs ---- */

typedef struct bad_case {
  const char *label;
  const char *text; /* NULL: the file does not exist */
  const char *where;  /* expected in the message, may be NULL */
  const char *what;   /* expected in the message */
} bad_case;

static const bad_case bad_cases[] = {
    {"missing file", NULL, NULL, "cannot open"},
    {"empty file", "", NULL, "empty file"},
    {"not JSON", "{\"format\": \"meshpipe-graph\",\n  \"version\" 1}", "line 2, column 13", "not valid JSON"},
    {"trailing content", DOC(IN_X, "[" OP("a", "[\"x\"]", "[" OUT("y") "]") "]") " extra", "line 1", "after the JSON document"},
    {"top level array", "[1, 2]", NULL, "expected a JSON object"},
    {"wrong format", "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[]}", "format", "expected \"meshpipe-graph\""},
    {"format missing", "{\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[]}", "format", "missing"},
    {"future version", "{\"format\":\"meshpipe-graph\",\"version\":2,\"name\":\"t\",\"inputs\":[],\"ops\":[]}", "version", "between 1 and 1"},
    {"name missing", "{\"format\":\"meshpipe-graph\",\"version\":1,\"inputs\":[],\"ops\":[]}", "name", "missing"},
    {"key given twice", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"name\":\"u\",\"inputs\":[],\"ops\":[]}", "name", "given twice"},
    {"unknown top-level key", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[],\"opz\":1}", "opz", "unknown key"},
    {"ops not an array", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":{}}", "ops", "expected an array"},
    {"no ops", DOC("[]", "[]"), "ops", "no ops"},
    {"op not an object", DOC(IN_X, "[3]"), "ops[0]", "expected an object"},
    {"op missing macs", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"flops\":2,\"weight_bytes\":0}]"), "ops[0].macs", "missing"},
    {"negative macs", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":-1,\"flops\":2,\"weight_bytes\":0}]"), "ops[0].macs", "negative"},
    {"fractional flops", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":1,\"flops\":2.5,\"weight_bytes\":0}]"), "ops[0].flops", "whole number"},
    {"macs as a string", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":\"1\",\"flops\":2,\"weight_bytes\":0}]"), "ops[0].macs", "whole number"},
    {"infinite weight bytes", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":1,\"flops\":2,\"weight_bytes\":1e999}]"), "ops[0].weight_bytes", "not finite"},
    {"number beyond 2^53", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":1,\"flops\":1e17,\"weight_bytes\":0}]"), "ops[0].flops", "too large"},
    {"flops below 2 x macs", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":5,\"flops\":9,\"weight_bytes\":0}]"), "ops[0] 'a'", "at least 2 x macs"},
    {"empty type", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":1,\"flops\":2,\"weight_bytes\":0}]"), "ops[0].type", "must not be empty"},
    {"unknown op key", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":1,\"flops\":2,\"weight_bytes\":0,\"mac\":1}]"), "ops[0].mac", "unknown key"},
    {"input not a string", DOC(IN_X, "[" OP("a", "[7]", "[" OUT("y") "]") "]"), "ops[0] 'a'.inputs[0]", "tensor name"},
    {"op without outputs", DOC(IN_X, "[" OP("a", "[\"x\"]", "[]") "]"), "ops[0] 'a'", "at least one tensor"},
    {"output without bytes", DOC(IN_X, "[" OP("a", "[\"x\"]", "[{\"name\":\"y\"}]") "]"), "ops[0] 'a'.outputs[0].bytes", "missing"},
    {"negative tensor bytes", DOC("[{\"name\":\"x\",\"bytes\":-4}]", "[" OP("a", "[\"x\"]", "[" OUT("y") "]") "]"), "inputs[0].bytes", "negative"},
    {"duplicate op name", DOC(IN_X, "[" OP("a", "[\"x\"]", "[" OUT("y") "]") "," OP("a", "[\"y\"]", "[" OUT("z") "]") "]"), "ops[1]", "duplicate op name 'a' (also ops[0])"},
    {"tensor produced twice", DOC(IN_X, "[" OP("a", "[\"x\"]", "[" OUT("y") "]") "," OP("b", "[\"x\"]", "[" OUT("y") "]") "]"), "ops[1] 'b'.outputs[0]", "produced twice"},
    {"graph input produced again", DOC(IN_X, "[" OP("a", "[]", "[" OUT("x") "]") "]"), "ops[0] 'a'.outputs[0]", "graph input and is produced again"},
    {"duplicate graph input", DOC("[{\"name\":\"x\",\"bytes\":4},{\"name\":\"x\",\"bytes\":4}]", "[" OP("a", "[\"x\"]", "[" OUT("y") "]") "]"), "inputs[1]", "duplicate graph input"},
    {"input nobody produces", DOC(IN_X, "[" OP("a", "[\"x\",\"ghost\"]", "[" OUT("y") "]") "]"), "ops[0] 'a'.inputs[1]", "'ghost' is neither a graph input nor produced"},
    {"cycle of three", DOC(IN_X, "[" OP("a", "[\"x\",\"tc\"]", "[" OUT("ta") "]") "," OP("b", "[\"ta\"]", "[" OUT("tb") "]") "," OP("c", "[\"tb\"]", "[" OUT("tc") "]") "]"), NULL, "cycle: 'a' -> 'b' -> 'c' -> 'a'"},
    {"dims that miss the macs", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":12,\"flops\":24,\"weight_bytes\":0,\"dims\":{\"g\":1,\"m\":2,\"n\":2,\"k\":2}}]"), "ops[0] 'a'.dims", "g x m x n x k = 1 x 2 x 2 x 2 must equal macs (12)"},
    {"a zero dim", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":0,\"flops\":0,\"weight_bytes\":0,\"dims\":{\"g\":0,\"m\":2,\"n\":2,\"k\":2}}]"), "ops[0] 'a'.dims", "g must be at least 1"},
    {"a dim missing", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":4,\"flops\":8,\"weight_bytes\":0,\"dims\":{\"g\":1,\"m\":2,\"n\":2}}]"), "ops[0] 'a'.dims.k", "missing"},
    {"an unknown dim", DOC(IN_X, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":[" OUT("y") "],\"macs\":4,\"flops\":8,\"weight_bytes\":0,\"dims\":{\"g\":1,\"m\":2,\"n\":2,\"k\":1,\"h\":1}}]"), "ops[0] 'a'.dims.h", "unknown key"},
    {"source not an object", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[" OP("a", "[]", "[" OUT("y") "]") "],\"source\":\"x\"}", "source", "expected an object"},
    {"source an array", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[" OP("a", "[]", "[" OUT("y") "]") "],\"source\":[1]}", "source", "expected an object"},
    {"op reading its own output", DOC(IN_X, "[" OP("a", "[\"x\"]", "[" OUT("ta") "]") "," OP("self", "[\"ta\",\"ts\"]", "[" OUT("ts") "]") "]"), "ops[1]", "cycle: 'self' -> 'self'"},
};

static void graph_load_should_reject_each_bad_input_with_file_place_and_problem(void) {
  int n = (int)(sizeof bad_cases / sizeof bad_cases[0]);
  CU_ASSERT_TRUE(n >= 25);
  for (int i = 0; i < n; i++) {
    const bad_case *c = &bad_cases[i];
    const char *path = c->text ? testutil_write_temp("bad.json", c->text) : testutil_temp_path("absent.json");
    graph *g = NULL;
    mp_error err;
    err_clear(&err);
    mp_status st = graph_load(path, &g, &err);
    int ok = st == MP_INPUT && g == NULL && strstr(err.msg, path) == err.msg && strstr(err.msg, c->what) &&
             (!c->where || strstr(err.msg, c->where)) && !strchr(err.msg, '\n');
    if (!ok) fprintf(stderr, "\n  case '%s': status %s, message: %s\n", c->label, err_name(st), err.msg);
    CU_ASSERT_TRUE(ok);
    graph_free(g);
  }
}

static void graph_load_should_reject_totals_that_overflow_64_bits(void) {
  /* 2100 ops of 2^53 flops each: the sum passes 2^64. */
  size_t cap = 2100 * 160 + 256;
  char *text = malloc(cap);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  size_t used = (size_t)snprintf(text, cap, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"big\",\"inputs\":[],\"ops\":[");
  for (int i = 0; i < 2100; i++)
    used += (size_t)snprintf(text + used, cap - used,
                             "%s{\"name\":\"o%d\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"t%d\",\"bytes\":1}],"
                             "\"macs\":0,\"flops\":9007199254740992,\"weight_bytes\":0}",
                             i ? "," : "", i, i);
  snprintf(text + used, cap - used, "]}");
  mp_error err;
  graph *g = load_text(text, &err);
  CU_ASSERT_PTR_NULL(g);
  CU_ASSERT_EQUAL(err.status, MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "overflow"));
  free(text);
}

/* Tensor bytes that sum past 2^63 would wrap the live set: graph inputs count too. */
static void graph_load_should_reject_tensor_bytes_that_sum_past_2_63(void) {
  for (int inputs_only = 1; inputs_only >= 0; inputs_only--) {
    size_t cap = 1100 * 200 + 512;
    char *text = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    size_t used = (size_t)snprintf(text, cap, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"big\",\"inputs\":[");
    for (int i = 0; i < 1100 && inputs_only; i++) /* 1100 x 2^53 > 2^63 */
      used += (size_t)snprintf(text + used, cap - used, "%s{\"name\":\"i%d\",\"bytes\":9007199254740992}", i ? "," : "", i);
    used += (size_t)snprintf(text + used, cap - used, "],\"ops\":[");
    for (int i = 0; i < (inputs_only ? 1 : 1100); i++)
      used += (size_t)snprintf(text + used, cap - used,
                               "%s{\"name\":\"o%d\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"t%d\",\"bytes\":%s}],"
                               "\"macs\":0,\"flops\":0,\"weight_bytes\":0}",
                               i ? "," : "", i, i, inputs_only ? "1" : "9007199254740992");
    snprintf(text + used, cap - used, "]}");
    mp_error err;
    graph *g = load_text(text, &err);
    CU_ASSERT_PTR_NULL(g);
    CU_ASSERT_EQUAL(err.status, MP_INPUT);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, inputs_only ? "inputs[1023]: the graph's tensors total more than 2^63 bytes"
                                                       : "ops[1023] 'o1023': the graph's tensors total more than 2^63"));
    graph_free(g);
    free(text);
  }
}

static void graph_from_json_should_accept_a_graph_without_inputs(void) {
  mp_error err;
  graph *g = load_text(DOC("[]", "[" OP("src", "[]", "[" OUT("y") "]") "]"), &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  CU_ASSERT_EQUAL(g->n_inputs, 0);
  graph_free(g);
}

static CU_TestInfo tests[] = {
    {"graph_load_should_match_the_hand_count_of_tiny_resnet", graph_load_should_match_the_hand_count_of_tiny_resnet},
    {"graph_load_should_keep_dims_and_count_the_bytes_an_op_reads",
     graph_load_should_keep_dims_and_count_the_bytes_an_op_reads},
    {"graph_load_should_sort_ops_topologically_breaking_ties_by_file_order",
     graph_load_should_sort_ops_topologically_breaking_ties_by_file_order},
    {"graph_load_should_count_a_tensor_read_twice_by_one_op_once", graph_load_should_count_a_tensor_read_twice_by_one_op_once},
    {"graph_write_should_round_trip_to_an_equal_hash", graph_write_should_round_trip_to_an_equal_hash},
    {"graph_hash_should_change_when_a_cost_changes", graph_hash_should_change_when_a_cost_changes},
    {"graph_write_should_leave_no_file_when_it_cannot_write", graph_write_should_leave_no_file_when_it_cannot_write},
    {"graph_find_should_return_indices_or_minus_one", graph_find_should_return_indices_or_minus_one},
    {"graph_load_should_reject_each_bad_input_with_file_place_and_problem",
     graph_load_should_reject_each_bad_input_with_file_place_and_problem},
    {"graph_load_should_reject_totals_that_overflow_64_bits", graph_load_should_reject_totals_that_overflow_64_bits},
    {"graph_load_should_reject_tensor_bytes_that_sum_past_2_63", graph_load_should_reject_tensor_bytes_that_sum_past_2_63},
    {"graph_from_json_should_accept_a_graph_without_inputs", graph_from_json_should_accept_a_graph_without_inputs},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("graph", tests, argc, argv); }
