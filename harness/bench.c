/* bench: see bench.h. */
#include "bench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "fileio.h"
#include "jsonio.h"
#include "method.h"

/* ---- the suite -------------------------------------------------------------------------------- */

static const char *const suite_graphs[] = {"traces/resnet50.json", "traces/vgg16.json", "traces/mobilenet_v2.json",
                                           "traces/transformer_encoder.json"};
static const char *const suite_chips[] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json",
                                          "platforms/mesh16x16.json"};
/* The quick suite (CI's): every model on the two smaller meshes. */
#define QUICK_GRAPHS 4
#define QUICK_CHIPS 2

mp_status bench_suite(int quick, bench_item **out, int *n, mp_error *err) {
  int ng = quick ? QUICK_GRAPHS : (int)(sizeof suite_graphs / sizeof *suite_graphs);
  int nc = quick ? QUICK_CHIPS : (int)(sizeof suite_chips / sizeof *suite_chips);
  int nm = method_count();
  *out = NULL;
  *n = 0;
  bench_item *items = malloc((size_t)(ng * nc * nm) * sizeof *items);
  if (!items) return err_nomem(err);
  int k = 0;
  for (int g = 0; g < ng; g++)
    for (int c = 0; c < nc; c++)
      for (int m = 0; m < nm; m++) items[k++] = (bench_item){suite_graphs[g], suite_chips[c], method_at(m)->name};
  *out = items;
  *n = k;
  return MP_OK;
}

/* ---- reports ---------------------------------------------------------------------------------- */

void bench_machine_probe(bench_machine *m) {
  memset(m, 0, sizeof *m);
  snprintf(m->cpu, sizeof m->cpu, "unknown");
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    char line[512];
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
        const char *v = strchr(line, ':') + 1;
        while (*v == ' ' || *v == '\t') v++;
        snprintf(m->cpu, sizeof m->cpu, "%.*s", (int)strcspn(v, "\n"), v);
        break;
      }
    fclose(f);
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  m->cpus = cpus > 0 ? (int)cpus : 1;
  struct utsname u;
  if (uname(&u) == 0)
    snprintf(m->os, sizeof m->os, "%.40s %.40s %.40s", u.sysname, u.release, u.machine);
  else
    snprintf(m->os, sizeof m->os, "unknown");
}

int bench_same_machine(const bench_machine *a, const bench_machine *b) {
  return strcmp(a->cpu, b->cpu) == 0 && a->cpus == b->cpus;
}

mp_status bench_add(bench_report *r, const bench_entry *e, mp_error *err) {
  bench_entry *grown = realloc(r->entries, (size_t)(r->n + 1) * sizeof *grown);
  if (!grown) return err_nomem(err);
  r->entries = grown;
  r->entries[r->n++] = *e;
  return MP_OK;
}

void bench_fill_gaps(bench_report *r) {
  for (int i = 0; i < r->n; i++) {
    bench_entry *e = &r->entries[i];
    e->gap = NAN;
    for (int j = 0; j < r->n; j++) {
      const bench_entry *o = &r->entries[j];
      if (strcmp(o->method, "optimal") == 0 && strcmp(o->graph, e->graph) == 0 && strcmp(o->chip, e->chip) == 0 &&
          o->model_period_s > 0)
        e->gap = e->model_period_s / o->model_period_s - 1;
    }
  }
}

void bench_report_clear(bench_report *r) {
  if (!r) return;
  free(r->entries);
  memset(r, 0, sizeof *r);
}

cJSON *bench_to_json(const bench_report *r) {
  cJSON *o = cJSON_CreateObject(), *m = NULL, *list = NULL;
  char hex[17];
  if (!o || !cJSON_AddStringToObject(o, "format", BENCH_FORMAT) || !cJSON_AddNumberToObject(o, "version", BENCH_VERSION) ||
      !cJSON_AddStringToObject(o, "meshpipe", r->version) || !cJSON_AddStringToObject(o, "date", r->date) ||
      !cJSON_AddBoolToObject(o, "quick", r->quick) || !cJSON_AddStringToObject(o, "filter", r->filter) ||
      !(m = cJSON_AddObjectToObject(o, "machine")) || !cJSON_AddStringToObject(m, "cpu", r->machine.cpu) ||
      !cJSON_AddNumberToObject(m, "cpus", r->machine.cpus) || !cJSON_AddStringToObject(m, "os", r->machine.os) ||
      !(list = cJSON_AddArrayToObject(o, "cases")))
    goto fail;
  for (int i = 0; i < r->n; i++) {
    const bench_entry *e = &r->entries[i];
    cJSON *c = cJSON_CreateObject();
    if (!c || !cJSON_AddItemToArray(list, c)) {
      cJSON_Delete(c);
      goto fail;
    }
    if (!cJSON_AddStringToObject(c, "key", e->key) || !cJSON_AddStringToObject(c, "graph", e->graph) ||
        !cJSON_AddStringToObject(c, "chip", e->chip) || !cJSON_AddStringToObject(c, "method", e->method) ||
        !cJSON_AddBoolToObject(c, "feasible", e->feasible) || !cJSON_AddNumberToObject(c, "stages", e->stages) ||
        !cJSON_AddNumberToObject(c, "samples_per_s", e->samples_per_s) ||
        !cJSON_AddNumberToObject(c, "model_period_s", e->model_period_s) ||
        !cJSON_AddNumberToObject(c, "latency_s", e->latency_s) ||
        !(isnan(e->gap) ? cJSON_AddNullToObject(c, "gap_to_optimum") : cJSON_AddNumberToObject(c, "gap_to_optimum", e->gap)) ||
        !cJSON_AddNumberToObject(c, "solve_s", e->solve_s) ||
        !cJSON_AddNumberToObject(c, "sim_evals_per_s", e->evals_per_s) ||
        !cJSON_AddStringToObject(c, "plan_hash", fileio_hash_hex(e->plan_hash, hex)))
      goto fail;
  }
  return o;
fail:
  cJSON_Delete(o);
  return NULL;
}

/* Copies a string member into a fixed buffer; too long is an error. */
static mp_status get_text(const jsonio_reader *in, const cJSON *obj, const char *key, char *dst, size_t cap) {
  const char *s = NULL;
  mp_status st = jsonio_get_str(in, obj, key, JSONIO_REQUIRED, &s, NULL);
  if (st != MP_OK) return st;
  if (strlen(s) >= cap)
    return err_at(in->err, MP_INPUT, in->file, in->where, "%s is longer than %zu characters", key, cap - 1);
  memcpy(dst, s, strlen(s) + 1);
  return MP_OK;
}

/* A string member that may be empty (jsonio_get_str wants text). */
static mp_status get_text_or_empty(const jsonio_reader *in, const cJSON *obj, const char *key, char *dst,
                                   size_t cap) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (cJSON_IsString(v) && v->valuestring[0] == '\0') {
    dst[0] = '\0';
    return MP_OK;
  }
  return get_text(in, obj, key, dst, cap);
}

static mp_status get_bool(const jsonio_reader *in, const cJSON *obj, const char *key, int *out) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!cJSON_IsBool(v)) return err_at(in->err, MP_INPUT, in->file, in->where, "%s must be true or false", key);
  *out = cJSON_IsTrue(v);
  return MP_OK;
}

static mp_status read_entry(const jsonio_reader *in, const cJSON *c, bench_entry *e) {
  static const char *const keys[] = {"key", "graph", "chip", "method", "feasible", "stages", "samples_per_s",
                                     "model_period_s", "latency_s", "gap_to_optimum", "solve_s", "sim_evals_per_s",
                                     "plan_hash", NULL};
  const unsigned positive = JSONIO_REQUIRED | JSONIO_LO_OPEN;
  memset(e, 0, sizeof *e);
  const char *hash = NULL;
  mp_status st = jsonio_known_keys(in, c, keys);
  if (st == MP_OK) st = get_text(in, c, "key", e->key, sizeof e->key);
  if (st == MP_OK) st = get_text(in, c, "graph", e->graph, sizeof e->graph);
  if (st == MP_OK) st = get_text(in, c, "chip", e->chip, sizeof e->chip);
  if (st == MP_OK) st = get_text(in, c, "method", e->method, sizeof e->method);
  if (st == MP_OK) st = get_bool(in, c, "feasible", &e->feasible);
  if (st == MP_OK) st = jsonio_get_int(in, c, "stages", JSONIO_REQUIRED, 1, 1 << 20, &e->stages, NULL);
  if (st == MP_OK) st = jsonio_get_num(in, c, "samples_per_s", positive, 0, INFINITY, &e->samples_per_s, NULL);
  if (st == MP_OK) st = jsonio_get_num(in, c, "model_period_s", positive, 0, INFINITY, &e->model_period_s, NULL);
  if (st == MP_OK) st = jsonio_get_num(in, c, "latency_s", positive, 0, INFINITY, &e->latency_s, NULL);
  if (st == MP_OK) st = jsonio_get_num(in, c, "solve_s", JSONIO_REQUIRED, 0, INFINITY, &e->solve_s, NULL);
  if (st == MP_OK) st = jsonio_get_num(in, c, "sim_evals_per_s", JSONIO_REQUIRED, 0, INFINITY, &e->evals_per_s, NULL);
  if (st == MP_OK) {
    const cJSON *gap = cJSON_GetObjectItemCaseSensitive(c, "gap_to_optimum");
    e->gap = NAN;
    if (!cJSON_IsNull(gap)) st = jsonio_get_num(in, c, "gap_to_optimum", JSONIO_REQUIRED, -1, INFINITY, &e->gap, NULL);
  }
  if (st == MP_OK) st = jsonio_get_str(in, c, "plan_hash", JSONIO_REQUIRED, &hash, NULL);
  if (st == MP_OK) {
    char *end = NULL;
    e->plan_hash = strtoull(hash, &end, 16);
    if (strlen(hash) != 16 || *end)
      st = err_at(in->err, MP_INPUT, in->file, in->where, "plan_hash must be 16 hex digits");
  }
  if (st == MP_OK) {
    char expect[sizeof e->key + 128];
    snprintf(expect, sizeof expect, "%s|%s|%s", e->graph, e->chip, e->method);
    if (strcmp(expect, e->key) != 0)
      st = err_at(in->err, MP_INPUT, in->file, in->where, "key \"%s\" is not graph|chip|method (\"%s\")", e->key,
                  expect);
  }
  return st;
}

mp_status bench_from_json(const cJSON *root, const char *file, bench_report *out, mp_error *err) {
  static const char *const keys[] = {"format", "version", "meshpipe", "date", "quick", "filter", "machine", "cases",
                                     NULL};
  static const char *const mkeys[] = {"cpu", "cpus", "os", NULL};
  memset(out, 0, sizeof *out);
  const char *format = NULL;
  const cJSON *machine = NULL, *cases = NULL;
  int version = 0;
  jsonio_reader top = {file, "", err}, in = {file, "machine", err};
  mp_status st = jsonio_get_str(&top, root, "format", JSONIO_REQUIRED, &format, NULL);
  if (st == MP_OK && strcmp(format, BENCH_FORMAT) != 0)
    st = err_at(err, MP_INPUT, file, "format", "expected \"%s\", got \"%.80s\" (not a bench file)", BENCH_FORMAT, format);
  if (st == MP_OK) st = jsonio_get_int(&top, root, "version", JSONIO_REQUIRED, 0, 1 << 20, &version, NULL);
  if (st == MP_OK && version != BENCH_VERSION)
    st = err_at(err, MP_INPUT, file, "version", "version %d is not supported (this meshpipe reads version %d)", version,
                BENCH_VERSION);
  if (st == MP_OK) st = jsonio_known_keys(&top, root, keys);
  if (st == MP_OK) st = get_text(&top, root, "meshpipe", out->version, sizeof out->version);
  if (st == MP_OK) st = get_text(&top, root, "date", out->date, sizeof out->date);
  if (st == MP_OK) st = get_bool(&top, root, "quick", &out->quick);
  if (st == MP_OK) st = get_text_or_empty(&top, root, "filter", out->filter, sizeof out->filter);
  if (st == MP_OK) st = jsonio_get_object(&top, root, "machine", JSONIO_REQUIRED, &machine, NULL);
  if (st == MP_OK) st = jsonio_known_keys(&in, machine, mkeys);
  if (st == MP_OK) st = get_text(&in, machine, "cpu", out->machine.cpu, sizeof out->machine.cpu);
  if (st == MP_OK) st = jsonio_get_int(&in, machine, "cpus", JSONIO_REQUIRED, 1, 1 << 20, &out->machine.cpus, NULL);
  if (st == MP_OK) st = get_text(&in, machine, "os", out->machine.os, sizeof out->machine.os);
  if (st == MP_OK) st = jsonio_get_array(&top, root, "cases", JSONIO_REQUIRED, &cases, NULL);
  int i = 0;
  for (const cJSON *c = cases ? cases->child : NULL; c && st == MP_OK; c = c->next, i++) {
    char where[32];
    snprintf(where, sizeof where, "cases[%d]", i);
    bench_entry e;
    if (!cJSON_IsObject(c)) {
      st = err_at(err, MP_INPUT, file, where, "must be an object");
      break;
    }
    st = read_entry(&(jsonio_reader){file, where, err}, c, &e);
    for (int j = 0; j < out->n && st == MP_OK; j++)
      if (strcmp(out->entries[j].key, e.key) == 0)
        st = err_at(err, MP_INPUT, file, where, "case \"%s\" is also cases[%d]", e.key, j);
    if (st == MP_OK) st = bench_add(out, &e, err);
  }
  if (st != MP_OK) bench_report_clear(out);
  return st;
}

mp_status bench_load(const char *path, bench_report *out, mp_error *err) {
  cJSON *root = NULL;
  memset(out, 0, sizeof *out);
  mp_status st = jsonio_load(path, &root, err);
  if (st == MP_OK) st = bench_from_json(root, path, out, err);
  cJSON_Delete(root);
  return st;
}

mp_status bench_save(const bench_report *r, const char *path, mp_error *err) {
  cJSON *o = bench_to_json(r);
  if (!o) return err_nomem(err);
  mp_status st = jsonio_save(path, o, err);
  cJSON_Delete(o);
  return st;
}

/* ---- the comparison --------------------------------------------------------------------------- */

void bench_limits_default(bench_limits *l) {
  l->quality_drop = 0.005;
  l->speed_drop = 0.25;
  l->min_solve_s = 0.02;
}

void bench_diff_clear(bench_diff *d) {
  if (!d) return;
  free(d->rows);
  memset(d, 0, sizeof *d);
}

static void add_why(char *why, size_t cap, const char *text) {
  size_t used = strlen(why);
  snprintf(why + used, cap - used, "%s%s", used ? "; " : "", text);
}

static void compare(const bench_entry *o, const bench_entry *e, const bench_limits *lim, int speed, bench_diff_row *row) {
  char text[96];
  row->quality = o->samples_per_s > 0 ? e->samples_per_s / o->samples_per_s - 1 : 0;
  if (fabs(row->quality) < 1e-12) row->quality = 0; /* BENCH.json keeps 15 digits: the last bit may differ */
  row->solve = row->evals = NAN;
  row->verdict = BENCH_SAME;
  if (e->samples_per_s < (1 - lim->quality_drop) * o->samples_per_s) {
    snprintf(text, sizeof text, "throughput %+.2f%%", 100 * row->quality);
    add_why(row->why, sizeof row->why, text);
    row->verdict = BENCH_WORSE;
  } else if (e->samples_per_s > o->samples_per_s * (1 + lim->quality_drop)) {
    row->verdict = BENCH_BETTER;
  }
  if (o->feasible && !e->feasible) {
    add_why(row->why, sizeof row->why, "no longer fits memory");
    row->verdict = BENCH_WORSE;
  }
  row->fails = row->why[0] != '\0';
  if (speed) {
    if ((o->solve_s >= lim->min_solve_s || e->solve_s >= lim->min_solve_s) && o->solve_s > 0 && e->solve_s > 0)
      row->solve = o->solve_s / e->solve_s - 1;
    if (o->evals_per_s > 0 && e->evals_per_s > 0) row->evals = e->evals_per_s / o->evals_per_s - 1;
  }
}

/* Geometric mean of (1 + x) over the rows' non-NAN figures, - 1; NAN when there is none. */
static double mean_change(const bench_diff *d, int evals, int *n) {
  double log_sum = 0;
  *n = 0;
  for (int i = 0; i < d->n; i++) {
    double x = evals ? d->rows[i].evals : d->rows[i].solve;
    if (isnan(x)) continue;
    log_sum += log1p(x);
    (*n)++;
  }
  return *n ? expm1(log_sum / *n) : NAN;
}

mp_status bench_diff_new(const bench_report *old, const bench_report *now, const bench_limits *lim, bench_diff *out,
                         mp_error *err) {
  bench_limits defaults;
  if (!lim) {
    bench_limits_default(&defaults);
    lim = &defaults;
  }
  memset(out, 0, sizeof *out);
  out->speed_compared = bench_same_machine(&old->machine, &now->machine);
  out->missing_fail = old->quick == now->quick && strcmp(old->filter, now->filter) == 0;
  out->rows = calloc((size_t)(old->n + now->n + 1), sizeof *out->rows);
  if (!out->rows) return err_nomem(err);
  for (int i = 0; i < now->n; i++) {
    bench_diff_row *row = &out->rows[out->n++];
    row->now = &now->entries[i];
    for (int j = 0; j < old->n && !row->old; j++)
      if (strcmp(old->entries[j].key, row->now->key) == 0) row->old = &old->entries[j];
    if (row->old) {
      compare(row->old, row->now, lim, out->speed_compared, row);
    } else {
      row->verdict = BENCH_NEW;
      row->quality = row->solve = row->evals = NAN;
    }
  }
  for (int j = 0; j < old->n; j++) {
    int found = 0;
    for (int i = 0; i < now->n && !found; i++) found = strcmp(old->entries[j].key, now->entries[i].key) == 0;
    if (found) continue;
    bench_diff_row *row = &out->rows[out->n++];
    row->old = &old->entries[j];
    row->verdict = BENCH_MISSING;
    row->quality = row->solve = row->evals = NAN;
    if (out->missing_fail) {
      add_why(row->why, sizeof row->why, "missing from this run");
      row->fails = 1;
    }
  }
  for (int i = 0; i < out->n; i++) out->failures += out->rows[i].fails;
  out->solve = mean_change(out, 0, &out->n_solve);
  out->evals = mean_change(out, 1, &out->n_evals);
  char text[96];
  if (out->n_solve > 0 && out->solve < -lim->speed_drop) {
    snprintf(text, sizeof text, "solve speed %+.1f%% over %d cases", 100 * out->solve, out->n_solve);
    add_why(out->speed_why, sizeof out->speed_why, text);
    out->failures++;
  }
  if (out->n_evals > 0 && out->evals < -lim->speed_drop) {
    snprintf(text, sizeof text, "sim evaluations/s %+.1f%% over %d cases", 100 * out->evals, out->n_evals);
    add_why(out->speed_why, sizeof out->speed_why, text);
    out->failures++;
  }
  return MP_OK;
}
