/* The table of test_hostile.c: per format, bad files and the command that reads them.  In a command
 * @F is the bad file, @D the case's folder (where outputs would go) and @P a good plan for
 * tiny_resnet on the 4x4 chip.  Included once, by test_hostile.c, which defines the makers. */

typedef struct bad_case {
  const char *format; /* graph, chip, plan, trace, optimes, policy, ckpt, onnx, sweep, output */
  const char *label;
  const char *input; /* the file's name in the case folder (default "in"), or NULL */
  const char *path;  /* an absolute path instead (/dev/zero), or NULL */
  const char *text;  /* its content, or NULL when make writes it */
  void (*make)(const char *path, int variant);
  int variant;
  const char *cmd;
  int status;        /* expected exit status; 0 means 2 */
  const char *named; /* what the line names, when not @F */
} bad_case;

/* Traces: the bundled tiny_resnet trace on the 4x4 chip with one edit (from -> to), by variant. */
static const struct {
  const char *from, *to;
} trace_edits[] = {
    {"\nc0-4 compute 917504 32768 0 - conv1\n", "\nc2147483647 compute 917504 32768 0 - conv1\n"},
    {"group 0 c0-4 layers", "group 0 c2147483647 layers"},
    {"group 0 c0-4 layers", "group 0 c0-2147483647 layers"},
    {"microbatches 8", "microbatches 2147483647"},
    {"actions 120", "actions 9223372036854775807"},
    {"\nc4 send c5 32768 0 t_conv1\n", "\nc4 send c99999999999999999999 32768 0 t_conv1\n"},
    {"\nc0-4 compute 917504 32768 0 - conv1\n", "\nc0-4 compute 1e300 32768 0 - conv1\n"},
    {"flops 917504 gather", "flops 1e300 gather"},
    {"\nc4 send c5 32768 0 t_conv1\n", "\nc4 send c5 32768 0 t%0Aconv1\n"},
    {"meshpipe-trace 1", "meshpipe-trace 2"},
    {"\nc4 send c5 32768 0 t_conv1\n", "\nc4 sned c5 32768 0 t_conv1\n"},
    {"chip mesh4x4 21c1f7cd2b620fda 4 4", "chip mesh4x4 21c1f7cd2b620fda 65 64"},
    {"chip mesh4x4 21c1f7cd2b620fda 4 4", "chip mesh4x4 21c1f7cd2b620fda 4 3"},
    {"\nc0-4 compute 917504 32768 0 - conv1\n", "\nc0-4 compute 917504 32768 8 - conv1\n"},
    {"\nc0-4 compute 917504 32768 0 - conv1\n", "\nc0-4 compute 917504 32768 0 0 conv1\n"},
    {"\nc0-4 compute 917504 32768 0 - conv1\n", "\nc0-4 compute 917504 32768 0 - conv%4\n"},
    {"\nc5 recv c4 0 t_conv1\n", "\nc5 recv c4 0 t_nothing\n"},
    {"group 1 c5-8", "group 1 c0-8"},
    {"sram 32948", "sram -1"},
    {"\nc0-4 compute 917504 32768 0 - conv1\n", "\nc0-4 compute nan 32768 0 - conv1\n"},
    {"\nend\n", "\nend\nc0 compute 1 1 0 - x\n"},
    {"\nend\n", "\n"},
    {"groups 5", "groups 17"},
};

/* Writes text with the first occurrence of from replaced by to. */
static void write_edited(const char *path, const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  char *out = malloc(strlen(text) + strlen(to) + 1);
  size_t head = (size_t)(at - text);
  memcpy(out, text, head);
  strcpy(out + head, to);
  strcat(out, at + strlen(from));
  write_bytes(path, out, strlen(out));
  free(out);
}

static void make_trace(const char *path, int variant) {
  char *text = NULL;
  size_t len = 0;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(testutil_src("traces/tiny_resnet.mesh4x4.trace"), &text, &len, &err), MP_OK);
  if (variant < 0) { /* cut right after the plan line: the arranged_core list once leaked */
    char *plan = strstr(text, "\nplan ");
    char *end = strchr(plan + 1, '\n');
    write_bytes(path, text, (size_t)(end - text) + 1);
    free(text);
    return;
  }
  write_edited(path, text, trace_edits[variant].from, trace_edits[variant].to);
  free(text);
}

/* Training traces: the fuzzer's hand-written seed (two one-core groups, one micro-batch) with one edit. */
static const struct {
  const char *from, *to;
} train_trace_edits[] = {
    {"c1 backward 1000 64 0 b\n", "c1 backward 1000 64 0\n"},
    {"training 1f1b", "training zb"},
    /* well formed and free of deadlock, but group 1 runs micro-batch 0 backward before forward: the
     * replay refuses it */
    {"c1 recv c0 0 t_a\nc1 compute 500 32 0 - b\nc1 backward 1000 64 0 b\nc1 gsend c0 64 0 t_a\n",
     "c1 backward 1000 64 0 b\nc1 gsend c0 64 0 t_a\nc1 recv c0 0 t_a\nc1 compute 500 32 0 - b\n"},
};

static void make_train_trace(const char *path, int variant) {
  char *text = NULL;
  size_t len = 0;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(
      fileio_read_all(testutil_src("tests/fuzz/seeds/trace/two-groups-train.trace"), &text, &len, &err), MP_OK);
  write_edited(path, text, train_trace_edits[variant].from, train_trace_edits[variant].to);
  free(text);
}

/* A graph document of tiny form, and one op. */
#define GDOC(inputs, ops) \
  "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":" inputs ",\"ops\":" ops "}"
#define GOP(name, ins, outs, flops) \
  "{\"name\":\"" name "\",\"type\":\"X\",\"inputs\":" ins ",\"outputs\":" outs ",\"macs\":1,\"flops\":" flops ",\"weight_bytes\":0}"
#define GIN "[{\"name\":\"x\",\"bytes\":4}]"
#define GOUT(name) "[{\"name\":\"" name "\",\"bytes\":8}]"

/* A 4x4 chip with one part replaced. */
#define CHIP(mesh, core, noc, rest)                                                                      \
  "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"c\",\"mesh\":" mesh ",\"core\":" core ",\"noc\":" noc rest \
  "}"
#define MESH "{\"width\":4,\"height\":4}"
#define CORE "{\"flops\":1e12,\"sram_bytes\":1572864}"
#define NOC "{\"bandwidth\":3.2e10,\"latency\":4e-9}"

/* A plan document with the given arranged_core list (16 entries summing to 6 on the 4x4 chip). */
#define PLAN(list, rest) "{\"format\":\"meshpipe-plan\",\"version\":1,\"arranged_core\":" list rest "}"
#define L16 "[0,0,0,0,1,0,0,0,1,0,0,0,1,0,2,1]"

#define G_CMD "partition -g @F -c platforms/mesh4x4.json -o @D/out.json"
#define C_CMD "partition -g traces/tiny_resnet.json -c @F -o @D/out.json"
#define P_CMD "simulate -g traces/tiny_resnet.json -c platforms/mesh4x4.json -p @F --timeline @D/run.json"
#define T_CMD "replay @F -c platforms/mesh4x4.json"
#define TT_CMD "replay @F -c platforms/mesh4x4.json --map snake:0 --json"
#define O_CMD "record -g traces/tiny_resnet.json -c platforms/mesh4x4.json -p @P -t @F -o @D/run.trace"
#define POL_CMD \
  "partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json -m rl --policy @F --episodes 0 -o @D/out.json"
#define CK_CMD \
  "train -g traces/tiny_resnet.json -c platforms/mesh4x4.json --reward model --episodes 16 -q -o @D/out.bin --resume"
#define X_CMD "import @F -o @D/out.json"
#define S_CMD "sweep -g traces/tiny_resnet.json -c platforms/mesh4x4.json -m even -q -j 1 -o @F"
#define S_HEAD                                                                                           \
  "case,graph,batch,method,feasible,stages,model_period_s,samples_per_s,latency_s,busiest_link,"             \
  "busiest_link_utilisation,total_sram_bytes,noc_bandwidth,cores,solve_s\n"
#define S_KEY "base|tiny_resnet|even,tiny_resnet,1,even,"

/* Text with a NUL byte after a good start, by variant: a graph, a trace, op times, a sweep CSV. */
static void make_nul(const char *path, int variant) {
  static const char *const starts[] = {"{\"format\": \"meshpipe-graph\"", "meshpipe-trace 1\n", "conv1,1e-6\n",
                                       S_HEAD};
  char b[512];
  size_t n = strlen(starts[variant]);
  memcpy(b, starts[variant], n);
  b[n] = '\0';
  memcpy(b + n + 1, "x\n", 2);
  write_bytes(path, b, n + 3);
}

#define TEXT(fmt, label, text, cmd) {fmt, label, "in", NULL, text, NULL, 0, cmd, 0, NULL}
#define MADE(fmt, label, name, make, variant, cmd) {fmt, label, name, NULL, NULL, make, variant, cmd, 0, NULL}

static const bad_case cases[] = {
    /* ---- graphs ---- */
    TEXT("graph", "empty file", "", G_CMD),
    TEXT("graph", "blanks only", " \n\t\n", G_CMD),
    TEXT("graph", "not JSON", "{\"format\": \"meshpipe-graph\",\n \"version\" 1}", G_CMD),
    TEXT("graph", "a UTF-8 byte order mark", "\xef\xbb\xbf{}", G_CMD),
    TEXT("graph", "top level array", "[1, 2]", G_CMD),
    TEXT("graph", "another format", "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[]}", G_CMD),
    TEXT("graph", "version 2", "{\"format\":\"meshpipe-graph\",\"version\":2,\"name\":\"t\",\"inputs\":[],\"ops\":[]}", G_CMD),
    TEXT("graph", "no ops", GDOC("[]", "[]"), G_CMD),
    TEXT("graph", "op not an object", GDOC(GIN, "[3]"), G_CMD),
    TEXT("graph", "flops missing", GDOC(GIN, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":" GOUT("y") ",\"macs\":1,\"weight_bytes\":0}]"), G_CMD),
    TEXT("graph", "negative macs", GDOC(GIN, "[{\"name\":\"a\",\"type\":\"X\",\"inputs\":[],\"outputs\":" GOUT("y") ",\"macs\":-1,\"flops\":2,\"weight_bytes\":0}]"), G_CMD),
    TEXT("graph", "flops below 2 x macs", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "1") "]"), G_CMD),
    TEXT("graph", "flops beyond 2^53", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "1e17") "]"), G_CMD),
    TEXT("graph", "flops 1e999", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "1e999") "]"), G_CMD),
    TEXT("graph", "flops as a string", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "\"2\"") "]"), G_CMD),
    TEXT("graph", "duplicate op name", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "2") "," GOP("a", "[\"y\"]", GOUT("z"), "2") "]"), G_CMD),
    TEXT("graph", "duplicate op name with a newline", GDOC(GIN, "[" GOP("a\\nb", "[\"x\"]", GOUT("y"), "2") "," GOP("a\\nb", "[\"y\"]", GOUT("z"), "2") "]"), G_CMD),
    TEXT("graph", "an escape sequence in a name", GDOC(GIN, "[" GOP("\\u001b[2J", "[\"x\"]", GOUT("y"), "2") "," GOP("\\u001b[2J", "[\"y\"]", GOUT("z"), "2") "]"), G_CMD),
    TEXT("graph", "tensor produced twice", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "2") "," GOP("b", "[\"x\"]", GOUT("y"), "2") "]"), G_CMD),
    TEXT("graph", "an input nothing produces", GDOC(GIN, "[" GOP("a", "[\"x\",\"ghost\"]", GOUT("y"), "2") "]"), G_CMD),
    TEXT("graph", "a cycle", GDOC(GIN, "[" GOP("a", "[\"x\",\"tb\"]", GOUT("ta"), "2") "," GOP("b", "[\"ta\"]", GOUT("tb"), "2") "]"), G_CMD),
    TEXT("graph", "source a string", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[" GOP("a", "[]", GOUT("y"), "2") "],\"source\":\"x\"}", G_CMD),
    TEXT("graph", "source an array", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[" GOP("a", "[]", GOUT("y"), "2") "],\"source\":[]}", G_CMD),
    TEXT("graph", "unknown key", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"inputs\":[],\"ops\":[],\"opz\":1}", G_CMD),
    TEXT("graph", "key given twice", "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"t\",\"name\":\"u\",\"inputs\":[],\"ops\":[]}", G_CMD),
    TEXT("graph", "content after the document", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "2") "]") " {}", G_CMD),
    MADE("graph", "a NUL byte", "in", make_nul, 0, G_CMD),
    TEXT("graph", "an empty op name", GDOC(GIN, "[" GOP("", "[\"x\"]", GOUT("y"), "2") "]"), G_CMD),
    TEXT("graph", "negative tensor bytes", GDOC("[{\"name\":\"x\",\"bytes\":-4}]", "[" GOP("a", "[\"x\"]", GOUT("y"), "2") "]"), G_CMD),
    TEXT("graph", "outputs not an array", GDOC(GIN, "[" GOP("a", "[\"x\"]", "{}", "2") "]"), G_CMD),
    MADE("graph", "graph input bytes past 2^63", "in", make_big, 0, G_CMD),
    MADE("graph", "output bytes past 2^63", "in", make_big, 1, G_CMD),
    MADE("graph", "JSON nested 100 000 deep", "in", make_big, 2, G_CMD),
    {"graph", "/dev/zero", NULL, "/dev/zero", NULL, NULL, 0, "info @F", 0, NULL},
    {"graph", "a folder", NULL, NULL, NULL, NULL, 0, "info @D", 0, "@D"},
    {"graph", "a missing file", NULL, NULL, NULL, NULL, 0, "info @D/absent.json", 0, "@D/absent.json"},

    /* ---- chips ---- */
    TEXT("chip", "core.flops 5e-324", CHIP(MESH, "{\"flops\":5e-324,\"sram_bytes\":1024}", NOC, ""), C_CMD),
    TEXT("chip", "core.flops 1e-300", CHIP(MESH, "{\"flops\":1e-300,\"sram_bytes\":1024}", NOC, ""), C_CMD),
    TEXT("chip", "core.flops 0", CHIP(MESH, "{\"flops\":0,\"sram_bytes\":1024}", NOC, ""), C_CMD),
    TEXT("chip", "core.flops 1e300", CHIP(MESH, "{\"flops\":1e300,\"sram_bytes\":1024}", NOC, ""), C_CMD),
    TEXT("chip", "core.flops a string", CHIP(MESH, "{\"flops\":\"1e12\",\"sram_bytes\":1024}", NOC, ""), C_CMD),
    TEXT("chip", "core.flops missing", CHIP(MESH, "{\"sram_bytes\":1024}", NOC, ""), C_CMD),
    TEXT("chip", "core.sram_bytes 0", CHIP(MESH, "{\"flops\":1e12,\"sram_bytes\":0}", NOC, ""), C_CMD),
    TEXT("chip", "core.sram_bytes beyond 2^53", CHIP(MESH, "{\"flops\":1e12,\"sram_bytes\":1e17}", NOC, ""), C_CMD),
    TEXT("chip", "transfer factor 0.5", CHIP(MESH, "{\"flops\":1e12,\"sram_bytes\":1024,\"transfer_factor\":0.5}", NOC, ""), C_CMD),
    TEXT("chip", "transfer factor 1e300", CHIP(MESH, "{\"flops\":1e12,\"sram_bytes\":1024,\"transfer_factor\":1e300}", NOC, ""), C_CMD),
    TEXT("chip", "noc.bandwidth 0", CHIP(MESH, CORE, "{\"bandwidth\":0,\"latency\":0}", ""), C_CMD),
    TEXT("chip", "noc.bandwidth 1e-300", CHIP(MESH, CORE, "{\"bandwidth\":1e-300,\"latency\":0}", ""), C_CMD),
    TEXT("chip", "noc.bandwidth 1e300", CHIP(MESH, CORE, "{\"bandwidth\":1e300,\"latency\":0}", ""), C_CMD),
    TEXT("chip", "noc.latency 1e308", CHIP(MESH, CORE, "{\"bandwidth\":1e10,\"latency\":1e308}", ""), C_CMD),
    TEXT("chip", "noc.latency -1e-9", CHIP(MESH, CORE, "{\"bandwidth\":1e10,\"latency\":-1e-9}", ""), C_CMD),
    TEXT("chip", "noc.latency 2 s", CHIP(MESH, CORE, "{\"bandwidth\":1e10,\"latency\":2}", ""), C_CMD),
    TEXT("chip", "noc missing", "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"c\",\"mesh\":" MESH ",\"core\":" CORE "}", C_CMD),
    TEXT("chip", "dram.bandwidth 0.5", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":0.5,\"ports\":[[0,0]]}"), C_CMD),
    TEXT("chip", "dram.bandwidth 1e16", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":1e16,\"ports\":[[0,0]]}"), C_CMD),
    TEXT("chip", "no dram port", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":1e11,\"ports\":[]}"), C_CMD),
    TEXT("chip", "a port off the mesh", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":1e11,\"ports\":[[4,0]]}"), C_CMD),
    TEXT("chip", "a port at 2^31", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":1e11,\"ports\":[[2147483648,0]]}"), C_CMD),
    TEXT("chip", "a port twice", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":1e11,\"ports\":[[0,0],[0,0]]}"), C_CMD),
    TEXT("chip", "a port of one number", CHIP(MESH, CORE, NOC, ",\"dram\":{\"bandwidth\":1e11,\"ports\":[[0]]}"), C_CMD),
    TEXT("chip", "mesh width 0", CHIP("{\"width\":0,\"height\":4}", CORE, NOC, ""), C_CMD),
    TEXT("chip", "mesh of 65 x 64", CHIP("{\"width\":65,\"height\":64}", CORE, NOC, ""), C_CMD),
    TEXT("chip", "mesh width 2^31", CHIP("{\"width\":2147483648,\"height\":1}", CORE, NOC, ""), C_CMD),
    TEXT("chip", "mesh width 2.5", CHIP("{\"width\":2.5,\"height\":4}", CORE, NOC, ""), C_CMD),
    TEXT("chip", "override of core 99", CHIP(MESH, CORE, NOC, ",\"overrides\":[{\"core\":99,\"flops\":2e12}]"), C_CMD),
    TEXT("chip", "a core overridden twice", CHIP(MESH, CORE, NOC, ",\"overrides\":[{\"core\":3,\"flops\":2e12},{\"core\":3,\"sram_bytes\":1}]"), C_CMD),
    TEXT("chip", "an override that changes nothing", CHIP(MESH, CORE, NOC, ",\"overrides\":[{\"core\":3}]"), C_CMD),
    TEXT("chip", "an override of 1e-300 flop/s", CHIP(MESH, CORE, NOC, ",\"overrides\":[{\"core\":3,\"flops\":1e-300}]"), C_CMD),
    TEXT("chip", "unknown key", CHIP(MESH, CORE, NOC, ",\"clock\":1e9"), C_CMD),
    TEXT("chip", "a graph as a chip", GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "2") "]"), C_CMD),
    TEXT("chip", "version 2", "{\"format\":\"meshpipe-chip\",\"version\":2,\"name\":\"c\"}", C_CMD),

    /* ---- plans (tiny_resnet, 6 layers, on the 4x4 chip) ---- */
    TEXT("plan", "empty file", "", P_CMD),
    TEXT("plan", "not JSON", "{\"format\":", P_CMD),
    TEXT("plan", "a chip as a plan", CHIP(MESH, CORE, NOC, ""), P_CMD),
    TEXT("plan", "version 2", "{\"format\":\"meshpipe-plan\",\"version\":2,\"arranged_core\":" L16 "}", P_CMD),
    TEXT("plan", "arranged_core missing", "{\"format\":\"meshpipe-plan\",\"version\":1}", P_CMD),
    TEXT("plan", "arranged_core empty", PLAN("[]", ""), P_CMD),
    TEXT("plan", "15 entries", PLAN("[0,0,0,1,0,0,0,1,0,0,0,1,0,2,1]", ""), P_CMD),
    TEXT("plan", "17 entries", PLAN("[0,0,0,0,0,1,0,0,0,1,0,0,0,1,0,2,1]", ""), P_CMD),
    TEXT("plan", "a negative entry", PLAN("[0,0,0,0,1,0,0,0,1,0,0,0,1,-1,3,1]", ""), P_CMD),
    TEXT("plan", "the last entry 0", PLAN("[0,0,0,0,1,0,0,0,1,0,0,0,1,0,3,0]", ""), P_CMD),
    TEXT("plan", "the entries sum to 7", PLAN("[0,0,0,0,1,0,0,0,1,0,0,0,1,0,3,1]", ""), P_CMD),
    TEXT("plan", "entries of 2^31 - 1", PLAN("[2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647,2147483647]", ""), P_CMD),
    TEXT("plan", "an entry 1.5", PLAN("[0,0,0,0,1,0,0,0,1,0,0,0,1,0,1.5,1.5]", ""), P_CMD),
    TEXT("plan", "an entry 1e300", PLAN("[0,0,0,0,1,0,0,0,1,0,0,0,1,0,1e300,1]", ""), P_CMD),
    TEXT("plan", "an entry as a string", PLAN("[0,0,0,0,1,0,0,0,1,0,0,0,1,0,\"2\",1]", ""), P_CMD),
    TEXT("plan", "stages of the wrong count", PLAN(L16, ",\"stages\":[]"), P_CMD),
    TEXT("plan", "stages whose layers disagree", PLAN("[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,6]", ",\"stages\":[{\"layers\":[0,4],\"cores\":[0,15]}]"), P_CMD),
    TEXT("plan", "stages whose cores disagree", PLAN("[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,6]", ",\"stages\":[{\"layers\":[0,5],\"cores\":[1,15]}]"), P_CMD),
    TEXT("plan", "a first_op of another graph", PLAN("[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,6]", ",\"stages\":[{\"layers\":[0,5],\"cores\":[0,15],\"first_op\":\"conv9\"}]"), P_CMD),
    TEXT("plan", "a graph hash that is not hex", PLAN(L16, ",\"graph\":{\"name\":\"g\",\"hash\":\"xyz\"}"), P_CMD),
    TEXT("plan", "unknown key", PLAN(L16, ",\"cores\":16"), P_CMD),

    /* ---- traces (replayed on the 4x4 chip) ---- */
    MADE("trace", "actor core 2^31 - 1", "in", make_trace, 0, T_CMD),
    MADE("trace", "group core 2^31 - 1", "in", make_trace, 1, T_CMD),
    MADE("trace", "group c0-2147483647", "in", make_trace, 2, T_CMD),
    MADE("trace", "microbatches 2^31 - 1", "in", make_trace, 3, T_CMD),
    MADE("trace", "actions 2^63 - 1", "in", make_trace, 4, T_CMD),
    MADE("trace", "peer core 10^20", "in", make_trace, 5, T_CMD),
    MADE("trace", "compute of 1e300 flops", "in", make_trace, 6, T_CMD),
    MADE("trace", "a group of 1e300 flops", "in", make_trace, 7, T_CMD),
    MADE("trace", "a tensor name with a newline", "in", make_trace, 8, T_CMD),
    MADE("trace", "version 2", "in", make_trace, 9, T_CMD),
    MADE("trace", "an unknown action", "in", make_trace, 10, T_CMD),
    MADE("trace", "a mesh of 65 x 64", "in", make_trace, 11, T_CMD),
    MADE("trace", "a mesh that does not hold the plan", "in", make_trace, 12, T_CMD),
    MADE("trace", "a micro-batch out of range", "in", make_trace, 13, T_CMD),
    MADE("trace", "an AFTER naming no earlier compute", "in", make_trace, 14, T_CMD),
    MADE("trace", "a malformed escape", "in", make_trace, 15, T_CMD),
    MADE("trace", "a send without its receive", "in", make_trace, 16, T_CMD),
    MADE("trace", "a core in two groups", "in", make_trace, 17, T_CMD),
    MADE("trace", "negative sram", "in", make_trace, 18, T_CMD),
    MADE("trace", "NaN flops", "in", make_trace, 19, T_CMD),
    MADE("trace", "text after end", "in", make_trace, 20, T_CMD),
    MADE("trace", "no end", "in", make_trace, 21, T_CMD),
    MADE("trace", "more groups than cores", "in", make_trace, 22, T_CMD),
    MADE("trace", "the file ends after the plan line", "in", make_trace, -1, T_CMD),
    MADE("trace", "training: a backward without its op", "in", make_train_trace, 0, TT_CMD),
    MADE("trace", "training: an unknown schedule", "in", make_train_trace, 1, TT_CMD),
    MADE("trace", "training: a backward before its forward", "in", make_train_trace, 2, TT_CMD),
    TEXT("trace", "empty file", "", T_CMD),
    MADE("trace", "a NUL byte", "in", make_nul, 1, T_CMD),

    /* ---- op times (recorded with a good plan) ---- */
    TEXT("optimes", "an op of another graph", "op,seconds\nconv9,1e-6\n", O_CMD),
    TEXT("optimes", "an op twice", "conv1,1e-6\nconv1,2e-6\n", O_CMD),
    TEXT("optimes", "a negative time", "conv1,-1e-6\n", O_CMD),
    TEXT("optimes", "NaN", "conv1,nan\n", O_CMD),
    TEXT("optimes", "infinity", "conv1,inf\n", O_CMD),
    TEXT("optimes", "1e300 s", "conv1,1e300\n", O_CMD),
    TEXT("optimes", "1e999 s", "conv1,1e999\n", O_CMD),
    TEXT("optimes", "not a number", "conv1,1 ms\n", O_CMD),
    TEXT("optimes", "no time", "conv1,\n", O_CMD),
    TEXT("optimes", "no comma", "conv1 1e-6\n", O_CMD),
    TEXT("optimes", "three fields", "conv1,1e-6,gpu\n", O_CMD),
    TEXT("optimes", "an unclosed quote", "\"conv1,1e-6\n", O_CMD),
    TEXT("optimes", "nothing but comments", "# nothing\n\n", O_CMD),
    TEXT("optimes", "a JSON array", "[1]", O_CMD),
    TEXT("optimes", "a JSON string time", "{\"conv1\": \"1e-6\"}", O_CMD),
    TEXT("optimes", "a JSON key with a newline", "{\"conv\\n1\": 1e-6}", O_CMD),
    TEXT("optimes", "a JSON time of 1e300 s", "{\"conv1\": 1e300}", O_CMD),
    MADE("optimes", "a NUL byte", "in", make_nul, 2, O_CMD),

    /* ---- policies (partition -m rl --policy) ---- */
    MADE("policy", "empty file", "in", make_policy, 0, POL_CMD),
    MADE("policy", "shorter than its magic", "in", make_policy, 1, POL_CMD),
    MADE("policy", "another magic", "in", make_policy, 2, POL_CMD),
    MADE("policy", "version 2", "in", make_policy, 3, POL_CMD),
    MADE("policy", "an unknown activation", "in", make_policy, 4, POL_CMD),
    MADE("policy", "unknown flags", "in", make_policy, 5, POL_CMD),
    MADE("policy", "9 hidden layers", "in", make_policy, 6, POL_CMD),
    MADE("policy", "60 bytes declaring 12.9 G parameters", "in", make_policy, 7, POL_CMD),
    MADE("policy", "a parameter count off its shape", "in", make_policy, 8, POL_CMD),
    MADE("policy", "truncated", "in", make_policy, 9, POL_CMD),
    MADE("policy", "a damaged byte", "in", make_policy, 10, POL_CMD),
    MADE("policy", "a NaN parameter", "in", make_policy, 11, POL_CMD),
    MADE("policy", "trailing bytes", "in", make_policy, 12, POL_CMD),
    MADE("policy", "no inputs", "in", make_policy, 13, POL_CMD),
    MADE("policy", "a hidden layer of 70 000", "in", make_policy, 14, POL_CMD),
    MADE("policy", "another shape than the partitioner's", "in", make_policy, 15, POL_CMD),

    /* ---- checkpoints (train --resume reads OUT.ckpt) ---- */
    MADE("ckpt", "empty file", "out.bin.ckpt", make_ckpt, 0, CK_CMD),
    MADE("ckpt", "another magic", "out.bin.ckpt", make_ckpt, 1, CK_CMD),
    MADE("ckpt", "a damaged byte", "out.bin.ckpt", make_ckpt, 2, CK_CMD),
    MADE("ckpt", "version 7", "out.bin.ckpt", make_ckpt, 3, CK_CMD),
    MADE("ckpt", "another configuration", "out.bin.ckpt", make_ckpt, 4, CK_CMD),
    MADE("ckpt", "truncated and resealed", "out.bin.ckpt", make_ckpt, 5, CK_CMD),
    MADE("ckpt", "2^63 + 5 episodes", "out.bin.ckpt", make_ckpt, 6, CK_CMD),
    MADE("ckpt", "episodes without iterations", "out.bin.ckpt", make_ckpt, 7, CK_CMD),
    MADE("ckpt", "a random generator of zeros", "out.bin.ckpt", make_ckpt, 8, CK_CMD),
    MADE("ckpt", "a NaN mean reward", "out.bin.ckpt", make_ckpt, 9, CK_CMD),
    MADE("ckpt", "a best plan that is no plan", "out.bin.ckpt", make_ckpt, 10, CK_CMD),
    MADE("ckpt", "an infinite best reward", "out.bin.ckpt", make_ckpt, 11, CK_CMD),
    MADE("ckpt", "steps no run reaches", "out.bin.ckpt", make_ckpt, 12, CK_CMD),
    MADE("ckpt", "a policy image longer than the file", "out.bin.ckpt", make_ckpt, 13, CK_CMD),
    MADE("ckpt", "a simulator's clock of 1e300 s", "out.bin.ckpt", make_ckpt, 14, CK_CMD),

    /* ---- ONNX models (import) ---- */
    MADE("onnx", "empty file", "in.onnx", make_onnx, 0, X_CMD),
    MADE("onnx", "text", "in.onnx", make_onnx, 1, X_CMD),
    MADE("onnx", "half of resnet18", "in.onnx", make_onnx, 2, X_CMD),
    MADE("onnx", "resnet18 without its last byte", "in.onnx", make_onnx, 3, X_CMD),
    MADE("onnx", "a Conv without weights (114 bytes)", "in.onnx", make_onnx, 4, X_CMD),
    MADE("onnx", "a ConvTranspose without weights", "in.onnx", make_onnx, 5, X_CMD),
    MADE("onnx", "an input nothing produces", "in.onnx", make_onnx, 6, X_CMD),
    MADE("onnx", "a node of 71 inputs", "in.onnx", make_onnx, 7, X_CMD),
    MADE("onnx", "If nodes nested 3000 deep", "in.onnx", make_onnx, 8, X_CMD),
    MADE("onnx", "If nodes nested 21 deep (65 messages)", "in.onnx", make_onnx, 9, X_CMD),
    MADE("onnx", "800 kB unpacking to 100 MB", "in.onnx", make_onnx, 10, X_CMD),
    MADE("onnx", "no graph", "in.onnx", make_onnx, 11, X_CMD),
    MADE("onnx", "no opset", "in.onnx", make_onnx, 12, X_CMD),
    MADE("onnx", "a graph without nodes", "in.onnx", make_onnx, 13, X_CMD),
    {"onnx", "a JSON graph named .onnx", "in.onnx", NULL, GDOC(GIN, "[" GOP("a", "[\"x\"]", GOUT("y"), "2") "]"), NULL, 0,
     "info @F", 0, NULL},

    /* ---- sweep CSVs (resumed: the file must be left as it was) ---- */
    TEXT("sweep", "another sweep's columns", "case,mesh,graph\nx,y,z\n", S_CMD),
    TEXT("sweep", "a header without a newline, not ours", "something else", S_CMD),
    MADE("sweep", "a NUL byte", "in", make_nul, 3, S_CMD),
    TEXT("sweep", "the case's key, garbage columns", S_HEAD "base|tiny_resnet|even,garbage,zz\n", S_CMD),
    TEXT("sweep", "the case's key, another graph", S_HEAD "base|tiny_resnet|even,vgg16,1,even,1,6,1,1,1,x,0.5,1,3.2e10,16,0.1\n", S_CMD),
    TEXT("sweep", "the case's key, a word for a number", S_HEAD S_KEY "yes,6,1,1,1,x,0.5,1,3.2e10,16,0.1\n", S_CMD),
    TEXT("sweep", "the case's key, NaN", S_HEAD S_KEY "1,6,nan,1,1,x,0.5,1,3.2e10,16,0.1\n", S_CMD),
    TEXT("sweep", "the case's key, a negative time", S_HEAD S_KEY "1,6,1,1,-1,x,0.5,1,3.2e10,16,0.1\n", S_CMD),
    TEXT("sweep", "the case's key, a column too many", S_HEAD S_KEY "1,6,1,1,1,x,0.5,1,3.2e10,16,0.1,7\n", S_CMD),
    TEXT("sweep", "the case's key, a column short", S_HEAD S_KEY "1,6,1,1,1,x,0.5,1,3.2e10,16\n", S_CMD),

    /* ---- output places ---- */
    {"output", "--paje into a missing folder", NULL, NULL, NULL, NULL, 0,
     "simulate -g traces/tiny_resnet.json -c platforms/mesh4x4.json -p @P --paje @D/none/run.paje", 1, "@D/none/run.paje"},
    {"output", "--paje onto a folder", NULL, NULL, NULL, NULL, 0,
     "simulate -g traces/tiny_resnet.json -c platforms/mesh4x4.json -p @P --paje @D", 1, "@D"},
    {"output", "partition -o into a missing folder", NULL, NULL, NULL, NULL, 0,
     "partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json --no-simulate -o @D/none/plan.json", 1,
     "@D/none/plan.json"},
    {"output", "import -o into a missing folder", NULL, NULL, NULL, NULL, 0,
     "import tests/models/alexnet.onnx -o @D/none/alexnet.json", 1, "@D/none/alexnet.json"},
};
