/* Tests of trace: the text format round trip (text -> trace -> identical text, and a trace built in
 * memory), placement on larger meshes with --map, and each rejection of the strict reader: unknown
 * action, send without receive (naming both cores and the line), core beyond the chip, truncated
 * file, deadlocking order, bad header fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "jsonio.h"
#include "testutil.h"
#include "trace.h"

/* Two groups on a 2 x 2 chip: cores 0-1 run a and b and send t_b to core 2; cores 2-3 run c. */
static const char good[] =
    "meshpipe-trace 1\n"
    "# a comment\n"
    "meshpipe 0.1.0\n"
    "graph g%20x 0123456789abcdef 3\n"
    "plan 00000000000000aa 4 0,2,0,1\n"
    "chip t4 00000000000000bb 2 2\n"
    "microbatches 2\n"
    "groups 2\n"
    "group 0 c0-1 layers 0 2 flops 2000 gather 128 send 64 weights 100 maxact 64 sram 114 dram 0 sends 1 recvs 0 "
    "macs 900 ops 2000 traffic 400\n"
    "group 1 c2-3 layers 2 1 flops 500.5 gather 32 send 0 weights 10 maxact 32 sram 37 dram 5 sends 0 recvs 1 "
    "macs 0 ops 300 traffic 74\n"
    "actions 12\n"
    "c0-1 compute 1000 64 0 - a\n"
    "c0-1 compute 1000 64 0 0 b\n"
    "c1 send c2 64 0 t_b\n"
    "c0-1 compute 1000 64 1 - a\n"
    "c0-1 compute 1000 64 1 0 b\n"
    "c1 send c2 64 1 t_b\n"
    "c2 dram 5 0 weights\n"
    "c2 recv c1 0 t_b\n"
    "c2-3 compute 500.5 32 0 - c%25\n"
    "c2 dram 2.5 1 weights\n"
    "c2 recv c1 1 t_b\n"
    "c2-3 compute 500.5 32 1 - c%25\n"
    "end\n";

/* A training trace (one mini-batch of one micro-batch) of two one-core groups on a 2 x 1 chip: c0 runs a
 * and sends t_a to c1, which runs b; the backwards run the other way and t_a's gradient goes back. */
static const char good_train[] =
    "meshpipe-trace 1\n"
    "# time-independent trace: one action per line, 'cACTOR ACTION ARGS' (format: traces/README.md)\n"
    "meshpipe 0.1.0\n"
    "graph g 0123456789abcdef 2\n"
    "plan 00000000000000aa 2 1,1\n"
    "chip t2 00000000000000bb 2 1\n"
    "microbatches 1\n"
    "training 1f1b adam recompute 0\n"
    "groups 2\n"
    "group 0 c0 layers 0 1 flops 3000 gather 64 send 64 weights 16 maxact 64 sram 80 dram 0 sends 1 recvs 0 macs 0 "
    "ops 0 traffic 0\n"
    "train 0 fwd 1000 bwd 2000 recompute 0 update 12 fgather 64 bgather 0 params 1 static 16 stash 64 peak 64 naive "
    "64 live 64 sendx 64 recvx 0 inplace 0\n"
    "group 1 c1 layers 1 1 flops 1500 gather 96 send 64 weights 0 maxact 128 sram 128 dram 0 sends 0 recvs 1 macs 0 "
    "ops 0 traffic 0\n"
    "train 1 fwd 500 bwd 1000 recompute 0 update 0 fgather 32 bgather 64 params 0 static 0 stash 64 peak 128 naive "
    "128 live 128 sendx 0 recvx 64 inplace 1\n"
    "actions 10\n"
    "c0 compute 1000 64 0 - a\n"
    "c0 send c1 64 0 t_a\n"
    "c0 grecv c1 0 t_a\n"
    "c0 backward 2000 0 0 a\n"
    "c0 update 12\n"
    "c1 recv c0 0 t_a\n"
    "c1 compute 500 32 0 - b\n"
    "c1 backward 1000 64 0 b\n"
    "c1 gsend c0 64 0 t_a\n"
    "c1 update 0\n"
    "end\n";

static chip *mesh(int w, int h) {
  char text[512];
  snprintf(text, sizeof text,
           "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"m%dx%d\", \"mesh\": {\"width\": %d, "
           "\"height\": %d}, \"core\": {\"flops\": 1e12, \"sram_bytes\": 1048576}, \"noc\": {\"bandwidth\": "
           "6.4e10, \"latency\": 5e-9}}",
           w, h, w, h);
  cJSON *root = NULL;
  chip *c = NULL;
  mp_error err;
  if (jsonio_parse("chip.json", text, strlen(text), &root, &err) != MP_OK ||
      chip_from_json(root, "chip.json", &c, &err) != MP_OK)
    fprintf(stderr, "\nmesh: %s\n", err.msg);
  cJSON_Delete(root);
  return c;
}

static void a_trace_should_read_back_to_the_same_text(void) {
  trace *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(trace_parse("good.trace", good, strlen(good), &t, &err), MP_OK);
  CU_ASSERT_STRING_EQUAL(t->graph_name, "g x");
  CU_ASSERT_EQUAL(t->n_groups, 2);
  CU_ASSERT_EQUAL(t->microbatches, 2);
  CU_ASSERT_EQUAL(t->n_plan, 4);
  CU_ASSERT_EQUAL(t->plan[1], 2);
  CU_ASSERT_EQUAL(trace_count_actions(t), 12);
  CU_ASSERT_EQUAL(t->groups[0].n_actions, 6);
  const trace_action *s = &t->groups[0].actions[2];
  CU_ASSERT_EQUAL(s->kind, TRACE_SEND);
  CU_ASSERT_EQUAL(s->core, 1);
  CU_ASSERT_EQUAL(s->peer, 2);
  CU_ASSERT_EQUAL(s->peer_group, 1);
  CU_ASSERT_EQUAL(s->bytes, 64);
  CU_ASSERT_EQUAL(s->line, 14);
  CU_ASSERT_STRING_EQUAL(t->names[t->groups[1].actions[2].name], "c%");
  CU_ASSERT_DOUBLE_EQUAL(t->groups[1].flops, 500.5, 0);
  CU_ASSERT_EQUAL(t->groups[1].dram_bytes, 5);
  CU_ASSERT(t->groups[0].macs == 900 && t->groups[1].ops == 300 && t->groups[1].traffic == 74);
  /* a trace recorded before the energy counts loads, with none */
  char *old = strdup(good);
  char *cut = strstr(old, " macs 900 ops 2000 traffic 400");
  memmove(cut, cut + strlen(" macs 900 ops 2000 traffic 400"), strlen(cut + strlen(" macs 900 ops 2000 traffic 400")) + 1);
  trace *o = NULL;
  CU_ASSERT_EQUAL(trace_parse("old.trace", old, strlen(old), &o, &err), MP_OK);
  CU_ASSERT(o && o->groups[0].macs == 0 && o->groups[0].flops == 2000);
  trace_free(o);
  free(old);
  char *text = NULL;
  CU_ASSERT_EQUAL_FATAL(trace_to_string(t, &text, NULL, &err), MP_OK);
  /* The writer's text is the input without the comment line. */
  const char *comment = "# a comment\n";
  char *want = malloc(sizeof good);
  const char *at = strstr(good, comment);
  size_t head = (size_t)(at - good);
  memcpy(want, good, head);
  strcpy(want + head, at + strlen(comment));
  const char *body = strchr(text, '\n') + 1; /* the writer's own comment is line 2 */
  CU_ASSERT(strncmp(text, "meshpipe-trace 1\n# ", 19) == 0);
  CU_ASSERT_STRING_EQUAL(strchr(body, '\n') + 1, want + strlen("meshpipe-trace 1\n"));
  free(want);
  free(text);

  /* Written to a file and loaded again: the same trace. */
  const char *path = testutil_temp_path("good.trace");
  CU_ASSERT_EQUAL_FATAL(trace_write(t, path, &err), MP_OK);
  trace *u = NULL;
  CU_ASSERT_EQUAL_FATAL(trace_load(path, &u, &err), MP_OK);
  CU_ASSERT_STRING_EQUAL(u->file, path);
  char *a = NULL, *b = NULL;
  CU_ASSERT_EQUAL(trace_to_string(t, &a, NULL, &err), MP_OK);
  CU_ASSERT_EQUAL(trace_to_string(u, &b, NULL, &err), MP_OK);
  CU_ASSERT(a && b && strcmp(a, b) == 0);
  free(a);
  free(b);
  trace_free(u);
  trace_free(t);
  trace_free(NULL);
}

static void a_trace_built_in_memory_should_be_checked(void) {
  trace *t = NULL;
  mp_error err;
  int arranged[] = {1, 1};
  CU_ASSERT_EQUAL_FATAL(trace_new("9", "g", 1, 2, arranged, 2, 2, "c", 3, 2, 1, 1, &t, &err), MP_OK);
  trace_group fig = {.first_layer = 0, .n_layers = 1, .flops = 10};
  int c0 = 0, c1 = 1, g0, g1;
  CU_ASSERT_EQUAL(trace_add_group(t, &c0, 1, &fig, &g0, &err), MP_OK);
  fig.first_layer = 1;
  CU_ASSERT_EQUAL(trace_add_group(t, &c1, 1, &fig, &g1, &err), MP_OK);
  trace_action send = {.kind = TRACE_SEND, .core = 0, .peer = 1, .peer_group = g1, .bytes = 8};
  trace_action recv = {.kind = TRACE_RECV, .core = 1, .peer = 0, .peer_group = g0};
  CU_ASSERT_EQUAL(trace_add_action(t, g0, &send, "x", NULL, 0, &err), MP_OK);
  CU_ASSERT_EQUAL(trace_check(t, 2, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "trace: c0 sends 'x' (micro-batch 0) to c1, but c1 has no matching 'recv c0'");
  CU_ASSERT_EQUAL(trace_add_action(t, g1, &recv, "x", NULL, 0, &err), MP_OK);
  CU_ASSERT_EQUAL(trace_check(t, 2, &err), MP_OK);
  CU_ASSERT_EQUAL(trace_check(t, 1, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "trace: group 1: core c1 is beyond the chip (1 cores, c0-c0)");
  CU_ASSERT_EQUAL(t->n_names, 1);
  trace_free(t);
}

static void map_should_place_the_groups_on_a_larger_mesh(void) {
  trace *t = NULL, *m = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(trace_parse("good.trace", good, strlen(good), &t, &err), MP_OK);
  chip *same = mesh(4, 1), *big = mesh(4, 4), *small = mesh(3, 1);
  CU_ASSERT_PTR_NOT_NULL_FATAL(big);
  /* Same core count: ids kept. */
  CU_ASSERT_EQUAL(trace_map(t, same, NULL, &m, &err), MP_OK);
  CU_ASSERT_EQUAL(m->groups[1].cores[0], 2);
  trace_free(m);
  CU_ASSERT_EQUAL(trace_map(t, small, "", &m, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "recorded on a 2x2 chip (4 cores), but m3x1 has 3 cores"));
  CU_ASSERT_EQUAL(trace_map(t, big, NULL, &m, &err), MP_INPUT);
  /* snake:5 shifts every id by 5. */
  CU_ASSERT_EQUAL_FATAL(trace_map(t, big, "snake:5", &m, &err), MP_OK);
  CU_ASSERT_EQUAL(m->groups[0].cores[0], 5);
  CU_ASSERT_EQUAL(m->groups[1].cores[1], 8);
  CU_ASSERT_EQUAL(m->groups[0].actions[2].core, 6);
  CU_ASSERT_EQUAL(m->groups[0].actions[2].peer, 7);
  trace_free(m);
  CU_ASSERT_EQUAL(trace_map(t, big, "snake:13", &m, &err), MP_INPUT);
  /* xy:1,1 keeps the 2x2 square: recorded (0,0) (1,0) (1,1) (0,1) -> (1,1) (2,1) (2,2) (1,2), which are
   * cores 6 5 10 9 in snake order. */
  CU_ASSERT_EQUAL_FATAL(trace_map(t, big, "xy:1,1", &m, &err), MP_OK);
  int want[] = {6, 5, 10, 9};
  CU_ASSERT_EQUAL(m->groups[0].cores[0], want[0]);
  CU_ASSERT_EQUAL(m->groups[0].cores[1], want[1]);
  CU_ASSERT_EQUAL(m->groups[1].cores[0], want[2]);
  CU_ASSERT_EQUAL(m->groups[1].cores[1], want[3]);
  CU_ASSERT_EQUAL(m->groups[1].actions[1].peer, want[1]);
  /* Groups that are no longer consecutive cannot be written back. */
  char *text = NULL;
  CU_ASSERT_EQUAL(trace_to_string(m, &text, NULL, &err), MP_INPUT);
  trace_free(m);
  CU_ASSERT_EQUAL(trace_map(t, big, "xy:3,0", &m, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "does not fit the 4x4 mesh"));
  CU_ASSERT_EQUAL(trace_map(t, big, "diagonal", &m, &err), MP_USAGE);
  CU_ASSERT_EQUAL(trace_map(t, big, "snake:2x", &m, &err), MP_USAGE);
  CU_ASSERT_PTR_NULL(m);
  chip_free(same);
  chip_free(big);
  chip_free(small);
  trace_free(t);
}

/* base with the first occurrence of from replaced by to. */
static char *edit_text(const char *base, const char *from, const char *to) {
  const char *at = strstr(base, from);
  if (!at) return NULL;
  char *s = malloc(strlen(base) + strlen(to) + 1);
  size_t head = (size_t)(at - base);
  memcpy(s, base, head);
  strcpy(s + head, to);
  strcat(s, at + strlen(from));
  return s;
}

static char *edit(const char *from, const char *to) { return edit_text(good, from, to); }

/* Sets the "actions N" header of text to the number of action lines it holds. */
static void recount(char *text) {
  char *head = strstr(text, "actions 12\n");
  int n = 0;
  for (char *p = head + 11; *p && strncmp(p, "end\n", 4) != 0; p = strchr(p, '\n') + 1) n++;
  head[8] = (char)('0' + n / 10);
  head[9] = (char)('0' + n % 10);
}

static const struct {
  const char *from, *to, *msg;
  int recount; /* 1: make the action count agree with the edit */
} bad_edits[] = {
    {"c1 send c2 64 0 t_b", "c1 sned c2 64 0 t_b",
     "t.trace: line 14: unknown action 'sned' (expected compute, send, recv or dram)", 0},
    {"c2 recv c1 1 t_b\n", "",
     "t.trace: line 17: c1 sends 't_b' (micro-batch 1) to c2, but c2 has no matching 'recv c1'", 1},
    {"c2 recv c1 1 t_b\n", "c2 recv c1 1 t_c\n",
     "t.trace: line 17: c1 sends 't_b' (micro-batch 1) to c2, but c2 has no matching 'recv c1'", 0},
    {"c1 send c2 64 0 t_b", "c1 send c9 64 0 t_b", "t.trace: line 14: core c9 is beyond the 2x2 chip (4 cores, c0-c3)",
     0},
    {"c2-3 compute 500.5 32 0", "c2-4 compute 500.5 32 0",
     "t.trace: line 20: core c4 is beyond the 2x2 chip (4 cores, c0-c3)", 0},
    {"group 1 c2-3", "group 1 c2-5", "t.trace: line 10: core c5 is beyond the 2x2 chip (4 cores, c0-c3)", 0},
    {"end\n", "", "t.trace: line 23: truncated: the file ends after 12 of 12 actions, before 'end'", 0},
    {"c2-3 compute 500.5 32 1 - c%25\nend\n", "c2-3 compute 500.5",
     "t.trace: line 23: expected 'c2-3 compute FLOPS GATHER_BYTES MICROBATCH AFTER OP'", 0},
    {"actions 12\n", "actions 13\n", "t.trace: line 24: 'end' after 12 actions, but the header announces 13", 0},
    {"actions 12\n", "actions 11\n", "t.trace: line 23: more actions than the 11 the header announces", 0},
    {"c2 recv c1 0 t_b\n", "c2 recv c1 0 t_b\nc2 send c1 8 0 back\n", NULL, 1},
    {"c0-1 compute 1000 64 0 - a\n", "c1 recv c2 0 back\nc0-1 compute 1000 64 0 - a\n",
     "t.trace: line 12: c1 receives 'back' (micro-batch 0) from c2, but c2 has no matching 'send c1'", 1},
    {"c1 send c2 64 0 t_b\n", "c1 send c2 64 0 t_b\nc1 send c2 64 0 t_b\n",
     "t.trace: line 15: c1 sends 't_b' (micro-batch 0) to c2 a second time (first at line 14)", 1},
    {"c0-1 compute 1000 64 0 0 b", "c0-1 compute 1000 64 0 1 b",
     "t.trace: line 13: compute 1 of group 0 in micro-batch 0 cannot come after compute 1: only 1 precede it", 0},
    {"c0-1 compute 1000 64 0 0 b", "c0-1 compute 1000 64 0 0,x b",
     "t.trace: line 13: AFTER must be '-' or computes of the micro-batch as 0,1,...; found 'x'", 0},
    {"c1 send c2 64 0 t_b", "c1 send c0 64 0 t_b",
     "t.trace: line 14: c1 sends to c0: the peer must be a core of another group", 0},
    {"c0-1 compute 1000 64 0 - a", "c0 compute 1000 64 0 - a",
     "t.trace: line 12: 'compute' is done by a whole group: c0-1, not c0", 0},
    {"c2 dram 5 0 weights", "c2-3 dram 5 0 weights", "t.trace: line 18: 'dram' reads into one core, not c2-3", 0},
    {"c2 dram 5 0 weights", "c2 dram 5e999 0 weights",
     "t.trace: line 18: the bytes must be a number from 0 to 2^64, found '5e999'", 0},
    {"c0-1 compute 1000 64 0 - a", "c0-1 compute -1 64 0 - a",
     "t.trace: line 12: the flops must be a number from 0 to 2^64, found '-1'", 0},
    {"c0-1 compute 1000 64 0 - a", "c0-1 compute 1000 64 2 - a",
     "t.trace: line 12: the micro-batch must be 0-1, found '2'", 0},
    {"c0-1 compute 1000 64 0 - a", "c0-1 compute 1000 64 0 - a%4",
     "t.trace: line 12: malformed %XX escape in the name 'a%4'", 0},
    {"c1 send c2 64 0 t_b", "c0-1 send c2 64 0 t_b", "t.trace: line 14: 'send' is done by one core, not c0-1", 0},
    {"c1 send c2 64 0 t_b", "x1 send c2 64 0 t_b", "t.trace: line 14: expected an actor 'cN' or 'cN-M', found 'x1'", 0},
    {"meshpipe-trace 1", "meshpipe-trace 2", "t.trace: line 1: version 2 is not supported (this reads 1)", 0},
    {"meshpipe-trace 1", "meshpipe-graph 1", "t.trace: line 1: not a meshpipe trace: expected 'meshpipe-trace 1'", 0},
    {"graph g%20x 0123456789abcdef 3", "graph g 0123 3", "t.trace: line 4: the graph hash must be 16 hex digits", 0},
    {"plan 00000000000000aa 4 0,2,0,1", "plan 00000000000000aa 4 0,2,0",
     "t.trace: line 5: the arranged_core list must hold 4 whole numbers >= 0 separated by ','", 0},
    {"plan 00000000000000aa 4 0,2,0,1", "plan 00000000000000aa 4 0,2,0,1,1",
     "t.trace: line 5: the arranged_core list must hold 4 whole numbers >= 0 separated by ','", 0},
    {"chip t4 00000000000000bb 2 2", "chip t4 00000000000000bb 3 2",
     "t.trace: line 6: the plan has 4 entries but the 3x2 chip has 6 cores", 0},
    {"microbatches 2", "microbatches 0", "t.trace: line 7: expected 'microbatches M [steady]' with M >= 1", 0},
    {"groups 2\n", "", "t.trace: line 8: expected 'groups N' here, found 'group'", 0},
    {"group 1 c2-3", "group 1 c1-3", "t.trace: line 10: core c1 already belongs to group 0", 0},
    {"sram 37", "sram -37", "t.trace: line 10: 'sram' and 'dram' must be whole numbers of bytes", 0},
    {"maxact 32", "maxcat 32", "t.trace: line 10: expected 'maxact' as field 15, found 'maxcat'", 0},
    /* numbers past what the format carries: no overflow, no allocation for counts the file cannot hold */
    {"c0-1 compute 1000 64 0 - a", "c2147483647 compute 1000 64 0 - a",
     "t.trace: line 12: core c2147483647 is beyond the 2x2 chip (4 cores, c0-c3)", 0},
    {"c0-1 compute 1000 64 0 - a", "c0-2147483647 compute 1000 64 0 - a",
     "t.trace: line 12: core c2147483647 is beyond the 2x2 chip (4 cores, c0-c3)", 0},
    {"c1 send c2 64 0 t_b", "c1 send c2147483648 64 0 t_b",
     "t.trace: line 14: core c2147483648 is beyond the 2x2 chip (4 cores, c0-c3)", 0},
    {"c1 send c2 64 0 t_b", "c1 send c99999999999999999999 64 0 t_b",
     "t.trace: line 14: expected the peer core as cN, found 'c99999999999999999999'", 0},
    {"group 0 c0-1", "group 0 c2147483647", "t.trace: line 9: core c2147483647 is beyond the 2x2 chip (4 cores, c0-c3)",
     0},
    {"group 0 c0-1", "group 0 c0-2147483647",
     "t.trace: line 9: core c2147483647 is beyond the 2x2 chip (4 cores, c0-c3)", 0},
    {"microbatches 2", "microbatches 2147483647",
     "t.trace: line 11: 12 actions for 2147483647 micro-batches: every micro-batch needs at least one", 0},
    {"actions 12", "actions 9223372036854775807",
     "t.trace: line 11: 9223372036854775807 actions announced, but the rest of the file (290 bytes) holds at most 36", 0},
    {"c0-1 compute 1000 64 0 - a", "c0-1 compute 1e20 64 0 - a",
     "t.trace: line 12: the flops must be a number from 0 to 2^64, found '1e20'", 0},
    {"flops 2000", "flops 1e300", "t.trace: line 9: 'flops' must be a number from 0 to 2^64, found '1e300'", 0},
    {"macs 900", "macs -1", "t.trace: line 9: 'macs' must be a number from 0 to 2^64, found '-1'", 0},
    {"traffic 74", "traffic 1e300", "t.trace: line 10: 'traffic' must be a number from 0 to 2^64, found '1e300'", 0},
    {"ops 2000 traffic 400", "ops 2000",
     "t.trace: line 9: expected 'group INDEX cFIRST-LAST layers L N flops F gather A send X weights W maxact Y sram S "
     "dram D sends NS recvs NR [macs M ops O traffic T]' (24 fields), found 28 fields", 0},
    {"c2-3 compute 500.5 32 1 - c%25\nend\n", "c2-3 compute 500.5 32 1 - c%25\nend\nc0-1 compute 1 1 0 - x\n",
     "t.trace: line 25: text after 'end'", 0},
};

static void bad_traces_should_be_rejected_naming_the_line(void) {
  for (size_t i = 0; i < sizeof bad_edits / sizeof bad_edits[0]; i++) {
    char *text = edit(bad_edits[i].from, bad_edits[i].to);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    if (bad_edits[i].recount) recount(text);
    trace *t = NULL;
    mp_error err;
    err_clear(&err);
    mp_status st = trace_parse("t.trace", text, strlen(text), &t, &err);
    free(text);
    if (!bad_edits[i].msg) {
      /* The deadlock case: a send added in group 1 after its recv; still fine (no recv of it yet). */
      CU_ASSERT_EQUAL(st, MP_INPUT);
      CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "c2 sends 'back' (micro-batch 0) to c1, but c1 has no matching"));
      continue;
    }
    CU_ASSERT_EQUAL(st, MP_INPUT);
    CU_ASSERT_PTR_NULL(t);
    if (strcmp(err.msg, bad_edits[i].msg) != 0) {
      fprintf(stderr, "\ncase %zu: got '%s'\n      want '%s'\n", i, err.msg, bad_edits[i].msg);
      CU_FAIL("message differs");
    }
    trace_free(t);
  }
}

/* The training trace reads back to its text, with its options and figures; each edit below is refused with
 * its message: a training line or figure out of shape, an action of the other kind of trace or schedule, an update
 * that does not end the group, a gradient without its receiver, a gradient awaited before the send its
 * sender waits for (a deadlock). */
static const struct {
  const char *base, *from, *to, *msg;
} bad_train_edits[] = {
    {good_train, "training 1f1b", "training zz", "t.trace: line 8: unknown schedule 'zz' (expected gpipe, 1f1b or zb)"},
    {good_train, "adam recompute", "adamw recompute",
     "t.trace: line 8: unknown optimizer 'adamw' (expected sgd, momentum or adam)"},
    {good_train, "recompute 0\ngroups", "recompute 2\ngroups",
     "t.trace: line 8: expected 'training SCHEDULE OPTIMIZER recompute R' with R 0 or 1"},
    {good_train, "microbatches 1\n", "microbatches 1 steady\n",
     "t.trace: line 8: a training trace holds one mini-batch: 'microbatches' takes no 'steady'"},
    {good_train, "train 1 fwd", "train 0 fwd", "t.trace: line 13: expected 'train 1' here, after group 1"},
    {good_train, "stash 64 peak 64", "stash -64 peak 64",
     "t.trace: line 11: 'stash' must be a whole number from 0 to 2^64 - 1, found '-64'"},
    {good_train, "peak 128 naive", "paek 128 naive", "t.trace: line 13: expected 'peak' as field 21, found 'paek'"},
    {good_train, "c0 backward 2000 0 0 a", "c0 dram 2000 0 a",
     "t.trace: line 18: a training trace has no 'dram' actions: its replay streams what the chip's SRAM cannot hold"},
    {good_train, "c0 backward 2000 0 0 a", "c0 bakcward 2000 0 0 a",
     "t.trace: line 18: unknown action 'bakcward' (expected compute, send, recv, backward, gsend, grecv, wgrad or "
     "update)"},
    {good_train, "c0 backward 2000 0 0 a", "c0 wgrad 2000 64 0 a",
     "t.trace: line 18: 'wgrad' is an action of zb traces: under 1f1b a backward includes its weight gradients"},
    {good_train, "c0 backward 2000 0 0 a", "c0 wgrad 2000 0 a",
     "t.trace: line 18: expected 'c0 wgrad FLOPS WSTASH_BYTES MICROBATCH OP'"},
    {good_train, "c1 backward 1000 64 0 b", "c1 backward 1000 64 0",
     "t.trace: line 22: expected 'c1 backward FLOPS GATHER_BYTES MICROBATCH OP'"},
    {good_train, "c0 grecv c1 0 t_a", "c0 grecv c1 0", "t.trace: line 17: expected 'c0 grecv cPEER MICROBATCH TENSOR'"},
    {good_train, "c1 gsend c0 64 0 t_a", "c1 gsend c0 64 0 t_b",
     "t.trace: line 17: c0 receives the gradient of 't_a' (micro-batch 0) from c1, but c1 has no matching 'gsend c0'"},
    {good_train, "c0 backward 2000 0 0 a\nc0 update 12", "c0 update 12\nc0 backward 2000 0 0 a",
     "t.trace: line 18: group 0 updates before its last action: the update ends a mini-batch"},
    {good_train, "c1 update 0", "c1 compute 0 0 0 - z",
     "t.trace: line 24: group 1 ends without its 'update': the update ends a mini-batch"},
    {good_train, "c0 send c1 64 0 t_a\nc0 grecv c1 0 t_a", "c0 grecv c1 0 t_a\nc0 send c1 64 0 t_a",
     "t.trace: line 16: c0 waits for the gradient of 't_a' (micro-batch 0) from c1, whose send (line 23) can never "
     "be reached: the actions deadlock"},
    {good, "c2-3 compute 500.5 32 1 - c%25", "c2-3 backward 500.5 32 1 c%25",
     "t.trace: line 23: 'backward' is an action of training traces (which have a 'training' line)"},
    {good, "c1 send c2 64 1 t_b", "c1 gsend c2 64 1 t_b",
     "t.trace: line 17: 'gsend' is an action of training traces (which have a 'training' line)"},
    {good, "c2-3 compute 500.5 32 1 - c%25", "c2-3 wgrad 500.5 32 1 c%25",
     "t.trace: line 23: 'wgrad' is an action of training traces (which have a 'training' line)"},
};

static void a_training_trace_should_read_back_and_bad_ones_be_rejected(void) {
  trace *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(trace_parse("t.trace", good_train, strlen(good_train), &t, &err), MP_OK);
  CU_ASSERT(t->training);
  CU_ASSERT_EQUAL(t->train.schedule, TRAIN_1F1B);
  CU_ASSERT_EQUAL(t->train.optimizer, TRAIN_ADAM);
  CU_ASSERT_EQUAL(t->groups[0].train.update_flops, 12);
  CU_ASSERT_EQUAL(t->groups[1].train.inplace, 1);
  CU_ASSERT_EQUAL(t->groups[1].train.recv_bytes, 64);
  CU_ASSERT_EQUAL(t->groups[1].actions[3].kind, TRACE_GSEND);
  CU_ASSERT_EQUAL(t->groups[1].actions[3].peer, 0);
  CU_ASSERT_EQUAL(t->groups[0].actions[4].kind, TRACE_UPDATE);
  CU_ASSERT_EQUAL(t->groups[0].actions[4].microbatch, 0);
  char *text = NULL;
  CU_ASSERT_EQUAL(trace_to_string(t, &text, NULL, &err), MP_OK);
  if (text) CU_ASSERT_STRING_EQUAL(text, good_train);
  free(text);
  trace_free(t);
  for (size_t i = 0; i < sizeof bad_train_edits / sizeof bad_train_edits[0]; i++) {
    text = edit_text(bad_train_edits[i].base, bad_train_edits[i].from, bad_train_edits[i].to);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    t = NULL;
    err_clear(&err);
    CU_ASSERT_EQUAL(trace_parse("t.trace", text, strlen(text), &t, &err), MP_INPUT);
    CU_ASSERT_PTR_NULL(t);
    if (strcmp(err.msg, bad_train_edits[i].msg) != 0) {
      fprintf(stderr, "\ntraining case %zu: got '%s'\n      want '%s'\n", i, err.msg, bad_train_edits[i].msg);
      CU_FAIL("message differs");
    }
    trace_free(t);
    free(text);
  }
}

/* Every prefix of a good trace (inference or training) that stops after a whole line is refused as truncated (or, cut among
 * the actions, as too short for the count it announces), and frees all it
 * read (the arranged_core list once leaked when the file ended after the plan line: the ASan build
 * of this suite finds it). */
static void every_truncated_trace_should_be_refused_without_a_leak(void) {
  const char *const texts[] = {good, good_train};
  const int want[] = {24, 25};
  for (int k = 0; k < 2; k++) {
    const char *text = texts[k];
    int lines = 0;
    for (const char *p = text; (p = strchr(p, '\n')); p++) {
      lines++;
      size_t len = (size_t)(p - text) + 1;
      if (len == strlen(text)) break;
      trace *t = NULL;
      mp_error err;
      CU_ASSERT_EQUAL(trace_parse("t.trace", text, len, &t, &err), MP_INPUT);
      CU_ASSERT_PTR_NULL(t);
      CU_ASSERT(strstr(err.msg, "truncated") || strstr(err.msg, "actions announced, but the rest of the file"));
      trace_free(t);
    }
    CU_ASSERT_EQUAL(lines, want[k]);
  }
}

static void a_second_recv_of_a_tensor_should_wait_for_the_same_arrival(void) {
  char *text = edit("c2 recv c1 0 t_b\n", "c2 recv c1 0 t_b\nc2 recv c1 0 t_b\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  recount(text);
  trace *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(trace_parse("t.trace", text, strlen(text), &t, &err), MP_OK);
  if (t) CU_ASSERT_EQUAL(t->groups[1].n_actions, 7);
  trace_free(t);
  free(text);
}

static void actions_that_wait_for_each_other_should_be_a_deadlock(void) {
  /* Group 0 waits for 'back' before it sends t_b; group 1 sends 'back' only after receiving t_b. */
  char *a = edit("c0-1 compute 1000 64 0 - a\n", "c1 recv c2 0 back\nc0-1 compute 1000 64 0 - a\n");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  const char *from = "c2 recv c1 0 t_b\n";
  char *at = strstr(a, from);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  char *text = malloc(strlen(a) + 64);
  size_t head = (size_t)(at - a) + strlen(from);
  memcpy(text, a, head);
  strcpy(text + head, "c2 send c1 8 0 back\n");
  strcat(text, a + head);
  char *count = strstr(text, "actions 12");
  memcpy(count, "actions 14", 10);
  trace *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(trace_parse("t.trace", text, strlen(text), &t, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg,
                         "t.trace: line 12: c1 waits for 'back' (micro-batch 0) from c2, whose send (line 21) "
                         "can never be reached: the actions deadlock");
  /* Sending first breaks the cycle. */
  char *recv = strstr(text, "c1 recv c2 0 back\n");
  memmove(recv, recv + 18, strlen(recv + 18) + 1);
  char *send = strstr(text, "c1 send c2 64 0 t_b\n") + 20;
  memmove(send + 18, send, strlen(send) + 1);
  memcpy(send, "c1 recv c2 0 back\n", 18);
  CU_ASSERT_EQUAL(trace_parse("t.trace", text, strlen(text), &t, &err), MP_OK);
  if (t) CU_ASSERT_EQUAL(t->groups[0].n_actions, 7);
  trace_free(t);
  free(text);
  free(a);
  CU_ASSERT_EQUAL(trace_load(testutil_temp_path("none.trace"), &t, &err), MP_INPUT);
  CU_ASSERT_EQUAL(trace_parse("e.trace", "", 0, &t, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "e.trace: empty: expected 'meshpipe-trace 1'");
}

static CU_TestInfo tests[] = {
    {"a_trace_should_read_back_to_the_same_text", a_trace_should_read_back_to_the_same_text},
    {"a_trace_built_in_memory_should_be_checked", a_trace_built_in_memory_should_be_checked},
    {"map_should_place_the_groups_on_a_larger_mesh", map_should_place_the_groups_on_a_larger_mesh},
    {"every_truncated_trace_should_be_refused_without_a_leak", every_truncated_trace_should_be_refused_without_a_leak},
    {"bad_traces_should_be_rejected_naming_the_line", bad_traces_should_be_rejected_naming_the_line},
    {"a_training_trace_should_read_back_and_bad_ones_be_rejected",
     a_training_trace_should_read_back_and_bad_ones_be_rejected},
    {"a_second_recv_of_a_tensor_should_wait_for_the_same_arrival",
     a_second_recv_of_a_tensor_should_wait_for_the_same_arrival},
    {"actions_that_wait_for_each_other_should_be_a_deadlock", actions_that_wait_for_each_other_should_be_a_deadlock},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("trace", tests, argc, argv); }
