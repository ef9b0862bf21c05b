/* jsonio: see jsonio.h. */
#include "jsonio.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"

mp_status jsonio_parse(const char *file, const char *text, size_t len, cJSON **out, mp_error *err) {
  const char *end = NULL;
  *out = NULL;
  if (len > 0 && memchr(text, '\0', len))
    return err_at(err, MP_INPUT, file, NULL, "not a JSON file (contains a NUL byte)");
  errno = 0;
  cJSON *root = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  /* cJSON fails alike on bad syntax and on a failed allocation; only malloc's errno tells them apart */
  if (!root && errno == ENOMEM) return err_nomem(err);
  const char *stop = root ? end : cJSON_GetErrorPtr();
  if (root) { /* trailing content after the document is an error too */
    while (stop && (size_t)(stop - text) < len && strchr(" \t\r\n", *stop)) stop++;
    if (!stop || (size_t)(stop - text) >= len) {
      *out = root;
      return MP_OK;
    }
    cJSON_Delete(root);
  }
  if (!stop || stop < text || (size_t)(stop - text) > len) stop = text + len;
  int line = 1, col = 1;
  for (const char *p = text; p < stop; p++) {
    if (*p == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  size_t blank = 0; /* text need not end with a NUL: len bounds every look at it */
  while (blank < len && strchr(" \t\r\n", text[blank]) && text[blank]) blank++;
  if (blank == len) return err_at(err, MP_INPUT, file, NULL, "empty file, expected a JSON object");
  if (root) return err_at(err, MP_INPUT, file, NULL, "line %d, column %d: unexpected content after the JSON document", line, col);
  return err_at(err, MP_INPUT, file, NULL, "line %d, column %d: not valid JSON", line, col);
}

mp_status jsonio_load(const char *path, cJSON **out, mp_error *err) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  mp_status st = fileio_read_all(path, &text, &len, err);
  if (st == MP_OK) st = jsonio_parse(path, text, len, out, err);
  free(text);
  return st;
}

mp_status jsonio_save(const char *path, const cJSON *root, mp_error *err) {
  char *text = cJSON_Print(root);
  if (!text) return err_nomem(err);
  size_t n = strlen(text);
  char *withnl = realloc(text, n + 2);
  if (!withnl) {
    free(text);
    return err_nomem(err);
  }
  withnl[n] = '\n';
  withnl[n + 1] = '\0';
  mp_status st = fileio_write_atomic(path, withnl, n + 1, err);
  free(withnl);
  return st;
}

mp_status jsonio_print(const cJSON *root, mp_error *err) {
  char *text = cJSON_Print(root);
  if (!text) return err_nomem(err);
  int bad = fputs(text, stdout) < 0 || fputc('\n', stdout) == EOF || fflush(stdout) != 0;
  free(text);
  return bad ? err_set(err, MP_OUTPUT, "cannot write to standard output") : MP_OK;
}

/* "where.key", or "key" at the top level. */
static void member_path(char *buf, size_t n, const char *where, const char *key) {
  if (where && *where)
    snprintf(buf, n, "%s.%s", where, key);
  else
    snprintf(buf, n, "%s", key);
}

mp_status jsonio_known_keys(const jsonio_reader *r, const cJSON *obj, const char *const *keys) {
  for (const cJSON *m = obj->child; m; m = m->next) {
    int known = 0;
    for (const char *const *k = keys; *k && !known; k++) known = strcmp(*k, m->string) == 0;
    if (known) continue;
    char expected[512] = "";
    size_t used = 0;
    for (const char *const *k = keys; *k && used < sizeof expected; k++) {
      int n = snprintf(expected + used, sizeof expected - used, "%s%s", k == keys ? "" : ", ", *k);
      if (n > 0) used += (size_t)n;
    }
    char path[256];
    member_path(path, sizeof path, r->where, m->string);
    return err_at(r->err, MP_INPUT, r->file, path, "unknown key (expected one of: %s)", expected);
  }
  for (const cJSON *m = obj->child; m; m = m->next)
    for (const cJSON *k = obj->child; k != m; k = k->next)
      if (strcmp(k->string, m->string) == 0) {
        char path[256];
        member_path(path, sizeof path, r->where, m->string);
        return err_at(r->err, MP_INPUT, r->file, path, "given twice");
      }
  return MP_OK;
}

/* Finds key into *item (NULL when absent) and fills path with "where.key"; reports a missing
 * required member. */
static mp_status find_member(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags,
                             const cJSON **item, int *present, char *path, size_t n) {
  *item = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (present) *present = *item != NULL;
  member_path(path, n, r->where, key);
  if (!*item && (flags & JSONIO_REQUIRED)) return err_at(r->err, MP_INPUT, r->file, path, "missing (required)");
  return MP_OK;
}

mp_status jsonio_as_u64(const jsonio_reader *r, const cJSON *v, uint64_t *out) {
  if (!cJSON_IsNumber(v)) return err_at(r->err, MP_INPUT, r->file, r->where, "expected a whole number");
  double d = v->valuedouble;
  if (!isfinite(d)) return err_at(r->err, MP_INPUT, r->file, r->where, "number is not finite");
  if (d < 0) return err_at(r->err, MP_INPUT, r->file, r->where, "must not be negative (got %g)", d);
  if (d != floor(d)) return err_at(r->err, MP_INPUT, r->file, r->where, "expected a whole number (got %g)", d);
  if (d > JSONIO_MAX_EXACT) return err_at(r->err, MP_INPUT, r->file, r->where, "too large (%g > 2^53)", d);
  *out = (uint64_t)d;
  return MP_OK;
}

mp_status jsonio_as_int(const jsonio_reader *r, const cJSON *v, long lo, long hi, int *out) {
  if (!cJSON_IsNumber(v)) return err_at(r->err, MP_INPUT, r->file, r->where, "expected a whole number");
  double d = v->valuedouble;
  if (!isfinite(d)) return err_at(r->err, MP_INPUT, r->file, r->where, "number is not finite");
  if (d != floor(d)) return err_at(r->err, MP_INPUT, r->file, r->where, "expected a whole number (got %g)", d);
  if (d < (double)lo || d > (double)hi)
    return err_at(r->err, MP_INPUT, r->file, r->where, "must be between %ld and %ld (got %g)", lo, hi, d);
  *out = (int)d;
  return MP_OK;
}

mp_status jsonio_get_u64(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, uint64_t *out,
                         int *present) {
  const cJSON *v;
  char path[256];
  mp_status st = find_member(r, obj, key, flags, &v, present, path, sizeof path);
  if (st != MP_OK || !v) return st;
  jsonio_reader at = {r->file, path, r->err};
  return jsonio_as_u64(&at, v, out);
}

mp_status jsonio_get_int(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, long lo, long hi,
                         int *out, int *present) {
  const cJSON *v;
  char path[256];
  mp_status st = find_member(r, obj, key, flags, &v, present, path, sizeof path);
  if (st != MP_OK || !v) return st;
  jsonio_reader at = {r->file, path, r->err};
  return jsonio_as_int(&at, v, lo, hi, out);
}

mp_status jsonio_get_num(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, double lo,
                         double hi, double *out, int *present) {
  const cJSON *v;
  char path[256];
  mp_status st = find_member(r, obj, key, flags, &v, present, path, sizeof path);
  if (st != MP_OK || !v) return st;
  if (!cJSON_IsNumber(v)) return err_at(r->err, MP_INPUT, r->file, path, "expected a number");
  double d = v->valuedouble;
  if (!isfinite(d)) return err_at(r->err, MP_INPUT, r->file, path, "number is not finite");
  int lo_open = (flags & JSONIO_LO_OPEN) != 0;
  if (lo_open ? !(d > lo) : !(d >= lo))
    return err_at(r->err, MP_INPUT, r->file, path, "must be %s %g (got %g)", lo_open ? ">" : ">=", lo, d);
  if (d > hi) return err_at(r->err, MP_INPUT, r->file, path, "must be <= %g (got %g)", hi, d);
  *out = d;
  return MP_OK;
}

mp_status jsonio_get_str(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, const char **out,
                         int *present) {
  const cJSON *v;
  char path[256];
  mp_status st = find_member(r, obj, key, flags, &v, present, path, sizeof path);
  if (st != MP_OK || !v) return st;
  if (!cJSON_IsString(v) || !v->valuestring) return err_at(r->err, MP_INPUT, r->file, path, "expected a string");
  if (!*v->valuestring) return err_at(r->err, MP_INPUT, r->file, path, "must not be empty");
  *out = v->valuestring;
  return MP_OK;
}

static mp_status get_typed(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags,
                           const cJSON **out, int *present, int want_array) {
  const cJSON *v;
  char path[256];
  mp_status st = find_member(r, obj, key, flags, &v, present, path, sizeof path);
  if (st != MP_OK || !v) return st;
  if (want_array ? !cJSON_IsArray(v) : !cJSON_IsObject(v))
    return err_at(r->err, MP_INPUT, r->file, path, "expected %s", want_array ? "an array" : "an object");
  *out = v;
  return MP_OK;
}

mp_status jsonio_get_array(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags,
                           const cJSON **out, int *present) {
  return get_typed(r, obj, key, flags, out, present, 1);
}

mp_status jsonio_get_object(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags,
                            const cJSON **out, int *present) {
  return get_typed(r, obj, key, flags, out, present, 0);
}

cJSON *jsonio_add_u64(cJSON *obj, const char *key, uint64_t v) {
  return cJSON_AddNumberToObject(obj, key, (double)v);
}
