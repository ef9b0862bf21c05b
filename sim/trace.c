/* trace: time-independent traces — building, writing the text format, checking and placement on
 * another chip (the strict reader is trace_parse.c).  See trace.h; the format is documented in
 * traces/README.md.
 *
 * The text is written group by group, each group's actions in execution order.  trace_check: sends and receives are matched by (sending core, receiving core, tensor, micro-batch)
 * and a dry run (sends never wait, a receive waits until its send was issued) proves that replaying
 * the actions cannot deadlock — SimGrid aborts the process on a deadlock, so that is checked first. */
#include "trace.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "strbuf.h"

/* ---- names ------------------------------------------------------------------------------------ */

typedef struct name_index {
  int *slot; /* name index + 1, 0 for empty */
  size_t cap;
} name_index;

static uint64_t hash_str(const char *s) { return fileio_hash(FILEIO_HASH_INIT, s, strlen(s)); }

/* Index of name in t->names, adding it if new; -1 when out of memory. */
static int intern(trace *t, const char *name) {
  name_index *ix = t->index;
  if ((size_t)(t->n_names + 1) * 2 > ix->cap) {
    size_t cap = ix->cap ? ix->cap * 2 : 64;
    int *slot = calloc(cap, sizeof *slot);
    char **names = realloc(t->names, cap * sizeof *names);
    if (!slot || !names) {
      free(slot);
      if (names) t->names = names;
      return -1;
    }
    t->names = names;
    for (int i = 0; i < t->n_names; i++) {
      size_t h = (size_t)hash_str(t->names[i]) & (cap - 1);
      while (slot[h]) h = (h + 1) & (cap - 1);
      slot[h] = i + 1;
    }
    free(ix->slot);
    ix->slot = slot;
    ix->cap = cap;
  }
  size_t h = (size_t)hash_str(name) & (ix->cap - 1);
  while (ix->slot[h]) {
    if (strcmp(t->names[ix->slot[h] - 1], name) == 0) return ix->slot[h] - 1;
    h = (h + 1) & (ix->cap - 1);
  }
  char *copy = strdup(name);
  if (!copy) return -1;
  t->names[t->n_names] = copy;
  ix->slot[h] = ++t->n_names;
  return t->n_names - 1;
}

/* ---- building --------------------------------------------------------------------------------- */

void trace_free(trace *t) {
  if (!t) return;
  for (int g = 0; g < t->n_groups; g++) {
    free(t->groups[g].cores);
    free(t->groups[g].actions);
  }
  free(t->groups);
  for (int i = 0; i < t->n_names; i++) free(t->names[i]);
  free(t->names);
  free(t->deps);
  if (t->index) free(((name_index *)t->index)->slot);
  free(t->index);
  free(t->plan);
  free(t->file);
  free(t->version);
  free(t->graph_name);
  free(t->chip_name);
  free(t);
}

mp_status trace_new(const char *version, const char *graph_name, uint64_t graph_hash, int graph_layers,
                    const int *arranged, int n_plan, uint64_t plan_hash, const char *chip_name, uint64_t chip_hash,
                    int width, int height, int microbatches, trace **out, mp_error *err) {
  *out = NULL;
  trace *t = calloc(1, sizeof *t);
  if (!t) return err_nomem(err);
  t->file = strdup("trace");
  t->version = strdup(version);
  t->graph_name = strdup(graph_name);
  t->chip_name = strdup(chip_name);
  t->index = calloc(1, sizeof(name_index));
  t->plan = malloc((size_t)(n_plan > 0 ? n_plan : 1) * sizeof *t->plan);
  if (!t->file || !t->version || !t->graph_name || !t->chip_name || !t->index || !t->plan) {
    trace_free(t);
    return err_nomem(err);
  }
  if (n_plan > 0) memcpy(t->plan, arranged, (size_t)n_plan * sizeof *arranged);
  t->n_plan = n_plan;
  t->graph_hash = graph_hash;
  t->graph_layers = graph_layers;
  t->plan_hash = plan_hash;
  t->chip_hash = chip_hash;
  t->width = width;
  t->height = height;
  t->microbatches = microbatches;
  t->batch = 1;
  *out = t;
  return MP_OK;
}

mp_status trace_add_group(trace *t, const int *cores, int n_cores, const trace_group *figures, int *index,
                          mp_error *err) {
  if (n_cores < 1) return err_set(err, MP_INPUT, "%s: a group needs at least one core", t->file);
  trace_group *groups = realloc(t->groups, (size_t)(t->n_groups + 1) * sizeof *groups);
  if (!groups) return err_nomem(err);
  t->groups = groups;
  trace_group *g = &groups[t->n_groups];
  *g = *figures;
  g->n_actions = g->cap_actions = 0;
  g->actions = NULL;
  g->n_cores = n_cores;
  g->cores = malloc((size_t)n_cores * sizeof *g->cores);
  if (!g->cores) return err_nomem(err);
  memcpy(g->cores, cores, (size_t)n_cores * sizeof *cores);
  if (index) *index = t->n_groups;
  t->n_groups++;
  return MP_OK;
}

mp_status trace_add_action(trace *t, int gi, const trace_action *a, const char *name, const int *deps, int n_deps,
                           mp_error *err) {
  trace_group *g = &t->groups[gi];
  if (n_deps > 0 && t->n_deps + n_deps > t->cap_deps) {
    int cap = 2 * (t->n_deps + n_deps) + 64;
    int *v = realloc(t->deps, (size_t)cap * sizeof *v);
    if (!v) return err_nomem(err);
    t->deps = v;
    t->cap_deps = cap;
  }
  if (g->n_actions == g->cap_actions) {
    int cap = g->cap_actions ? 2 * g->cap_actions : 16;
    trace_action *v = realloc(g->actions, (size_t)cap * sizeof *v);
    if (!v) return err_nomem(err);
    g->actions = v;
    g->cap_actions = cap;
  }
  trace_action copy = *a;
  copy.name = intern(t, name ? name : "");
  if (copy.name < 0) return err_nomem(err);
  copy.n_deps = n_deps > 0 ? n_deps : 0;
  copy.first_dep = t->n_deps;
  if (n_deps > 0) memcpy(t->deps + t->n_deps, deps, (size_t)n_deps * sizeof *deps);
  t->n_deps += copy.n_deps;
  g->actions[g->n_actions++] = copy;
  return MP_OK;
}

const char *trace_kind_name(trace_kind k) {
  static const char *const names[] = {"compute", "send",  "recv",   "dram", "backward",
                                      "gsend",   "grecv", "update", "wgrad"};
  return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

long trace_count_actions(const trace *t) {
  long n = 0;
  for (int g = 0; g < t->n_groups; g++) n += t->groups[g].n_actions;
  return n;
}

/* ---- checking --------------------------------------------------------------------------------- */

/* "line N: " for a read action, "" for one built in memory. */
static const char *at_line(const trace_action *a, char *buf, size_t n) {
  if (a->line > 0)
    snprintf(buf, n, "line %d", a->line);
  else
    buf[0] = '\0';
  return buf;
}

/* A send or a recv, keyed for matching. */
typedef struct comm_key {
  int grad; /* 1: a gradient (gsend / grecv) */
  int from, to, name, mb;
  int group, action;
} comm_key;

static int cmp_comm(const void *a, const void *b) {
  const comm_key *x = a, *y = b;
  if (x->grad != y->grad) return x->grad < y->grad ? -1 : 1;
  if (x->from != y->from) return x->from < y->from ? -1 : 1;
  if (x->to != y->to) return x->to < y->to ? -1 : 1;
  if (x->name != y->name) return x->name < y->name ? -1 : 1;
  if (x->mb != y->mb) return x->mb < y->mb ? -1 : 1;
  if (x->group != y->group) return x->group < y->group ? -1 : 1;
  return x->action < y->action ? -1 : x->action > y->action;
}

static int same_comm(const comm_key *x, const comm_key *y) {
  return x->grad == y->grad && x->from == y->from && x->to == y->to && x->name == y->name && x->mb == y->mb;
}

mp_status trace_check(const trace *t, int n_cores, mp_error *err) {
  const char *f = t->file;
  char where[32];
  int *owner = malloc((size_t)(n_cores > 0 ? n_cores : 1) * sizeof *owner);
  long n_actions = trace_count_actions(t), n_sends = 0, n_recvs = 0;
  comm_key *sends = NULL, *recvs = NULL;
  int *computes = NULL;  /* per micro-batch: computes of the current group so far */
  long **send_of = NULL; /* per group and recv action: global position of its send */
  int *pos = NULL;
  long *base = NULL;
  mp_status st = MP_OK;
  if (!owner) return err_nomem(err);
  for (int k = 0; k < n_cores; k++) owner[k] = -1;
  if (t->microbatches < 1) {
    st = err_at(err, MP_INPUT, f, "microbatches", "must be >= 1 (got %d)", t->microbatches);
    goto cleanup;
  }
  for (int g = 0; g < t->n_groups; g++)
    for (int i = 0; i < t->groups[g].n_cores; i++) {
      int k = t->groups[g].cores[i];
      if (k < 0 || k >= n_cores) {
        st = err_at(err, MP_INPUT, f, NULL, "group %d: core c%d is beyond the chip (%d cores, c0-c%d)", g, k, n_cores,
                    n_cores - 1);
        goto cleanup;
      }
      if (owner[k] >= 0) {
        st = err_at(err, MP_INPUT, f, NULL, "group %d: core c%d already belongs to group %d", g, k, owner[k]);
        goto cleanup;
      }
      owner[k] = g;
    }
  sends = malloc((size_t)(n_actions + 1) * sizeof *sends);
  recvs = malloc((size_t)(n_actions + 1) * sizeof *recvs);
  computes = calloc((size_t)t->microbatches, sizeof *computes);
  if (!sends || !recvs || !computes) goto oom;
  for (int g = 0; g < t->n_groups; g++) {
    const trace_group *G = &t->groups[g];
    if (t->training && G->n_actions == 0) {
      st = err_at(err, MP_INPUT, f, NULL, "group %d has no actions: a training group ends with its 'update'", g);
      goto cleanup;
    }
    for (int i = 0; i < G->n_actions; i++) /* only the micro-batches it acts in: M x groups could be huge */
      if (G->actions[i].microbatch >= 0 && G->actions[i].microbatch < t->microbatches)
        computes[G->actions[i].microbatch] = 0;
    for (int i = 0; i < G->n_actions; i++) {
      const trace_action *a = &G->actions[i];
      at_line(a, where, sizeof where);
      if (a->microbatch < 0 || a->microbatch >= t->microbatches) {
        st = err_at(err, MP_INPUT, f, where, "micro-batch %d is outside 0-%d", a->microbatch, t->microbatches - 1);
        goto cleanup;
      }
      if (!(a->flops >= 0 && a->flops <= TRACE_MAX_AMOUNT) || !(a->bytes >= 0 && a->bytes <= TRACE_MAX_AMOUNT)) {
        st = err_at(err, MP_INPUT, f, where, "flops and bytes must be numbers from 0 to 2^64");
        goto cleanup;
      }
      if (a->kind == TRACE_DRAM && (a->core < 0 || a->core >= n_cores || owner[a->core] != g)) {
        st = err_at(err, MP_INPUT, f, where, "core c%d is not in the acting group %d", a->core, g);
        goto cleanup;
      }
      if (a->kind == TRACE_COMPUTE) {
        for (int d = 0; d < a->n_deps; d++) {
          int dep = t->deps[a->first_dep + d];
          if (dep < 0 || dep >= computes[a->microbatch]) {
            st = err_at(err, MP_INPUT, f, where,
                        "compute %d of group %d in micro-batch %d cannot come after compute %d: only %d precede it",
                        computes[a->microbatch], g, a->microbatch, dep, computes[a->microbatch]);
            goto cleanup;
          }
        }
        computes[a->microbatch]++;
      }
      int train_only = a->kind == TRACE_BACKWARD || a->kind == TRACE_GSEND || a->kind == TRACE_GRECV ||
                       a->kind == TRACE_UPDATE || a->kind == TRACE_WGRAD;
      if (train_only && !t->training) {
        st = err_at(err, MP_INPUT, f, where, "'%s' is an action of training traces (which have a 'training' line)",
                    trace_kind_name(a->kind));
        goto cleanup;
      }
      if (a->kind == TRACE_WGRAD && t->train.schedule != TRAIN_ZB) {
        st = err_at(err, MP_INPUT, f, where,
                    "'wgrad' is an action of zb traces: under %s a backward includes its weight gradients",
                    train_schedule_name(t->train.schedule));
        goto cleanup;
      }
      if (a->kind == TRACE_DRAM && t->training) {
        st = err_at(err, MP_INPUT, f, where,
                    "a training trace has no 'dram' actions: its replay streams what the chip's SRAM cannot hold");
        goto cleanup;
      }
      if ((a->kind == TRACE_UPDATE) != (t->training && i == G->n_actions - 1)) {
        st = err_at(err, MP_INPUT, f, where,
                    a->kind == TRACE_UPDATE ? "group %d updates before its last action: the update ends a mini-batch"
                                            : "group %d ends without its 'update': the update ends a mini-batch",
                    g);
        goto cleanup;
      }
      if (a->kind == TRACE_COMPUTE || a->kind == TRACE_DRAM || a->kind == TRACE_BACKWARD || a->kind == TRACE_UPDATE ||
          a->kind == TRACE_WGRAD)
        continue;
      if (a->kind != TRACE_SEND && a->kind != TRACE_RECV && a->kind != TRACE_GSEND && a->kind != TRACE_GRECV) {
        st = err_at(err, MP_INPUT, f, where, "unknown action kind %d", (int)a->kind);
        goto cleanup;
      }
      int sending = a->kind == TRACE_SEND || a->kind == TRACE_GSEND;
      int self = a->core, peer = a->peer;
      if (self < 0 || self >= n_cores || peer < 0 || peer >= n_cores) {
        st = err_at(err, MP_INPUT, f, where, "core c%d is beyond the chip (%d cores, c0-c%d)",
                    self < 0 || self >= n_cores ? self : peer, n_cores, n_cores - 1);
        goto cleanup;
      }
      if (owner[self] != g) {
        st = err_at(err, MP_INPUT, f, where, "core c%d is not in the acting group %d", self, g);
        goto cleanup;
      }
      if (owner[peer] < 0 || owner[peer] == g) {
        st = err_at(err, MP_INPUT, f, where, "c%d %s c%d: the peer must be a core of another group", self,
                    sending ? "sends to" : "receives from", peer);
        goto cleanup;
      }
      comm_key key = {a->kind == TRACE_GSEND || a->kind == TRACE_GRECV,
                      sending ? self : peer,
                      sending ? peer : self,
                      a->name,
                      a->microbatch,
                      g,
                      i};
      if (sending)
        sends[n_sends++] = key;
      else
        recvs[n_recvs++] = key;
    }
  }

  /* Matching: walk both sorted lists together. */
  qsort(sends, (size_t)n_sends, sizeof *sends, cmp_comm);
  qsort(recvs, (size_t)n_recvs, sizeof *recvs, cmp_comm);
  base = calloc((size_t)t->n_groups + 1, sizeof *base);
  send_of = calloc((size_t)t->n_groups + 1, sizeof *send_of);
  if (!base || !send_of) goto oom;
  for (int g = 0; g < t->n_groups; g++) {
    base[g + 1] = base[g] + t->groups[g].n_actions;
    send_of[g] = malloc((size_t)(t->groups[g].n_actions + 1) * sizeof **send_of);
    if (!send_of[g]) goto oom;
  }
  long i = 0, j = 0;
  while (i < n_sends || j < n_recvs) {
    int c = i >= n_sends ? 1 : j >= n_recvs ? -1 : cmp_comm(&sends[i], &recvs[j]);
    if (i < n_sends && j < n_recvs && same_comm(&sends[i], &recvs[j])) c = 0;
    if (c == 0 && i + 1 < n_sends && same_comm(&sends[i], &sends[i + 1])) {
      const trace_action *a = &t->groups[sends[i + 1].group].actions[sends[i + 1].action];
      const trace_action *first = &t->groups[sends[i].group].actions[sends[i].action];
      st = err_at(err, MP_INPUT, f, at_line(a, where, sizeof where),
                  "c%d %s '%s' (micro-batch %d) to c%d a second time (first at line %d)", a->core,
                  sends[i].grad ? "sends the gradient of" : "sends", t->names[a->name], a->microbatch, a->peer,
                  first->line);
      goto cleanup;
    }
    if (c < 0) {
      const trace_action *a = &t->groups[sends[i].group].actions[sends[i].action];
      st = err_at(err, MP_INPUT, f, at_line(a, where, sizeof where),
                  "c%d %s '%s' (micro-batch %d) to c%d, but c%d has no matching '%s c%d'", a->core,
                  sends[i].grad ? "sends the gradient of" : "sends", t->names[a->name], a->microbatch, a->peer,
                  a->peer, sends[i].grad ? "grecv" : "recv", a->core);
      goto cleanup;
    }
    if (c > 0) {
      const trace_action *a = &t->groups[recvs[j].group].actions[recvs[j].action];
      st = err_at(err, MP_INPUT, f, at_line(a, where, sizeof where),
                  "c%d receives %s'%s' (micro-batch %d) from c%d, but c%d has no matching '%s c%d'", a->core,
                  recvs[j].grad ? "the gradient of " : "", t->names[a->name], a->microbatch, a->peer, a->peer,
                  recvs[j].grad ? "gsend" : "send", a->core);
      goto cleanup;
    }
    /* the first recv receives; later ones of the same key wait for the same arrival */
    for (long k = j; k < n_recvs && same_comm(&recvs[k], &recvs[j]); k++)
      send_of[recvs[k].group][recvs[k].action] = base[sends[i].group] + sends[i].action;
    while (j + 1 < n_recvs && same_comm(&recvs[j], &recvs[j + 1])) j++;
    i++;
    j++;
  }

  /* Dry run: advance every group until it reaches a receive whose send has not been issued. */
  pos = calloc((size_t)t->n_groups + 1, sizeof *pos);
  if (!pos) goto oom;
  for (int progress = 1; progress;) {
    progress = 0;
    for (int g = 0; g < t->n_groups; g++) {
      const trace_group *G = &t->groups[g];
      while (pos[g] < G->n_actions) {
        const trace_action *a = &G->actions[pos[g]];
        if (a->kind == TRACE_RECV || a->kind == TRACE_GRECV) {
          long s = send_of[g][pos[g]];
          int sg = 0;
          while (base[sg + 1] <= s) sg++;
          if (pos[sg] <= s - base[sg]) break;
        }
        pos[g]++;
        progress = 1;
      }
    }
  }
  for (int g = 0; g < t->n_groups; g++)
    if (pos[g] < t->groups[g].n_actions) {
      const trace_action *a = &t->groups[g].actions[pos[g]];
      long s = send_of[g][pos[g]];
      int sg = 0;
      while (base[sg + 1] <= s) sg++;
      const trace_action *snd = &t->groups[sg].actions[s - base[sg]];
      st = err_at(err, MP_INPUT, f, at_line(a, where, sizeof where),
                  "c%d waits for %s'%s' (micro-batch %d) from c%d, whose send (line %d) can never be reached: the "
                  "actions deadlock",
                  a->core, a->kind == TRACE_GRECV ? "the gradient of " : "", t->names[a->name], a->microbatch, a->peer,
                  snd->line);
      goto cleanup;
    }
  goto cleanup;

oom:
  st = err_nomem(err);
cleanup:
  if (send_of)
    for (int g = 0; g < t->n_groups; g++) free(send_of[g]);
  free(send_of);
  free(base);
  free(pos);
  free(sends);
  free(recvs);
  free(computes);
  free(owner);
  return st;
}

/* ---- writing ---------------------------------------------------------------------------------- */

/* A name as one token: bytes <= ' ', '%' and 0x7f as %XX. */
static void put_name(strbuf *b, const char *s) {
  if (!*s) {
    strbuf_printf(b, "%%");
    return;
  }
  for (; *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch <= ' ' || ch == '%' || ch == 0x7f)
      strbuf_printf(b, "%%%02X", ch);
    else
      strbuf_printf(b, "%c", ch);
  }
}

/* An actor: "c5" or "c4-7" for a range of consecutive ids. */
static void put_cores(strbuf *b, const int *cores, int n) {
  if (n == 1)
    strbuf_printf(b, "c%d", cores[0]);
  else
    strbuf_printf(b, "c%d-%d", cores[0], cores[n - 1]);
}

static int consecutive(const trace_group *g) {
  for (int i = 1; i < g->n_cores; i++)
    if (g->cores[i] != g->cores[0] + i) return 0;
  return 1;
}

mp_status trace_to_string(const trace *t, char **out, size_t *len, mp_error *err) {
  *out = NULL;
  for (int g = 0; g < t->n_groups; g++)
    if (!consecutive(&t->groups[g]))
      return err_set(err, MP_INPUT, "%s: group %d: only groups of consecutive cores can be written", t->file, g);
  strbuf b = {0};
  char h1[17], h2[17], h3[17];
  strbuf_printf(&b, "%s %d\n", TRACE_FORMAT, TRACE_VERSION);
  strbuf_printf(&b, "# time-independent trace: one action per line, 'cACTOR ACTION ARGS' (format: traces/README.md)\n");
  strbuf_printf(&b, "meshpipe %s\n", t->version);
  strbuf_printf(&b, "graph ");
  put_name(&b, t->graph_name);
  strbuf_printf(&b, " %s %d", fileio_hash_hex(t->graph_hash, h1), t->graph_layers);
  if (t->batch > 1) strbuf_printf(&b, " batch %d", t->batch); /* absent at batch 1, as before it was written */
  strbuf_printf(&b, "\n");
  strbuf_printf(&b, "plan %s %d ", fileio_hash_hex(t->plan_hash, h2), t->n_plan);
  for (int i = 0; i < t->n_plan; i++) strbuf_printf(&b, "%s%d", i ? "," : "", t->plan[i]);
  strbuf_printf(&b, "\nchip ");
  put_name(&b, t->chip_name);
  strbuf_printf(&b, " %s %d %d\n", fileio_hash_hex(t->chip_hash, h3), t->width, t->height);
  strbuf_printf(&b, "microbatches %d%s\n", t->microbatches, t->steady ? " steady" : "");
  if (t->training)
    strbuf_printf(&b, "training %s %s recompute %d\n", train_schedule_name(t->train.schedule),
                  train_optimizer_name(t->train.optimizer), t->train.recompute);
  strbuf_printf(&b, "groups %d\n", t->n_groups);
  for (int g = 0; g < t->n_groups; g++) {
    const trace_group *G = &t->groups[g];
    strbuf_printf(&b, "group %d ", g);
    put_cores(&b, G->cores, G->n_cores);
    strbuf_printf(&b,
        " layers %d %d flops %.17g gather %.17g send %.17g weights %.17g maxact %.17g sram %" PRIu64 " dram %" PRIu64
        " sends %d recvs %d macs %.17g ops %.17g traffic %.17g\n",
        G->first_layer, G->n_layers, G->flops, G->gather_bytes, G->send_bytes, G->weight_bytes, G->max_act_bytes,
        G->sram_bytes, G->dram_bytes, G->n_sends, G->n_recvs, G->macs, G->ops, G->traffic);
    const train_range *r = &G->train;
    if (t->training)
      strbuf_printf(&b,
                    "train %d fwd %" PRIu64 " bwd %" PRIu64 " recompute %" PRIu64 " update %" PRIu64 " fgather %" PRIu64
                    " bgather %" PRIu64 " params %" PRIu64 " static %" PRIu64 " stash %" PRIu64 " peak %" PRIu64
                    " naive %" PRIu64 " live %" PRIu64 " sendx %" PRIu64 " recvx %" PRIu64 " inplace %d\n",
                    g, r->fwd_flops, r->bwd_flops, r->recompute_flops, r->update_flops, r->fwd_gather, r->bwd_gather,
                    r->params, r->static_bytes, r->stash_bytes, r->peak_bytes, r->naive_bytes, r->live_bytes,
                    r->send_bytes, r->recv_bytes, r->inplace);
  }
  strbuf_printf(&b, "actions %ld\n", trace_count_actions(t));
  for (int g = 0; g < t->n_groups; g++) {
    const trace_group *G = &t->groups[g];
    for (int i = 0; i < G->n_actions; i++) {
      const trace_action *a = &G->actions[i];
      switch (a->kind) {
      case TRACE_COMPUTE:
        put_cores(&b, G->cores, G->n_cores);
        strbuf_printf(&b, " compute %.17g %.17g %d ", a->flops, a->bytes, a->microbatch);
        for (int d = 0; d < a->n_deps; d++) strbuf_printf(&b, "%s%d", d ? "," : "", t->deps[a->first_dep + d]);
        strbuf_printf(&b, a->n_deps ? " " : "- ");
        break;
      case TRACE_SEND: strbuf_printf(&b, "c%d send c%d %.17g %d ", a->core, a->peer, a->bytes, a->microbatch); break;
      case TRACE_RECV: strbuf_printf(&b, "c%d recv c%d %d ", a->core, a->peer, a->microbatch); break;
      case TRACE_DRAM: strbuf_printf(&b, "c%d dram %.17g %d ", a->core, a->bytes, a->microbatch); break;
      case TRACE_BACKWARD:
        put_cores(&b, G->cores, G->n_cores);
        strbuf_printf(&b, " backward %.17g %.17g %d ", a->flops, a->bytes, a->microbatch);
        break;
      case TRACE_GSEND: strbuf_printf(&b, "c%d gsend c%d %.17g %d ", a->core, a->peer, a->bytes, a->microbatch); break;
      case TRACE_WGRAD:
        put_cores(&b, G->cores, G->n_cores);
        strbuf_printf(&b, " wgrad %.17g %.17g %d ", a->flops, a->bytes, a->microbatch);
        break;
      case TRACE_GRECV: strbuf_printf(&b, "c%d grecv c%d %d ", a->core, a->peer, a->microbatch); break;
      case TRACE_UPDATE:
        put_cores(&b, G->cores, G->n_cores);
        strbuf_printf(&b, " update %.17g\n", a->flops);
        continue; /* no name */
      }
      put_name(&b, t->names[a->name]);
      strbuf_printf(&b, "\n");
    }
  }
  strbuf_printf(&b, "end\n");
  if (b.oom) {
    strbuf_clear(&b);
    return err_nomem(err);
  }
  *out = b.s;
  if (len) *len = b.len;
  return MP_OK;
}

mp_status trace_write(const trace *t, const char *path, mp_error *err) {
  char *text = NULL;
  size_t len = 0;
  mp_status st = trace_to_string(t, &text, &len, err);
  if (st == MP_OK) st = fileio_write_atomic(path, text, len, err);
  free(text);
  return st;
}

/* ---- placement -------------------------------------------------------------------------------- */

/* Snake-order position of core k on a w-wide mesh. */
static void snake_xy(int k, int w, int *x, int *y) {
  *y = k / w;
  *x = *y % 2 == 0 ? k % w : w - 1 - k % w;
}

mp_status trace_map(const trace *t, const chip *c, const char *map, trace **out, mp_error *err) {
  *out = NULL;
  int n_rec = t->width * t->height;
  int *to = malloc((size_t)n_rec * sizeof *to);
  if (!to) return err_nomem(err);
  mp_status st = MP_OK;
  trace *m = NULL;
  long off = 0, dx = 0, dy = 0;
  char extra;
  if (!map || !*map) {
    if (c->n_cores != n_rec) {
      int w = t->width; /* "an 8x8", "an 11x11", "an 18x2", "a 4x4" */
      while (w >= 1000) w /= 1000;
      int an = w == 8 || w == 11 || w == 18 || (w >= 80 && w < 90) || (w >= 800 && w < 900);
      st = err_at(err, MP_INPUT, t->file, NULL,
                  "recorded on a%s %dx%d chip (%d cores), but %s has %d cores: replay on a chip with as many cores, "
                  "or place the groups with --map",
                  an ? "n" : "", t->width, t->height, n_rec, c->name, c->n_cores);
      goto cleanup;
    }
    for (int k = 0; k < n_rec; k++) to[k] = k;
  } else if (strcmp(map, "snake") == 0 || sscanf(map, "snake:%ld%c", &off, &extra) == 1) {
    if (off < 0 || off > c->n_cores - n_rec) {
      st = err_at(err, MP_INPUT, t->file, NULL, "--map %s: %d cores from core %ld do not fit %s (%d cores)", map, n_rec,
                  off, c->name, c->n_cores);
      goto cleanup;
    }
    for (int k = 0; k < n_rec; k++) to[k] = (int)(k + off);
  } else if (strcmp(map, "xy") == 0 || sscanf(map, "xy:%ld,%ld%c", &dx, &dy, &extra) == 2) {
    if (dx < 0 || dy < 0 || dx > c->width - t->width || dy > c->height - t->height) {
      st = err_at(err, MP_INPUT, t->file, NULL,
                  "--map %s: the recorded %dx%d mesh placed at (%ld, %ld) does not fit the %dx%d mesh of %s", map,
                  t->width, t->height, dx, dy, c->width, c->height, c->name);
      goto cleanup;
    }
    for (int k = 0; k < n_rec; k++) {
      int x, y;
      snake_xy(k, t->width, &x, &y);
      to[k] = chip_core_at(c, (int)(x + dx), (int)(y + dy));
    }
  } else {
    st = err_set(err, MP_USAGE, "--map '%s': expected snake, snake:OFFSET, xy or xy:X,Y", map);
    goto cleanup;
  }

  st = trace_new(t->version, t->graph_name, t->graph_hash, t->graph_layers, t->plan, t->n_plan, t->plan_hash,
                 t->chip_name, t->chip_hash, t->width, t->height, t->microbatches, &m, err);
  if (st != MP_OK) goto cleanup;
  m->steady = t->steady;
  m->batch = t->batch;
  m->training = t->training;
  m->train = t->train;
  free(m->file);
  if (!(m->file = strdup(t->file))) goto oom;
  for (int g = 0; g < t->n_groups; g++) {
    const trace_group *G = &t->groups[g];
    int *cores = malloc((size_t)G->n_cores * sizeof *cores);
    if (!cores) goto oom;
    for (int i = 0; i < G->n_cores; i++) cores[i] = to[G->cores[i]];
    st = trace_add_group(m, cores, G->n_cores, G, NULL, err);
    free(cores);
    if (st != MP_OK) goto cleanup;
    for (int i = 0; i < G->n_actions; i++) {
      trace_action a = G->actions[i];
      a.core = to[a.core];
      if (a.peer >= 0) a.peer = to[a.peer];
      const trace_action *o = &G->actions[i];
      if ((st = trace_add_action(m, g, &a, t->names[o->name], t->deps + o->first_dep, o->n_deps, err)) != MP_OK)
        goto cleanup;
    }
  }
  st = trace_check(m, c->n_cores, err);
  goto cleanup;

oom:
  st = err_nomem(err);
cleanup:
  free(to);
  if (st != MP_OK) {
    trace_free(m);
    return st;
  }
  *out = m;
  return MP_OK;
}
