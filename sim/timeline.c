/* timeline: Chrome trace-event output of a simulated run.  See timeline.h; the format checker is in
 * timeline_check.c.
 *
 * Writing turns every event into slices on tracks (an op, then its all-gather, on each core of its
 * group and the all-gather on the links of the group's chain; a transfer on the comm tracks of both
 * ends and on every link of its XY route), spreads overlapping slices of one track over lanes, gives
 * each (track, lane) one tid in (process, core or link, ops before comm, lane) order, works out every
 * core's SRAM occupancy as steps, then sorts the begin/end, flow and counter records by time (ties by
 * tid, then by creation order, which keeps each lane's B, E, B, E in sequence). */
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

void timeline_truncate(timeline *t, size_t n) {
  for (; t->n > n; t->n--) free((char *)t->ev[t->n - 1].name);
}

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
    if (e->gather_s != 0 && !(e->gather_s >= e->start_s && e->gather_s <= e->end_s))
      return err_set(err, MP_INPUT, "timeline: op '%s': its all-gather starts at %g s, outside %g .. %g s",
                     e->name ? e->name : "", e->gather_s, e->start_s, e->end_s);
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
enum { ROLE_EXEC, ROLE_GATHER, ROLE_SEND, ROLE_RECV, ROLE_LINK, ROLE_DRAM, ROLE_LINK_GATHER };

/* A slice on a track before lanes are known.  key orders tracks inside a pid: 2k (ops of core k),
 * 2k + 1 (comm of core k); links: their chip link index. */
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

static int cmp_slice_time(const slice *x, const slice *y) {
  if (x->t0 != y->t0) return x->t0 < y->t0 ? -1 : 1;
  if (x->t1 != y->t1) return x->t1 < y->t1 ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_slice_track(const void *a, const void *b) {
  const slice *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return cmp_slice_time(x, y);
}

/* Track, then lane: every lane of a track is one run of slices, so it gets one tid. */
static int cmp_slice_lane(const void *a, const void *b) {
  const slice *x = a, *y = b;
  if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  if (x->lane != y->lane) return x->lane < y->lane ? -1 : 1;
  return cmp_slice_time(x, y);
}

/* Link keys are the chip's link indices (chip.h). */
typedef struct key_list {
  int *keys, n;
} key_list;

static void add_key(void *ctx, int link) {
  key_list *k = ctx;
  k->keys[k->n++] = link;
}

/* One step of a core's SRAM occupancy: from ts on, the core holds `bytes` more (or fewer), or, for a
 * baseline (base >= 0, the index of a TIMELINE_SRAM event), that event's bytes besides what it holds. */
typedef struct step {
  double ts;
  int core;
  double bytes;
  long base;
  size_t seq;
} step;

static int cmp_step(const void *a, const void *b) {
  const step *x = a, *y = b;
  if (x->core != y->core) return x->core < y->core ? -1 : 1;
  if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* A counter sample: core holds bytes from ts on. */
typedef struct sample {
  double ts;
  int core;
  uint64_t bytes;
} sample;

/* One output record: its text is produced when written. */
typedef struct record {
  double ts;
  int tid;
  size_t seq;
  int kind;    /* 0 B, 1 E, 2 flow start, 3 flow finish, 4 counter */
  size_t item; /* slice index, or sample index for counters */
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
    strbuf_printf(b, ",\"microbatch\":%d,\"work_flop\":%.17g,\"group_cores\":\"%d-%d\"", e->microbatch, e->flops,
                  e->first_core, e->first_core + e->n_cores - 1);
  } else if (s->role == ROLE_GATHER || s->role == ROLE_LINK_GATHER) {
    strbuf_printf(b, "\"op\":");
    put_str(b, e->name);
    strbuf_printf(b, ",\"microbatch\":%d,\"gathered_bytes\":%llu,\"group_cores\":\"%d-%d\"", e->microbatch,
                  (unsigned long long)e->bytes, e->first_core, e->first_core + e->n_cores - 1);
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
  case ROLE_GATHER:
  case ROLE_LINK_GATHER: return "all-gather ";
  default: return "";
  }
}

static void put_record(strbuf *b, const timeline *t, const slices *sl, const sample *smp, const record *r) {
  if (r->kind == 4) {
    const sample *x = &smp[r->item];
    strbuf_printf(b,
        ",\n{\"ph\":\"C\",\"name\":\"SRAM core %d\",\"cat\":\"sram\",\"ts\":%.6f,\"pid\":%d,\"tid\":%d,"
        "\"args\":{\"sram_bytes\":%llu}}",
        x->core, r->ts * 1e6, PID_CORES, r->tid, (unsigned long long)x->bytes);
    return;
  }
  const slice *s = &sl->v[r->item];
  const timeline_event *e = &t->ev[s->ev];
  if (r->kind == 2 || r->kind == 3) {
    strbuf_printf(b, ",\n{\"ph\":\"%s\",\"name\":\"send\",\"cat\":\"send\",\"id\":%ld,\"ts\":%.6f,\"pid\":%d,\"tid\":%d%s}",
        r->kind == 2 ? "s" : "f", s->flow, r->ts * 1e6, s->pid, s->tid, r->kind == 3 ? ",\"bp\":\"e\"" : "");
    return;
  }
  const char *cat = s->role == ROLE_EXEC                                   ? "op"
                    : s->role == ROLE_GATHER || s->role == ROLE_LINK_GATHER ? "all-gather"
                    : s->role == ROLE_LINK                                  ? "noc"
                                                                            : "comm";
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

/* The slices of every event (see the comment at the top); 0 when out of memory. */
static int make_slices(const timeline *t, slices *sl, int *keys, long *flows) {
  const chip *c = t->chip;
  for (size_t i = 0; i < t->n; i++) {
    const timeline_event *e = &t->ev[i];
    if (e->kind == TIMELINE_EXEC) {
      int gathers = e->gather_s > e->start_s && e->gather_s < e->end_s;
      double op_end = gathers ? e->gather_s : e->end_s;
      for (int k = e->first_core; k < e->first_core + e->n_cores; k++)
        if (!add_slice(sl, PID_CORES, 2 * k, e->start_s, op_end, i, ROLE_EXEC, -1) ||
            (gathers && !add_slice(sl, PID_CORES, 2 * k, e->gather_s, e->end_s, i, ROLE_GATHER, -1)))
          return 0;
      for (int k = e->first_core; gathers && k + 1 < e->first_core + e->n_cores; k++) { /* the chain, both ways */
        key_list route = {keys, 0};
        chip_route(c, k, k + 1, add_key, &route);
        chip_route(c, k + 1, k, add_key, &route);
        for (int h = 0; h < route.n; h++)
          if (!add_slice(sl, PID_LINKS, keys[h], e->gather_s, e->end_s, i, ROLE_LINK_GATHER, -1)) return 0;
      }
    } else if (e->kind == TIMELINE_TRANSFER) {
      int from = e->dram_port >= 0 && !e->to_dram ? CHIP_PORT(e->dram_port) : e->src_core;
      int to = e->to_dram ? CHIP_PORT(e->dram_port) : e->dst_core;
      long flow = e->is_send && e->dram_port < 0 ? (*flows)++ : -1;
      if (e->dram_port >= 0) { /* a DRAM stream: on the core's comm track */
        int core = e->to_dram ? e->src_core : e->dst_core;
        if (!add_slice(sl, PID_CORES, 2 * core + 1, e->start_s, e->end_s, i, ROLE_DRAM, -1)) return 0;
      } else if (!add_slice(sl, PID_CORES, 2 * e->src_core + 1, e->start_s, e->end_s, i, ROLE_SEND, flow) ||
                 !add_slice(sl, PID_CORES, 2 * e->dst_core + 1, e->start_s, e->end_s, i, ROLE_RECV, flow)) {
        return 0;
      }
      key_list route = {keys, 0};
      chip_route(c, from, to, add_key, &route);
      for (int h = 0; h < route.n; h++)
        if (!add_slice(sl, PID_LINKS, keys[h], e->start_s, e->end_s, i, ROLE_LINK, -1)) return 0;
    }
  }
  return 1;
}

/* Lanes, per track: the lowest lane free at the slice's start (sl sorted by cmp_slice_track). */
static int make_lanes(slices *sl) {
  double *lane_end = NULL;
  size_t lane_cap = 0;
  for (size_t i = 0; i < sl->n;) {
    size_t j = i, lanes = 0;
    while (j < sl->n && sl->v[j].pid == sl->v[i].pid && sl->v[j].key == sl->v[i].key) j++;
    for (size_t k = i; k < j; k++) {
      size_t l = 0;
      while (l < lanes && lane_end[l] > sl->v[k].t0) l++;
      if (l == lanes) {
        if (lanes == lane_cap) {
          size_t cap = lane_cap ? 2 * lane_cap : 8;
          double *v = realloc(lane_end, cap * sizeof *v);
          if (!v) {
            free(lane_end);
            return 0;
          }
          lane_end = v;
          lane_cap = cap;
        }
        lanes++;
      }
      lane_end[l] = sl->v[k].t1;
      sl->v[k].lane = (int)l;
    }
    i = j;
  }
  free(lane_end);
  return 1;
}

/* Every core's SRAM occupancy as counter samples (see timeline.h): the latest TIMELINE_SRAM baseline
 * plus the activations its group's micro-batches hold, each from when it lands (an op's all-gathered
 * outputs at the op's end, a received tensor on arrival, a DRAM read as it starts) until that micro-batch
 * is done on the group (its last op and its last Send ended).  *out (owned) gets the samples in core,
 * then time order.  Returns 0 when out of memory. */
static int make_sram(const timeline *t, sample **out, size_t *n_out) {
  const chip *c = t->chip;
  int n_cores = c->n_cores, n_mb = 0;
  size_t n_steps = 1;
  *out = NULL;
  *n_out = 0;
  for (size_t i = 0; i < t->n; i++) {
    const timeline_event *e = &t->ev[i];
    if (e->microbatch + 1 > n_mb) n_mb = e->microbatch + 1;
    n_steps += e->kind == TIMELINE_EXEC ? 2 * (size_t)e->n_cores : 2;
  }
  int *group = malloc((size_t)n_cores * sizeof *group); /* a core's group: its first core, or -1 */
  double *done = calloc((size_t)n_cores * (size_t)(n_mb > 0 ? n_mb : 1), sizeof *done); /* [group][mb] */
  step *st = malloc(n_steps * sizeof *st);
  sample *smp = NULL;
  size_t n = 0, m = 0;
  if (!group || !done || !st) goto fail;
  for (int k = 0; k < n_cores; k++) group[k] = -1;
  for (size_t i = 0; i < t->n; i++) {
    const timeline_event *e = &t->ev[i];
    if (e->kind == TIMELINE_EXEC)
      for (int k = e->first_core; k < e->first_core + e->n_cores; k++) group[k] = e->first_core;
  }
#define DONE(g, mb) done[(size_t)(g) * (size_t)n_mb + (size_t)(mb)]
  for (size_t i = 0; i < t->n; i++) { /* when each micro-batch is done on each group */
    const timeline_event *e = &t->ev[i];
    int g = e->kind == TIMELINE_EXEC                                          ? e->first_core
            : e->kind == TIMELINE_TRANSFER && e->is_send && e->dram_port < 0 ? group[e->src_core]
                                                                               : -1;
    if (g >= 0 && e->microbatch >= 0 && e->end_s > DONE(g, e->microbatch)) DONE(g, e->microbatch) = e->end_s;
  }
  for (size_t i = 0; i < t->n; i++) { /* what lands where, and when it is released */
    const timeline_event *e = &t->ev[i];
    if (e->kind == TIMELINE_SRAM) {
      st[n] = (step){e->start_s, e->first_core, 0, (long)i, n};
      n++;
    } else if (e->microbatch < 0 || e->bytes == 0) {
      continue;
    } else if (e->kind == TIMELINE_EXEC) {
      for (int k = e->first_core; k < e->first_core + e->n_cores; k++) {
        st[n] = (step){e->end_s, k, (double)e->bytes, -1, n};
        n++;
        st[n] = (step){DONE(e->first_core, e->microbatch), k, -(double)e->bytes, -1, n};
        n++;
      }
    } else if (!e->to_dram && (e->is_send || e->dram_port >= 0) && group[e->dst_core] >= 0) {
      double from = e->dram_port >= 0 ? e->start_s : e->end_s, to = DONE(group[e->dst_core], e->microbatch);
      if (to > from) {
        st[n] = (step){from, e->dst_core, (double)e->bytes, -1, n};
        n++;
        st[n] = (step){to, e->dst_core, -(double)e->bytes, -1, n};
        n++;
      }
    }
  }
#undef DONE
  qsort(st, n, sizeof *st, cmp_step);
  smp = malloc((n + 1) * sizeof *smp);
  if (!smp) goto fail;
  for (size_t i = 0; i < n;) { /* per core, one sample per time at which the value changes */
    int k = st[i].core;
    double base = 0, held = 0;
    for (; i < n && st[i].core == k; i++) {
      if (st[i].base >= 0)
        base = (double)t->ev[st[i].base].bytes;
      else
        held += st[i].bytes;
      if (i + 1 < n && st[i + 1].core == k && st[i + 1].ts == st[i].ts) continue; /* not final at this time */
      double v = base + held;
      sample x = {st[i].ts, k, v > 0.5 ? (uint64_t)llround(v) : 0};
      if (m == 0 || smp[m - 1].core != k || smp[m - 1].bytes != x.bytes) smp[m++] = x;
    }
  }
  free(group);
  free(done);
  free(st);
  *out = smp;
  *n_out = m;
  return 1;
fail:
  free(group);
  free(done);
  free(st);
  free(smp);
  return 0;
}

mp_status timeline_to_string(const timeline *t, char **out, size_t *len, mp_error *err) {
  *out = NULL;
  const chip *c = t->chip;
  slices sl = {0};
  record *rec = NULL;
  sample *smp = NULL;
  size_t n_smp = 0;
  int *keys = malloc((size_t)(2 * (c->width + c->height) + 4) * sizeof *keys); /* a route's links */
  int *core_tid = calloc((size_t)c->n_cores, sizeof *core_tid);
  strbuf b = {0};
  mp_status st = MP_OK;
  long flows = 0;
  if (!keys || !core_tid || !make_slices(t, &sl, keys, &flows) || !make_sram(t, &smp, &n_smp)) goto oom;
  qsort(sl.v, sl.n, sizeof *sl.v, cmp_slice_track);
  if (!make_lanes(&sl)) goto oom;
  qsort(sl.v, sl.n, sizeof *sl.v, cmp_slice_lane);

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
  /* One tid per (track, lane), numbered in that order: core k's ops and their lanes, then its comm
   * track and lanes, then core k + 1; the links after the cores.  thread_sort_index keeps the viewer in
   * that order. */
  int next_tid = 1;
  for (size_t i = 0; i < sl.n;) {
    size_t j = i;
    while (j < sl.n && sl.v[j].pid == sl.v[i].pid && sl.v[j].key == sl.v[i].key && sl.v[j].lane == sl.v[i].lane) j++;
    const slice *s = &sl.v[i];
    int tid = next_tid++;
    char name[96], lane[16] = "";
    if (s->lane > 0) snprintf(lane, sizeof lane, " #%d", s->lane + 1);
    if (s->pid == PID_CORES) {
      snprintf(name, sizeof name, "core %d%s%s", s->key / 2, s->key % 2 ? " comm" : "", lane);
      if (s->key % 2 == 0 && s->lane == 0) core_tid[s->key / 2] = tid;
    } else {
      char link[64];
      chip_link_name(c, s->key, link, sizeof link);
      snprintf(name, sizeof name, "%s%s", link, lane);
    }
    strbuf_printf(&b, ",\n{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
        s->pid, tid, name);
    strbuf_printf(&b,
        ",\n{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"ts\":0,\"pid\":%d,\"tid\":%d,\"args\":{\"sort_index\":%d}}",
        s->pid, tid, tid);
    for (size_t k = i; k < j; k++) sl.v[k].tid = tid;
    i = j;
  }

  /* Records: B and E per slice (flow start after the Send's B, flow finish before the Recv's E), and
   * the counter samples (on their core's track). */
  size_t n_rec = 0, cap = 2 * sl.n + 2 * (size_t)flows + n_smp + 1;
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
  for (size_t i = 0; i < n_smp; i++) rec[n_rec++] = (record){smp[i].ts, core_tid[smp[i].core], seq++, 4, i};
  qsort(rec, n_rec, sizeof *rec, cmp_record);
  for (size_t i = 0; i < n_rec; i++) put_record(&b, t, &sl, smp, &rec[i]);
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
  free(smp);
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
