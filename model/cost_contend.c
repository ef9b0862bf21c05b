/* cost_contend: contention, the model's last plan term (cost.h, cost_contended).  Each link is a
 * processor-sharing queue for the activities crossing it, as SimGrid's fair-bottleneck sharing makes it
 * in the simulator; an activity's time at a period T follows from the load the rest of the plan puts on
 * its links, and the period is the least T that every stage meets.  DRAM reads are then placed in the
 * period: a pipeline's stages start one after the other, each when the one before hands it its input,
 * so reads that start together share their links for their whole length (see place_reads), and the
 * period is the one at which the reads placed there give it again (a damped fixed-point iteration).
 * Only the reads' pairs depend on where the reads are placed: each placement rebuilds those and keeps
 * the rest, and what of the reads no placement changes (their links, bytes and the links' other
 * traffic) is listed once per plan (list_reads). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cost_int.h"

/* An activity (an all-gather, a DRAM stream, a Send) puts own bytes on link k, whose whole load per
 * micro-batch is load.  The traffic it can meet there is the load less what its own side of its stage
 * puts on k: a group's all-gathers and streams run one after the other on its actor, its Sends one
 * after the other on its sender, but the two sides overlap.  At period T that traffic keeps the link
 * busy a share u = (load - side) / (bw T) of the time.  The simulator shares a link equally between
 * the activities on it (SimGrid's fair-bottleneck sharing of parallel tasks), so the link serves them
 * like a processor-sharing queue, in which an activity needing own / bw alone takes
 * (own / bw) / (1 - u) = alpha T / (T - busy), with busy = (load - side) / bw the time the others
 * keep it busy per micro-batch.  An activity lasts the largest of that over its links.  Only the pairs
 * (alpha, busy) that no other pair of the same activity dominates are kept. */
typedef struct term {
  double alpha, busy;
} term;

typedef struct activity_terms {
  cost_model *m;
  const double *load, *side; /* the plan's loads; its side's own loads */
  double own;                /* bytes on each link (Sends, gathers: the same on every link of the route) */
  int start;                 /* its first pair in m->terms */
} activity_terms;

static int add_term(cost_model *m, int start, double alpha, double busy) {
  for (int i = start; i < m->n_terms; i++) {
    term *t = &m->terms[i];
    if (t->alpha >= alpha && t->busy >= busy) return 0; /* dominated */
    if (alpha >= t->alpha && busy >= t->busy) {         /* dominates: replace */
      *t = (term){alpha, busy};
      return 0;
    }
  }
  if (m->n_terms == m->cap_terms) {
    int cap = m->cap_terms ? 2 * m->cap_terms : 256;
    term *grown = realloc(m->terms, (size_t)cap * sizeof *grown);
    if (!grown) return -1;
    m->terms = grown;
    m->cap_terms = cap;
  }
  m->terms[m->n_terms++] = (term){alpha, busy};
  return 0;
}

/* The pairs of an activity that puts x->own bytes on every link of the route from core `from` to core
 * `to`; returns its hops (every link of a route between cores is a NoC link). */
static int route_terms(activity_terms *x, int from, int to) {
  const int *links;
  int n = cost_route(x->m, from, to, &links);
  for (int i = 0; i < n; i++) {
    int k = links[i];
    double bw = chip_link_bandwidth(x->m->c, k);
    if (add_term(x->m, x->start, x->own / bw, (x->load[k] - x->side[k]) / bw) != 0) x->m->terms_oom = 1;
  }
  return n;
}

/* The pair of an all-gather's chain link carrying own bytes.  A link nothing else crosses (its load is
 * the stage's own side: exactly, as both sums add the same terms in the same order) has the pair
 * (own / bw, 0), which the one of such links with the largest own dominates: only that largest is
 * kept, in *quiet, for the caller to add.  Dropping dominated pairs changes no duration (lasts: a
 * maximum of a function that grows with both members, in floating point too). */
static void chain_term(cost_model *m, int start, int link, double own, const double *load, double *quiet) {
  double bw = chip_link_bandwidth(m->c, link), rest = load[link] - m->side[link];
  if (rest == 0) {
    if (own / bw > *quiet) *quiet = own / bw;
  } else if (add_term(m, start, own / bw, rest / bw) != 0) {
    m->terms_oom = 1;
  }
}

/* An activity's duration at T from its pairs [start, end); infinite when the others alone fill a link
 * it needs. */
static double lasts(const cost_model *m, int start, int end, double T) {
  double worst = 0;
  for (int i = start; i < end; i++) {
    const term *t = &m->terms[i];
    if (!(t->alpha > 0)) continue;
    if (t->busy >= T) return HUGE_VAL;
    double d = t->alpha * T / (T - t->busy);
    if (d > worst) worst = d;
  }
  return worst;
}

/* One stage's DRAM reads on one link (the phase pass): their bytes, and the link's traffic that is
 * neither the stage's own side nor any stage's reads, which no placement changes. */
typedef struct stream_bytes {
  int link, stage;
  double bytes, rest;
} stream_bytes;

/* What the phase pass knows of the reads: per stage i its start phase[2i] within the period and its
 * length phase[2i+1]; m->sb and m->sb_first list every stage's read bytes per link.  NULL before it. */
typedef struct phases {
  double T;
  int self; /* the stage whose terms are being built */
} phases;

/* fmin of two numbers that are not NaN, inline (fmin is a call into libm). */
static double least(double a, double b) { return b < a ? b : a; }

/* The part of circular intervals [a, a + la) and [b, b + lb) (starts in [0, T), lengths at most T)
 * that they share.  b - a lies in (-T, T), where fmod(b - a, T) is b - a itself. */
static double overlap(double a, double la, double b, double lb, double T) {
  double d = b - a, o = 0;
  if (d < 0) d += T;
  /* b's interval starts d after a's; it may also wrap round to meet a's start */
  o += least(la, d + lb) - least(la, d);
  if (d + lb > T) o += least(la, d + lb - T);
  return o;
}

/* Of link k's reads, those of other stages that overlap stage x->self's in the period: the bytes they
 * move while it reads (each at most its own, as an equal share gives no more). */
static double read_company(const cost_model *m, const phases *x, int k, double own) {
  double sync = 0;
  const double *ph = m->phase;
  int i = x->self;
  for (int e = m->sb_first[k]; e < m->sb_first[k + 1]; e++) {
    const stream_bytes *b = &m->sb_sorted[e];
    int j = b->stage;
    double len = ph[2 * j + 1];
    if (j == i || !(len > 0)) continue;
    double o = overlap(ph[2 * i], ph[2 * i + 1], ph[2 * j], len, x->T);
    if (o == 0) continue; /* adds nothing: skip the division */
    double moved = b->bytes * o / len;
    sync += moved < own ? moved : own;
  }
  return sync;
}

/* The pairs of stage s's DRAM stream (reads when up is 0, writes when 1) at random phases: per link its
 * own bytes.  Returns its longest route's hops. */
static int stream_terms(cost_model *m, const cost_stage *s, int up, const double *load, const double *side) {
  const chip *c = m->c;
  int n = 0, hops = 0;
  for (int k = s->first_core; k < s->first_core + s->n_cores; k++) {
    double in, out;
    cost_core_dram(s, (double)c->cores[k].sram_bytes, &in, &out);
    double b = up ? out : in;
    if (!(b > 0)) continue;
    int port = CHIP_PORT(m->port_of[k]);
    int h = up ? cost_model_load_route(m, m->scratch, k, port, b, m->touched, &n)
               : cost_model_load_route(m, m->scratch, port, k, b, m->touched, &n);
    if (h > hops) hops = h;
  }
  int start = m->n_terms;
  for (int i = 0; i < n; i++) {
    int k = m->touched[i];
    double bw = chip_link_bandwidth(c, k);
    if (add_term(m, start, m->scratch[k] / bw, (load[k] - side[k]) / bw) != 0) m->terms_oom = 1;
    m->scratch[k] = 0;
  }
  return hops;
}

/* Per stage, the ranges of its activities' pairs: gather, reads, writes, then one range per Send. */
typedef struct stage_acts {
  int gather[2], in[2], out[2]; /* [start, end) */
  double fixed;                 /* work and latencies of the busy side */
  int sends;                    /* index of its first Send's range in m->send_ranges */
} stage_acts;

static double stage_at(const cost_model *m, const cost_stage *s, const stage_acts *a, int n_sends, double T) {
  double busy = a->fixed + lasts(m, a->gather[0], a->gather[1], T) + lasts(m, a->in[0], a->in[1], T) +
                lasts(m, a->out[0], a->out[1], T);
  double send = 0;
  for (int i = 0; i < n_sends; i++) {
    const int *r = &m->send_ranges[3 * (a->sends + i)];
    send += lasts(m, r[0], r[1], T) + (double)r[2] * m->c->noc_latency;
  }
  (void)s;
  return busy > send ? busy : send;
}

static void side_add(cost_model *m, int link, double bytes, int *n) {
  if (m->side[link] == 0) m->side_touched[(*n)++] = link;
  m->side[link] += bytes;
}

/* What stage s's all-gathers and DRAM streams put on every link, into m->side (listed in side_touched). */
static void side_busy(cost_model *m, const cost_stage *s, int *n) {
  const chip *c = m->c;
  int cn = s->n_cores;
  double A = s->gather_bytes;
  for (int k = 0; cn > 1 && A > 0 && k + 1 < cn; k++) {
    int at = s->first_core + k;
    side_add(m, cost_chain_link(m, at, 0), A * (double)(k + 1) / cn, n);
    side_add(m, cost_chain_link(m, at, 1), A * (double)(cn - 1 - k) / cn, n);
  }
  if (s->fits || c->n_dram == 0) return;
  for (int k = s->first_core; k < s->first_core + cn; k++) {
    double in, out;
    cost_core_dram(s, (double)c->cores[k].sram_bytes, &in, &out);
    if (in > 0) cost_model_load_route(m, m->side, CHIP_PORT(m->port_of[k]), k, in, m->side_touched, n);
    if (out > 0) cost_model_load_route(m, m->side, k, CHIP_PORT(m->port_of[k]), out, m->side_touched, n);
  }
}

static void side_clear(cost_model *m, int *n) {
  for (int i = 0; i < *n; i++) m->side[m->side_touched[i]] = 0;
  *n = 0;
}

/* Builds the pairs of every activity of the plan, the reads at random phases; -1 when out of memory. */
static int build_terms(cost_model *m, cost_stage *stages, int n, const cost_transfer *xfer, const int *xfer_off,
                       const double *link_bytes) {
  const chip *c = m->c;
  m->n_terms = 0;
  m->terms_oom = 0;
  for (int i = 0; i < n; i++) {
    const cost_stage *s = &stages[i];
    stage_acts *a = &m->acts[i];
    int cn = s->n_cores, last = s->first_core + cn - 1, n_side = 0;
    double A = s->gather_bytes;
    int streams = !s->fits && c->n_dram > 0, hops = 0;
    /* the busy side: all-gathers, then the streams */
    side_busy(m, s, &n_side);
    a->fixed = s->work / s->speed + (double)s->n_segments * c->noc_latency;
    a->gather[0] = m->n_terms;
    double quiet = 0; /* the largest own / bw of the chain's links that nothing else crosses */
    for (int k = 0; cn > 1 && A > 0 && k + 1 < cn; k++) { /* the chain's links, each with its share */
      int at = s->first_core + k;
      chain_term(m, a->gather[0], cost_chain_link(m, at, 0), A * (double)(k + 1) / cn, link_bytes, &quiet);
      chain_term(m, a->gather[0], cost_chain_link(m, at, 1), A * (double)(cn - 1 - k) / cn, link_bytes, &quiet);
    }
    if (quiet > 0 && add_term(m, a->gather[0], quiet, 0) != 0) m->terms_oom = 1;
    a->gather[1] = a->in[0] = m->n_terms;
    if (streams && s->dram_in_bytes > 0) hops += stream_terms(m, s, 0, link_bytes, m->side);
    a->in[1] = a->out[0] = m->n_terms;
    if (streams && s->dram_out_bytes > 0) hops += stream_terms(m, s, 1, link_bytes, m->side);
    a->out[1] = m->n_terms;
    a->fixed += (double)hops * c->noc_latency; /* the streams' latencies */
    side_clear(m, &n_side);
    /* the send side */
    for (int t = xfer_off[i]; t < xfer_off[i + 1]; t++)
      if (xfer[t].bytes > 0)
        cost_model_load_route(m, m->side, last, xfer[t].dst_core, s->gamma * xfer[t].bytes, m->side_touched, &n_side);
    a->sends = xfer_off[i];
    for (int t = xfer_off[i]; t < xfer_off[i + 1]; t++) {
      int *r = &m->send_ranges[3 * t];
      r[0] = m->n_terms;
      r[2] = 0;
      if (xfer[t].bytes > 0) {
        activity_terms at = {m, link_bytes, m->side, s->gamma * xfer[t].bytes, m->n_terms};
        r[2] = route_terms(&at, last, xfer[t].dst_core);
      }
      r[1] = m->n_terms;
    }
    side_clear(m, &n_side);
  }
  return m->terms_oom ? -1 : 0;
}

/* Does stage s read DRAM? */
static int reads_dram(const cost_model *m, const cost_stage *s) {
  return !s->fits && m->c->n_dram > 0 && s->dram_in_bytes > 0;
}

/* The reads' pairs again, with phases x, after the pairs build_terms made up to `kept` (every other
 * activity's, which the phases leave as they are; the reads' earlier pairs are left unused): per link of
 * a stage's reads (m->sb, list_reads), the reads of the other stages that overlap its own join its own
 * bytes, and the rest of their bytes leave the link's other traffic.  -1 when out of memory. */
static int read_terms(cost_model *m, const cost_stage *stages, int n, int kept, phases *x) {
  m->n_terms = kept;
  m->terms_oom = 0;
  int e = 0;
  for (int i = 0; i < n; i++) {
    if (!reads_dram(m, &stages[i])) continue;
    stage_acts *a = &m->acts[i];
    x->self = i;
    a->in[0] = m->n_terms;
    for (; e < m->n_sb && m->sb[e].stage == i; e++) {
      const stream_bytes *r = &m->sb[e];
      double bw = chip_link_bandwidth(m->c, r->link), with = read_company(m, x, r->link, r->bytes);
      if (add_term(m, a->in[0], (r->bytes + with) / bw, r->rest / bw) != 0) m->terms_oom = 1;
    }
    a->in[1] = m->n_terms;
  }
  return m->terms_oom ? -1 : 0;
}

/* The least T >= lo with every stage's time at T within T.  Every t_i(T) falls as T grows towards the
 * stage's uncontended time, so {T : t_i(T) <= T} is a ray [T_i, inf) and the period is the largest of lo
 * and the T_i.  Scanning the stages with the largest T so far, a stage within it needs no root; one
 * beyond it gets its own, by bisection on a bracket grown until t_i(hi) <= hi. */
static double solve(const cost_model *m, cost_stage *stages, int n, const int *xfer_off, double lo) {
  double hi = lo, worst = -1;
  int first = 0; /* the stage slowest at lo first: its root is usually the period, and the rest then
                  * need one evaluation each */
  for (int i = 0; i < n; i++) {
    double t = stage_at(m, &stages[i], &m->acts[i], xfer_off[i + 1] - xfer_off[i], lo);
    if (t > worst) {
      worst = t;
      first = i;
    }
  }
  for (int k = 0; k <= n; k++) {
    int i = k == 0 ? first : k - 1;
    if (k > 0 && i == first) continue;
    int ns = xfer_off[i + 1] - xfer_off[i];
    double t = stage_at(m, &stages[i], &m->acts[i], ns, hi);
    if (t <= hi) continue;
    double a = hi, b = t;
    for (int grow = 0; grow < 64; grow++) {
      t = stage_at(m, &stages[i], &m->acts[i], ns, b);
      if (t <= b) break;
      a = b;
      b = t < HUGE_VAL && t < 2 * b ? t : 2 * b;
    }
    for (int it = 0; it < 100 && b - a > 1e-12 * b; it++) {
      double mid = a + (b - a) / 2;
      if (stage_at(m, &stages[i], &m->acts[i], ns, mid) > mid)
        a = mid;
      else
        b = mid;
    }
    hi = b;
  }
  return hi;
}

/* The placement of the reads is a fixed-point iteration on the period (cost_contended): at most this
 * many passes, each placing the reads at the period and slowest stage the last one found, until the
 * period it gives is within COST_PHASE_TOLERANCE of the one it was placed at. */
#define COST_PHASE_PASSES 16
#define COST_PHASE_TOLERANCE 1e-6

/* x - q T is exact for the right quotient q (it is fmod's result, which is representable), so one fused
 * multiply-add gives it.  The rounded division can make floor(x / T) one too large (a quotient just
 * under an integer rounds up to it), which shows as a negative result, never one too small (rounding is
 * monotone and integers are representable).  glibc's fmod instead works through the quotient's bits one
 * at a time, which cost a tenth of optimal's solve on a 493-stage plan. */
double cost_wrap(double x, double T) {
  double q = floor(x / T), r = fma(-q, T, x);
  return r < 0 ? fma(-(q - 1), T, x) : r;
}

/* The phases of the reads at period T (the first pass's).  In steady state the slowest stage b starts a
 * micro-batch as soon as it ends one: call that 0.  A stage after it starts when the one before has
 * done its work and its first Send (its busy side and that Send at T); the first stage starts when the
 * window of micro-batches in flight lets it, which is when the last stage completes one (the stages
 * before b are faster and fill the window), and the stages up to b follow it in the same way.  All
 * modulo T.  A stage's reads come first and last what their pairs say at T. */
static int place_reads(cost_model *m, const cost_stage *stages, int n, const int *xfer_off, double T) {
  const chip *c = m->c;
  if (n > m->cap_phase) {
    double *ph = realloc(m->phase, 3 * (size_t)n * sizeof *ph);
    if (!ph) return -1;
    m->phase = ph;
    m->cap_phase = n;
  }
  double *hand = m->phase + 2 * (size_t)n; /* per stage: from its start to the next one's */
  int b = 0;
  double worst = -1;
  for (int i = 0; i < n; i++) {
    const stage_acts *a = &m->acts[i];
    double reads = lasts(m, a->in[0], a->in[1], T);
    m->phase[2 * i + 1] = reads < T ? reads : T;
    hand[i] = a->fixed + lasts(m, a->gather[0], a->gather[1], T) + reads + lasts(m, a->out[0], a->out[1], T);
    if (i + 1 < n && xfer_off[i + 1] > xfer_off[i]) {
      const int *r = &m->send_ranges[3 * xfer_off[i]];
      hand[i] += lasts(m, r[0], r[1], T) + (double)r[2] * c->noc_latency;
    }
    double t = stage_at(m, &stages[i], a, xfer_off[i + 1] - xfer_off[i], T);
    if (t > worst) {
      worst = t;
      b = i;
    }
  }
  double at = 0;
  for (int k = 0; k < n; k++) { /* b, the stages after it, then from the first stage up to b */
    int i = (b + k) % n;
    m->phase[2 * i] = cost_wrap(at, T);
    at += hand[i];
  }
  return 0;
}

/* Lists every stage's DRAM reads per link, in stage order and each stage's links in the order its
 * routes first cross them (m->sb), and the same by link (m->sb_sorted from m->sb_first), each with the
 * link's traffic outside the reads and the stage's own side (stream_bytes), for read_terms at every
 * placement: none of it depends on the period.  -1 when out of memory. */
static int list_reads(cost_model *m, const cost_stage *stages, int n, const double *link_bytes) {
  const chip *c = m->c;
  if (!m->sb_first && !(m->sb_first = calloc((size_t)m->n_links + 1, sizeof *m->sb_first))) return -1;
  m->n_sb = 0;
  for (int i = 0; i < n; i++) {
    const cost_stage *s = &stages[i];
    if (!reads_dram(m, s)) continue;
    int nt = 0;
    for (int k = s->first_core; k < s->first_core + s->n_cores; k++) {
      double in, out;
      cost_core_dram(s, (double)c->cores[k].sram_bytes, &in, &out);
      if (in > 0) cost_model_load_route(m, m->scratch, CHIP_PORT(m->port_of[k]), k, in, m->touched, &nt);
    }
    if (m->n_sb + nt > m->cap_sb) {
      int cap = 2 * (m->n_sb + nt);
      stream_bytes *grown = realloc(m->sb, (size_t)cap * sizeof *grown);
      if (!grown) {
        for (int e = 0; e < nt; e++) m->scratch[m->touched[e]] = 0;
        return -1;
      }
      m->sb = grown;
      m->cap_sb = cap;
    }
    for (int e = 0; e < nt; e++) {
      int k = m->touched[e];
      m->sb[m->n_sb++] = (stream_bytes){k, i, m->scratch[k], 0};
      m->scratch[k] = 0;
    }
  }
  /* by link, each link's entries in stage order: a counting sort (the list is in stage order) */
  if (m->n_sb > m->cap_sb_sorted) {
    stream_bytes *grown = realloc(m->sb_sorted, (size_t)m->cap_sb * sizeof *grown);
    if (!grown) return -1;
    m->sb_sorted = grown;
    m->cap_sb_sorted = m->cap_sb;
  }
  memset(m->sb_first, 0, ((size_t)m->n_links + 1) * sizeof *m->sb_first);
  for (int e = 0; e < m->n_sb; e++) m->sb_first[m->sb[e].link + 1]++;
  for (int k = 0; k < m->n_links; k++) m->sb_first[k + 1] += m->sb_first[k];
  for (int e = 0; e < m->n_sb; e++) m->sb_sorted[m->sb_first[m->sb[e].link]++] = m->sb[e];
  for (int k = m->n_links; k > 0; k--) m->sb_first[k] = m->sb_first[k - 1];
  m->sb_first[0] = 0;
  /* each read's rest: the link's load less its stage's side, less every other stage's reads there */
  for (int e = 0; e < m->n_sb;) {
    const cost_stage *s = &stages[m->sb[e].stage];
    int n_side = 0;
    side_busy(m, s, &n_side);
    for (int i = m->sb[e].stage; e < m->n_sb && m->sb[e].stage == i; e++) {
      stream_bytes *r = &m->sb[e];
      double rest = link_bytes[r->link] - m->side[r->link], all = 0;
      for (int f = m->sb_first[r->link]; f < m->sb_first[r->link + 1]; f++)
        if (m->sb_sorted[f].stage != i) all += m->sb_sorted[f].bytes;
      rest -= all;
      r->rest = rest < 0 ? 0 : rest;
    }
    side_clear(m, &n_side);
  }
  return 0;
}

/* The reads placed at period T and their pairs rebuilt (place_reads, read_terms); -1 when out of memory. */
static int place_at(cost_model *m, const cost_stage *stages, int n, const int *xfer_off, int kept, double T) {
  phases x = {T, 0};
  return place_reads(m, stages, n, xfer_off, T) != 0 || read_terms(m, stages, n, kept, &x) != 0 ? -1 : 0;
}

double cost_contended(cost_model *m, cost_stage *stages, int n, const cost_transfer *xfer, const int *xfer_off,
                      const double *link_bytes) {
  const chip *c = m->c;
  double bound = 0, lo = 0;
  for (int k = 0; k < m->n_links; k++) {
    double t = link_bytes[k] / chip_link_bandwidth(c, k);
    if (t > bound) bound = t;
  }
  for (int i = 0; i < n; i++) lo = stages[i].time_s > lo ? stages[i].time_s : lo; /* without contention */
  if (bound > lo) lo = bound;
  if (!(lo > 0)) return lo;
  if (n > m->cap_acts || xfer_off[n] > m->cap_ranges) {
    int na = n > m->cap_acts ? n : m->cap_acts, nr = xfer_off[n] > m->cap_ranges ? xfer_off[n] : m->cap_ranges;
    stage_acts *acts = realloc(m->acts, (size_t)na * sizeof *acts);
    if (acts) m->acts = acts;
    int *ranges = realloc(m->send_ranges, 3 * ((size_t)nr + 1) * sizeof *ranges);
    if (ranges) m->send_ranges = ranges;
    if (!acts || !ranges) return -1;
    m->cap_acts = na;
    m->cap_ranges = nr;
  }
  /* first pass: every link's other traffic at random phases */
  if (build_terms(m, stages, n, xfer, xfer_off, link_bytes) != 0) return -1;
  int kept = m->n_terms;
  double T = solve(m, stages, n, xfer_off, lo);
  /* then, when stages read DRAM: the reads placed in that period (place_reads), again at each new period */
  int reads = 0;
  for (int i = 0; i < n && !reads; i++) reads = reads_dram(m, &stages[i]);
  if (reads && list_reads(m, stages, n, link_bytes) != 0) return -1;
  double seen[COST_PHASE_PASSES];
  for (int pass = 0; reads && pass < COST_PHASE_PASSES; pass++) {
    if (place_at(m, stages, n, xfer_off, kept, T) != 0) return -1;
    double next = solve(m, stages, n, xfer_off, lo);
    if (fabs(next - T) <= COST_PHASE_TOLERANCE * T) {
      T = next;
      break;
    }
    T = pass == 0 ? next : T + (next - T) / 2; /* then half way: the phases turn with the period */
    seen[pass] = T;
    if (pass + 1 == COST_PHASE_PASSES) { /* not settled: the mean of the second half, placed again */
      double sum = 0;
      for (int k = COST_PHASE_PASSES / 2; k < COST_PHASE_PASSES; k++) sum += seen[k];
      T = sum / (COST_PHASE_PASSES - COST_PHASE_PASSES / 2);
      if (place_at(m, stages, n, xfer_off, kept, T) != 0) return -1;
    }
  }
  for (int i = 0; i < n; i++) stages[i].contended_s = stage_at(m, &stages[i], &m->acts[i], xfer_off[i + 1] - xfer_off[i], T);
  return T;
}
