/* optimes: loading measured op times (CSV or JSON) for one graph.  See optimes.h. */
#define _GNU_SOURCE /* qsort_r */
#include "optimes.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonio.h"

/* Op indices of g sorted by name (qsort_r context: the graph), so that a file of as many lines as
 * ops costs n log n, not n^2 name comparisons. */
static int cmp_op(const void *a, const void *b, void *ctx) {
  const graph *g = ctx;
  return strcmp(g->ops[*(const int *)a].name, g->ops[*(const int *)b].name);
}

/* The layer named name, by bisection of by_name; -1 if none. */
static int find_op(const graph *g, const int *by_name, const char *name) {
  int lo = 0, hi = g->n_ops - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2, c = strcmp(g->ops[by_name[mid]].name, name);
    if (c == 0) return by_name[mid];
    if (c < 0)
      lo = mid + 1;
    else
      hi = mid - 1;
  }
  return -1;
}

/* An empty table for g: every layer keeps the model. */
static mp_status table_new(const char *file, const graph *g, optimes **out, mp_error *err) {
  optimes *t = calloc(1, sizeof *t);
  if (!t) return err_nomem(err);
  t->file = strdup(file);
  t->graph_hash = g->hash;
  t->n_layers = g->n_ops;
  t->seconds = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof *t->seconds);
  if (!t->file || !t->seconds) {
    optimes_free(t);
    return err_nomem(err);
  }
  for (int l = 0; l < g->n_ops; l++) t->seconds[l] = -1;
  *out = t;
  return MP_OK;
}

/* Records the time of op name; where labels the messages ("line 3", "\"conv1\""). */
static mp_status set_time(optimes *t, const graph *g, const int *by_name, const char *name, double seconds,
                          const char *where, mp_error *err) {
  int l = find_op(g, by_name, name);
  if (l < 0) return err_at(err, MP_INPUT, t->file, where, "no op '%s' in graph '%s'", name, g->name);
  if (isnan(seconds)) return err_at(err, MP_INPUT, t->file, where, "the time of op '%s' is NaN", name);
  if (isinf(seconds)) return err_at(err, MP_INPUT, t->file, where, "the time of op '%s' is infinite", name);
  if (seconds < 0)
    return err_at(err, MP_INPUT, t->file, where, "the time of op '%s' is negative (%g s)", name, seconds);
  if (seconds > OPTIMES_MAX_SECONDS)
    return err_at(err, MP_INPUT, t->file, where,
                  "the time of op '%s' is %.9g s, more than the %g s a measured op may take", name, seconds,
                  OPTIMES_MAX_SECONDS);
  if (t->seconds[l] >= 0) return err_at(err, MP_INPUT, t->file, where, "op '%s' is given a time twice", name);
  t->seconds[l] = seconds;
  t->n_overridden++;
  return MP_OK;
}

/* ---- CSV -------------------------------------------------------------------------------------- */

/* Trims blanks at both ends of [*b, *e). */
static void trim(const char **b, const char **e) {
  while (*b < *e && isspace((unsigned char)**b)) (*b)++;
  while (*e > *b && isspace((unsigned char)(*e)[-1])) (*e)--;
}

static int field_is(const char *b, const char *e, const char *word) {
  size_t n = strlen(word);
  return (size_t)(e - b) == n && strncmp(b, word, n) == 0;
}

/* The unit a header's second field names, as seconds per unit; 0 when it names none. */
static double unit_scale(const char *b, const char *e) {
  static const struct {
    const char *word;
    double scale;
  } units[] = {{"seconds", 1}, {"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
  for (size_t i = 0; i < sizeof units / sizeof *units; i++)
    if (field_is(b, e, units[i].word)) return units[i].scale;
  return 0;
}

/* Parses one data line [b, e) "op,time" (the name optionally in double quotes, "" for a quote); the
 * first line may be the header "op,UNIT", which sets *scale (seconds per unit of the times). */
static mp_status csv_line(optimes *t, const graph *g, const int *by_name, const char *b, const char *e, int line,
                          int *header_ok, double *scale, mp_error *err) {
  char where[32];
  snprintf(where, sizeof where, "line %d", line);
  char name[1024];
  size_t n = 0;
  const char *p = b;
  if (*p == '"') {
    for (p++;; p++) {
      if (p >= e) return err_at(err, MP_INPUT, t->file, where, "the quoted op name is not closed");
      if (*p == '"') {
        if (p + 1 < e && p[1] == '"') {
          p++;
        } else {
          p++;
          break;
        }
      }
      if (n + 1 >= sizeof name) return err_at(err, MP_INPUT, t->file, where, "the op name is too long");
      name[n++] = *p;
    }
    while (p < e && (*p == ' ' || *p == '\t')) p++;
    if (p >= e || *p != ',') return err_at(err, MP_INPUT, t->file, where, "expected ',' after the quoted op name");
  } else {
    const char *comma = memchr(b, ',', (size_t)(e - b));
    if (!comma) return err_at(err, MP_INPUT, t->file, where, "expected 'op,seconds', found no ','");
    const char *nb = b, *ne = comma;
    trim(&nb, &ne);
    if ((size_t)(ne - nb) + 1 > sizeof name) return err_at(err, MP_INPUT, t->file, where, "the op name is too long");
    n = (size_t)(ne - nb);
    memcpy(name, nb, n);
    p = comma;
  }
  name[n] = '\0';
  const char *vb = p + 1, *ve = e;
  trim(&vb, &ve);
  if (*header_ok && field_is(name, name + n, "op") && graph_find_op(g, "op") < 0) {
    *header_ok = 0;
    if (!(*scale = unit_scale(vb, ve)))
      return err_at(err, MP_INPUT, t->file, where, "the header's unit is '%.*s' (expected seconds, s, ms, us or ns)",
                    (int)(ve - vb > 32 ? 32 : ve - vb), vb);
    return MP_OK;
  }
  *header_ok = 0;
  if (n == 0) return err_at(err, MP_INPUT, t->file, where, "the op name is empty");
  if (memchr(vb, ',', (size_t)(ve - vb)))
    return err_at(err, MP_INPUT, t->file, where, "expected two fields 'op,seconds', found more");
  if (vb == ve) return err_at(err, MP_INPUT, t->file, where, "the time of op '%s' is missing", name);
  char num[64];
  if ((size_t)(ve - vb) >= sizeof num)
    return err_at(err, MP_INPUT, t->file, where, "the time of op '%s' is not a number", name);
  memcpy(num, vb, (size_t)(ve - vb));
  num[ve - vb] = '\0';
  char *end = NULL;
  errno = 0;
  double v = strtod(num, &end);
  if (end == num || *end != '\0')
    return err_at(err, MP_INPUT, t->file, where, "the time of op '%s' is not a number: '%s'", name, num);
  if (errno == ERANGE && fabs(v) > 1) v = v > 0 ? INFINITY : -INFINITY;
  return set_time(t, g, by_name, name, v * *scale, where, err);
}

static mp_status parse_csv(optimes *t, const graph *g, const int *by_name, const char *text, size_t len,
                           mp_error *err) {
  const char *p = text, *end = text + len;
  int line = 0, header_ok = 1;
  double scale = 1;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    const char *le = nl ? nl : end;
    line++;
    const char *b = p, *e = le;
    trim(&b, &e);
    if (b < e && *b != '#') {
      if (memchr(b, '\0', (size_t)(e - b))) return err_at(err, MP_INPUT, t->file, NULL, "line %d: a NUL byte", line);
      mp_status st = csv_line(t, g, by_name, b, e, line, &header_ok, &scale, err);
      if (st != MP_OK) return st;
    }
    p = nl ? nl + 1 : end;
  }
  return MP_OK;
}

/* ---- JSON ------------------------------------------------------------------------------------- */

static mp_status parse_json(optimes *t, const graph *g, const int *by_name, const char *text, size_t len,
                            mp_error *err) {
  cJSON *root = NULL;
  mp_status st = jsonio_parse(t->file, text, len, &root, err);
  if (st != MP_OK) return st;
  if (!cJSON_IsObject(root)) {
    st = err_at(err, MP_INPUT, t->file, NULL, "expected one JSON object {\"op\": seconds, ...}");
    goto cleanup;
  }
  for (const cJSON *m = root->child; m && st == MP_OK; m = m->next) {
    char where[160];
    snprintf(where, sizeof where, "\"%.150s\"", m->string);
    if (!cJSON_IsNumber(m))
      st = err_at(err, MP_INPUT, t->file, where, "the time of op '%s' must be a number of seconds", m->string);
    else
      st = set_time(t, g, by_name, m->string, m->valuedouble, where, err);
  }

cleanup:
  cJSON_Delete(root);
  return st;
}

/* ---- public ----------------------------------------------------------------------------------- */

mp_status optimes_parse(const char *file, const char *text, size_t len, int csv, const graph *g, optimes **out,
                        mp_error *err) {
  *out = NULL;
  if (!file) file = "op-times";
  if (csv < 0) {
    size_t i = 0;
    while (i < len && isspace((unsigned char)text[i])) i++;
    csv = !(i < len && text[i] == '{');
  }
  optimes *t = NULL;
  int *by_name = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof *by_name);
  if (!by_name) return err_nomem(err);
  for (int l = 0; l < g->n_ops; l++) by_name[l] = l;
  qsort_r(by_name, (size_t)g->n_ops, sizeof *by_name, cmp_op, (void *)g);
  mp_status st = table_new(file, g, &t, err);
  if (st == MP_OK) st = csv ? parse_csv(t, g, by_name, text, len, err) : parse_json(t, g, by_name, text, len, err);
  free(by_name);
  if (st == MP_OK && t->n_overridden == 0)
    st = err_at(err, MP_INPUT, file, NULL, "no op times in the file (expected %s)",
                csv ? "lines 'op,seconds'" : "{\"op\": seconds, ...}");
  if (st != MP_OK) {
    optimes_free(t);
    return st;
  }
  *out = t;
  return MP_OK;
}

mp_status optimes_load(const char *path, const graph *g, optimes **out, mp_error *err) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  mp_status st = fileio_read_all(path, &text, &len, err);
  if (st != MP_OK) return st;
  int csv = fileio_has_suffix(path, ".csv") ? 1 : fileio_has_suffix(path, ".json") ? 0 : -1;
  st = optimes_parse(path, text, len, csv, g, out, err);
  free(text);
  return st;
}

double optimes_flops(const optimes *t, const graph *g, double core_flops, int layer) {
  if (t && layer < t->n_layers && t->seconds[layer] >= 0) return t->seconds[layer] * core_flops;
  return (double)g->ops[layer].flops;
}

mp_status optimes_apply(const optimes *t, const graph *g, double core_flops, graph **out, mp_error *err) {
  *out = NULL;
  if (t->graph_hash != g->hash || t->n_layers != g->n_ops)
    return err_at(err, MP_INPUT, t->file, NULL, "the op times were loaded for another graph than '%s'", g->name);
  uint64_t *flops = malloc((size_t)(g->n_ops > 0 ? g->n_ops : 1) * sizeof *flops);
  unsigned char *measured = calloc((size_t)g->n_ops + 1, 1);
  if (!flops || !measured) {
    free(flops);
    free(measured);
    return err_nomem(err);
  }
  for (int l = 0; l < g->n_ops; l++) {
    double f = optimes_flops(t, g, core_flops, l);
    if (!(f < 1.8e19))
      return free(flops), free(measured),
             err_at(err, MP_INPUT, t->file, NULL, "the time of op '%s' is too large (%g s)", g->ops[l].name,
                    t->seconds[l]);
    measured[l] = t->seconds[l] >= 0;
    flops[l] = measured[l] ? (uint64_t)llround(f) : g->ops[l].flops;
  }
  mp_status st = graph_with_flops(g, flops, measured, out, err);
  free(flops);
  free(measured);
  return st;
}

void optimes_free(optimes *t) {
  if (!t) return;
  free(t->file);
  free(t->seconds);
  free(t);
}
