/* Tests of optimes: CSV and JSON op-time files against the bundled tiny_resnet graph, the flops the
 * simulator charges for a measured op, and every rejection (unknown op naming the line, op named
 * twice, negative, NaN, infinite and malformed times, wrong JSON shapes, missing file). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "optimes.h"
#include "testutil.h"

static graph *tiny(void) {
  graph *g = NULL;
  mp_error err;
  if (graph_load(testutil_src("traces/tiny_resnet.json"), &g, &err) != MP_OK) fprintf(stderr, "\n%s\n", err.msg);
  return g;
}

/* Parses text with the given format and returns the status; the message goes to msg. */
static mp_status parse(const graph *g, const char *text, int csv, optimes **t, char *msg) {
  mp_error err;
  err_clear(&err);
  mp_status st = optimes_parse("t.csv", text, strlen(text), csv, g, t, &err);
  strcpy(msg, err.msg);
  return st;
}

static void a_csv_file_should_override_the_named_ops_only(void) {
  graph *g = tiny();
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  optimes *t = NULL;
  char msg[MP_ERROR_MSG_MAX];
  CU_ASSERT_EQUAL_FATAL(parse(g, "# measured on one core\nop,seconds\nconv1, 2.5e-6\r\n\n\"fc\",1e-7\n", 1, &t, msg),
                        MP_OK);
  CU_ASSERT_EQUAL(t->n_layers, g->n_ops);
  CU_ASSERT_EQUAL(t->graph_hash, g->hash);
  CU_ASSERT_EQUAL(t->n_overridden, 2);
  int conv1 = graph_find_op(g, "conv1"), fc = graph_find_op(g, "fc"), pool = graph_find_op(g, "pool");
  CU_ASSERT_DOUBLE_EQUAL(t->seconds[conv1], 2.5e-6, 0);
  CU_ASSERT_DOUBLE_EQUAL(t->seconds[fc], 1e-7, 0);
  CU_ASSERT(t->seconds[pool] < 0);
  /* A measured op costs seconds * core flop rate; the others keep the graph's flops. */
  CU_ASSERT_DOUBLE_EQUAL(optimes_flops(t, g, 1e12, conv1), 2.5e6, 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(optimes_flops(t, g, 1e12, pool), (double)g->ops[pool].flops, 0);
  CU_ASSERT_DOUBLE_EQUAL(optimes_flops(NULL, g, 1e12, conv1), (double)g->ops[conv1].flops, 0);
  optimes_free(t);
  optimes_free(NULL);
  graph_free(g);
}

static void a_json_file_should_give_the_same_table_as_csv(void) {
  graph *g = tiny();
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  optimes *a = NULL, *b = NULL;
  char msg[MP_ERROR_MSG_MAX];
  CU_ASSERT_EQUAL_FATAL(parse(g, "conv1,3e-6\nblock.add,0\n", -1, &a, msg), MP_OK);
  CU_ASSERT_EQUAL_FATAL(parse(g, "  {\"conv1\": 3e-6, \"block.add\": 0}", -1, &b, msg), MP_OK);
  CU_ASSERT_EQUAL(a->n_overridden, 2);
  CU_ASSERT_EQUAL(b->n_overridden, 2);
  for (int l = 0; l < g->n_ops; l++) CU_ASSERT_DOUBLE_EQUAL(a->seconds[l], b->seconds[l], 0);
  optimes_free(a);
  optimes_free(b);
  graph_free(g);
}

static void loading_should_pick_the_format_from_the_suffix(void) {
  graph *g = tiny();
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  optimes *t = NULL;
  mp_error err;
  const char *csv = testutil_write_temp("times.csv", "pool,1e-6\n");
  CU_ASSERT_EQUAL_FATAL(optimes_load(csv, g, &t, &err), MP_OK);
  CU_ASSERT_EQUAL(t->n_overridden, 1);
  CU_ASSERT_STRING_EQUAL(t->file, csv);
  optimes_free(t);
  const char *json = testutil_write_temp("times.json", "{\"pool\": 1e-6, \"fc\": 2e-6}\n");
  CU_ASSERT_EQUAL_FATAL(optimes_load(json, g, &t, &err), MP_OK);
  CU_ASSERT_EQUAL(t->n_overridden, 2);
  optimes_free(t);
  /* A .json file that is not JSON is a JSON error, not read as CSV. */
  const char *bad = testutil_write_temp("bad.json", "pool,1e-6\n");
  CU_ASSERT_EQUAL(optimes_load(bad, g, &t, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(t);
  CU_ASSERT_EQUAL(optimes_load(testutil_temp_path("missing.csv"), g, &t, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "missing.csv"));
  graph_free(g);
}

/* A header "op,UNIT" gives the unit of the times below it. */
static void a_csv_header_should_give_the_unit_of_the_times(void) {
  graph *g = tiny();
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  static const struct {
    const char *unit;
    double scale;
  } units[] = {{"seconds", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  int conv1 = graph_find_op(g, "conv1");
  for (size_t i = 0; i < sizeof units / sizeof *units; i++) {
    char text[64], msg[MP_ERROR_MSG_MAX];
    snprintf(text, sizeof text, "op,%s\nconv1,2.5\n", units[i].unit);
    optimes *t = NULL;
    CU_ASSERT_EQUAL_FATAL(parse(g, text, 1, &t, msg), MP_OK);
    CU_ASSERT_DOUBLE_EQUAL(t->seconds[conv1], 2.5 * units[i].scale, 1e-15 * units[i].scale);
    optimes_free(t);
  }
  graph_free(g);
}

/* optimes_apply: a graph whose measured ops do seconds x core flop rate of work and whose other ops
 * are untouched, with a hash of its own; refused for another graph. */
static void applied_times_should_make_a_graph_with_the_measured_work(void) {
  graph *g = tiny(), *timed = NULL, *other = NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  optimes *t = NULL;
  char msg[MP_ERROR_MSG_MAX];
  CU_ASSERT_EQUAL_FATAL(parse(g, "op,us\nconv1,2.5\nfc,0\n", 1, &t, msg), MP_OK);
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(optimes_apply(t, g, 1e12, &timed, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(timed->n_ops, g->n_ops);
  for (int l = 0; l < g->n_ops; l++) {
    CU_ASSERT_STRING_EQUAL(timed->ops[l].name, g->ops[l].name);
    CU_ASSERT_EQUAL(timed->ops[l].macs, g->ops[l].macs);
    CU_ASSERT_EQUAL(timed->ops[l].flops, (uint64_t)llround(optimes_flops(t, g, 1e12, l)));
  }
  CU_ASSERT_EQUAL(timed->ops[graph_find_op(g, "conv1")].flops, 2500000u);
  CU_ASSERT_EQUAL(timed->ops[graph_find_op(g, "fc")].flops, 0u);
  CU_ASSERT_NOT_EQUAL(timed->hash, g->hash);
  CU_ASSERT_EQUAL(optimes_apply(t, timed, 1e12, &other, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(other);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "t.csv: the op times were loaded for another graph"));
  optimes_free(t);
  graph_free(timed);
  graph_free(g);
}

static const struct {
  const char *text;
  int csv;
  const char *msg; /* the whole expected message */
} bad_inputs[] = {
    {"conv1,1e-6\nconv9,1e-6\n", 1, "t.csv: line 2: no op 'conv9' in graph 'tiny_resnet'"},
    {"conv1,1e-6\n# x\nconv1,2e-6\n", 1, "t.csv: line 3: op 'conv1' is given a time twice"},
    {"conv1,-1e-6\n", 1, "t.csv: line 1: the time of op 'conv1' is negative (-1e-06 s)"},
    {"conv1,nan\n", 1, "t.csv: line 1: the time of op 'conv1' is NaN"},
    {"conv1,inf\n", 1, "t.csv: line 1: the time of op 'conv1' is infinite"},
    {"conv1,1e999\n", 1, "t.csv: line 1: the time of op 'conv1' is infinite"},
    {"conv1,1e300\n", 1, "t.csv: line 1: the time of op 'conv1' is 1e+300 s, more than the 1e+06 s a measured op may take"},
    {"{\"conv1\": 1000001}", 0,
     "t.csv: \"conv1\": the time of op 'conv1' is 1000001 s, more than the 1e+06 s a measured op may take"},
    {"conv1,1 ms\n", 1, "t.csv: line 1: the time of op 'conv1' is not a number: '1 ms'"},
    {"conv1,\n", 1, "t.csv: line 1: the time of op 'conv1' is missing"},
    {"conv1 1e-6\n", 1, "t.csv: line 1: expected 'op,seconds', found no ','"},
    {"conv1,1e-6,gpu\n", 1, "t.csv: line 1: expected two fields 'op,seconds', found more"},
    {",1e-6\n", 1, "t.csv: line 1: the op name is empty"},
    {"\"conv1,1e-6\n", 1, "t.csv: line 1: the quoted op name is not closed"},
    {"\"conv1\" x,1e-6\n", 1, "t.csv: line 1: expected ',' after the quoted op name"},
    {"pool,1e-6\nop,seconds\n", 1, "t.csv: line 2: the time of op 'op' is not a number: 'seconds'"},
    {"op,minutes\npool,1\n", 1, "t.csv: line 1: the header's unit is 'minutes' (expected seconds, s, ms, us or ns)"},
    {"op,1e-6\n", 1, "t.csv: line 1: the header's unit is '1e-6' (expected seconds, s, ms, us or ns)"},
    {"# nothing\n\n", 1, "t.csv: no op times in the file (expected lines 'op,seconds')"},
    {"{}", 0, "t.csv: no op times in the file (expected {\"op\": seconds, ...})"},
    {"[1]", 0, "t.csv: expected one JSON object {\"op\": seconds, ...}"},
    {"{\"conv1\": \"1e-6\"}", 0, "t.csv: \"conv1\": the time of op 'conv1' must be a number of seconds"},
    {"{\"conv1\": -2}", 0, "t.csv: \"conv1\": the time of op 'conv1' is negative (-2 s)"},
    {"{\"nope\": 1}", 0, "t.csv: \"nope\": no op 'nope' in graph 'tiny_resnet'"},
    {"{\"fc\": 1, \"fc\": 2}", 0, "t.csv: \"fc\": op 'fc' is given a time twice"},
};

static void bad_files_should_be_rejected_with_the_place(void) {
  graph *g = tiny();
  CU_ASSERT_PTR_NOT_NULL_FATAL(g);
  for (size_t i = 0; i < sizeof bad_inputs / sizeof bad_inputs[0]; i++) {
    optimes *t = NULL;
    char msg[MP_ERROR_MSG_MAX];
    mp_status st = parse(g, bad_inputs[i].text, bad_inputs[i].csv, &t, msg);
    CU_ASSERT_EQUAL(st, MP_INPUT);
    CU_ASSERT_PTR_NULL(t);
    if (strcmp(msg, bad_inputs[i].msg) != 0) {
      fprintf(stderr, "\ncase %zu: got '%s'\n      want '%s'\n", i, msg, bad_inputs[i].msg);
      CU_FAIL("message differs");
    }
    optimes_free(t);
  }
  graph_free(g);
}

static CU_TestInfo tests[] = {
    {"a_csv_file_should_override_the_named_ops_only", a_csv_file_should_override_the_named_ops_only},
    {"a_json_file_should_give_the_same_table_as_csv", a_json_file_should_give_the_same_table_as_csv},
    {"loading_should_pick_the_format_from_the_suffix", loading_should_pick_the_format_from_the_suffix},
    {"bad_files_should_be_rejected_with_the_place", bad_files_should_be_rejected_with_the_place},
    {"a_csv_header_should_give_the_unit_of_the_times", a_csv_header_should_give_the_unit_of_the_times},
    {"applied_times_should_make_a_graph_with_the_measured_work", applied_times_should_make_a_graph_with_the_measured_work},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("optimes", tests, argc, argv); }
