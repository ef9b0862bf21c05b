/* timeline: the checker of the Chrome trace-event format (timeline_validate).  See timeline.h. */
#include "timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "jsonio.h"

/* An event of a B/E track or of a flow, keyed by its track or flow id. */
typedef struct keyed {
  char key[160];
  size_t index;
} keyed;

static int cmp_keyed(const void *a, const void *b) {
  const keyed *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  if (c) return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* A pid, tid or flow id as text ("3", "\"gpu\""); 0 if it is neither a number nor a string. */
static int id_text(const cJSON *v, char *out, size_t n) {
  if (cJSON_IsNumber(v))
    snprintf(out, n, "%.17g", v->valuedouble);
  else if (cJSON_IsString(v))
    snprintf(out, n, "\"%.40s\"", v->valuestring);
  else
    return 0;
  return 1;
}

static const char *ph_of(const cJSON *ev) {
  const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph");
  return cJSON_IsString(ph) ? ph->valuestring : "";
}

static mp_status check_tracks(const char *file, cJSON **evs, keyed *k, size_t n, mp_error *err) {
  qsort(k, n, sizeof *k, cmp_keyed);
  size_t *stack = malloc((n ? n : 1) * sizeof *stack);
  if (!stack) return err_nomem(err);
  mp_status st = MP_OK;
  for (size_t i = 0; i < n && st == MP_OK;) {
    size_t j = i, depth = 0;
    while (j < n && strcmp(k[j].key, k[i].key) == 0) j++;
    for (size_t m = i; m < j && st == MP_OK; m++) {
      const cJSON *ev = evs[k[m].index];
      char where[48];
      snprintf(where, sizeof where, "traceEvents[%zu]", k[m].index);
      if (strcmp(ph_of(ev), "B") == 0) {
        stack[depth++] = k[m].index;
        continue;
      }
      if (depth == 0) {
        st = err_at(err, MP_INPUT, file, where, "'E' on track %s closes no open 'B'", k[m].key);
        break;
      }
      const cJSON *b = evs[stack[--depth]];
      const cJSON *bts = cJSON_GetObjectItemCaseSensitive(b, "ts"), *ets = cJSON_GetObjectItemCaseSensitive(ev, "ts");
      if (ets->valuedouble < bts->valuedouble)
        st = err_at(err, MP_INPUT, file, where, "'E' at ts %.17g ends before its 'B' (traceEvents[%zu], ts %.17g)",
                    ets->valuedouble, stack[depth], bts->valuedouble);
      const cJSON *bn = cJSON_GetObjectItemCaseSensitive(b, "name"), *en = cJSON_GetObjectItemCaseSensitive(ev, "name");
      if (st == MP_OK && cJSON_IsString(bn) && cJSON_IsString(en) && strcmp(bn->valuestring, en->valuestring) != 0)
        st = err_at(err, MP_INPUT, file, where, "'E' named '%s' closes 'B' named '%s' (traceEvents[%zu])",
                    en->valuestring, bn->valuestring, stack[depth]);
    }
    if (st == MP_OK && depth > 0) {
      char where[48];
      snprintf(where, sizeof where, "traceEvents[%zu]", stack[depth - 1]);
      st = err_at(err, MP_INPUT, file, where, "'B' on track %s is never closed by an 'E'", k[i].key);
    }
    i = j;
  }
  free(stack);
  return st;
}

static mp_status check_flows(const char *file, cJSON **evs, keyed *k, size_t n, mp_error *err) {
  qsort(k, n, sizeof *k, cmp_keyed);
  for (size_t i = 0; i < n;) {
    size_t j = i, starts = 0, finishes = 0, first = k[i].index;
    while (j < n && strcmp(k[j].key, k[i].key) == 0) {
      const char *ph = ph_of(evs[k[j].index]);
      char where[48];
      snprintf(where, sizeof where, "traceEvents[%zu]", k[j].index);
      if (strcmp(ph, "s") == 0 && ++starts > 1)
        return err_at(err, MP_INPUT, file, where, "flow %s starts twice", k[i].key);
      if (strcmp(ph, "f") == 0 && ++finishes > 1)
        return err_at(err, MP_INPUT, file, where, "flow %s finishes twice", k[i].key);
      j++;
    }
    char where[48];
    snprintf(where, sizeof where, "traceEvents[%zu]", first);
    if (!starts) return err_at(err, MP_INPUT, file, where, "flow %s has no start ('s')", k[i].key);
    if (!finishes) return err_at(err, MP_INPUT, file, where, "flow %s has no finish ('f')", k[i].key);
    i = j;
  }
  return MP_OK;
}

mp_status timeline_validate(const char *file, const char *text, size_t len, size_t *n_events, mp_error *err) {
  static const char *const phases = "B E X i I C b n e s t f P N O D M R c ( ) S T F p";
  cJSON *root = NULL;
  cJSON **evs = NULL;
  keyed *tracks = NULL, *flows = NULL;
  size_t n_tracks = 0, n_flows = 0;
  mp_status st = jsonio_parse(file, text, len, &root, err);
  if (st != MP_OK) return st;
  const cJSON *list = root;
  if (cJSON_IsObject(root)) {
    list = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    if (!cJSON_IsArray(list)) {
      st = err_at(err, MP_INPUT, file, "traceEvents", "missing or not an array");
      goto cleanup;
    }
  } else if (!cJSON_IsArray(root)) {
    st = err_at(err, MP_INPUT, file, NULL, "expected an object with traceEvents or an array of events");
    goto cleanup;
  }
  size_t n = (size_t)cJSON_GetArraySize(list);
  evs = malloc((n ? n : 1) * sizeof *evs);
  tracks = malloc((n ? n : 1) * sizeof *tracks);
  flows = malloc((n ? n : 1) * sizeof *flows);
  if (!evs || !tracks || !flows) {
    st = err_nomem(err);
    goto cleanup;
  }
  size_t i = 0;
  for (cJSON *ev = list->child; ev; ev = ev->next, i++) {
    evs[i] = ev;
    char where[48], pid[64], tid[64];
    snprintf(where, sizeof where, "traceEvents[%zu]", i);
    if (!cJSON_IsObject(ev)) {
      st = err_at(err, MP_INPUT, file, where, "an event must be an object");
      goto cleanup;
    }
    const cJSON *ph = cJSON_GetObjectItemCaseSensitive(ev, "ph"), *ts = cJSON_GetObjectItemCaseSensitive(ev, "ts");
    if (!cJSON_IsString(ph) || !ph->valuestring[0] || strchr(ph->valuestring, ' ') || strlen(ph->valuestring) > 1 ||
        !strstr(phases, ph->valuestring)) {
      st = err_at(err, MP_INPUT, file, where, "ph must be one of the format's phases (%s)", phases);
      goto cleanup;
    }
    if (!cJSON_IsNumber(ts) || !isfinite(ts->valuedouble)) {
      st = err_at(err, MP_INPUT, file, where, "ts must be a finite number (microseconds)");
      goto cleanup;
    }
    if (!id_text(cJSON_GetObjectItemCaseSensitive(ev, "pid"), pid, sizeof pid)) {
      st = err_at(err, MP_INPUT, file, where, "pid must be a number or a string");
      goto cleanup;
    }
    if (!id_text(cJSON_GetObjectItemCaseSensitive(ev, "tid"), tid, sizeof tid)) {
      st = err_at(err, MP_INPUT, file, where, "tid must be a number or a string");
      goto cleanup;
    }
    char p = ph->valuestring[0];
    if (p == 'X') {
      const cJSON *dur = cJSON_GetObjectItemCaseSensitive(ev, "dur");
      if (!cJSON_IsNumber(dur) || !(dur->valuedouble >= 0) || !isfinite(dur->valuedouble)) {
        st = err_at(err, MP_INPUT, file, where, "an 'X' event needs a finite dur >= 0");
        goto cleanup;
      }
    } else if (p == 'B' || p == 'E') {
      snprintf(tracks[n_tracks].key, sizeof tracks[n_tracks].key, "pid %s tid %s", pid, tid);
      tracks[n_tracks++].index = i;
    } else if (p == 's' || p == 't' || p == 'f') {
      const cJSON *id = cJSON_GetObjectItemCaseSensitive(ev, "id"), *cat = cJSON_GetObjectItemCaseSensitive(ev, "cat");
      char idt[64];
      if (!id_text(id, idt, sizeof idt)) {
        st = err_at(err, MP_INPUT, file, where, "a flow event needs an id (number or string)");
        goto cleanup;
      }
      snprintf(flows[n_flows].key, sizeof flows[n_flows].key, "%s (cat '%.24s')", idt,
               cJSON_IsString(cat) ? cat->valuestring : "");
      flows[n_flows++].index = i;
    } else if (p == 'C') {
      const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
      int ok = cJSON_IsObject(args) && args->child;
      for (const cJSON *a = ok ? args->child : NULL; a; a = a->next) ok = ok && cJSON_IsNumber(a);
      if (!ok) {
        st = err_at(err, MP_INPUT, file, where, "a counter ('C') needs args with numeric values");
        goto cleanup;
      }
    }
  }
  st = check_tracks(file, evs, tracks, n_tracks, err);
  if (st == MP_OK) st = check_flows(file, evs, flows, n_flows, err);
  if (st == MP_OK && n_events) *n_events = n;

cleanup:
  free(evs);
  free(tracks);
  free(flows);
  cJSON_Delete(root);
  return st;
}

mp_status timeline_validate_file(const char *path, size_t *n_events, mp_error *err) {
  char *text = NULL;
  size_t len = 0;
  mp_status st = fileio_read_all(path, &text, &len, err);
  if (st == MP_OK) st = timeline_validate(path, text, len, n_events, err);
  free(text);
  return st;
}
