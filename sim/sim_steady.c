/* sim_steady: when a steady-state run has settled (sim_int.h, "Steady state"), decided at each
 * completion from the job's completion and start times and the events its groups recorded.  Nothing
 * here calls SimGrid: the engine passes the clock. */
#include <float.h>
#include <math.h>

#include "sim_int.h"

/* The first micro-batch that started once the pipeline was full (at or after the first completion),
 * or -1 while that is not known. */
static int find_warmup(const job *j) {
  for (int m = 0; m < j->M && j->start_t[m] >= 0; m++)
    if (j->start_t[m] >= j->c[0]) return m;
  return -1;
}

static int same_interval(const job *j, int m, int q) {
  double a = j->c[m] - j->c[m - 1], b = j->c[m - q] - j->c[m - q - 1];
  return fabs(a - b) <= SIM_STEADY_TOLERANCE * fmax(fabs(a), fabs(b));
}

/* The least cycle q of the completions at L, or 0: every interval c[m] - c[m-1] over the last `span`,
 * and at least the last 2q, equals the one q earlier, all of them after the warm-up (the completions'
 * own rule); with span == 0, over the last q, wherever they lie: a cycle for the state's rule to try,
 * which alone decides. */
static int periodic(const job *j, int L, int span) {
  for (int q = 1; q <= SIM_STEADY_MAX_CYCLE; q++) {
    int need = span == 0 ? q : span > 2 * q ? span : 2 * q;
    if (L < (span == 0 ? 2 * q : j->warmup + need + q)) return 0;
    int ok = 1;
    for (int m = L - need + 1; m <= L && ok; m++) ok = same_interval(j, m, q);
    if (ok) return q;
  }
  return 0;
}

/* Whether some server (a group's actor or sender) had work without a pause since completion `from`
 * (two completions at least): the run is then limited by that server, not by the window (sim_int.h). */
static int saturated(const job *j, int from) {
  int n = j->n_complete;
  double eps = SIM_STEADY_TOLERANCE * (j->c[n - 1] - j->c[n - 2]), now = j->c[n - 1];
  for (int g = 0; g < j->n_groups; g++) {
    const jgroup *gr = &j->groups[g];
    for (int k = 0; k < (gr->n_sends > 0 ? 2 : 1); k++)
      if ((gr->wait_from[k] < 0 || now - gr->wait_from[k] <= eps) && gr->busy_since[k] <= j->c[from] + eps) return 1;
  }
  return 0;
}

/* The earliest start of an activity of group gr in flight now in micro-batch m (a segment: its DRAM
 * reads, execution and all-gather; the spill written after the last; a send), or `now` when none is. */
static double in_flight_since(const jgroup *gr, int m, double now) {
  const double *a = gr->ev_t + (size_t)m * (size_t)gr->n_ev;
  double t0 = now, last_end = -1;
  int ended = 1;
  for (int k = 0; k < gr->n_segs; k++) {
    const double *x = a + 4 * k; /* taken, reads done, execution done, all-gather done */
    if (x[0] >= 0 && x[3] < 0 && x[0] < t0) t0 = x[0];
    if (x[3] < 0) ended = 0;
    else if (x[3] > last_end) last_end = x[3];
  }
  if (ended && a[4 * gr->n_segs] < 0 && last_end < t0) t0 = last_end; /* the spill */
  for (int k = 0; k < gr->n_sends; k++) {
    const double *x = a + 4 * gr->n_segs + 1 + 2 * k;
    if (x[0] >= 0 && x[1] < 0 && x[0] < t0) t0 = x[0];
  }
  return t0;
}

/* Whether an event at a (-1: not yet) now happened at b (-1: not yet) a cycle of length P earlier:
 * at the same point of the cycle from t0 on (a live event), or before t0 both (done, and no longer
 * acting on anything in flight). */
static int same_event(double a, double b, double t0, double now, double P) {
  double tol = fmax(SIM_STEADY_STATE_TOLERANCE * P, 64 * DBL_EPSILON * now); /* the clock's last bits */
  if (a < 0) return b < 0 || b >= now - P - tol;
  if (a >= t0 - tol) return b >= 0 && fabs(a - b - P) <= tol;
  return b >= 0 && b < t0 - P + tol;
}

/* Whether the pipeline now is the pipeline a cycle q earlier, shifted by the cycle's length P (sim_int.h,
 * "Steady state"): with t0 the earliest start of an activity in flight, every event since t0 happened
 * exactly P after its counterpart q micro-batches before, every earlier one and its counterpart before
 * t0 and t0 - P, and every event still to come had not come at now - P either. */
static int state_periodic(const job *j, int L, int q, int need, int started, double now) {
  double P = j->c[L] - j->c[L - q], t0 = now;
  for (int m = L + 1; m < started; m++)
    for (int g = 0; g < j->n_groups; g++) {
      double t = in_flight_since(&j->groups[g], m, now);
      if (t < t0) t0 = t;
    }
  int lo = L + 1 - need, hi = started + q - 1 < j->M - 1 ? started + q - 1 : j->M - 1;
  while (lo > 0 && j->c[lo - 1] >= t0 - P) lo--; /* micro-batches that ended since t0 - P */
  if (lo < q) return 0;
  for (int m = lo; m <= hi; m++) {
    if (!same_event(j->start_t[m], j->start_t[m - q], t0, now, P)) return 0;
    for (int g = 0; g < j->n_groups; g++) {
      const jgroup *gr = &j->groups[g];
      const double *a = gr->ev_t + (size_t)m * (size_t)gr->n_ev, *b = a - (size_t)q * (size_t)gr->n_ev;
      for (int e = 0; e < gr->n_ev; e++)
        if (!same_event(a[e], b[e], t0, now, P)) return 0;
    }
  }
  return 1;
}

void sim_steady_check(job *j, double now) {
  int L = j->n_complete - 1;
  if (j->warmup < 0) j->warmup = find_warmup(j);
  if (j->warmup < 0) return;
  int started = L + 1;
  while (started < j->M && j->start_t[started] >= 0) started++;
  int in_flight = started - (L + 1);
  int span = in_flight > SIM_STEADY_MIN_INTERVALS ? in_flight : SIM_STEADY_MIN_INTERVALS;
  if (j->window < sim_job_wmax(j) && j->closed_at == 0 && L >= j->warmup + span && !saturated(j, L - span)) {
    j->window = 2 * j->window < sim_job_wmax(j) ? 2 * j->window : sim_job_wmax(j);
    j->warmup = started; /* the pipeline fills anew */
    return;
  }
  int q = L >= j->warmup ? periodic(j, L, 0) : 0; /* W's means to report (measure: W .. L) */
  if (q > 0 && (j->window >= sim_job_wmax(j) || j->closed_at > 0 || saturated(j, L - q)) &&
      state_periodic(j, L, q, q, started, now)) {
    j->cycle = q; /* the state repeats: so will everything after it */
    j->limit = L + 1;
    return;
  }
  if (q > 0) q = periodic(j, L, span); /* no cycle over the short span: none over a longer one */
  if (q == 0) {
    if (j->retry && L >= j->warmup + SIM_STEADY_APERIODIC * span) j->limit = L + 1; /* run again at 2p + 2 */
    return;
  }
  double out = j->c[L] - j->c[L - q], in = j->start_t[started - 1] - j->start_t[started - 1 - q];
  if (fabs(out - in) <= SIM_STEADY_TOLERANCE * fmax(out, in)) {
    j->cycle = q;
    j->limit = L + 1;
  } else if (j->closed_at == 0) {
    j->window = in_flight;
    j->closed_at = L;
    if (j->cap_now < L + 1 + (j->cap + 1) / 2) j->cap_now = L + 1 + (j->cap + 1) / 2; /* the new regime's run */
  }
}

