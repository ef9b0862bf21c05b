/* trace_parse: the strict reader of the trace text format (traces/README.md; trace.h).
 *
 * The reader rebuilds the groups from the header, assigns each action to the group that owns its actor
 * core, then runs trace_check.  Every problem is MP_INPUT "FILE: line N: what". */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "trace.h"

/* ---- reading ---------------------------------------------------------------------------------- */

#define MAX_TOKENS 40 /* the longest lines: a group with its energy counts (30 fields), a training group's train line (32) */

typedef struct reader {
  const char *file;
  const char *p, *end;
  int line;
  char *text; /* the current line, NUL-terminated, tokens cut in place */
  size_t cap;
  int n_tok;
  char *tok[MAX_TOKENS];
  char where[32];
} reader;

/* Reads the next line that is neither blank nor a comment; 0 at the end of the text. */
static int next_line(reader *r, mp_error *err, mp_status *st) {
  for (;;) {
    if (r->p >= r->end) return 0;
    const char *nl = memchr(r->p, '\n', (size_t)(r->end - r->p));
    const char *le = nl ? nl : r->end;
    r->line++;
    size_t n = (size_t)(le - r->p);
    if (n + 1 > r->cap) {
      char *s = realloc(r->text, n + 1);
      if (!s) {
        *st = err_nomem(err);
        return 0;
      }
      r->text = s;
      r->cap = n + 1;
    }
    memcpy(r->text, r->p, n);
    r->text[n] = '\0';
    r->p = nl ? nl + 1 : r->end;
    snprintf(r->where, sizeof r->where, "line %d", r->line);
    if (memchr(r->text, '\0', n)) {
      *st = err_at(err, MP_INPUT, r->file, r->where, "a NUL byte");
      return 0;
    }
    r->n_tok = 0;
    char *s = r->text;
    while (*s) {
      while (*s == ' ' || *s == '\t' || *s == '\r') *s++ = '\0';
      if (!*s) break;
      if (r->n_tok == 0 && *s == '#') break;
      if (r->n_tok == MAX_TOKENS) {
        *st = err_at(err, MP_INPUT, r->file, r->where, "more than %d fields", MAX_TOKENS);
        return 0;
      }
      r->tok[r->n_tok++] = s;
      while (*s && *s != ' ' && *s != '\t' && *s != '\r') s++;
    }
    if (r->n_tok > 0) return 1;
  }
}

static mp_status bad(reader *r, mp_error *err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static mp_status bad(reader *r, mp_error *err, const char *fmt, ...) {
  char msg[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return err_at(err, MP_INPUT, r->file, r->where, "%s", msg);
}

static int parse_long(const char *s, long lo, long hi, long *out) {
  if (!*s || (!isdigit((unsigned char)*s) && *s != '-')) return 0;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno || v < lo || v > hi) return 0;
  *out = v;
  return 1;
}

static int parse_u64(const char *s, uint64_t *out) {
  if (!isdigit((unsigned char)*s)) return 0;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno) return 0;
  *out = v;
  return 1;
}

/* A finite amount >= 0 and at most TRACE_MAX_AMOUNT (flops or bytes). */
static int parse_real(const char *s, double *out) {
  if (!*s || isspace((unsigned char)*s)) return 0;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || !isfinite(v) || v < 0 || v > TRACE_MAX_AMOUNT) return 0;
  *out = v;
  return 1;
}

static int hexval(int c) { return isdigit(c) ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; }

/* Decodes a %XX-escaped name in place ("%" alone is the empty name); 0 if malformed. */
static int decode_name(char *s) {
  if (strcmp(s, "%") == 0) {
    *s = '\0';
    return 1;
  }
  char *o = s;
  for (; *s; s++) {
    if (*s != '%') {
      *o++ = *s;
      continue;
    }
    int hi = hexval((unsigned char)s[1]), lo = hi >= 0 ? hexval((unsigned char)s[2]) : -1;
    if (hi < 0 || lo < 0) return 0;
    *o++ = (char)(hi * 16 + lo);
    s += 2;
  }
  *o = '\0';
  return 1;
}

static int parse_hash(const char *s, uint64_t *out) {
  if (strlen(s) != 16) return 0;
  uint64_t v = 0;
  for (int i = 0; i < 16; i++) {
    int c = (unsigned char)s[i];
    int d = isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return 0;
    v = v * 16 + (uint64_t)d;
  }
  *out = v;
  return 1;
}

/* "c5" or "c4-7": the first and the last core (as longs: the caller checks them against the chip
 * before any int arithmetic); 0 if malformed. */
static int parse_cores(const char *s, long *first, long *last) {
  if (s[0] != 'c' || !isdigit((unsigned char)s[1])) return 0;
  char *end;
  errno = 0;
  long a = strtol(s + 1, &end, 10), b = a;
  if (errno) return 0;
  if (*end == '-') {
    const char *q = end + 1;
    if (!isdigit((unsigned char)*q)) return 0;
    b = strtol(q, &end, 10);
    if (errno || b < a) return 0;
  }
  if (*end) return 0;
  *first = a;
  *last = b;
  return 1;
}

/* Expects the line to be "KEYWORD ..." with exactly n tokens. */
static mp_status expect(reader *r, const char *keyword, int n, const char *shape, mp_error *err) {
  if (strcmp(r->tok[0], keyword) != 0) return bad(r, err, "expected '%s' here, found '%s'", shape, r->tok[0]);
  if (r->n_tok != n) return bad(r, err, "expected '%s' (%d fields), found %d fields", shape, n, r->n_tok);
  return MP_OK;
}

#define NEED(cond, ...)               \
  do {                                \
    if (!(cond)) {                    \
      st = bad(&r, err, __VA_ARGS__); \
      goto cleanup;                   \
    }                                 \
  } while (0)

#define LINE(keyword, n, shape)                                                                                    \
  do {                                                                                                             \
    if (!next_line(&r, err, &st)) {                                                                                \
      if (st == MP_OK) st = err_at(err, MP_INPUT, file, r.where, "truncated: the file ends before '%s'", keyword); \
      goto cleanup;                                                                                                \
    }                                                                                                              \
    if ((st = expect(&r, keyword, n, shape, err)) != MP_OK) goto cleanup;                                          \
  } while (0)

static const char *const train_keys[] = {"fwd",    "bwd",    "recompute", "update", "fgather", "bgather", "params", "static",
                                         "stash",  "peak",   "naive",     "live",   "sendx",   "recvx",   "inplace"};

static const char *const group_keys[] = {"layers", "flops", "gather", "send",  "weights", "maxact", "sram",
                                         "dram",   "sends", "recvs",  "macs",  "ops",     "traffic"};

mp_status trace_parse(const char *file, const char *text, size_t len, trace **out, mp_error *err) {
  *out = NULL;
  reader r = {.file = file, .p = text, .end = text + len};
  snprintf(r.where, sizeof r.where, "line 1");
  trace *t = NULL;
  int *owner = NULL, *deps = NULL, n_deps = 0, cap_deps = 0, *arranged = NULL;
  mp_status st = MP_OK;
  long v;
  int steady = 0;

  if (!next_line(&r, err, &st)) {
    if (st == MP_OK) st = err_at(err, MP_INPUT, file, NULL, "empty: expected '%s %d'", TRACE_FORMAT, TRACE_VERSION);
    goto cleanup;
  }
  NEED(strcmp(r.tok[0], TRACE_FORMAT) == 0 && r.n_tok == 2, "not a meshpipe trace: expected '%s %d'", TRACE_FORMAT,
       TRACE_VERSION);
  NEED(parse_long(r.tok[1], 0, INT_MAX, &v) && v == TRACE_VERSION, "version %s is not supported (this reads %d)",
       r.tok[1], TRACE_VERSION);
  LINE("meshpipe", 2, "meshpipe VERSION");
  char version[64];
  snprintf(version, sizeof version, "%s", r.tok[1]);

  if (!next_line(&r, err, &st)) {
    if (st == MP_OK) st = err_at(err, MP_INPUT, file, r.where, "truncated: the file ends before 'graph'");
    goto cleanup;
  }
  if ((st = expect(&r, "graph", r.n_tok == 6 ? 6 : 4, "graph NAME HASH LAYERS [batch B]", err)) != MP_OK) goto cleanup;
  int batch = 1;
  if (r.n_tok == 6) {
    NEED(strcmp(r.tok[4], "batch") == 0 && parse_long(r.tok[5], 1, INT_MAX, &v),
         "expected 'graph NAME HASH LAYERS [batch B]' with B >= 1");
    batch = (int)v;
  }
  char graph_name[512];
  uint64_t graph_hash, plan_hash, chip_hash;
  NEED(decode_name(r.tok[1]), "malformed %%XX escape in the graph name");
  snprintf(graph_name, sizeof graph_name, "%s", r.tok[1]);
  NEED(parse_hash(r.tok[2], &graph_hash), "the graph hash must be 16 hex digits");
  NEED(parse_long(r.tok[3], 1, INT_MAX, &v), "the layer count must be a whole number >= 1");
  int graph_layers = (int)v;

  LINE("plan", 4, "plan HASH CORES ARRANGED");
  NEED(parse_hash(r.tok[1], &plan_hash), "the plan hash must be 16 hex digits");
  NEED(parse_long(r.tok[2], 1, CHIP_MAX_CORES, &v), "the plan's core count must be 1-%d", CHIP_MAX_CORES);
  int n_plan = (int)v;
  arranged = malloc((size_t)n_plan * sizeof *arranged);
  if (!arranged) {
    st = err_nomem(err);
    goto cleanup;
  }
  {
    int count = 0, ok = 1;
    for (char *q = r.tok[3]; ok;) {
      char *comma = strchr(q, ',');
      if (comma) *comma = '\0';
      if (count < n_plan && parse_long(q, 0, INT_MAX, &v))
        arranged[count] = (int)v;
      else
        ok = 0;
      count++;
      if (!comma) break;
      q = comma + 1;
    }
    NEED(ok && count == n_plan, "the arranged_core list must hold %d whole numbers >= 0 separated by ','", n_plan);
  }

  LINE("chip", 5, "chip NAME HASH WIDTH HEIGHT");
  char chip_name[512];
  NEED(decode_name(r.tok[1]), "malformed %%XX escape in the chip name");
  snprintf(chip_name, sizeof chip_name, "%s", r.tok[1]);
  long w = 0, h = 0;
  NEED(parse_hash(r.tok[2], &chip_hash) && parse_long(r.tok[3], 1, CHIP_MAX_CORES, &w) &&
           parse_long(r.tok[4], 1, CHIP_MAX_CORES, &h) && w * h <= CHIP_MAX_CORES,
       "expected a 16-digit hex hash and a mesh of at most %d cores", CHIP_MAX_CORES);
  NEED(n_plan == w * h, "the plan has %d entries but the %ldx%ld chip has %ld cores", n_plan, w, h, w * h);
  {
    int got = next_line(&r, err, &st);
    steady = got && r.n_tok == 3 && strcmp(r.tok[2], "steady") == 0;
    if (got && (st = expect(&r, "microbatches", steady ? 3 : 2, "microbatches M [steady]", err)) == MP_OK &&
        !parse_long(r.tok[1], 1, INT_MAX, &v))
      st = bad(&r, err, "expected 'microbatches M [steady]' with M >= 1");
    if (!got && st == MP_OK)
      st = err_at(err, MP_INPUT, file, r.where, "truncated: the file ends before 'microbatches'");
    if (st != MP_OK) goto cleanup;
  }
  int microbatches = (int)v;
  st = trace_new(version, graph_name, graph_hash, graph_layers, arranged, n_plan, plan_hash, chip_name, chip_hash, (int)w,
                 (int)h, microbatches, &t, err);
  if (st != MP_OK) goto cleanup;
  t->steady = steady;
  t->batch = batch;
  free(t->file);
  if (!(t->file = strdup(file))) {
    st = err_nomem(err);
    goto cleanup;
  }
  int n_cores = (int)(w * h);

  if (!next_line(&r, err, &st)) {
    if (st == MP_OK) st = err_at(err, MP_INPUT, file, r.where, "truncated: the file ends before 'groups'");
    goto cleanup;
  }
  if (strcmp(r.tok[0], "training") == 0) { /* a training trace: one mini-batch under a schedule */
    if ((st = expect(&r, "training", 5, "training SCHEDULE OPTIMIZER recompute R", err)) != MP_OK) goto cleanup;
    int sched = train_schedule_parse(r.tok[1]), optim = train_optimizer_parse(r.tok[2]);
    NEED(sched >= 0, "unknown schedule '%s' (expected gpipe, 1f1b or zb)", r.tok[1]);
    NEED(optim >= 0, "unknown optimizer '%s' (expected sgd, momentum or adam)", r.tok[2]);
    NEED(strcmp(r.tok[3], "recompute") == 0 && parse_long(r.tok[4], 0, 1, &v),
         "expected 'training SCHEDULE OPTIMIZER recompute R' with R 0 or 1");
    NEED(!steady, "a training trace holds one mini-batch: 'microbatches' takes no 'steady'");
    t->training = 1;
    train_options_default(&t->train);
    t->train.schedule = (train_schedule)sched;
    t->train.optimizer = (train_optimizer)optim;
    t->train.recompute = (int)v;
    t->train.microbatches = microbatches;
    LINE("groups", 2, "groups N");
  } else if ((st = expect(&r, "groups", 2, "groups N", err)) != MP_OK) {
    goto cleanup;
  }
  NEED(parse_long(r.tok[1], 1, n_cores, &v), "the group count must be 1-%d", n_cores);
  int n_groups = (int)v;
  owner = malloc((size_t)n_cores * sizeof *owner);
  if (!owner) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int k = 0; k < n_cores; k++) owner[k] = -1;
  for (int g = 0; g < n_groups; g++) {
    /* the energy counts (macs, ops, traffic) at the end are optional: traces recorded before them lack them */
    if (!next_line(&r, err, &st)) {
      if (st == MP_OK) st = err_at(err, MP_INPUT, file, r.where, "truncated: the file ends before 'group'");
      goto cleanup;
    }
    if ((st = expect(&r, "group", r.n_tok == 30 ? 30 : 24,
                     "group INDEX cFIRST-LAST layers L N flops F gather A send X weights W maxact Y sram S dram D "
                     "sends NS recvs NR [macs M ops O traffic T]",
                     err)) != MP_OK)
      goto cleanup;
    NEED(parse_long(r.tok[1], g, g, &v), "expected group %d here", g);
    long lo, hi;
    NEED(parse_cores(r.tok[2], &lo, &hi), "expected the group's cores as cFIRST or cFIRST-LAST, found '%s'",
         r.tok[2]);
    NEED(hi < n_cores, "core c%ld is beyond the %ldx%ld chip (%d cores, c0-c%d)", hi, w, h, n_cores, n_cores - 1);
    int first = (int)lo, n = (int)(hi - lo + 1);
    for (int k = first; k < first + n; k++) NEED(owner[k] < 0, "core c%d already belongs to group %d", k, owner[k]);
    trace_group fig = {0};
    long l0 = 0, nl = 0, ns = 0, nr = 0;
    double *reals[] = {&fig.flops, &fig.gather_bytes, &fig.send_bytes, &fig.weight_bytes, &fig.max_act_bytes};
    for (int k = 0; k < (r.n_tok == 30 ? 13 : 10); k++) {
      int at = k == 0 ? 3 : 2 * k + 4;
      NEED(strcmp(r.tok[at], group_keys[k]) == 0, "expected '%s' as field %d, found '%s'", group_keys[k], at + 1,
           r.tok[at]);
    }
    NEED(parse_long(r.tok[4], 0, graph_layers - 1, &l0) && parse_long(r.tok[5], 1, graph_layers - l0, &nl),
         "the layers must be a first layer and a count inside the graph's %d", graph_layers);
    for (int k = 0; k < 5; k++)
      NEED(parse_real(r.tok[7 + 2 * k], reals[k]), "'%s' must be a number from 0 to 2^64, found '%s'",
           group_keys[k + 1], r.tok[7 + 2 * k]);
    NEED(parse_u64(r.tok[17], &fig.sram_bytes) && parse_u64(r.tok[19], &fig.dram_bytes),
         "'sram' and 'dram' must be whole numbers of bytes");
    NEED(parse_long(r.tok[21], 0, INT_MAX, &ns) && parse_long(r.tok[23], 0, INT_MAX, &nr),
         "'sends' and 'recvs' must be whole numbers >= 0");
    double *extra[] = {&fig.macs, &fig.ops, &fig.traffic};
    for (int k = 0; r.n_tok == 30 && k < 3; k++)
      NEED(parse_real(r.tok[25 + 2 * k], extra[k]), "'%s' must be a number from 0 to 2^64, found '%s'", group_keys[10 + k],
           r.tok[25 + 2 * k]);
    fig.first_layer = (int)l0;
    fig.n_layers = (int)nl;
    fig.n_sends = (int)ns;
    fig.n_recvs = (int)nr;
    if (t->training) {
      LINE("train", 32,
           "train INDEX fwd F bwd B recompute R update U fgather A bgather G params P static S stash X peak K naive N "
           "live L sendx X recvx R inplace I");
      uint64_t *u[] = {&fig.train.fwd_flops,    &fig.train.bwd_flops,    &fig.train.recompute_flops,
                       &fig.train.update_flops, &fig.train.fwd_gather,   &fig.train.bwd_gather,
                       &fig.train.params,       &fig.train.static_bytes, &fig.train.stash_bytes,
                       &fig.train.peak_bytes,   &fig.train.naive_bytes,  &fig.train.live_bytes,
                       &fig.train.send_bytes,   &fig.train.recv_bytes};
      NEED(parse_long(r.tok[1], g, g, &v), "expected 'train %d' here, after group %d", g, g);
      for (int k = 0; k < 15; k++)
        NEED(strcmp(r.tok[2 + 2 * k], train_keys[k]) == 0, "expected '%s' as field %d, found '%s'", train_keys[k],
             3 + 2 * k, r.tok[2 + 2 * k]);
      for (int k = 0; k < 14; k++)
        NEED(parse_u64(r.tok[3 + 2 * k], u[k]), "'%s' must be a whole number from 0 to 2^64 - 1, found '%s'",
             train_keys[k], r.tok[3 + 2 * k]);
      NEED(parse_long(r.tok[31], 0, INT_MAX, &v), "'inplace' must be a whole number >= 0, found '%s'", r.tok[31]);
      fig.train.inplace = (int)v;
    }
    int *cores = malloc((size_t)n * sizeof *cores);
    if (!cores) {
      st = err_nomem(err);
      goto cleanup;
    }
    for (int k = 0; k < n; k++) {
      cores[k] = first + k;
      owner[first + k] = g;
    }
    st = trace_add_group(t, cores, n, &fig, NULL, err);
    free(cores);
    if (st != MP_OK) goto cleanup;
  }

  LINE("actions", 2, "actions N");
  /* The counts the header announces against what the rest of the file can hold: an action takes a
   * line of at least TRACE_MIN_ACTION_BYTES, and every micro-batch has at least one action. */
  long room = (long)((size_t)(r.end - r.p) / TRACE_MIN_ACTION_BYTES);
  NEED(parse_long(r.tok[1], 0, LONG_MAX, &v), "the action count must be a whole number >= 0");
  NEED(v <= room, "%ld actions announced, but the rest of the file (%zu bytes) holds at most %ld", v,
       (size_t)(r.end - r.p), room);
  NEED(v >= microbatches, "%ld actions for %d micro-batches: every micro-batch needs at least one", v, microbatches);
  long n_actions = v, seen = 0;
  for (;;) {
    if (!next_line(&r, err, &st)) {
      if (st == MP_OK)
        st = err_at(err, MP_INPUT, file, r.where, "truncated: the file ends after %ld of %ld actions, before 'end'",
                    seen, n_actions);
      goto cleanup;
    }
    if (strcmp(r.tok[0], "end") == 0) {
      NEED(r.n_tok == 1, "'end' takes no fields");
      NEED(seen == n_actions, "'end' after %ld actions, but the header announces %ld", seen, n_actions);
      break;
    }
    NEED(seen < n_actions, "more actions than the %ld the header announces", n_actions);
    NEED(r.n_tok >= 2, "expected 'cACTOR ACTION ARGS'");
    long lo, hi;
    NEED(parse_cores(r.tok[0], &lo, &hi), "expected an actor 'cN' or 'cN-M', found '%s'", r.tok[0]);
    NEED(hi < n_cores, "core c%ld is beyond the %ldx%ld chip (%d cores, c0-c%d)", hi, w, h, n_cores, n_cores - 1);
    int first = (int)lo, n = (int)(hi - lo + 1);
    int g = owner[first];
    NEED(g >= 0, "core c%d belongs to no group", first);
    trace_action a = {.core = first, .peer = -1, .peer_group = -1, .line = r.line};
    n_deps = 0;
    const char *act = r.tok[1], *name = NULL;
    long mb = 0;
    if (strcmp(act, "compute") == 0 || strcmp(act, "dram") == 0) {
      int is_compute = act[0] == 'c';
      const trace_group *G = &t->groups[g];
      if (is_compute)
        NEED(first == G->cores[0] && n == G->n_cores, "'compute' is done by a whole group: c%d-%d, not %s", G->cores[0],
             G->cores[G->n_cores - 1], r.tok[0]);
      else
        NEED(n == 1, "'dram' reads into one core, not %s", r.tok[0]);
      NEED(r.n_tok == (is_compute ? 7 : 5), "expected '%s %s'", r.tok[0],
           is_compute ? "compute FLOPS GATHER_BYTES MICROBATCH AFTER OP" : "dram BYTES MICROBATCH NAME");
      a.kind = is_compute ? TRACE_COMPUTE : TRACE_DRAM;
      if (is_compute)
        NEED(parse_real(r.tok[2], &a.flops), "the flops must be a number from 0 to 2^64, found '%s'", r.tok[2]);
      NEED(parse_real(r.tok[is_compute ? 3 : 2], &a.bytes), "the bytes must be a number from 0 to 2^64, found '%s'",
           r.tok[is_compute ? 3 : 2]);
      NEED(parse_long(r.tok[is_compute ? 4 : 3], 0, microbatches - 1, &mb), "the micro-batch must be 0-%d, found '%s'",
           microbatches - 1, r.tok[is_compute ? 4 : 3]);
      name = r.tok[is_compute ? 6 : 4];
      if (is_compute && strcmp(r.tok[5], "-") != 0) {
        for (char *q = r.tok[5];;) {
          char *comma = strchr(q, ',');
          if (comma) *comma = '\0';
          NEED(parse_long(q, 0, INT_MAX - 1, &v),
               "AFTER must be '-' or computes of the micro-batch as 0,1,...; found '%s'", q);
          if (n_deps == cap_deps) {
            int cap = 2 * cap_deps + 8, *nd = realloc(deps, (size_t)cap * sizeof *nd);
            if (!nd) {
              st = err_nomem(err);
              goto cleanup;
            }
            deps = nd;
            cap_deps = cap;
          }
          deps[n_deps++] = (int)v;
          if (!comma) break;
          q = comma + 1;
        }
      }
    } else if (strcmp(act, "send") == 0 || strcmp(act, "recv") == 0 || strcmp(act, "gsend") == 0 ||
               strcmp(act, "grecv") == 0) {
      int grad = act[0] == 'g', is_send = act[grad] == 's';
      NEED(n == 1, "'%s' is done by one core, not %s", act, r.tok[0]);
      NEED(r.n_tok == (is_send ? 6 : 5), "expected '%s %s%s'", r.tok[0], grad ? "g" : "",
           is_send ? "send cPEER BYTES MICROBATCH TENSOR" : "recv cPEER MICROBATCH TENSOR");
      long plo, phi;
      NEED(parse_cores(r.tok[2], &plo, &phi) && plo == phi, "expected the peer core as cN, found '%s'", r.tok[2]);
      NEED(plo < n_cores, "core c%ld is beyond the %ldx%ld chip (%d cores, c0-c%d)", plo, w, h, n_cores, n_cores - 1);
      int peer = (int)plo;
      NEED(owner[peer] >= 0, "core c%d belongs to no group", peer);
      a.kind = grad ? (is_send ? TRACE_GSEND : TRACE_GRECV) : is_send ? TRACE_SEND : TRACE_RECV;
      a.peer = peer;
      a.peer_group = owner[peer];
      if (is_send)
        NEED(parse_real(r.tok[3], &a.bytes), "the bytes must be a number from 0 to 2^64, found '%s'", r.tok[3]);
      NEED(parse_long(r.tok[is_send ? 4 : 3], 0, microbatches - 1, &mb), "the micro-batch must be 0-%d, found '%s'",
           microbatches - 1, r.tok[is_send ? 4 : 3]);
      name = r.tok[is_send ? 5 : 4];
    } else if (strcmp(act, "backward") == 0 || strcmp(act, "update") == 0) {
      int is_update = act[0] == 'u';
      const trace_group *G = &t->groups[g];
      NEED(first == G->cores[0] && n == G->n_cores, "'%s' is done by a whole group: c%d-%d, not %s", act,
           G->cores[0], G->cores[G->n_cores - 1], r.tok[0]);
      NEED(r.n_tok == (is_update ? 3 : 6), "expected '%s %s'", r.tok[0],
           is_update ? "update FLOPS" : "backward FLOPS GATHER_BYTES MICROBATCH OP");
      a.kind = is_update ? TRACE_UPDATE : TRACE_BACKWARD;
      NEED(parse_real(r.tok[2], &a.flops), "the flops must be a number from 0 to 2^64, found '%s'", r.tok[2]);
      if (is_update) {
        mb = microbatches - 1;
        name = "update";
      } else {
        NEED(parse_real(r.tok[3], &a.bytes), "the bytes must be a number from 0 to 2^64, found '%s'", r.tok[3]);
        NEED(parse_long(r.tok[4], 0, microbatches - 1, &mb), "the micro-batch must be 0-%d, found '%s'",
             microbatches - 1, r.tok[4]);
        name = r.tok[5];
      }
    } else if (strcmp(act, "wgrad") == 0) {
      const trace_group *G = &t->groups[g];
      NEED(first == G->cores[0] && n == G->n_cores, "'wgrad' is done by a whole group: c%d-%d, not %s",
           G->cores[0], G->cores[G->n_cores - 1], r.tok[0]);
      NEED(r.n_tok == 6, "expected '%s wgrad FLOPS WSTASH_BYTES MICROBATCH OP'", r.tok[0]);
      a.kind = TRACE_WGRAD;
      NEED(parse_real(r.tok[2], &a.flops), "the flops must be a number from 0 to 2^64, found '%s'", r.tok[2]);
      NEED(parse_real(r.tok[3], &a.bytes), "the bytes must be a number from 0 to 2^64, found '%s'", r.tok[3]);
      NEED(parse_long(r.tok[4], 0, microbatches - 1, &mb), "the micro-batch must be 0-%d, found '%s'",
           microbatches - 1, r.tok[4]);
      name = r.tok[5];
    } else {
      NEED(0, "unknown action '%s' (expected %s)", act,
           t->training ? "compute, send, recv, backward, gsend, grecv, wgrad or update"
                       : "compute, send, recv or dram");
    }
    a.microbatch = (int)mb;
    char *nm = (char *)name;
    if (a.kind != TRACE_UPDATE) /* its name is ours, not the file's */
      NEED(decode_name(nm), "malformed %%XX escape in the name '%s'", name);
    if ((st = trace_add_action(t, g, &a, nm, deps, n_deps, err)) != MP_OK) goto cleanup;
    seen++;
  }
  if (next_line(&r, err, &st)) NEED(0, "text after 'end'");
  if (st != MP_OK) goto cleanup;
  st = trace_check(t, n_cores, err);

cleanup:
  free(r.text);
  free(arranged);
  free(owner);
  free(deps);
  if (st != MP_OK) {
    trace_free(t);
    return st;
  }
  *out = t;
  return MP_OK;
}

mp_status trace_load(const char *path, trace **out, mp_error *err) {
  *out = NULL;
  char *text = NULL;
  size_t len = 0;
  mp_status st = fileio_read_all(path, &text, &len, err);
  if (st == MP_OK) st = trace_parse(path, text, len, out, err);
  free(text);
  return st;
}

