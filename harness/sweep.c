/* sweep: see sweep.h.  Chip variants are edits of the base chip's JSON, checked by chip_from_json;
 * the worker pool that runs the cases is sweep_pool.c, the results file sweep_csv.c. */
#include "sweep.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "plan.h"
#include "proc.h"
#include "sim_train.h"
#include "train.h"

static char *dup_str(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* ---- axes ------------------------------------------------------------------------------------- */

void sweep_axis_clear(sweep_axis *a) {
  if (!a) return;
  for (int i = 0; i < a->n_values; i++) free(a->values[i]);
  free(a->values);
  free(a->key);
  memset(a, 0, sizeof *a);
}

static int key_char(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_';
}

mp_status sweep_axis_parse(const char *text, sweep_axis *out, mp_error *err) {
  memset(out, 0, sizeof *out);
  const char *eq = strchr(text, '=');
  if (!eq) return err_set(err, MP_USAGE, "--vary '%.200s': expected KEY=V1,V2,...", text);
  size_t klen = (size_t)(eq - text);
  if (klen == 0 || klen > 200) return err_set(err, MP_USAGE, "--vary '%.200s': the key is empty or too long", text);
  for (size_t i = 0; i < klen; i++) {
    int dot_ok = text[i] == '.' && i > 0 && i + 1 < klen && text[i + 1] != '.';
    if (!key_char(text[i]) && !dot_ok)
      return err_set(err, MP_USAGE, "--vary '%.200s': the key must be dotted names of letters, digits and '_'",
                     text);
  }
  mp_status st = MP_OK;
  if (!(out->key = dup_str(text, klen))) return err_nomem(err);
  const char *p = eq + 1;
  for (;;) {
    size_t n = strcspn(p, ",");
    if (n == 0) {
      st = err_set(err, MP_USAGE, "--vary %s: an empty value in '%.200s'", out->key, eq + 1);
      goto cleanup;
    }
    for (size_t i = 0; i < n; i++)
      if (strchr(";|\" \t\r\n", p[i])) {
        st = err_set(err, MP_USAGE, "--vary %s: value '%.*s' holds a character a CSV field cannot ('%c')", out->key,
                     (int)(n > 100 ? 100 : n), p, p[i]);
        goto cleanup;
      }
    for (int i = 0; i < out->n_values; i++)
      if (strlen(out->values[i]) == n && strncmp(out->values[i], p, n) == 0) {
        st = err_set(err, MP_USAGE, "--vary %s: value '%s' given twice", out->key, out->values[i]);
        goto cleanup;
      }
    if (out->n_values == SWEEP_MAX_VALUES) {
      st = err_set(err, MP_USAGE, "--vary %s: more than %d values", out->key, SWEEP_MAX_VALUES);
      goto cleanup;
    }
    char **grown = realloc(out->values, (size_t)(out->n_values + 1) * sizeof *grown);
    if (!grown) {
      st = err_nomem(err);
      goto cleanup;
    }
    out->values = grown;
    if (!(out->values[out->n_values] = dup_str(p, n))) {
      st = err_nomem(err);
      goto cleanup;
    }
    out->n_values++;
    if (p[n] == '\0') break;
    p += n + 1;
  }
cleanup:
  if (st != MP_OK) sweep_axis_clear(out);
  return st;
}

/* ---- chip variants ---------------------------------------------------------------------------- */

/* A number with an optional k M G T (powers of 1000) or Ki Mi Gi Ti (powers of 1024) suffix. */
static int parse_scaled(const char *text, double *out) {
  static const char units[] = "kMGT";
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text) return 0;
  if (*end) {
    const char *u = *end == 'K' ? units : strchr(units, *end); /* K is accepted as k before an i */
    if (!u || (*end == 'K' && end[1] != 'i')) return 0;
    int power = (int)(u - units) + 1;
    double base = 1000;
    end++;
    if (*end == 'i') {
      base = 1024;
      end++;
    }
    if (*end) return 0;
    for (int i = 0; i < power; i++) v *= base;
  }
  if (!isfinite(v)) return 0;
  *out = v;
  return 1;
}

/* Sets mesh to W x H and moves the DRAM ports to the same relative place. */
static mp_status set_mesh(cJSON *doc, const char *value, mp_error *err) {
  char *end = NULL;
  errno = 0;
  long w = strtol(value, &end, 10), h = 0;
  if (!errno && end != value && (*end == 'x' || *end == 'X')) {
    const char *hp = end + 1;
    h = strtol(hp, &end, 10);
    if (errno || end == hp || *end) h = 0;
  }
  if (w < 1 || h < 1 || w > 4096 || h > 4096)
    return err_set(err, MP_USAGE, "--vary mesh: '%s' is not WxH with whole W, H >= 1 (e.g. 8x8)", value);
  cJSON *mesh = cJSON_GetObjectItemCaseSensitive(doc, "mesh");
  cJSON *ow = cJSON_GetObjectItemCaseSensitive(mesh, "width"), *oh = cJSON_GetObjectItemCaseSensitive(mesh, "height");
  if (!cJSON_IsObject(mesh) || !cJSON_IsNumber(ow) || !cJSON_IsNumber(oh))
    return err_set(err, MP_USAGE, "--vary mesh: the base chip has no numeric mesh.width and mesh.height");
  double old_w = ow->valuedouble, old_h = oh->valuedouble;
  cJSON_SetNumberValue(ow, (double)w);
  cJSON_SetNumberValue(oh, (double)h);
  cJSON *ports = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "dram"), "ports");
  cJSON *port = NULL;
  cJSON_ArrayForEach(port, ports) {
    cJSON *x = cJSON_GetArrayItem(port, 0), *y = cJSON_GetArrayItem(port, 1);
    if (cJSON_IsNumber(x) && old_w > 1) cJSON_SetNumberValue(x, round(x->valuedouble * (double)(w - 1) / (old_w - 1)));
    if (cJSON_IsNumber(x) && old_w <= 1) cJSON_SetNumberValue(x, 0);
    if (cJSON_IsNumber(y) && old_h > 1) cJSON_SetNumberValue(y, round(y->valuedouble * (double)(h - 1) / (old_h - 1)));
    if (cJSON_IsNumber(y) && old_h <= 1) cJSON_SetNumberValue(y, 0);
  }
  return MP_OK;
}

/* Sets the member at a dotted path to value (a number, or a string where the base has one). */
static mp_status set_path(cJSON *doc, const char *key, const char *value, mp_error *err) {
  cJSON *obj = doc;
  const char *seg = key;
  for (;;) {
    size_t n = strcspn(seg, ".");
    char name[208];
    snprintf(name, sizeof name, "%.*s", (int)n, seg);
    cJSON *item = cJSON_GetObjectItemCaseSensitive(obj, name);
    if (seg[n] == '.') {
      if (!cJSON_IsObject(item))
        return err_set(err, MP_USAGE, "--vary %s: the base chip has no object '%.*s'", key, (int)(seg + n - key), key);
      obj = item;
      seg += n + 1;
      continue;
    }
    /* An existing member is changed in place: cJSON's replace (1.7.15) keeps a replacement whose key it
     * could not copy, leaving a member without a name when memory runs out. */
    if (cJSON_IsString(item)) return cJSON_SetValuestring(item, value) ? MP_OK : err_nomem(err);
    if (item && !cJSON_IsNumber(item))
      return err_set(err, MP_USAGE, "--vary %s: the base chip's value there is not a number or a string", key);
    double v = 0;
    if (!parse_scaled(value, &v))
      return err_set(err, MP_USAGE, "--vary %s: '%s' is not a number (suffixes k M G T, Ki Mi Gi Ti)", key, value);
    if (item) {
      cJSON_SetNumberValue(item, v);
      return MP_OK;
    }
    cJSON *fresh = cJSON_CreateNumber(v);
    if (!fresh || !cJSON_AddItemToObject(obj, name, fresh)) {
      cJSON_Delete(fresh);
      return err_nomem(err);
    }
    return MP_OK;
  }
}

mp_status sweep_chip_variant(const cJSON *base, const char *file, const char *const *keys,
                             const char *const *values, int n, chip **out, mp_error *err) {
  *out = NULL;
  cJSON *doc = cJSON_Duplicate(base, 1);
  if (!doc) return err_nomem(err);
  mp_status st = MP_OK;
  for (int i = 0; i < n && st == MP_OK; i++)
    st = strcmp(keys[i], "mesh") == 0 ? set_mesh(doc, values[i], err) : set_path(doc, keys[i], values[i], err);
  if (st == MP_OK) {
    st = chip_from_json(doc, file, out, err);
    if (st != MP_OK && err && n > 0) { /* say which variant the checked file was */
      size_t used = strlen(err->msg);
      for (int i = 0; i < n && used + 4 < sizeof err->msg; i++) {
        snprintf(err->msg + used, sizeof err->msg - used, "%s%s=%s%s", i ? ", " : " (with ", keys[i], values[i],
                 i + 1 == n ? ")" : "");
        used = strlen(err->msg);
      }
    }
  }
  cJSON_Delete(doc);
  return st;
}

/* ---- the sweep -------------------------------------------------------------------------------- */

void sweep_free(sweep *s) {
  if (!s) return;
  for (int i = 0; i < s->n_axes; i++) sweep_axis_clear(&s->axes[i]);
  free(s->axes);
  for (int i = 0; i < s->n_variants; i++) {
    chip_free(s->variants[i].chip);
    free(s->variants[i].value);
  }
  free(s->variants);
  for (int i = 0; i < s->n_graphs; i++) graph_free(s->graphs[i]);
  free(s->graphs);
  for (int i = 0; i < s->n_methods; i++) free(s->methods[i]);
  free(s->methods);
  for (int i = 0; i < s->n_cases; i++) free(s->cases[i].key);
  free(s->cases);
  free(s->by_key);
  free(s->chip_file);
  free(s);
}

/* Whether a name can stand in a CSV field and a case key. */
static int plain_name(const char *s) { return *s && !strpbrk(s, ",;|\"\r\n"); }

/* Sorting the cases by key (for sweep.by_key); keys are unique, so the order is total. */
typedef struct keyed {
  const char *key;
  int index;
} keyed;
static int keyed_cmp(const void *a, const void *b) { return strcmp(((const keyed *)a)->key, ((const keyed *)b)->key); }

static char *case_key(const sweep *s, const sweep_variant *v, int g, int m) {
  size_t n = strlen(s->graphs[g]->name) + strlen(s->methods[m]) + 8;
  for (int a = 0; a < s->n_axes; a++) n += strlen(s->axes[a].key) + strlen(s->axes[a].values[v->value[a]]) + 2;
  char *key = malloc(n);
  if (!key) return NULL;
  size_t used = 0;
  if (s->n_axes == 0) used += (size_t)snprintf(key, n, "base");
  for (int a = 0; a < s->n_axes; a++)
    used += (size_t)snprintf(key + used, n - used, "%s%s=%s", a ? ";" : "", s->axes[a].key,
                             s->axes[a].values[v->value[a]]);
  snprintf(key + used, n - used, "|%s|%s", s->graphs[g]->name, s->methods[m]);
  return key;
}

mp_status sweep_new(const cJSON *base, const char *file, sweep_axis *axes, int n_axes, graph **graphs, int n_graphs,
                    const char *const *methods, int n_methods, const method_options *mo, const sim_options *so,
                    sweep **out, mp_error *err) {
  *out = NULL;
  mp_status st = MP_OK;
  sweep *s = calloc(1, sizeof *s);
  if (!s) {
    for (int i = 0; i < n_graphs; i++) graph_free(graphs[i]);
    for (int i = 0; i < n_axes; i++) sweep_axis_clear(&axes[i]);
    return err_nomem(err);
  }
  /* Take the graphs and axes first, so that every failure below frees them once. */
  s->graphs = calloc((size_t)(n_graphs > 0 ? n_graphs : 1), sizeof *s->graphs);
  s->axes = calloc((size_t)(n_axes > 0 ? n_axes : 1), sizeof *s->axes);
  if (!s->graphs || !s->axes) {
    for (int i = 0; i < n_graphs; i++) graph_free(graphs[i]);
    for (int i = 0; i < n_axes; i++) sweep_axis_clear(&axes[i]);
    st = err_nomem(err);
    goto cleanup;
  }
  for (int i = 0; i < n_graphs; i++) s->graphs[i] = graphs[i];
  s->n_graphs = n_graphs;
  for (int i = 0; i < n_axes; i++) {
    s->axes[i] = axes[i];
    memset(&axes[i], 0, sizeof axes[i]);
  }
  s->n_axes = n_axes;
  if (mo)
    s->method_opts = *mo;
  else
    method_options_default(&s->method_opts);
  if (so)
    s->sim_opts = *so;
  else
    sim_options_init(&s->sim_opts);
  if (!(s->chip_file = dup_str(file, strlen(file)))) {
    st = err_nomem(err);
    goto cleanup;
  }

  if (n_graphs < 1 || n_methods < 1) {
    st = err_set(err, MP_USAGE, "a sweep needs at least one graph and one method");
    goto cleanup;
  }
  if (n_axes > SWEEP_MAX_AXES) {
    st = err_set(err, MP_USAGE, "more than %d --vary keys", SWEEP_MAX_AXES);
    goto cleanup;
  }
  for (int i = 0; i < n_axes; i++)
    for (int j = 0; j < i; j++)
      if (strcmp(s->axes[i].key, s->axes[j].key) == 0) {
        st = err_set(err, MP_USAGE, "--vary %s given twice", s->axes[i].key);
        goto cleanup;
      }
  for (int i = 0; i < n_graphs; i++) {
    if (!plain_name(s->graphs[i]->name)) {
      st = err_at(err, MP_INPUT, s->graphs[i]->file, "name", "'%.80s' cannot be a CSV field (no , ; | \" or newline)",
                  s->graphs[i]->name);
      goto cleanup;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(s->graphs[i]->name, s->graphs[j]->name) == 0) {
        st = err_at(err, MP_USAGE, s->graphs[i]->file, "name", "graph '%s' is also %s: give each graph once",
                    s->graphs[i]->name, s->graphs[j]->file);
        goto cleanup;
      }
  }
  if (!(s->methods = calloc((size_t)n_methods, sizeof *s->methods))) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int i = 0; i < n_methods; i++) {
    if (!method_find(methods[i])) {
      char known[512] = "";
      for (int k = 0; k < method_count(); k++) {
        size_t used = strlen(known);
        snprintf(known + used, sizeof known - used, "%s%s", k ? ", " : "", method_at(k)->name);
      }
      st = err_set(err, MP_USAGE, "no method '%.100s' (known: %s)", methods[i], known);
      goto cleanup;
    }
    for (int j = 0; j < i; j++)
      if (strcmp(methods[i], methods[j]) == 0) {
        st = err_set(err, MP_USAGE, "method '%s' given twice", methods[i]);
        goto cleanup;
      }
    if (!(s->methods[i] = dup_str(methods[i], strlen(methods[i])))) {
      st = err_nomem(err);
      goto cleanup;
    }
    s->n_methods = i + 1;
  }

  /* Variants: the odometer over the axes, the last axis fastest. */
  long n_variants = 1;
  for (int a = 0; a < n_axes; a++) {
    n_variants *= s->axes[a].n_values;
    if (n_variants * n_graphs * n_methods > SWEEP_MAX_CASES) {
      st = err_set(err, MP_USAGE, "more than %d cases", SWEEP_MAX_CASES);
      goto cleanup;
    }
  }
  if (!(s->variants = calloc((size_t)n_variants, sizeof *s->variants))) {
    st = err_nomem(err);
    goto cleanup;
  }
  const char *keys[SWEEP_MAX_AXES], *vals[SWEEP_MAX_AXES];
  for (long v = 0; v < n_variants; v++) {
    sweep_variant *sv = &s->variants[v];
    s->n_variants = (int)v + 1;
    if (!(sv->value = calloc((size_t)(n_axes > 0 ? n_axes : 1), sizeof *sv->value))) {
      st = err_nomem(err);
      goto cleanup;
    }
    long rest = v;
    for (int a = n_axes - 1; a >= 0; a--) {
      sv->value[a] = (int)(rest % s->axes[a].n_values);
      rest /= s->axes[a].n_values;
      keys[a] = s->axes[a].key;
      vals[a] = s->axes[a].values[sv->value[a]];
    }
    if ((st = sweep_chip_variant(base, file, keys, vals, n_axes, &sv->chip, err)) != MP_OK) goto cleanup;
  }

  long n_cases = n_variants * n_graphs * n_methods;
  if (!(s->cases = calloc((size_t)n_cases, sizeof *s->cases)) ||
      !(s->by_key = malloc((size_t)n_cases * sizeof *s->by_key))) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (long i = 0; i < n_cases; i++) {
    sweep_case *c = &s->cases[i];
    c->method = (int)(i % n_methods);
    c->graph = (int)(i / n_methods % n_graphs);
    c->variant = (int)(i / n_methods / n_graphs);
    s->n_cases = (int)i + 1;
    if (!(c->key = case_key(s, &s->variants[c->variant], c->graph, c->method))) {
      st = err_nomem(err);
      goto cleanup;
    }
  }
  keyed *order = malloc((size_t)n_cases * sizeof *order);
  if (!order) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (long i = 0; i < n_cases; i++) order[i] = (keyed){s->cases[i].key, (int)i};
  qsort(order, (size_t)n_cases, sizeof *order, keyed_cmp);
  for (long i = 0; i < n_cases; i++) s->by_key[i] = order[i].index;
  free(order);
cleanup:
  if (st != MP_OK) {
    sweep_free(s);
    return st;
  }
  *out = s;
  return MP_OK;
}

int sweep_find_case(const sweep *s, const char *key) {
  int lo = 0, hi = s->n_cases - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    int c = strcmp(s->cases[s->by_key[mid]].key, key);
    if (c == 0) return s->by_key[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* ---- running one case ------------------------------------------------------------------------- */

/* sweep_run_one under method_options.train: the training model of the plan and one simulated mini-batch. */
static mp_status run_one_trained(const graph *g, const chip *c, const char *method, const method_options *mopt,
                                 const sim_options *sopt, double speed_s, sweep_row *row, mp_error *err) {
  plan *p = NULL;
  train *t = NULL;
  train_result *tr = NULL;
  sim *sm = NULL;
  sim_train_result res;
  memset(&res, 0, sizeof res);
  method_report rep;
  mp_status st = method_run(method, g, c, mopt, &p, &rep, err);
  if (st == MP_OK) st = train_new(g, mopt->train, &t, err);
  if (st == MP_OK) st = train_evaluate(t, c, p, &tr, err);
  if (st == MP_OK) st = sim_new(c, sopt, &sm, err);
  if (st == MP_OK) st = sim_train_evaluate(sm, t, p, &res, err);
  if (st != MP_OK) goto cleanup;
  row->feasible = tr->feasible;
  row->n_stages = p->n_stages;
  row->model_period_s = tr->period_s;
  row->batch = res.batch;
  row->samples_per_s = res.samples_per_s;
  row->latency_s = res.minibatch_s;
  row->bubble = res.bubble;
  row->sram_peak_bytes = res.sram_peak_bytes;
  row->total_sram_bytes = chip_total_sram(c);
  row->noc_bandwidth = c->noc_bandwidth;
  row->cores = c->n_cores;
  row->solve_s = rep.solve_s;
  row->plan_hash = plan_hash(p);
  if (speed_s > 0) { /* as for inference: the best of three windows (training runs are never cached) */
    for (int w = 0; w < 3 && st == MP_OK; w++) {
      double t0 = proc_now_s(), now = t0;
      long n = 0;
      while (st == MP_OK && (n < 1 || now - t0 < speed_s / 3)) {
        sim_train_result again;
        st = sim_train_evaluate(sm, t, p, &again, err);
        sim_train_result_clear(&again);
        n++;
        now = proc_now_s();
      }
      if (st == MP_OK && now > t0 && (double)n / (now - t0) > row->evals_per_s) row->evals_per_s = (double)n / (now - t0);
    }
  }
cleanup:
  sim_train_result_clear(&res);
  sim_free(sm);
  train_result_free(tr);
  train_free(t);
  plan_free(p);
  return st;
}

mp_status sweep_run_one(const graph *g, const chip *c, const char *method, const method_options *mo,
                        const sim_options *so, double speed_s, sweep_row *row, mp_error *err) {
  memset(row, 0, sizeof *row);
  method_options mopt;
  sim_options sopt;
  if (mo)
    mopt = *mo;
  else
    method_options_default(&mopt);
  if (so)
    sopt = *so;
  else
    sim_options_init(&sopt);
  if (speed_s > 0) sopt.cache_size = 0; /* every evaluation is then a real simulation */
  if (mopt.train) return run_one_trained(g, c, method, &mopt, &sopt, speed_s, row, err);
  plan *p = NULL;
  cost_result *cr = NULL;
  sim *sm = NULL;
  sim_result res;
  memset(&res, 0, sizeof res);
  method_report rep;
  mp_status st = method_run(method, g, c, &mopt, &p, &rep, err);
  if (st == MP_OK) st = cost_evaluate(g, c, p, &cr, err);
  if (st == MP_OK) st = sim_new(c, &sopt, &sm, err);
  if (st == MP_OK) st = sim_evaluate(sm, g, p, &res, err);
  if (st != MP_OK) goto cleanup;
  row->feasible = cr->feasible;
  row->n_stages = p->n_stages;
  row->model_period_s = cr->period_s;
  row->batch = res.batch;
  row->samples_per_s = res.samples_per_s;
  row->latency_s = res.latency_s;
  for (int i = 0; i < res.n_links; i++)
    if (res.links[i].bytes > 0 && (row->link[0] == '\0' || res.links[i].utilisation > row->link_utilisation)) {
      row->link_utilisation = res.links[i].utilisation;
      snprintf(row->link, sizeof row->link, "%s", res.links[i].name);
    }
  row->energy_j_per_sample = res.energy.j_per_sample;
  row->power_w = res.energy.power_w;
  row->samples_per_j = res.energy.samples_per_j;
  row->tops_per_w = res.energy.tops_per_w;
  row->total_sram_bytes = chip_total_sram(c);
  row->noc_bandwidth = c->noc_bandwidth;
  row->cores = c->n_cores;
  row->solve_s = rep.solve_s;
  row->plan_hash = plan_hash(p);
  if (speed_s > 0) { /* the best of three windows, so a moment of load elsewhere counts less */
    for (int w = 0; w < 3 && st == MP_OK; w++) {
      double t0 = proc_now_s(), t = t0;
      long n = 0;
      while (st == MP_OK && (n < 1 || t - t0 < speed_s / 3)) {
        sim_result again;
        memset(&again, 0, sizeof again);
        st = sim_evaluate(sm, g, p, &again, err);
        sim_result_clear(&again);
        n++;
        t = proc_now_s();
      }
      if (st == MP_OK && t > t0 && (double)n / (t - t0) > row->evals_per_s) row->evals_per_s = (double)n / (t - t0);
    }
  }
cleanup:
  sim_result_clear(&res);
  sim_free(sm);
  cost_result_free(cr);
  plan_free(p);
  return st;
}

mp_status sweep_run_case(const sweep *s, int i, sweep_row *row, mp_error *err) {
  if (i < 0 || i >= s->n_cases) return err_set(err, MP_USAGE, "no case %d (the sweep has %d)", i, s->n_cases);
  const sweep_case *c = &s->cases[i];
  return sweep_run_one(s->graphs[c->graph], s->variants[c->variant].chip, s->methods[c->method], &s->method_opts,
                       &s->sim_opts, 0, row, err);
}
