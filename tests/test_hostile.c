/* Hostile input through the meshpipe binary: a table of bad files per format (graph, chip, plan,
 * trace, op times, policy, checkpoint, ONNX, sweep CSV) and a few bad output places, each run by the
 * command that reads it.  Every case must end with the documented exit status (2 for bad input, 1 for
 * an output that cannot be written), print exactly one line on stderr naming the file and nothing on
 * stdout, and write nothing: the case's folder holds afterwards exactly what it held before, byte
 * for byte.  The cases are the kinds issue 17 found (crashes, aborts, hangs, huge work from small
 * files, input accepted but wrong, messages of two lines or without the file's name) and their
 * neighbours.  And a partition killed while it simulates leaves no plan behind.
 * MESHPIPE_HOSTILE_TIMES=1 prints each case's wall time (a measurement for the "within a
 * second", not a check: timing belongs to benchmarks).
 * MESHPIPE_TEST_LABELS: simgrid (some commands start the engine before they read the bad file; under
 * ASan, SimGrid's stacks then draw a warning, which goes to the sanitizer's log files, not stderr) */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "fileio.h"
#include "testutil.h"

/* ---- fixtures: a plan, a policy and a checkpoint meshpipe writes for tiny_resnet on the 4x4 chip ---- */

static char fixture_dir[1024];

static const char *fixture(const char *name) {
  static char buf[4][1200];
  static int next;
  char *b = buf[next++ % 4];
  snprintf(b, sizeof buf[0], "%s/%s", fixture_dir, name);
  return b;
}

static void make_fixtures(void) {
  if (fixture_dir[0]) return;
  snprintf(fixture_dir, sizeof fixture_dir, "%s", testutil_temp_path("fixtures"));
  mkdir(fixture_dir, 0755);
  char args[4096];
  snprintf(args, sizeof args,
           "partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json --no-simulate -o '%s'", fixture("plan.json"));
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, NULL, NULL), 0);
  snprintf(args, sizeof args,
           "train -g traces/tiny_resnet.json -c platforms/mesh4x4.json --reward model --episodes 16 -q -o '%s'",
           fixture("pol.bin"));
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, NULL, NULL), 0);
}

/* ---- binary inputs ---- */

static unsigned char *read_fixture(const char *name, size_t *len) {
  char *data = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(fixture(name), &data, len, &err), MP_OK);
  return (unsigned char *)data;
}

static void put_u64(unsigned char *b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; i++) b[at + i] = (unsigned char)(v >> (8 * i));
}

static void put_u32(unsigned char *b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; i++) b[at + i] = (unsigned char)(v >> (8 * i));
}

/* The trailing FNV-1a checksum over the rest, as meshpipe writes it: an edit that passes the checksum. */
static void reseal(unsigned char *b, size_t len) { put_u64(b, len - 8, fileio_hash(FILEIO_HASH_INIT, b, len - 8)); }

static void write_bytes(const char *path, const void *b, size_t len) {
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, b, len, &err), MP_OK);
}

/* Policy files: the fixture (26 inputs, 4 outputs, no Adam state) edited. */
static void make_policy(const char *path, int variant) {
  size_t len;
  unsigned char *b = read_fixture("pol.bin", &len);
  b = realloc(b, len + 64);
  size_t n = len;
  switch (variant) {
  case 0: n = 0; break;
  case 1: n = 7; break;                              /* shorter than the magic */
  case 2: b[0] = 'X'; break;                         /* not the magic */
  case 3: put_u32(b, 8, 2), reseal(b, n); break;     /* version 2 */
  case 4: put_u32(b, 28, 9), reseal(b, n); break;    /* activation 9 */
  case 5: put_u32(b, 32, 6), reseal(b, n); break;    /* unknown flags */
  case 6: put_u32(b, 20, 9), reseal(b, n); break;    /* 9 hidden layers */
  case 7: /* 60 bytes declaring 4 hidden layers of 65536: 12.9 G parameters */
    put_u32(b, 20, 4), put_u32(b, 24, 65536);
    put_u64(b, 36, 26ull * 65536 + 65536 + 3 * (65536ull * 65536 + 65536) + 4ull * 65536 + 4);
    n = 60;
    break;
  case 8: put_u64(b, 36, 12345), reseal(b, n); break;                        /* n_params off the shape */
  case 9: n = len - 9; break;                                                 /* truncated */
  case 10: b[len / 2] ^= 1; break;                                            /* damaged */
  case 11: put_u64(b, 44, UINT64_C(0x7ff8000000000000)), reseal(b, n); break; /* a NaN parameter */
  case 12: memset(b + len, 0, 8), n = len + 8; break;                         /* trailing bytes */
  case 13: put_u32(b, 12, 0), reseal(b, n); break;                            /* no inputs */
  case 14: put_u32(b, 24, 70000), reseal(b, n); break;                        /* a hidden layer too wide */
  default: { /* a policy of another shape: 3 inputs, 4 outputs, no hidden layer */
    unsigned char p[8 + 4 * 7 + 8 + 8 * 16 + 8] = "MPRLPOL1";
    const uint32_t head[] = {1, 3, 4, 0, 0, 1, 0};
    for (int k = 0; k < 7; k++) put_u32(p, 8 + 4 * k, head[k]);
    put_u64(p, 36, 16);
    memset(p + 44, 0, 8 * 16);
    reseal(p, sizeof p);
    write_bytes(path, p, sizeof p);
    free(b);
    return;
  }
  }
  write_bytes(path, b, n);
  free(b);
}

/* Checkpoints: the fixture's (1 graph on 16 cores) edited; the fields after the instances start at
 * at_rng (partitioner/README.md). */
static void make_ckpt(const char *path, int variant) {
  size_t len;
  unsigned char *b = read_fixture("pol.bin.ckpt", &len);
  const size_t at_config = 12, at_inst = at_config + 8 + 4 * 6 + 8 * 7 + 8, at_best = at_inst + 12,
               at_reward = at_best + 4 * 16, at_feasible = at_reward + 24, at_rng = at_feasible + 4,
               at_count = at_rng + 32, at_mean = at_count + 32;
  size_t n = len;
  switch (variant) {
  case 0: n = 0; break;
  case 1: b[3] = 'x'; break;
  case 2: b[len / 2] ^= 4; break;                                                     /* damaged */
  case 3: put_u32(b, 8, 7), reseal(b, n); break;                                      /* version 7 */
  case 4: put_u64(b, at_config, 99), reseal(b, n); break;                             /* another seed */
  case 5: n = len - 100, reseal(b, n); break;                                         /* truncated */
  case 6: put_u64(b, at_count, UINT64_C(9223372036854775813)), reseal(b, n); break;   /* 2^63 + 5 episodes */
  case 7: put_u64(b, at_count + 8, 0), reseal(b, n); break;                           /* episodes, no iteration */
  case 8: memset(b + at_rng, 0, 32), reseal(b, n); break;                             /* rng all zero */
  case 9: put_u64(b, at_mean, UINT64_C(0x7ff8000000000000)), reseal(b, n); break;     /* NaN mean reward */
  case 10: put_u32(b, at_best, 99), reseal(b, n); break;                              /* best plan not a plan */
  case 11: put_u64(b, at_reward, UINT64_C(0x7ff0000000000000)), reseal(b, n); break;  /* infinite reward */
  case 12: put_u64(b, at_count + 24, UINT64_C(1) << 40), reseal(b, n); break;         /* steps beyond reach */
  case 13: put_u64(b, at_mean + 32, UINT64_C(1) << 62), reseal(b, n); break;          /* policy image too long */
  default: put_u64(b, at_mean + 24, UINT64_C(0x7e37e43c8800759c)), reseal(b, n); break; /* a clock of 1e300 s */
  }
  write_bytes(path, b, n);
  free(b);
}

/* ONNX by hand: protobuf fields appended at *n. */
static void pb_varint(unsigned char *b, size_t *n, uint64_t v) {
  do {
    b[(*n)++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

static void pb_field(unsigned char *b, size_t *n, unsigned num, const void *p, size_t len) {
  pb_varint(b, n, (uint64_t)num << 3 | 2);
  pb_varint(b, n, len);
  memmove(b + *n, p, len);
  *n += len;
}

static void pb_str(unsigned char *b, size_t *n, unsigned num, const char *s) { pb_field(b, n, num, s, strlen(s)); }

/* A value_info / graph input named name of shape [1, c, 8, 8]. */
static size_t pb_vinfo(unsigned char *b, const char *name, int c) {
  unsigned char dims[64], tensor[96], type[128];
  size_t nd = 0, nt = 0, ny = 0, n = 0;
  const int d[] = {1, c, 8, 8};
  for (int i = 0; i < 4; i++) {
    unsigned char dim[8];
    size_t k = 0;
    dim[k++] = 1 << 3; /* dim_value */
    pb_varint(dim, &k, (uint64_t)d[i]);
    pb_field(dims, &nd, 1, dim, k);
  }
  tensor[nt++] = 1 << 3, tensor[nt++] = 1; /* elem_type FLOAT */
  pb_field(tensor, &nt, 2, dims, nd);
  pb_field(type, &ny, 1, tensor, nt);
  pb_str(b, &n, 1, name);
  pb_field(b, &n, 2, type, ny);
  return n;
}

/* A model of one node op_type with inputs ins ("x", or "x,ghost") and output y, value_info for both. */
static size_t pb_model(unsigned char *b, const char *op, const char *ins, int n_extra_inputs) {
  unsigned char node[4096], graph[8192], vi[256];
  size_t nn = 0, ng = 0, n = 0;
  char list[256];
  snprintf(list, sizeof list, "%s", ins);
  for (char *s = strtok(list, ","); s; s = strtok(NULL, ",")) pb_str(node, &nn, 1, s);
  for (int i = 0; i < n_extra_inputs; i++) pb_str(node, &nn, 1, "x");
  pb_str(node, &nn, 2, "y");
  pb_str(node, &nn, 4, op);
  pb_field(graph, &ng, 1, node, nn);
  pb_str(graph, &ng, 2, "g");
  size_t k = pb_vinfo(vi, "x", 3);
  pb_field(graph, &ng, 11, vi, k);
  k = pb_vinfo(vi, "y", 4);
  pb_field(graph, &ng, 12, vi, k);
  pb_field(graph, &ng, 13, vi, k);
  b[n++] = 1 << 3, b[n++] = 8; /* ir_version */
  pb_field(b, &n, 7, graph, ng);
  pb_field(b, &n, 8, "\x10\x0d", 2); /* opset 13 */
  return n;
}

static void make_onnx(const char *path, int variant) {
  size_t cap = 1 << 21, n = 0;
  unsigned char *b = calloc(1, cap), *t = calloc(1, cap);
  switch (variant) {
  case 0: break;
  case 1: memcpy(b, "just some text\n", 15), n = 15; break;
  case 2:
  case 3: {
    char *m = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(fileio_read_all(testutil_model("resnet18.onnx"), &m, &n, &err), MP_OK);
    n = variant == 2 ? n / 2 : n - 1;
    memcpy(b, m, n);
    free(m);
    break;
  }
  case 4: n = pb_model(b, "Conv", "x", 0); break;           /* a Conv without weights: 114 bytes */
  case 5: n = pb_model(b, "ConvTranspose", "x", 0); break;  /* the same transposed */
  case 6: n = pb_model(b, "Relu", "x,ghost", 0); break;     /* an input nothing produces */
  case 7: n = pb_model(b, "Add", "x", 70); break;           /* 71 inputs */
  case 8:
  case 9: { /* If nodes nested 3000 deep (or 21: 64 messages and one more), built from the inside out */
    size_t m = 0, k;
    pb_str(t, &m, 2, "g");
    for (int d = 0; d < (variant == 8 ? 3000 : 21); d++) {
      k = 0;
      pb_str(b, &k, 1, "then_branch");
      pb_varint(b, &k, 20 << 3), b[k++] = 5;
      pb_field(b, &k, 6, t, m);
      size_t a = 0;
      unsigned char *node = malloc(k + 32);
      pb_str(node, &a, 4, "If");
      pb_field(node, &a, 5, b, k);
      m = 0;
      pb_field(t, &m, 1, node, a);
      pb_str(t, &m, 2, "g");
      free(node);
    }
    n = 0;
    pb_field(b, &n, 7, t, m);
    pb_field(b, &n, 8, "\x10\x0d", 2);
    break;
  }
  case 10: { /* 400 000 empty attributes: 800 kB that would unpack to 100 MB */
    size_t k = 0, m = 0;
    for (int i = 0; i < 400000; i++) t[k++] = 5 << 3 | 2, t[k++] = 0;
    unsigned char *g = malloc(k + 16);
    pb_field(g, &m, 1, t, k);
    pb_field(b, &n, 7, g, m);
    pb_field(b, &n, 8, "\x10\x0d", 2);
    free(g);
    break;
  }
  case 11: pb_field(b, &n, 8, "\x10\x0d", 2); break; /* no graph */
  case 12: {                                         /* no opset */
    n = pb_model(b, "Relu", "x", 0);
    n -= 4;
    break;
  }
  default: { /* a graph without nodes */
    size_t m = 0;
    pb_str(t, &m, 2, "g");
    pb_field(b, &n, 7, t, m);
    pb_field(b, &n, 8, "\x10\x0d", 2);
    break;
  }
  }
  write_bytes(path, b, n);
  free(b);
  free(t);
}

/* Big text inputs. */
static void make_big(const char *path, int variant) {
  size_t cap = 1 << 20, n = 0;
  char *b = malloc(cap);
  if (variant == 0 || variant == 1) { /* tensor bytes past 2^63: 1100 graph inputs, or outputs, of 2^53 */
    n += (size_t)snprintf(b + n, cap - n, "{\"format\":\"meshpipe-graph\",\"version\":1,\"name\":\"big\",\"inputs\":[");
    for (int i = 0; i < 1100 && variant == 0; i++)
      n += (size_t)snprintf(b + n, cap - n, "%s{\"name\":\"i%d\",\"bytes\":9007199254740992}", i ? "," : "", i);
    n += (size_t)snprintf(b + n, cap - n, "],\"ops\":[");
    for (int i = 0; i < (variant == 0 ? 1 : 1100); i++)
      n += (size_t)snprintf(b + n, cap - n,
                            "%s{\"name\":\"o%d\",\"type\":\"X\",\"inputs\":[],\"outputs\":[{\"name\":\"t%d\",\"bytes\":%s}],"
                            "\"macs\":0,\"flops\":0,\"weight_bytes\":0}",
                            i ? "," : "", i, i, variant == 0 ? "1" : "9007199254740992");
    n += (size_t)snprintf(b + n, cap - n, "]}");
  } else { /* JSON nested 100 000 deep */
    for (int i = 0; i < 100000; i++) b[n++] = '[';
  }
  write_bytes(path, b, n);
  free(b);
}

#include "test_hostile_cases.h"

/* ---- the runner ---- */

/* Replaces @F, @D and @P in cmd. */
static void expand(const char *cmd, const char *file, const char *dir, char *out, size_t cap) {
  size_t n = 0;
  for (const char *p = cmd; *p && n + 1 < cap; p++) {
    const char *with = NULL;
    if (p[0] == '@' && p[1] == 'F') with = file;
    if (p[0] == '@' && p[1] == 'D') with = dir;
    if (p[0] == '@' && p[1] == 'P') with = fixture("plan.json");
    if (!with) {
      out[n++] = *p;
      continue;
    }
    n += (size_t)snprintf(out + n, cap - n, "%s", with);
    if (n >= cap) n = cap - 1;
    p++;
  }
  out[n] = '\0';
}

/* The names, sizes and bytes of a folder's files, as one string (owned). */
static char *snapshot(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return strdup("(no folder)");
  size_t cap = 1 << 16, n = 0;
  char *s = calloc(1, cap);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *data = NULL;
    size_t len = 0;
    mp_error err;
    struct stat sb;
    int is_dir = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
    if (!is_dir) fileio_read_all(path, &data, &len, &err);
    n += (size_t)snprintf(s + n, cap - n, "%s %zu %016llx;", e->d_name, len,
                          (unsigned long long)fileio_hash(FILEIO_HASH_INIT, data ? data : "", len));
    free(data);
    if (n >= cap) n = cap - 1;
  }
  closedir(d);
  return s;
}

static int run_case(const bad_case *c, int index) {
  char dir[1024], file[1200], cmd[8192];
  snprintf(dir, sizeof dir, "%s/case%03d", testutil_temp_path("cases"), index);
  mkdir(testutil_temp_path("cases"), 0755);
  mkdir(dir, 0755);
  if (c->path)
    snprintf(file, sizeof file, "%s", c->path);
  else
    snprintf(file, sizeof file, "%s/%s", dir, c->input ? c->input : "in");
  if (c->make)
    c->make(file, c->variant);
  else if (c->text)
    write_bytes(file, c->text, strlen(c->text));
  expand(c->cmd, file, dir, cmd, sizeof cmd);
  char *before = snapshot(dir), *out = NULL, *err = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = testutil_meshpipe(cmd, &out, &err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (getenv("MESHPIPE_HOSTILE_TIMES")) /* a measurement, not a check: how long each refusal took */
    fprintf(stderr, "\n  case %d (%s: %s): %.3f s", index, c->format, c->label,
            (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  char *after = snapshot(dir);
  char named[1200];
  expand(c->named ? c->named : "@F", file, dir, named, sizeof named);
  size_t len = strlen(err);
  int one_line = len > 0 && err[len - 1] == '\n' && !memchr(err, '\n', len - 1);
  int ok = rc == (c->status ? c->status : 2) && one_line && strncmp(err, "meshpipe", 8) == 0 && strstr(err, named) &&
           out[0] == '\0' && strcmp(before, after) == 0;
  if (!ok)
    fprintf(stderr, "\n  case %d (%s: %s): exit %d, stdout '%.200s', stderr '%.600s'%s\n    command: %s\n", index,
            c->format, c->label, rc, out, err, strcmp(before, after) ? ", and the folder changed" : "", cmd);
  free(before);
  free(after);
  free(out);
  free(err);
  return ok;
}

static void run_format(const char *format, int min_cases) {
  make_fixtures();
  int n = 0, failed = 0;
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    if (strcmp(cases[i].format, format) != 0) continue;
    n++;
    failed += !run_case(&cases[i], (int)i);
  }
  CU_ASSERT(n >= min_cases);
  CU_ASSERT_EQUAL(failed, 0);
}

static void bad_graphs_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) { run_format("graph", 30); }
static void bad_chips_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) { run_format("chip", 30); }
static void bad_plans_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) { run_format("plan", 18); }
static void bad_traces_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) { run_format("trace", 20); }
static void bad_op_times_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) {
  run_format("optimes", 15);
}
static void bad_policies_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) {
  run_format("policy", 15);
}
static void bad_checkpoints_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) {
  run_format("ckpt", 14);
}
static void bad_onnx_models_should_exit_2_with_one_line_naming_the_file_and_write_nothing(void) {
  run_format("onnx", 13);
}
static void bad_sweep_csvs_should_exit_2_with_one_line_naming_the_file_and_leave_it_alone(void) {
  run_format("sweep", 8);
}
static void bad_output_places_should_exit_1_with_one_line_naming_them_and_write_nothing(void) {
  run_format("output", 3);
}

static void the_table_should_hold_at_least_150_cases(void) {
  CU_ASSERT(sizeof cases / sizeof *cases >= 150);
}

/* The plan file comes last: a partition killed while it simulates (here by its CPU-time limit, after
 * about a second of a million micro-batches) leaves no plan and no temporary behind. */
static void a_partition_killed_while_it_simulates_should_leave_no_plan(void) {
  char dir[1024], cmd[8192];
  snprintf(dir, sizeof dir, "%s", testutil_temp_path("killed"));
  mkdir(dir, 0755);
  char *before = snapshot(dir);
  snprintf(cmd, sizeof cmd,
           "(ulimit -t 1; exec '%s' partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json -M 1000000 -o "
           "'%s/plan.json') >/dev/null 2>&1",
           MESHPIPE_BINARY, dir);
  int rc = system(cmd);
  CU_ASSERT_NOT_EQUAL(rc, 0); /* it was killed */
  char *after = snapshot(dir);
  CU_ASSERT_STRING_EQUAL(after, before);
  free(before);
  free(after);
}

static CU_TestInfo tests[] = {
    {"the_table_should_hold_at_least_150_cases", the_table_should_hold_at_least_150_cases},
    {"bad_graphs_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_graphs_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_chips_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_chips_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_plans_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_plans_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_traces_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_traces_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_op_times_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_op_times_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_policies_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_policies_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_checkpoints_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_checkpoints_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_onnx_models_should_exit_2_with_one_line_naming_the_file_and_write_nothing",
     bad_onnx_models_should_exit_2_with_one_line_naming_the_file_and_write_nothing},
    {"bad_sweep_csvs_should_exit_2_with_one_line_naming_the_file_and_leave_it_alone",
     bad_sweep_csvs_should_exit_2_with_one_line_naming_the_file_and_leave_it_alone},
    {"bad_output_places_should_exit_1_with_one_line_naming_them_and_write_nothing",
     bad_output_places_should_exit_1_with_one_line_naming_them_and_write_nothing},
    {"a_partition_killed_while_it_simulates_should_leave_no_plan",
     a_partition_killed_while_it_simulates_should_leave_no_plan},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("hostile", tests, argc, argv); }
