/* Tests of the sweep: axes, chip variants, cases and keys, the CSV file (header, resume, cut rows),
 * the worker pool, one case against the cost model, and 'meshpipe sweep' end to end — resumed
 * after kill -9 and, where Open MPI is installed, under mpirun.
 * MESHPIPE_TEST_LABELS: simgrid */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cost.h"
#include "fileio.h"
#include "jsonio.h"
#include "sweep.h"
#include "testutil.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

static cJSON *load_json(const char *relative) {
  cJSON *root = NULL;
  mp_error err;
  if (jsonio_load(testutil_src(relative), &root, &err) != MP_OK) return NULL;
  return root;
}

static char *slurp(const char *path) {
  char *text = NULL;
  size_t len;
  mp_error err;
  if (fileio_read_all(path, &text, &len, &err) != MP_OK) return strdup("");
  return text;
}

static int count_lines(const char *text) {
  int n = 0;
  for (const char *p = text; *p; p++) n += *p == '\n';
  return n;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The rows of a sweep CSV without the header and the solve_s column (the last: wall-clock time),
 * sorted and joined: equal for two runs of the same sweep, whatever order their rows came in. */
static char *canonical_rows(const char *path) {
  char *text = slurp(path);
  int n = count_lines(text);
  char **lines = calloc((size_t)n + 1, sizeof *lines);
  int k = 0;
  char *p = strchr(text, '\n');
  p = p ? p + 1 : text + strlen(text);
  while (*p) {
    char *nl = strchr(p, '\n');
    if (!nl) break;
    *nl = '\0';
    char *last = strrchr(p, ',');
    if (last) *last = '\0';
    lines[k++] = p;
    p = nl + 1;
  }
  qsort(lines, (size_t)k, sizeof *lines, cmp_str);
  size_t size = 1;
  for (int i = 0; i < k; i++) size += strlen(lines[i]) + 1;
  char *out = malloc(size);
  out[0] = '\0';
  for (int i = 0; i < k; i++) {
    strcat(out, lines[i]);
    strcat(out, "\n");
  }
  free(lines);
  free(text);
  return out;
}

/* How many rows of text start with key followed by a comma. */
static int rows_with_key(const char *text, const char *key) {
  int n = 0;
  size_t len = strlen(key);
  for (const char *p = text; p && *p;) {
    if (strncmp(p, key, len) == 0 && p[len] == ',') n++;
    p = strchr(p, '\n');
    if (p) p++;
  }
  return n;
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  if (!f) return;
  fputs(text, f);
  fclose(f);
}

/* A sweep of tiny_resnet over the given axes (texts) and methods. */
static sweep *tiny_sweep(const char *const *vary, int n_vary, const char *const *methods, int n_methods,
                         mp_error *err) {
  cJSON *base = load_json("platforms/mesh4x4.json");
  sweep_axis axes[4];
  graph *g = NULL;
  sweep *s = NULL;
  int n_axes = 0;
  for (int i = 0; i < n_vary; i++)
    if (sweep_axis_parse(vary[i], &axes[n_axes], err) == MP_OK) n_axes++;
  if (n_axes == n_vary && graph_load(testutil_src("traces/tiny_resnet.json"), &g, err) == MP_OK)
    sweep_new(base, "mesh4x4.json", axes, n_axes, &g, 1, methods, n_methods, NULL, NULL, &s, err);
  else
    for (int i = 0; i < n_axes; i++) sweep_axis_clear(&axes[i]);
  cJSON_Delete(base);
  return s;
}

/* ---- axes ------------------------------------------------------------------------------------- */

static void axis_parse_should_split_the_values_in_order(void) {
  sweep_axis a;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(sweep_axis_parse("noc.bandwidth=1e10,3.2e10,64G", &a, &err), MP_OK);
  CU_ASSERT_STRING_EQUAL(a.key, "noc.bandwidth");
  CU_ASSERT_EQUAL_FATAL(a.n_values, 3);
  CU_ASSERT_STRING_EQUAL(a.values[0], "1e10");
  CU_ASSERT_STRING_EQUAL(a.values[1], "3.2e10");
  CU_ASSERT_STRING_EQUAL(a.values[2], "64G");
  sweep_axis_clear(&a);
  CU_ASSERT_PTR_NULL(a.key);
  sweep_axis_clear(NULL);
}

static void axis_parse_should_reject_malformed_specs(void) {
  static const struct {
    const char *text, *message;
  } bad[] = {
      {"noc.bandwidth", "expected KEY=V1,V2"},      {"=1", "the key is empty"},
      {"noc.bandwidth=", "an empty value"},         {"noc.bandwidth=1,,2", "an empty value"},
      {"noc.bandwidth=1,", "an empty value"},       {"noc..bandwidth=1", "dotted names"},
      {".noc=1", "dotted names"},                   {"noc.=1", "dotted names"},
      {"no c=1", "dotted names"},                   {"k=1;2", "cannot (';')"},
      {"k=a|b", "cannot ('|')"},                    {"k=\"x\"", "cannot ('\"')"},
      {"k=1 2", "cannot (' ')"},                    {"k=1,2,1", "value '1' given twice"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    sweep_axis a;
    mp_error err;
    err_clear(&err);
    CU_ASSERT_EQUAL(sweep_axis_parse(bad[i].text, &a, &err), MP_USAGE);
    if (!strstr(err.msg, bad[i].message)) printf("\n  '%s' -> '%s'\n", bad[i].text, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].message));
    CU_ASSERT_PTR_NULL(a.key);
  }
}

/* ---- chip variants ---------------------------------------------------------------------------- */

static chip *variant(const cJSON *base, const char *key, const char *value, mp_error *err) {
  chip *c = NULL;
  err_clear(err);
  sweep_chip_variant(base, "base.json", &key, &value, 1, &c, err);
  return c;
}

static void chip_variant_should_set_the_named_figures(void) {
  cJSON *base = load_json("platforms/mesh4x4.json");
  CU_ASSERT_PTR_NOT_NULL_FATAL(base);
  mp_error err;
  chip *c = variant(base, "noc.bandwidth", "1e10", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->noc_bandwidth, 1e10);
  CU_ASSERT_EQUAL(c->n_cores, 16);
  chip_free(c);
  c = variant(base, "core.sram_bytes", "3Mi", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->cores[5].sram_bytes, 3u * 1024 * 1024);
  CU_ASSERT_EQUAL(chip_total_sram(c), 16u * 3 * 1024 * 1024);
  chip_free(c);
  c = variant(base, "core.flops", "2T", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->cores[0].flops, 2e12);
  chip_free(c);
  c = variant(base, "dram.bandwidth", "50k", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->dram_bandwidth, 5e4);
  chip_free(c);
  c = variant(base, "core.transfer_factor", "2", &err); /* absent in the base: added */
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->cores[3].transfer_factor, 2.0);
  chip_free(c);
  c = variant(base, "name", "renamed", &err); /* a string stays a string */
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_STRING_EQUAL(c->name, "renamed");
  chip_free(c);
  /* The base is left as it was. */
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(base, "noc"), "bandwidth")->valuedouble, 3.2e10);
  cJSON_Delete(base);
}

static void chip_variant_mesh_should_resize_and_move_the_dram_ports(void) {
  cJSON *base = load_json("platforms/mesh4x4.json"); /* ports (0,1) and (3,2) */
  mp_error err;
  chip *c = variant(base, "mesh", "8x6", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->width, 8);
  CU_ASSERT_EQUAL(c->height, 6);
  CU_ASSERT_EQUAL_FATAL(c->n_dram, 2);
  /* x' = round(x * 7 / 3), y' = round(y * 5 / 3) */
  CU_ASSERT_EQUAL(c->dram[0].x, 0);
  CU_ASSERT_EQUAL(c->dram[0].y, 2);
  CU_ASSERT_EQUAL(c->dram[1].x, 7);
  CU_ASSERT_EQUAL(c->dram[1].y, 3);
  chip_free(c);
  /* The same size is the base chip itself. */
  chip *same = variant(base, "mesh", "4x4", &err), *orig = NULL;
  CU_ASSERT_EQUAL_FATAL(chip_from_json(base, "base.json", &orig, &err), MP_OK);
  CU_ASSERT_PTR_NOT_NULL_FATAL(same);
  CU_ASSERT_EQUAL(same->hash, orig->hash);
  chip_free(same);
  chip_free(orig);
  /* The bundled 8x8 chip's ports land where the bundled 4x4 chip has its own. */
  cJSON *big = load_json("platforms/mesh8x8.json");
  c = variant(big, "mesh", "4x4", &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->dram[0].x, 0);
  CU_ASSERT_EQUAL(c->dram[0].y, 1);
  CU_ASSERT_EQUAL(c->dram[1].x, 3);
  CU_ASSERT_EQUAL(c->dram[1].y, 2);
  chip_free(c);
  cJSON_Delete(big);
  cJSON_Delete(base);
}

static void chip_variant_should_reject_bad_keys_and_values_naming_them(void) {
  static const struct {
    const char *key, *value, *message;
  } bad[] = {
      {"mesh", "4x", "is not WxH"},
      {"mesh", "0x4", "is not WxH"},
      {"mesh", "4x4x4", "is not WxH"},
      {"mesh", "big", "is not WxH"},
      {"noc.bandwidth", "fast", "'fast' is not a number"},
      {"noc.bandwidth", "1e10X", "is not a number"},
      {"noc.bandwidth", "3Ki5", "is not a number"},
      {"dram.ports", "1", "not a number or a string"},
      {"mesh.width.x", "1", "no object 'mesh.width'"},
      {"fabric.bandwidth", "1", "no object 'fabric'"},
      {"noc.bandwith", "1", "(with noc.bandwith=1)"},       /* the chip loader's unknown key */
      {"core.sram_bytes", "0", "(with core.sram_bytes=0)"}, /* the chip loader's range check */
      {"noc.bandwidth", "-1", "(with noc.bandwidth=-1)"},
  };
  cJSON *base = load_json("platforms/mesh4x4.json");
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    mp_error err;
    chip *c = variant(base, bad[i].key, bad[i].value, &err);
    CU_ASSERT_PTR_NULL(c);
    CU_ASSERT_NOT_EQUAL(err.status, MP_OK);
    if (!strstr(err.msg, bad[i].message)) printf("\n  %s=%s -> '%s'\n", bad[i].key, bad[i].value, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].message));
    chip_free(c);
  }
  cJSON_Delete(base);
}

/* ---- the sweep: cases and keys ---------------------------------------------------------------- */

/* The options column of a sweep with the default options. */
#define OPTIONS "seed=1;objective=time;tau=1e-06;max_step=100;episodes=-1;init=;policy=;M=0;max_M=0;fast_gather=0;mode=infer"

/* row (a literal row of case i of s, ending in ",SOLVE_S\n") with the options and inputs columns before its
 * last: a row this sweep would have written.  Owned by the caller. */
static char *with_id(const sweep *s, int i, const char *row) {
  char options[SWEEP_LINE_MAX], hex[17], *out = malloc(strlen(row) + SWEEP_LINE_MAX);
  const char *last = strrchr(row, ',');
  CU_ASSERT_FATAL(out && last && sweep_csv_options(s, options, sizeof options) > 0);
  snprintf(out, strlen(row) + SWEEP_LINE_MAX, "%.*s,%s,%s%s", (int)(last - row), row, options,
           fileio_hash_hex(sweep_case_inputs(s, i), hex), last);
  return out;
}

static void sweep_new_should_number_the_cases_variant_major_with_unique_keys(void) {
  const char *vary[] = {"mesh=2x2,4x4,3x2", "noc.bandwidth=1e10,3.2e10"};
  const char *methods[] = {"optimal", "even"};
  mp_error err;
  sweep *s = tiny_sweep(vary, 2, methods, 2, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->n_variants, 6);
  CU_ASSERT_EQUAL_FATAL(s->n_cases, 12);
  CU_ASSERT_STRING_EQUAL(s->cases[0].key, "mesh=2x2;noc.bandwidth=1e10|tiny_resnet|optimal");
  CU_ASSERT_STRING_EQUAL(s->cases[1].key, "mesh=2x2;noc.bandwidth=1e10|tiny_resnet|even");
  CU_ASSERT_STRING_EQUAL(s->cases[2].key, "mesh=2x2;noc.bandwidth=3.2e10|tiny_resnet|optimal");
  CU_ASSERT_STRING_EQUAL(s->cases[11].key, "mesh=3x2;noc.bandwidth=3.2e10|tiny_resnet|even");
  CU_ASSERT_EQUAL(s->variants[s->cases[11].variant].chip->n_cores, 6);
  CU_ASSERT_EQUAL(s->variants[s->cases[11].variant].chip->noc_bandwidth, 3.2e10);
  for (int i = 0; i < s->n_cases; i++) CU_ASSERT_EQUAL(sweep_find_case(s, s->cases[i].key), i);
  CU_ASSERT_EQUAL(sweep_find_case(s, "mesh=2x2|tiny_resnet|optimal"), -1);
  char header[SWEEP_LINE_MAX];
  CU_ASSERT(sweep_csv_header(s, header, sizeof header) > 0);
  CU_ASSERT_STRING_EQUAL(header,
                         "case,mesh,noc.bandwidth,graph,batch,method,feasible,stages,model_period_s,samples_per_s,"
                         "latency_s,busiest_link,busiest_link_utilisation,total_sram_bytes,noc_bandwidth,cores,options,"
                         "inputs,solve_s\n");
  CU_ASSERT_EQUAL(sweep_csv_header(s, header, 20), -1);
  sweep_row r;
  memset(&r, 0, sizeof r);
  r.feasible = 1;
  r.batch = 8;
  r.noc_bandwidth = 3.2e10;
  r.n_stages = 3;
  r.model_period_s = 1.0 / 3;
  r.samples_per_s = 2.5;
  r.latency_s = 0.125;
  snprintf(r.link, sizeof r.link, "x0y0>x1y0");
  r.link_utilisation = 0.5;
  r.total_sram_bytes = 4096;
  r.cores = 4;
  r.solve_s = 0.25;
  char row[SWEEP_LINE_MAX];
  CU_ASSERT(sweep_csv_row(s, 2, &r, row, sizeof row) > 0);
  char want[SWEEP_LINE_MAX], hex[17];
  snprintf(want, sizeof want,
           "mesh=2x2;noc.bandwidth=3.2e10|tiny_resnet|optimal,2x2,3.2e10,tiny_resnet,8,optimal,1,3,0.333333333333,2.5,"
           "0.125,x0y0>x1y0,0.5,4096,32000000000,4,%s,%s,0.25\n",
           OPTIONS, fileio_hash_hex(sweep_case_inputs(s, 2), hex));
  CU_ASSERT_STRING_EQUAL(row, want);
  /* the inputs are the chip variant's and the graph's: the same for two methods, not for two chips */
  CU_ASSERT_EQUAL(sweep_case_inputs(s, 2), sweep_case_inputs(s, 3));
  CU_ASSERT_NOT_EQUAL(sweep_case_inputs(s, 0), sweep_case_inputs(s, 2));
  uint64_t before = sweep_case_inputs(s, 2); /* measured op times change an op's work */
  s->graphs[0]->ops[1].flops++;
  CU_ASSERT_NOT_EQUAL(sweep_case_inputs(s, 2), before);
  s->graphs[0]->ops[1].flops--;
  CU_ASSERT_EQUAL(sweep_csv_row(s, 2, &r, row, 40), -1);
  sweep_free(s);
  sweep_free(NULL);

  s = tiny_sweep(NULL, 0, methods, 1, &err); /* no axes: the base chip alone */
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  CU_ASSERT_EQUAL(s->n_cases, 1);
  CU_ASSERT_STRING_EQUAL(s->cases[0].key, "base|tiny_resnet|optimal");
  sweep_free(s);
}

static void sweep_new_should_reject_unknown_or_repeated_methods_axes_and_graphs(void) {
  mp_error err;
  const char *vary[] = {"mesh=2x2", "mesh=4x4"};
  const char *good[] = {"optimal"}, *unknown[] = {"optimal", "magic"}, *twice[] = {"even", "even"};
  CU_ASSERT_PTR_NULL(tiny_sweep(vary, 1, unknown, 2, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no method 'magic' (known: optimal"));
  CU_ASSERT_PTR_NULL(tiny_sweep(vary, 1, twice, 2, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "method 'even' given twice"));
  CU_ASSERT_PTR_NULL(tiny_sweep(vary, 2, good, 1, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "--vary mesh given twice"));
  const char *bad_variant[] = {"noc.bandwidth=1e10,0"};
  CU_ASSERT_PTR_NULL(tiny_sweep(bad_variant, 1, good, 1, &err));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "(with noc.bandwidth=0)"));

  cJSON *base = load_json("platforms/mesh4x4.json");
  graph *g[2] = {NULL, NULL};
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g[0], &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(graph_load(testutil_src("traces/tiny_resnet.json"), &g[1], &err), MP_OK);
  sweep *s = NULL;
  CU_ASSERT_EQUAL(sweep_new(base, "b.json", NULL, 0, g, 2, good, 1, NULL, NULL, &s, &err), MP_USAGE);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "graph 'tiny_resnet' is also"));
  CU_ASSERT_PTR_NULL(s);
  CU_ASSERT_EQUAL(sweep_new(base, "b.json", NULL, 0, NULL, 0, good, 1, NULL, NULL, &s, &err), MP_USAGE);
  cJSON_Delete(base);
}

/* ---- the CSV file ----------------------------------------------------------------------------- */

static int lock_is_held(void *path) {
  sweep *s = tiny_sweep(NULL, 0, (const char *[]){"even"}, 1, &(mp_error){0});
  unsigned char done[1];
  int fd = -1, n = 0;
  mp_error err;
  mp_status st = sweep_csv_open(s, path, &fd, done, &n, &err);
  sweep_free(s);
  return st == MP_OUTPUT && strstr(err.msg, "another process is writing") ? 0 : 1;
}

static void csv_open_should_write_the_header_then_resume_dropping_a_cut_row(void) {
  const char *vary[] = {"mesh=2x2,4x4"};
  const char *methods[] = {"optimal", "even"};
  mp_error err;
  sweep *s = tiny_sweep(vary, 1, methods, 2, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  char header[SWEEP_LINE_MAX];
  sweep_csv_header(s, header, sizeof header);
  const char *path = testutil_temp_path("resume.csv");
  unsigned char done[4];
  int fd = -1, n_done = -1;
  CU_ASSERT_EQUAL_FATAL(sweep_csv_open(s, path, &fd, done, &n_done, &err), MP_OK);
  CU_ASSERT_EQUAL(n_done, 0);
  /* A second process cannot write the same file while this one holds it. */
  CU_ASSERT_EQUAL(testutil_in_child(lock_is_held, (void *)path), 0);
  char *row1 = with_id(s, 1, "mesh=2x2|tiny_resnet|even,2x2,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n");
  char *row3 = with_id(s, 3, "mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n");
  CU_ASSERT_EQUAL(sweep_csv_append(fd, path, row1, strlen(row1), &err), MP_OK);
  CU_ASSERT_EQUAL(sweep_csv_append(fd, path, row3, strlen(row3), &err), MP_OK);
  close(fd);
  /* A row of another sweep is kept and ignored; a row cut by a kill is dropped. */
  FILE *f = fopen(path, "ab");
  fputs("mesh=9x9|tiny_resnet|even,9x9,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n", f);
  fputs("mesh=4x4|tiny_resnet|optimal,4x4,tiny_res", f);
  fclose(f);
  CU_ASSERT_EQUAL_FATAL(sweep_csv_open(s, path, &fd, done, &n_done, &err), MP_OK);
  CU_ASSERT_EQUAL(n_done, 2);
  CU_ASSERT_EQUAL(done[0], 0);
  CU_ASSERT_EQUAL(done[1], 1);
  CU_ASSERT_EQUAL(done[2], 0);
  CU_ASSERT_EQUAL(done[3], 1);
  close(fd);
  char *text = slurp(path), expect[2 * SWEEP_LINE_MAX];
  snprintf(expect, sizeof expect, "%s%s%s%s", header, row1, row3,
           "mesh=9x9|tiny_resnet|even,9x9,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n");
  CU_ASSERT_STRING_EQUAL(text, expect);
  free(text);
  free(row1);
  free(row3);

  /* Only the header, cut before its newline: started afresh. */
  write_text(path, "case,mesh,gra");
  CU_ASSERT_EQUAL_FATAL(sweep_csv_open(s, path, &fd, done, &n_done, &err), MP_OK);
  close(fd);
  text = slurp(path);
  CU_ASSERT_STRING_EQUAL(text, header);
  free(text);
  sweep_free(s);
}

static void csv_open_should_refuse_a_file_of_other_columns_and_leave_it_alone(void) {
  const char *vary[] = {"noc.bandwidth=1e10"};
  const char *methods[] = {"even"};
  mp_error err;
  sweep *s = tiny_sweep(vary, 1, methods, 1, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  unsigned char done[1];
  int fd = -1, n = 0;
  static const char *const others[] = {
      "case,mesh,graph,method,feasible,stages,model_period_s,samples_per_s,latency_s,busiest_link,"
      "busiest_link_utilisation,total_sram_bytes,cores,solve_s\nrow,1\npartial",
      "just some text without a newline",
      "a,b\n",
  };
  for (size_t i = 0; i < sizeof others / sizeof *others; i++) {
    const char *path = testutil_write_temp("other.csv", others[i]);
    CU_ASSERT_EQUAL(sweep_csv_open(s, path, &fd, done, &n, &err), MP_INPUT);
    CU_ASSERT_EQUAL(fd, -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "line 1: is not this sweep's header"));
    char *text = slurp(path);
    CU_ASSERT_STRING_EQUAL(text, others[i]);
    free(text);
  }
  const char *nul = testutil_temp_path("nul.csv");
  FILE *f = fopen(nul, "wb");
  fwrite("case\0,", 1, 6, f);
  fclose(f);
  CU_ASSERT_EQUAL(sweep_csv_open(s, nul, &fd, done, &n, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NUL byte"));
  CU_ASSERT_EQUAL(sweep_csv_open(s, testutil_temp_path("no/such/dir.csv"), &fd, done, &n, &err), MP_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot open"));
  CU_ASSERT_EQUAL(sweep_csv_open(s, "/", &fd, done, &n, &err), MP_OUTPUT);
  int devnull = open("/dev/null", O_RDONLY);
  CU_ASSERT_EQUAL(sweep_csv_append(devnull, "/dev/null", "x\n", 2, &err), MP_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot append a row"));
  close(devnull);
  sweep_free(s);
}

/* A row with a case's key but not that case's columns would count as done: refused naming the line,
 * and the file is left as it was. */
static void csv_open_should_refuse_a_row_of_a_case_whose_columns_are_garbage(void) {
  const char *vary[] = {"mesh=2x2,4x4"};
  const char *methods[] = {"even"};
  mp_error err;
  sweep *s = tiny_sweep(vary, 1, methods, 1, &err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  char header[SWEEP_LINE_MAX];
  sweep_csv_header(s, header, sizeof header);
  char *good = with_id(s, 0, "mesh=2x2|tiny_resnet|even,2x2,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n");
  /* id: 0 the row as it is; else with its options and inputs (with_id), and then 2 a column more, 3 another
   * seed, 4 other inputs */
  static const struct {
    const char *row, *want;
    int id;
  } bad[] = {
      {"mesh=4x4|tiny_resnet|even,garbage,zz\n", "line 3: case 'mesh=4x4|tiny_resnet|even': 3 columns, the header has 18",
       0},
      {"mesh=4x4|tiny_resnet|even,2x2,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n",
       "line 3: case 'mesh=4x4|tiny_resnet|even': column 2 is '2x2', the case's is '4x4'", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,vgg16,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n", "column 3 is 'vgg16'", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,optimal,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n", "column 5 is 'optimal'", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,one,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n",
       "column 4 is 'one', not a whole number", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,yes,4,1,2,3,x,0.5,4,1e10,4,0.1\n",
       "column 6 is 'yes', not a whole number", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,nan,3,x,0.5,4,1e10,4,0.1\n",
       "column 9 is 'nan', not a number", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,2,-3,x,0.5,4,1e10,4,0.1\n",
       "column 10 is '-3', not a number", 1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,\n", "column 18 is '', not a number",
       1},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n", "column 18 is '0.1,9'", 2},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n",
       "case 'mesh=4x4|tiny_resnet|even' was run with the options 'seed=2;objective=time;", 3},
      {"mesh=4x4|tiny_resnet|even,4x4,tiny_resnet,1,even,1,4,1,2,3,x,0.5,4,1e10,4,0.1\n",
       "case 'mesh=4x4|tiny_resnet|even' was run on other inputs (hash 0000000000000000, now ", 4},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char text[3 * SWEEP_LINE_MAX], *row = bad[i].id ? with_id(s, 1, bad[i].row) : strdup(bad[i].row);
    CU_ASSERT_PTR_NOT_NULL_FATAL(row);
    if (bad[i].id == 2) strcpy(strrchr(row, '\n'), ",9\n");
    if (bad[i].id == 3) memcpy(strstr(row, "seed=1"), "seed=2", 6);
    if (bad[i].id == 4) memset(strrchr(row, ',') - 16, '0', 16);
    snprintf(text, sizeof text, "%s%s%s", header, good, row);
    free(row);
    const char *path = testutil_write_temp("garbage.csv", text);
    unsigned char done[2] = {7, 7};
    int fd = -1, n = -1;
    CU_ASSERT_EQUAL(sweep_csv_open(s, path, &fd, done, &n, &err), MP_INPUT);
    CU_ASSERT_EQUAL(fd, -1);
    if (!strstr(err.msg, bad[i].want)) fprintf(stderr, "\n  row %zu: got %s\n", i, err.msg);
    CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, bad[i].want));
    CU_ASSERT_EQUAL(strncmp(err.msg, path, strlen(path)), 0);
    char *after = slurp(path);
    CU_ASSERT_STRING_EQUAL(after, text);
    free(after);
  }
  free(good);
  sweep_free(s);
}

/* ---- the worker pool -------------------------------------------------------------------------- */

typedef struct pool_log {
  int calls[8];
  int ok[8];
  mp_status failure[8];
  char msg[8][MP_ERROR_MSG_MAX];
  int idles;
  int stop_after; /* done fails on this call (0: never) */
  int n_calls;
} pool_log;

static mp_status pool_job(void *ctx, int item, char *line, size_t cap, mp_error *err) {
  (void)ctx;
  if (item == 3) return err_set(err, MP_INPUT, "item 3 is bad input");
  if (item == 4) raise(SIGKILL);
  if (item == 5) _exit(7);
  if (item == 1) nanosleep(&(struct timespec){0, 100000000}, NULL); /* finishes after later items */
  snprintf(line, cap, "row of %d (pid %d)\n", item, (int)getpid());
  return MP_OK;
}

static mp_status pool_done(void *ctx, int item, const char *line, const mp_error *failure, mp_error *err) {
  pool_log *log = ctx;
  log->n_calls++;
  log->calls[item]++;
  if (line) {
    char expect[32];
    snprintf(expect, sizeof expect, "row of %d (pid ", item);
    log->ok[item] = strncmp(line, expect, strlen(expect)) == 0 && !strstr(line, "pid 0)");
  } else {
    log->failure[item] = failure->status;
    snprintf(log->msg[item], sizeof log->msg[item], "%s", failure->msg);
  }
  if (log->stop_after && log->n_calls == log->stop_after) return err_set(err, MP_OUTPUT, "disk full");
  return MP_OK;
}

static mp_status pool_idle(void *ctx, mp_error *err) {
  (void)err;
  ((pool_log *)ctx)->idles++;
  return MP_OK;
}

static void pool_should_run_every_item_once_and_report_failed_workers(void) {
  int items[] = {0, 1, 2, 3, 4, 5, 6};
  pool_log log;
  memset(&log, 0, sizeof log);
  mp_error err;
  CU_ASSERT_EQUAL(sweep_pool_run(items, 7, 3, pool_job, pool_done, pool_idle, 10, &log, &err), MP_OK);
  CU_ASSERT_EQUAL(log.n_calls, 7);
  for (int i = 0; i < 7; i++) CU_ASSERT_EQUAL(log.calls[i], 1);
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(log.ok[i], 1);
  CU_ASSERT_EQUAL(log.ok[6], 1);
  CU_ASSERT_EQUAL(log.failure[3], MP_INPUT);
  CU_ASSERT_STRING_EQUAL(log.msg[3], "item 3 is bad input");
  CU_ASSERT_EQUAL(log.failure[4], MP_RUN);
  CU_ASSERT_STRING_EQUAL(log.msg[4], "a child process died of signal 9 (Killed)");
  CU_ASSERT_EQUAL(log.failure[5], MP_RUN);
  CU_ASSERT_STRING_EQUAL(log.msg[5], "a child process ended (exit status 7) without a complete answer");
  CU_ASSERT(log.idles >= 1); /* item 1 sleeps 100 ms, the idle hook runs every 10 ms */
  CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1); /* every worker reaped */
  CU_ASSERT_EQUAL(errno, ECHILD);
  CU_ASSERT_EQUAL(sweep_pool_run(items, 0, 2, pool_job, pool_done, NULL, 0, &log, &err), MP_OK);
  CU_ASSERT_EQUAL(sweep_pool_run(items, 3, 0, pool_job, pool_done, NULL, 0, &log, &err), MP_USAGE);
}

static void pool_should_stop_and_reap_the_workers_when_done_fails(void) {
  int items[] = {0, 1, 2, 6};
  pool_log log;
  memset(&log, 0, sizeof log);
  log.stop_after = 1;
  mp_error err;
  CU_ASSERT_EQUAL(sweep_pool_run(items, 4, 2, pool_job, pool_done, NULL, 0, &log, &err), MP_OUTPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "disk full");
  CU_ASSERT_EQUAL(log.n_calls, 1);
  CU_ASSERT_EQUAL(waitpid(-1, NULL, WNOHANG), -1);
  CU_ASSERT_EQUAL(errno, ECHILD);
}

/* ---- one case, in a process of its own -------------------------------------------------------- */

static int run_one_case(void *arg) {
  (void)arg;
  const char *vary[] = {"mesh=2x2", "noc.bandwidth=1e10"};
  const char *methods[] = {"balanced"};
  mp_error err;
  sweep *s = tiny_sweep(vary, 2, methods, 1, &err);
  if (!s) return 10;
  sweep_row row;
  if (sweep_run_case(s, 0, &row, &err) != MP_OK) {
    fprintf(stderr, "%s\n", err.msg);
    sweep_free(s);
    return 11;
  }
  /* The analytical figures agree with the cost model on the method's own plan. */
  const chip *c = s->variants[0].chip;
  plan *p = NULL;
  method_report rep;
  cost_result *cr = NULL;
  int bad = 0;
  if (method_run("balanced", s->graphs[0], c, NULL, &p, &rep, &err) != MP_OK ||
      cost_evaluate(s->graphs[0], c, p, &cr, &err) != MP_OK)
    bad |= 1;
  else {
    bad |= (row.model_period_s != cr->period_s) << 1;
    bad |= (row.feasible != cr->feasible) << 2;
    bad |= (row.n_stages != p->n_stages) << 3;
    bad |= (row.plan_hash != plan_hash(p)) << 4;
  }
  bad |= (row.cores != 4 || row.total_sram_bytes != 4 * c->cores[0].sram_bytes) << 5;
  /* The pipeline cannot beat its bottleneck stage. */
  bad |= !(row.samples_per_s > 0 && row.samples_per_s <= 1.0001 / row.model_period_s) << 6;
  bad |= !(row.latency_s > 0 && row.link_utilisation >= 0 && row.link_utilisation <= 1) << 7;
  bad |= (row.evals_per_s != 0) << 8; /* not measured by a sweep */
  /* A second engine in this process is refused: cases must run in workers. */
  sweep_row again;
  bad |= (sweep_run_case(s, 0, &again, &err) != MP_RUN) << 9;
  bad |= (sweep_run_case(s, 1, &again, &err) != MP_USAGE) << 10;
  if (bad) fprintf(stderr, "run_one_case: bad = %#x\n", bad);
  plan_free(p);
  cost_result_free(cr);
  sweep_free(s);
  return bad ? 12 : 0;
}

static void run_case_should_agree_with_the_cost_model_and_bound_the_throughput(void) {
  CU_ASSERT_EQUAL(testutil_in_child(run_one_case, NULL), 0);
}

/* A sweep of tiny_resnet on mesh8x8_fp16 (a chip with energy figures) over two MAC energies. */
static sweep *energy_sweep(mp_error *err) {
  cJSON *base = load_json("platforms/mesh8x8_fp16.json");
  sweep_axis axis;
  graph *g = NULL;
  sweep *s = NULL;
  const char *methods[] = {"balanced"};
  if (sweep_axis_parse("energy.mac_pj=0.4,0.8", &axis, err) == MP_OK) {
    if (graph_load(testutil_src("traces/tiny_resnet.json"), &g, err) == MP_OK)
      sweep_new(base, "mesh8x8_fp16.json", &axis, 1, &g, 1, methods, 1, NULL, NULL, &s, err);
    else
      sweep_axis_clear(&axis);
  }
  cJSON_Delete(base);
  return s;
}

static int run_energy_cases(void *arg) {
  (void)arg;
  mp_error err;
  sweep *s = energy_sweep(&err);
  if (!s) return 10;
  sweep_row row;
  int bad = 0;
  if (sweep_run_case(s, 0, &row, &err) != MP_OK) {
    fprintf(stderr, "%s\n", err.msg);
    sweep_free(s);
    return 11;
  }
  /* the simulated energy, consistent with itself: W = J/sample x samples/s, samples/J = 1 / (J/sample) */
  bad |= !(row.energy_j_per_sample > 0) << 0;
  bad |= (fabs(row.power_w - row.energy_j_per_sample * row.samples_per_s) > 1e-9 * row.power_w) << 1;
  bad |= (fabs(row.samples_per_j * row.energy_j_per_sample - 1) > 1e-12) << 2;
  bad |= !(row.tops_per_w > 0) << 3;
  char line[SWEEP_LINE_MAX], want[256];
  snprintf(want, sizeof want, ",%.12g,%.12g,%.12g,%.12g,", row.energy_j_per_sample, row.power_w, row.samples_per_j,
           row.tops_per_w);
  bad |= (sweep_csv_row(s, 0, &row, line, sizeof line) < 0 || !strstr(line, want)) << 4;
  if (bad) fprintf(stderr, "run_energy_cases: bad = %#x\n", bad);
  sweep_free(s);
  return bad ? 12 : 0;
}

static void a_sweep_of_a_chip_with_energy_figures_should_have_the_energy_columns(void) {
  mp_error err;
  sweep *s = energy_sweep(&err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(s);
  char header[SWEEP_LINE_MAX];
  CU_ASSERT(sweep_csv_header(s, header, sizeof header) > 0);
  CU_ASSERT_STRING_EQUAL(header,
                         "case,energy.mac_pj,graph,batch,method,feasible,stages,model_period_s,samples_per_s,"
                         "latency_s,busiest_link,busiest_link_utilisation,total_sram_bytes,noc_bandwidth,cores,"
                         "energy_j_per_sample,power_w,samples_per_j,tops_per_w,options,inputs,solve_s\n");
  CU_ASSERT_EQUAL(s->variants[1].chip->energy.mac_pj, 0.8);
  sweep_free(s);
  CU_ASSERT_EQUAL(testutil_in_child(run_energy_cases, NULL), 0);
}

/* ---- meshpipe sweep, end to end --------------------------------------------------------------- */

#define SWEEP_ARGS "sweep -q -g traces/tiny_resnet.json -c platforms/mesh4x4.json -m optimal,even "
#define SMALL_AXES "--vary mesh=2x2,4x4 --vary noc.bandwidth=1e10,3.2e10 "

static void sweep_command_should_write_every_case_once_and_skip_them_on_a_rerun(void) {
  char path[1024]; /* a copy: testutil's paths live in a few rotating buffers */
  snprintf(path, sizeof path, "%s", testutil_temp_path("cli.csv"));
  char args[4200], *out, *err;
  snprintf(args, sizeof args, SWEEP_ARGS SMALL_AXES "-j 2 -o '%s'", path);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &err), 0);
  free(out);
  free(err);
  char *first = slurp(path);
  CU_ASSERT_EQUAL(count_lines(first), 9);
  CU_ASSERT_EQUAL(strncmp(first, "case,mesh,noc.bandwidth,graph,", 30), 0);
  CU_ASSERT_EQUAL(rows_with_key(first, "mesh=4x4;noc.bandwidth=3.2e10|tiny_resnet|optimal"), 1);
  CU_ASSERT_EQUAL(rows_with_key(first, "mesh=2x2;noc.bandwidth=1e10|tiny_resnet|even"), 1);
  /* Nothing left to do: the file stays as it is. */
  snprintf(args, sizeof args, SWEEP_ARGS SMALL_AXES "-o '%s'", path);
  CU_ASSERT_EQUAL(testutil_meshpipe(args + 0, &out, &err), 0);
  char *second = slurp(path);
  CU_ASSERT_STRING_EQUAL(first, second);
  free(second);
  free(out);
  free(err);
  /* The summary says so when not quiet. */
  snprintf(args, sizeof args, "sweep -g traces/tiny_resnet.json -c platforms/mesh4x4.json -m optimal,even " SMALL_AXES
                              "-o '%s'", path);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "8 cases (4 chip variants x 1 graph x 2 methods), 8 already in"));
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "0 to run"));
  free(out);
  free(err);
  /* A wider sweep over another key is another set of columns: refused. */
  snprintf(args, sizeof args, SWEEP_ARGS "--vary mesh=2x2 -o '%s'", path);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "is not this sweep's header"));
  free(out);
  free(err);
  /* The same cases under another seed or objective are another experiment: refused, the file untouched
   * (it once resumed and kept the other seed's rows). */
  const char *other[] = {"--seed 2", "--mode train"};
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, SWEEP_ARGS SMALL_AXES "%s -o '%s'", other[k], path);
    CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, k == 0 ? "was run with the options 'seed=1;" : "is not this sweep's header"));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "line "));
    char *now = slurp(path);
    CU_ASSERT_STRING_EQUAL(now, first);
    free(now);
    free(out);
    free(err);
  }
  free(first);
}

static void sweep_command_should_reject_bad_usage_with_exit_2(void) {
  static const struct {
    const char *args, *message;
  } bad[] = {
      {"sweep -o x.csv", "needs -g GRAPH"},
      {"sweep -g traces/tiny_resnet.json", "needs -o RESULTS.csv"},
      {"sweep -g traces/tiny_resnet.json -o x.csv extra", "unexpected argument 'extra'"},
      {"sweep -g traces/tiny_resnet.json -o x.csv --bogus", "unknown option '--bogus'"},
      {"sweep -g traces/tiny_resnet.json -o x.csv -j 0", "--jobs must be between"},
      {"sweep -g traces/tiny_resnet.json -o x.csv --vary mesh", "expected KEY=V1,V2"},
      {"sweep -g traces/tiny_resnet.json -o x.csv --vary mesh=9", "is not WxH"},
      {"sweep -g traces/tiny_resnet.json -o x.csv -m optimal,nope", "no method 'nope'"},
      {"sweep -g traces/tiny_resnet.json,, -o x.csv", "-g expects 1 to"},
      {"sweep -g traces/no_such.json -o x.csv", "no_such.json"},
      {"sweep -g traces/tiny_resnet.json -c platforms/none.json -o x.csv", "none.json"},
  };
  char never[512];
  snprintf(never, sizeof never, "%.500s", testutil_temp_path("x.csv"));
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    char args[2048], *out, *err;
    const char *x = strstr(bad[i].args, "x.csv"); /* the output goes to a temporary path */
    if (x)
      snprintf(args, sizeof args, "%.*s'%s'%s", (int)(x - bad[i].args), bad[i].args, never, x + 5);
    else
      snprintf(args, sizeof args, "%s", bad[i].args);
    CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
    if (!strstr(err, bad[i].message)) printf("\n  %s -> %s\n", args, err);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, bad[i].message));
    CU_ASSERT_FALSE(testutil_exists(never));
    free(out);
    free(err);
  }
  char *out, *err;
  CU_ASSERT_EQUAL(testutil_meshpipe("sweep --help", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: meshpipe sweep"));
  free(out);
  free(err);
}

/* Starts 'meshpipe sweep' in a new process group (so the whole tree can be killed); returns its pid. */
static pid_t start_sweep(const char *csv, const char *axes) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "exec '%s' " SWEEP_ARGS "%s -j 2 -o '%s' >/dev/null 2>&1", MESHPIPE_BINARY, axes, csv);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    setsid();
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  return pid;
}

#define KILL_AXES "--vary mesh=2x2,3x3,4x4,4x2 --vary noc.bandwidth=1e10,3.2e10,6.4e10"

static void a_sweep_killed_mid_way_should_resume_without_duplicate_or_lost_rows(void) {
  char killed[1024], clean[1024]; /* copies: testutil's paths live in a few rotating buffers */
  snprintf(killed, sizeof killed, "%s", testutil_temp_path("killed.csv"));
  snprintf(clean, sizeof clean, "%s", testutil_temp_path("clean.csv"));
  pid_t pid = start_sweep(killed, KILL_AXES);
  CU_ASSERT_FATAL(pid > 0);
  /* Kill the sweep and its workers with SIGKILL once a few rows are in (or after 20 s). */
  int rows = 0;
  for (int t = 0; t < 2000 && rows < 4; t++) {
    nanosleep(&(struct timespec){0, 10000000}, NULL);
    char *text = slurp(killed);
    rows = count_lines(text) - 1;
    free(text);
  }
  kill(-pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  char *text = slurp(killed);
  int before = count_lines(text) - 1;
  free(text);
  printf("\n  killed after %d of 24 rows\n", before);
  CU_ASSERT(before >= 4);
  /* A kill can cut the last row: make sure one is cut, as a kill during write() would. */
  FILE *f = fopen(killed, "ab");
  fputs("mesh=4x2;noc.bandwidth=6.4e10|tiny_resnet|even,4x2,6.4e10,tiny_res", f);
  fclose(f);
  char *out, *err, args[4200];
  snprintf(args, sizeof args, SWEEP_ARGS KILL_AXES " -j 2 -o '%s'", killed);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 0);
  free(out);
  free(err);
  snprintf(args, sizeof args, SWEEP_ARGS KILL_AXES " -j 2 -o '%s'", clean);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 0);
  free(out);
  free(err);
  /* Every case exactly once, with the figures of an uninterrupted run. */
  text = slurp(killed);
  CU_ASSERT_EQUAL(count_lines(text), 25);
  CU_ASSERT_PTR_NULL(strstr(text, "tiny_res\n"));
  static const char *const meshes[] = {"2x2", "3x3", "4x4", "4x2"}, *const bws[] = {"1e10", "3.2e10", "6.4e10"},
                           *const methods[] = {"optimal", "even"};
  for (int m = 0; m < 4; m++)
    for (int b = 0; b < 3; b++)
      for (int k = 0; k < 2; k++) {
        char key[128];
        snprintf(key, sizeof key, "mesh=%s;noc.bandwidth=%s|tiny_resnet|%s", meshes[m], bws[b], methods[k]);
        CU_ASSERT_EQUAL(rows_with_key(text, key), 1);
      }
  free(text);
  char *a = canonical_rows(killed), *b = canonical_rows(clean);
  CU_ASSERT_STRING_EQUAL(a, b);
  free(a);
  free(b);
}

static void a_sweep_under_mpirun_should_give_the_rows_of_one_process(void) {
  const char *why = NULL;
  if (!testutil_mpi_available(&why)) {
    printf("\n  SKIPPED: %s\n", why);
    return;
  }
  char single[1024], ranks[1024], log_path[1024]; /* copies: testutil's paths rotate over a few buffers */
  snprintf(single, sizeof single, "%s", testutil_temp_path("single.csv"));
  snprintf(ranks, sizeof ranks, "%s", testutil_temp_path("ranks.csv"));
  snprintf(log_path, sizeof log_path, "%s", testutil_temp_path("mpirun.log"));
  char args[4200], cmd[8400], *out, *err;
  snprintf(args, sizeof args, SWEEP_ARGS SMALL_AXES "--vary core.sram_bytes=64Ki,1Mi -j 2 -o '%s'", single);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &err), 0);
  free(out);
  free(err);
  /* Resume included: the MPI run starts from a file that already holds the first three rows. */
  char *text = slurp(single), *p = text;
  for (int i = 0; i < 4 && p; i++) p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  *p = '\0';
  write_text(ranks, text);
  free(text);
  snprintf(cmd, sizeof cmd,
           "mpirun --allow-run-as-root --oversubscribe -np 3 '%s' " SWEEP_ARGS SMALL_AXES
           "--vary core.sram_bytes=64Ki,1Mi -o '%s' >'%s' 2>&1",
           MESHPIPE_BINARY, ranks, log_path);
  int rc = system(cmd);
  if (!(WIFEXITED(rc) && WEXITSTATUS(rc) == 0)) {
    char *log = slurp(log_path);
    printf("\n  mpirun failed:\n%s\n", log);
    free(log);
  }
  CU_ASSERT_FATAL(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
  char *a = canonical_rows(single), *b = canonical_rows(ranks);
  CU_ASSERT_EQUAL(count_lines(a), 16);
  CU_ASSERT_STRING_EQUAL(a, b);
  free(a);
  free(b);
}

/* 1 when the file starts with the PNG signature. */
static int is_png(const char *path) {
  unsigned char sig[8] = {0};
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(sig, 1, 8, f);
  fclose(f);
  return n == 8 && memcmp(sig, "\x89PNG\r\n\x1a\n", 8) == 0;
}

static int run_shell(const char *cmd) {
  int rc = system(cmd);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

/* 1 when the file name in dir (a script's captured output) holds want; else says what it holds. */
static int output_says(const char *dir, const char *name, const char *want) {
  char path[1100];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *text = slurp(path);
  int found = text && strstr(text, want);
  if (!found) fprintf(stderr, "\n  want '%s' in %s: '%s'", want, name, text ? text : "(unreadable)");
  free(text);
  return found;
}

/* The mean over the cores of a simulate --json result of (compute_s + dram_s) / period_s. */
static double mean_busy(const char *json) {
  cJSON *o = cJSON_Parse(json);
  double period = cJSON_GetObjectItem(o, "period_s")->valuedouble, sum = 0, cores = 0;
  const cJSON *st;
  cJSON_ArrayForEach(st, cJSON_GetObjectItem(o, "stages")) {
    const cJSON *c = cJSON_GetObjectItem(st, "cores");
    double n = cJSON_GetArrayItem(c, 1)->valuedouble - cJSON_GetArrayItem(c, 0)->valuedouble + 1;
    sum += n * (cJSON_GetObjectItem(st, "compute_s")->valuedouble + cJSON_GetObjectItem(st, "dram_s")->valuedouble) /
           period;
    cores += n;
  }
  cJSON_Delete(o);
  return cores > 0 ? sum / cores : -1;
}

/* plot_sweep: the x axis and the lines the user picks (by default the first varied key and the
 * methods), a legend of one entry per line outside the axes whatever else varies, a Pareto front over
 * SRAM, NoC bandwidth and throughput; plot_heatmap: the README's command without --chip, the busy
 * fraction over the steady period. */
static void plot_scripts_should_draw_pngs_from_a_sweep_csv_and_a_simulation(void) {
  if (run_shell("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
    printf("\n  SKIPPED: /usr/bin/python3 has no matplotlib (install python3-matplotlib)\n");
    return;
  }
  char csv[512], csv2[512], dir[512], plan_path[512], sim_path[512], cmd[4096], *out, *err, png[1024], *text;
  /* copies: testutil's paths live in a few rotating buffers */
  snprintf(csv, sizeof csv, "%.500s", testutil_temp_path("plot.csv"));
  snprintf(csv2, sizeof csv2, "%.500s", testutil_temp_path("plot2.csv"));
  snprintf(dir, sizeof dir, "%.500s", testutil_temp_path("plots"));
  snprintf(plan_path, sizeof plan_path, "%.500s", testutil_temp_path("plot_plan.json"));
  snprintf(sim_path, sizeof sim_path, "%.500s", testutil_temp_path("plot_sim.json"));
  snprintf(cmd, sizeof cmd, SWEEP_ARGS SMALL_AXES "-o '%s'", csv);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(cmd, &out, &err), 0);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  CU_ASSERT_EQUAL_FATAL(run_shell(cmd), 0);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py '%s' -o '%s' --prefix t >'%s/o1'", csv, dir, dir);
  CU_ASSERT_EQUAL(run_shell(cmd), 0);
  snprintf(png, sizeof png, "%s/t_mesh.png", dir);
  CU_ASSERT(is_png(png));
  snprintf(png, sizeof png, "%s/t_pareto.png", dir);
  CU_ASSERT(is_png(png));
  CU_ASSERT(output_says(dir, "o1", "x mesh (2 values), a line per method (2 in the legend, outside the axes), "
                                  "2 panels (graph x noc.bandwidth)"));
  /* any x, any line key */
  snprintf(cmd, sizeof cmd,
           "/usr/bin/python3 scripts/plot_sweep.py '%s' -o '%s' --prefix t --x noc.bandwidth --lines mesh "
           "--where method=optimal >'%s/o2'", csv, dir, dir);
  CU_ASSERT_EQUAL(run_shell(cmd), 0);
  snprintf(png, sizeof png, "%s/t_noc_bandwidth.png", dir);
  CU_ASSERT(is_png(png));
  CU_ASSERT(output_says(dir, "o2", "x noc.bandwidth (2 values), a line per mesh (2 in the legend"));
  /* a sweep that does not vary the mesh: x is what it varies, still one legend entry per method */
  snprintf(cmd, sizeof cmd, SWEEP_ARGS "--vary core.sram_bytes=64Ki,1Mi,4Mi --vary noc.bandwidth=1e10,3.2e10 -o '%s'",
           csv2);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(cmd, &out, &err), 0);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py '%s' -o '%s' --prefix u >'%s/o3'", csv2, dir, dir);
  CU_ASSERT_EQUAL(run_shell(cmd), 0);
  snprintf(png, sizeof png, "%s/u_core_sram_bytes.png", dir);
  CU_ASSERT(is_png(png));
  CU_ASSERT(output_says(dir, "o3", "x core.sram_bytes (3 values), a line per method (2 in the legend"));
  CU_ASSERT(output_says(dir, "o3", "12 cases, 2 NoC bandwidths"));
  /* The Pareto front counts NoC bandwidth: a case with the least SRAM and less bandwidth stays on it
   * although a case of as much SRAM and more bandwidth has more throughput. */
  snprintf(cmd, sizeof cmd,
           "cd scripts && /usr/bin/python3 -c 'import plot_sweep as p; "
           "assert p.pareto3([(1, 1, 1.0), (1, 2, 2.0), (2, 2, 1.5), (2, 1, 1.0)]) == [0, 1], "
           "p.pareto3([(1, 1, 1.0), (1, 2, 2.0), (2, 2, 1.5), (2, 1, 1.0)]); "
           "assert p.pareto([(1, 1.0), (1, 2.0), (2, 1.5)]) == [(1, 2.0)]' 2>'%s/e0'", dir);
  CU_ASSERT_EQUAL(run_shell(cmd), 0);
  /* A chip without energy figures gets no power plot; one with them a throughput-power front. */
  snprintf(png, sizeof png, "%s/t_power.png", dir);
  CU_ASSERT_EQUAL(access(png, F_OK), -1);
  snprintf(cmd, sizeof cmd,
           "sweep -q -g traces/tiny_resnet.json -c platforms/mesh8x8_fp16.json -m optimal --vary mesh=2x2,4x4 -o '%s'",
           csv2);
  unlink(csv2);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(cmd, &out, &err), 0);
  free(out);
  free(err);
  /* rerun: its rows, energy columns and all, are recognised as done and kept as they are */
  char *first = slurp(csv2);
  CU_ASSERT_EQUAL(testutil_meshpipe(cmd, &out, &err), 0);
  if (err && *err) fprintf(stderr, "\n  rerun: %s", err);
  free(out);
  free(err);
  text = slurp(csv2);
  CU_ASSERT(first && text && strcmp(first, text) == 0);
  free(first);
  free(text);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py '%s' -o '%s' --prefix e --y samples_per_j >'%s/o5'",
           csv2, dir, dir);
  CU_ASSERT_EQUAL(run_shell(cmd), 0);
  snprintf(png, sizeof png, "%s/e_power.png", dir);
  CU_ASSERT(is_png(png));
  CU_ASSERT(output_says(dir, "o5", "e_power.png: 2 cases, 2 core counts"));
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py '%s' -o '%s' --y power_w 2>'%s/e4'", csv, dir, dir);
  CU_ASSERT_NOT_EQUAL(run_shell(cmd), 0);
  CU_ASSERT(output_says(dir, "e4", "--y power_w: the sweep has no such column"));
  /* The heat map from 'meshpipe simulate --json' of a partitioned plan, as the README runs it. */
  snprintf(cmd, sizeof cmd, "partition -g traces/resnet50.json -c platforms/mesh8x8.json -m optimal -o '%s'", plan_path);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(cmd, &out, &err), 0);
  free(out);
  free(err);
  snprintf(cmd, sizeof cmd, "simulate -g traces/resnet50.json -c platforms/mesh8x8.json -p '%s' --json", plan_path);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(cmd, &out, &err), 0);
  write_text(sim_path, out);
  double busy = mean_busy(out);
  free(out);
  free(err);
  CU_ASSERT(busy > 0.5); /* over the period; over the makespan (with the fill) it was about a quarter */
  snprintf(png, sizeof png, "%s/heat.png", dir);
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_heatmap.py '%s' -o '%s' >'%s/o4'", sim_path, png, dir);
  CU_ASSERT_EQUAL(run_shell(cmd), 0);
  CU_ASSERT(is_png(png));
  char want[64];
  snprintf(want, sizeof want, "cores busy %.1f%% of the period", 100 * busy);
  CU_ASSERT(output_says(dir, "o4", want));
  /* Wrong inputs are refused with a message, not a traceback. */
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py platforms/mesh4x4.json -o '%s' 2>'%s/e1'", dir, dir);
  CU_ASSERT_NOT_EQUAL(run_shell(cmd), 0);
  CU_ASSERT(output_says(dir, "e1", "not a meshpipe sweep CSV"));
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_sweep.py '%s' -o '%s' --x nope 2>'%s/e3'", csv, dir, dir);
  CU_ASSERT_NOT_EQUAL(run_shell(cmd), 0);
  CU_ASSERT(output_says(dir, "e3", "--x nope: no such column"));
  snprintf(cmd, sizeof cmd, "/usr/bin/python3 scripts/plot_heatmap.py '%s' 2>'%s/e2'", csv, dir);
  CU_ASSERT_NOT_EQUAL(run_shell(cmd), 0);
  CU_ASSERT(output_says(dir, "e2", "is not JSON"));
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"axis_parse_should_split_the_values_in_order", axis_parse_should_split_the_values_in_order},
      {"axis_parse_should_reject_malformed_specs", axis_parse_should_reject_malformed_specs},
      {"chip_variant_should_set_the_named_figures", chip_variant_should_set_the_named_figures},
      {"chip_variant_mesh_should_resize_and_move_the_dram_ports", chip_variant_mesh_should_resize_and_move_the_dram_ports},
      {"chip_variant_should_reject_bad_keys_and_values_naming_them",
       chip_variant_should_reject_bad_keys_and_values_naming_them},
      {"sweep_new_should_number_the_cases_variant_major_with_unique_keys",
       sweep_new_should_number_the_cases_variant_major_with_unique_keys},
      {"sweep_new_should_reject_unknown_or_repeated_methods_axes_and_graphs",
       sweep_new_should_reject_unknown_or_repeated_methods_axes_and_graphs},
      {"csv_open_should_write_the_header_then_resume_dropping_a_cut_row",
       csv_open_should_write_the_header_then_resume_dropping_a_cut_row},
      {"csv_open_should_refuse_a_file_of_other_columns_and_leave_it_alone",
       csv_open_should_refuse_a_file_of_other_columns_and_leave_it_alone},
      {"csv_open_should_refuse_a_row_of_a_case_whose_columns_are_garbage",
       csv_open_should_refuse_a_row_of_a_case_whose_columns_are_garbage},
      {"pool_should_run_every_item_once_and_report_failed_workers",
       pool_should_run_every_item_once_and_report_failed_workers},
      {"pool_should_stop_and_reap_the_workers_when_done_fails", pool_should_stop_and_reap_the_workers_when_done_fails},
      {"run_case_should_agree_with_the_cost_model_and_bound_the_throughput",
       run_case_should_agree_with_the_cost_model_and_bound_the_throughput},
    {"a_sweep_of_a_chip_with_energy_figures_should_have_the_energy_columns",
     a_sweep_of_a_chip_with_energy_figures_should_have_the_energy_columns},
      {"sweep_command_should_write_every_case_once_and_skip_them_on_a_rerun",
       sweep_command_should_write_every_case_once_and_skip_them_on_a_rerun},
      {"sweep_command_should_reject_bad_usage_with_exit_2", sweep_command_should_reject_bad_usage_with_exit_2},
      {"a_sweep_killed_mid_way_should_resume_without_duplicate_or_lost_rows",
       a_sweep_killed_mid_way_should_resume_without_duplicate_or_lost_rows},
      {"a_sweep_under_mpirun_should_give_the_rows_of_one_process",
       a_sweep_under_mpirun_should_give_the_rows_of_one_process},
      {"plot_scripts_should_draw_pngs_from_a_sweep_csv_and_a_simulation",
       plot_scripts_should_draw_pngs_from_a_sweep_csv_and_a_simulation},
      CU_TEST_INFO_NULL,
  };
  return testutil_run("sweep", tests, argc, argv);
}
