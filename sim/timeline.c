/* timeline: Chrome trace-event output of a simulated run and the format checker.  See timeline.h.
 *
 * Writing turns every event into slices on tracks (an op on each core of its group; a transfer on the
 * comm tracks of both ends and on every link of its XY route), spreads overlapping slices of one track
 * over lanes, gives each (track, lane) a tid, then sorts the begin/end, flow and counter records by
 * time (ties by tid, then by creation order, which keeps each lane's B, E, B, E in sequence). */
#include "timeline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fileio.h"
#include "jsonio.h"
#include "strbuf.h"

struct timeline {
  const chip *chip;
  char *title;
  timeline_event *ev; /* names owned */
  size_t n, cap;
};

mp_status timeline_new(const chip *c, const char *title, timeline **out, mp_error *err) {
  *out = NULL;
  timeline *t = calloc(1, sizeof *t);
  if (!t) return err_nomem(err);
  t->chip = c;
  t->title = strdup(title ? title : "meshpipe simulation");
  if (!t->title) {
    free(t);
    return err_nomem(err);
  }
  *out = t;
  return MP_OK;
}

void timeline_free(timeline *t) {
  if (!t) return;
  for (size_t i = 0; i < t->n; i++) free((char *)t->ev[i].name);
  free(t->ev);
  free(t->title);
  free(t);
}

size_t timeline_count(const timeline *t) { return t->n; }

static int core_ok(const timeline *t, int k) { return k >= 0 && k < t->chip->n_cores; }

mp_status timeline_add(timeline *t, const timeline_event *e, mp_error *err) {
  const char *what = e->kind == TIMELINE_EXEC ? "op" : e->kind == TIMELINE_TRANSFER ? "transfer" : "sram sample";
  if (!(e->start_s >= 0) || !isfinite(e->start_s) || (e->kind != TIMELINE_SRAM && !(e->end_s >= e->start_s)) ||
      (e->kind != TIMELINE_SRAM && !isfinite(e->end_s)))
    return err_set(err, MP_INPUT, "timeline: %s '%s': bad times %g .. %g s", what, e->name ? e->name : "", e->start_s,
                   e->end_s);
  switch (e->kind) {
  case TIMELINE_EXEC:
    if (e->n_cores < 1 || !core_ok(t, e->first_core) || !core_ok(t, e->first_core + e->n_cores - 1))
      return err_set(err, MP_INPUT, "timeline: op '%s': cores %d+%d are not on the chip", e->name ? e->name : "",
                     e->first_core, e->n_cores);
    break;
  case TIMELINE_TRANSFER:
    if (e->dram_port >= t->chip->n_dram || (e->to_dram && e->dram_port < 0) ||
        (!e->to_dram && !core_ok(t, e->dst_core)) || ((e->dram_port < 0 || e->to_dram) && !core_ok(t, e->src_core)))
      return err_set(err, MP_INPUT, "timeline: transfer '%s': ends %d -> %d (port %d) are not on the chip",
                     e->name ? e->name : "", e->src_core, e->dst_core, e->dram_port);
    break;
  case TIMELINE_SRAM:
    if (!core_ok(t, e->first_core))
      return err_set(err, MP_INPUT, "timeline: sram sample of core %d: not on the chip", e->first_core);
    break;
  default: return err_set(err, MP_INPUT, "timeline: unknown event kind %d", (int)e->kind);
  }
  if (t->n == t->cap) {
    size_t cap = t->cap ? 2 * t->cap : 256;
    timeline_event *ev = realloc(t->ev, cap * sizeof *ev);
    if (!ev) return err_nomem(err);
    t->ev = ev;
    t->cap = cap;
  }
  timeline_event copy = *e;
  copy.name = NULL;
  if (e->name && !(copy.name = strdup(e->name))) return err_nomem(err);
  t->ev[t->n++] = copy;
  return MP_OK;
}

/* ---- writing ---------------------------------------------------------------------------------- */

/* A JSON string literal of s ("" for NULL). */
static void put_str(strbuf *b, const char *s) {
  strbuf_printf(b, "\"");
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      strbuf_printf(b, "\\%c", ch);
    else if (ch < 0x20)
      strbuf_printf(b, "\\u%04x", ch);
    else
      strbuf_printf(b, "%c", ch);
  }
  strbuf_printf(b, "\"");
}

enum { PID_CORES = 1, PID_LINKS = 2 };
enum { ROLE_EXEC, ROLE_SEND, ROLE_RECV, ROLE_LINK, ROLE_DRAM };

/* A slice on a track before lanes are known.  key orders tracks inside a pid: 2k (ops of core k),
 * 2k + 1 (comm of core k); links 4k + d (d: 0 +x, 1 -x, 2 +y, 3 -y), 4n + p (DRAM port p). */
typedef struct slice {
  int pid, key, lane, tid;
  double t0, t1;
  size_t ev; /* index of the event */
  int role;
  long flow;  /* flow id for ROLE_SEND / ROLE_RECV of a Send, else -1 */
  size_t seq; /* creation order */
} slice;

typedef struct slices {
  slice *v;
  size_t n, cap;
} slices;

static int add_slice(slices *s, int pid, int key, double t0, double t1, size_t ev, int role, long flow) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? 2 * s->cap : 1024;
    slice *v = realloc(s->v, cap * sizeof *v);
    if (!v) return 0;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n] = (slice){pid, key, 0, 0, t0, t1, ev, role, flow, s->n};
  s->n++;
  return 1;
}

static int cmp_slice_track(const void *a, const void *b) {
  const slice *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
  if (x->t1 != y->t1) return x->t1 < y->t1 ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Link keys are the chip's link indices (chip.h). */
typedef struct key_list {
  int *keys, n;
} key_list;

static void add_key(void *ctx, int link) {
  key_list *k = ctx;
  k->keys[k->n++] = link;
}

/* One output record: its text is produced when written. */
typedef struct record {
  double ts;
  int tid;
  size_t seq;
  int kind;    /* 0 B, 1 E, 2 flow start, 3 flow finish, 4 counter */
  size_t item; /* slice index, or event index for counters */
} record;

static int cmp_record(const void *a, const void *b) {
  const record *x = a, *y = b;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void put_slice_args(strbuf *b, const timeline *t, const slice *s) {
  const timeline_event *e = &t->ev[s->ev];
  strbuf_printf(b, ",\"args\":{");
  if (s->role == ROLE_EXEC) {
    strbuf_printf(b, "\"op\":");
    put_str(b, e->name);
    strbuf_printf(b, ",\"microbatch\":%d,\"work_flop\":%.17g,\"group_cores\":\"%d-%d\"", e->microbatch, e->flops, e->first_core,
        e->first_core + e->n_cores - 1);
  } else {
    strbuf_printf(b, "\"tensor\":");
    put_str(b, e->name);
    strbuf_printf(b, ",\"size_bytes\":%llu,\"microbatch\":%d", (unsigned long long)e->bytes, e->microbatch);
    if (e->dram_port >= 0 && !e->to_dram)
      strbuf_printf(b, ",\"from\":\"dram%d\"", e->dram_port);
    else
      strbuf_printf(b, ",\"from_core\":%d,\"from_group\":%d", e->src_core, e->src_group);
    if (e->to_dram)
      strbuf_printf(b, ",\"to\":\"dram%d\"", e->dram_port);
    else
      strbuf_printf(b, ",\"to_core\":%d,\"to_group\":%d", e->dst_core, e->dst_group);
  }
  strbuf_printf(b, ",\"duration_us\":%.6f}", (s->t1 - s->t0) * 1e6);
}

static const char *slice_label(const slice *s) {
  switch (s->role) {
  case ROLE_SEND: return "Send ";
  case ROLE_RECV: return "Recv ";
  case ROLE_DRAM: return "DRAM read ";
  default: return "";
  }
}

static void put_record(strbuf *b, const timeline *t, const slices *sl, const record *r) {
  if (r->kind == 4) {
    const timeline_event *e = &t->ev[r->item];
    strbuf_printf(b,
        ",\n{\"ph\":\"C\",\"name\":\"SRAM core %d\",\"cat\":\"sram\",\"ts\":%.6f,\"pid\":%d,\"tid\":%d,"
        "\"args\":{\"sram_bytes\":%llu}}",
        e->first_core, r->ts * 1e6, PID_CORES, r->tid, (unsigned long long)e->bytes);
    return;
  }
  const slice *s = &sl->v[r->item];
  const timeline_event *e = &t->ev[s->ev];
  if (r->kind == 2 || r->kind == 3) {
    strbuf_printf(b, ",\n{\"ph\":\"%s\",\"name\":\"send\",\"cat\":\"send\",\"id\":%ld,\"ts\":%.6f,\"pid\":%d,\"tid\":%d%s}",
        r->kind == 2 ? "s" : "f", s->flow, r->ts * 1e6, s->pid, s->tid, r->kind == 3 ? ",\"bp\":\"e\"" : "");
    return;
  }
  const char *cat = s->role == ROLE_EXEC ? "op" : s->role == ROLE_LINK ? "noc" : "comm";
  strbuf_printf(b, ",\n{\"ph\":\"%s\",\"name\":", r->kind == 0 ? "B" : "E");
  if (*slice_label(s)) {
    char label[512];
    snprintf(label, sizeof label, "%s%s", slice_label(s), e->name ? e->name : "");
    put_str(b, label);
  } else {
    put_str(b, e->name ? e->name : "");
  }
  strbuf_printf(b, ",\"cat\":\"%s\",\"ts\":%.6f,\"pid\":%d,\"tid\":%d", cat, r->ts * 1e6, s->pid, s->tid);
  if (r->kind == 0) put_slice_args(b, t, s);
  strbuf_printf(b, "}");
}

mp_status timeline_to_string(const timeline *t, char **out, size_t *len, mp_error *err) {
  *out = NULL;
  const chip *c = t->chip;
  slices sl = {0};
  record *rec = NULL;
  int *keys = malloc((size_t)(c->width + c->height + 2) * sizeof *keys); /* a route's links */
  int *core_tid = calloc((size_t)c->n_cores, sizeof *core_tid);
  strbuf b = {0};
  mp_status st = MP_OK;
  if (!keys || !core_tid) goto oom;

  /* Slices. */
  long flows = 0;
  for (size_t i = 0; i < t->n; i++) {
    const timeline_event *e = &t->ev[i];
    if (e->kind == TIMELINE_EXEC) {
      for (int k = e->first_core; k < e->first_core + e->n_cores; k++)
        if (!add_slice(&sl, PID_CORES, 2 * k, e->start_s, e->end_s, i, ROLE_EXEC, -1)) goto oom;
    } else if (e->kind == TIMELINE_TRANSFER) {
      int from = e->dram_port >= 0 && !e->to_dram ? CHIP_PORT(e->dram_port) : e->src_core;
      int to = e->to_dram ? CHIP_PORT(e->dram_port) : e->dst_core;
      long flow = e->is_send && e->dram_port < 0 ? flows++ : -1;
      if (e->dram_port >= 0) { /* a DRAM stream: on the core's comm track */
        int core = e->to_dram ? e->src_core : e->dst_core;
        if (!add_slice(&sl, PID_CORES, 2 * core + 1, e->start_s, e->end_s, i, ROLE_DRAM, -1)) goto oom;
      } else if (!add_slice(&sl, PID_CORES, 2 * e->src_core + 1, e->start_s, e->end_s, i, ROLE_SEND, flow) ||
                 !add_slice(&sl, PID_CORES, 2 * e->dst_core + 1, e->start_s, e->end_s, i, ROLE_RECV, flow)) {
        goto oom;
      }
      key_list route = {keys, 0};
      chip_route(c, from, to, add_key, &route);
      for (int h = 0; h < route.n; h++)
        if (!add_slice(&sl, PID_LINKS, keys[h], e->start_s, e->end_s, i, ROLE_LINK, -1)) goto oom;
    }
  }

  /* Lanes, per track: the lowest lane free at the slice's start; then tids in (pid, key, lane) order. */
  qsort(sl.v, sl.n, sizeof *sl.v, cmp_slice_track);
  double *lane_end = NULL;
  size_t lane_cap = 0;
  for (size_t i = 0; i < sl.n;) {
    size_t j = i, lanes = 0;
    while (j < sl.n && sl.v[j].pid == sl.v[i].pid && sl.v[j].key == sl.v[i].key) j++;
    for (size_t k = i; k < j; k++) {
      size_t l = 0;
      while (l < lanes && lane_end[l] > sl.v[k].t0) l++;
      if (l == lanes) {
        if (lanes == lane_cap) {
          size_t cap = lane_cap ? 2 * lane_cap : 8;
          double *v = realloc(lane_end, cap * sizeof *v);
          if (!v) {
            free(lane_end);
            goto oom;
          }
          lane_end = v;
          lane_cap = cap;
        }
        lanes++;
      }
      lane_end[l] = sl.v[k].t1;
      sl.v[k].lane = (int)l;
    }
    i = j;
  }
  free(lane_end);
  /* Core tracks (lane 0 of key 2k) exist for every core with an op or an SRAM sample; number them
   * first so a core's counter sits on its track.  tids: cores 1.., then everything else. */
  for (size_t i = 0; i < sl.n; i++)
    if (sl.v[i].pid == PID_CORES && sl.v[i].key % 2 == 0) core_tid[sl.v[i].key / 2] = 1;
  for (size_t i = 0; i < t->n; i++)
    if (t->ev[i].kind == TIMELINE_SRAM) core_tid[t->ev[i].first_core] = 1;

  strbuf_printf(&b, "{\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"title\":");
  put_str(&b, t->title);
  strbuf_printf(&b, ",\"chip\":");
  put_str(&b, c->name);
  strbuf_printf(&b,
      ",\"time_unit\":\"ts and dur in microseconds of simulated time\",\"generator\":\"meshpipe %s\"},\n"
      "\"traceEvents\":[\n",
      MESHPIPE_VERSION);
  strbuf_printf(&b,
      "{\"ph\":\"M\",\"name\":\"process_name\",\"ts\":0,\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"cores\"}},\n"
      "{\"ph\":\"M\",\"name\":\"process_name\",\"ts\":0,\"pid\":%d,\"tid\":0,\"args\":{\"name\":\"NoC links\"}}",
      PID_CORES, PID_LINKS);
  int next_tid = 1;
  for (int k = 0; k < c->n_cores; k++)
    if (core_tid[k]) {
      core_tid[k] = next_tid++;
      strbuf_printf(&b,
          ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"core %d\"}}",
          PID_CORES, core_tid[k], k);
    }
  for (size_t i = 0; i < sl.n;) {
    size_t j = i;
    while (j < sl.n && sl.v[j].pid == sl.v[i].pid && sl.v[j].key == sl.v[i].key && sl.v[j].lane == sl.v[i].lane) j++;
    const slice *s = &sl.v[i];
    int tid;
    if (s->pid == PID_CORES && s->key % 2 == 0 && s->lane == 0) {
      tid = core_tid[s->key / 2];
    } else {
      tid = next_tid++;
      char name[96], lane[16] = "";
      if (s->lane > 0) snprintf(lane, sizeof lane, " #%d", s->lane + 1);
      if (s->pid == PID_CORES)
        snprintf(name, sizeof name, "core %d%s%s", s->key / 2, s->key % 2 ? " comm" : "", lane);
      else {
        char link[64];
        chip_link_name(c, s->key, link, sizeof link);
        snprintf(name, sizeof name, "%s%s", link, lane);
      }
      strbuf_printf(&b, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
          s->pid, tid, name);
    }
    for (size_t k = i; k < j; k++) sl.v[k].tid = tid;
    i = j;
  }

  /* Records: B and E per slice (flow start after the Send's B, flow finish before the Recv's E). */
  size_t n_rec = 0, cap = 2 * sl.n + 2 * (size_t)flows + t->n + 1;
  rec = malloc(cap * sizeof *rec);
  if (!rec) goto oom;
  size_t seq = 0;
  for (size_t i = 0; i < sl.n; i++) {
    const slice *s = &sl.v[i];
    rec[n_rec++] = (record){s->t0, s->tid, seq++, 0, i};
    if (s->role == ROLE_SEND && s->flow >= 0) rec[n_rec++] = (record){s->t0, s->tid, seq++, 2, i};
    if (s->role == ROLE_RECV && s->flow >= 0) rec[n_rec++] = (record){s->t1, s->tid, seq++, 3, i};
    rec[n_rec++] = (record){s->t1, s->tid, seq++, 1, i};
  }
  for (size_t i = 0; i < t->n; i++)
    if (t->ev[i].kind == TIMELINE_SRAM)
      rec[n_rec++] = (record){t->ev[i].start_s, core_tid[t->ev[i].first_core], seq++, 4, i};
  qsort(rec, n_rec, sizeof *rec, cmp_record);
  for (size_t i = 0; i < n_rec; i++) put_record(&b, t, &sl, &rec[i]);
  strbuf_printf(&b, "\n]}\n");
  if (b.oom) goto oom;
  *out = b.s;
  if (len) *len = b.len;
  b.s = NULL;
  goto cleanup;

oom:
  st = err_nomem(err);
cleanup:
  strbuf_clear(&b);
  free(rec);
  free(sl.v);
  free(keys);
  free(core_tid);
  return st;
}

mp_status timeline_write(const timeline *t, const char *path, mp_error *err) {
  char *text = NULL;
  size_t len = 0;
  mp_status st = timeline_to_string(t, &text, &len, err);
  if (st == MP_OK) st = fileio_write_atomic(path, text, len, err);
  free(text);
  return st;
}

/* ---- checking --------------------------------------------------------------------------------- */

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
