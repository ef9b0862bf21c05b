/* rl_quality: the RL partitioner against the exact analytical optimum, on the simulator's figures.
 *
 *   rl_quality CHIP GRAPH... [--episodes N] [--seed S] [--even-only]
 *
 * For each graph on the chip (one chip per run: SimGrid starts once per process) it prints the
 * simulated throughput of `even`, of `optimal`, of `rl` started from the even split and of `rl`
 * started from optimal's plan (--init optimal), each rl run's share of optimal's throughput, its
 * wall time and CPU time (one core; the search runs in this process), and the simulator's cache hit
 * rate over the run; each rl run's notes go to stderr.  --even-only skips the run from optimal's
 * plan (its columns then print as 0). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "method.h"
#include "proc.h"
#include "sim.h"

/* CPU seconds (user + system) this process has used: the rl search runs in-process on the lent sim,
 * so this is its time on one core, whatever else the machine is doing. */
static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
}

static int simulate(sim *s, const graph *g, const plan *p, double *thr) {
  sim_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  if (sim_evaluate(s, g, p, &r, &err) != MP_OK) {
    fprintf(stderr, "rl_quality: %s\n", err.msg);
    return 1;
  }
  *thr = r.samples_per_s;
  sim_result_clear(&r);
  return 0;
}

static int run_method(sim *s, const char *name, const char *init, const graph *g, const chip *c, long episodes,
                      uint64_t seed, double *thr, double secs[2]) {
  method_options o;
  method_options_default(&o);
  o.seed = seed;
  o.init = init;
  o.episodes = (int)episodes;
  o.sim = s;
  method_report rep;
  plan *p = NULL;
  mp_error err;
  double t0 = proc_now_s(), c0 = cpu_s();
  if (method_run(name, g, c, &o, &p, &rep, &err) != MP_OK) {
    fprintf(stderr, "rl_quality: %s: %s\n", name, err.msg);
    return 1;
  }
  secs[0] = proc_now_s() - t0;
  if (strcmp(name, "rl") == 0) fprintf(stderr, "rl_quality: %s from %s: %s\n", g->name, init, rep.notes);
  secs[1] = cpu_s() - c0;
  int rc = simulate(s, g, p, thr);
  plan_free(p);
  return rc;
}

static const char usage[] = "usage: rl_quality CHIP GRAPH... [--episodes N] [--seed S] [--even-only]";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  if (argc < 3) {
    fprintf(stderr, "%s\n", usage);
    return 2;
  }
  long episodes = -1;
  uint64_t seed = 1;
  int even_only = 0;
  int n_graphs = 0;
  const char *graphs[32];
  for (int i = 2; i < argc; i++) {
    if (strcmp(argv[i], "--episodes") == 0 && i + 1 < argc) {
      int e;
      if (!bench_int("rl_quality", usage, "--episodes", argv[++i], 0, 1000000, &e)) return 2;
      episodes = e;
    } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
      char *end = NULL;
      const char *text = argv[++i];
      errno = 0;
      seed = strtoull(text, &end, 10);
      if (errno != 0 || end == text || *end != '\0' || text[0] == '-') {
        fprintf(stderr, "rl_quality: --seed: '%s' is not a whole number from 0 to 2^64 - 1\n%s\n", text, usage);
        return 2;
      }
    } else if (strcmp(argv[i], "--even-only") == 0) {
      even_only = 1;
    } else if (n_graphs < 32) {
      graphs[n_graphs++] = argv[i];
    } else {
      fprintf(stderr, "rl_quality: more than 32 graphs\n");
      return 2;
    }
  }
  mp_error err;
  chip *c = NULL;
  sim *s = NULL;
  if (chip_load(argv[1], &c, &err) != MP_OK || sim_new(c, NULL, &s, &err) != MP_OK) {
    fprintf(stderr, "rl_quality: %s\n", err.msg);
    return 1;
  }
  printf("%-22s %-8s %10s %10s %10s %7s %13s %10s %7s %13s %6s\n", "graph", "chip", "even/s", "optimal/s",
         "rl(even)/s", "%opt", "wall/cpu_s", "rl(opt)/s", "%opt", "wall/cpu_s", "hits");
  int rc = 0;
  for (int k = 0; k < n_graphs && rc == 0; k++) {
    graph *g = NULL;
    if (graph_load(graphs[k], &g, &err) != MP_OK) {
      fprintf(stderr, "rl_quality: %s\n", err.msg);
      rc = 1;
      break;
    }
    double te, to, tre, tro = 0, se[2], so[2] = {0, 0}, dummy[2];
    sim_stats a, b;
    sim_get_stats(s, &a);
    rc = run_method(s, "even", NULL, g, c, -1, seed, &te, dummy) || run_method(s, "optimal", NULL, g, c, -1, seed, &to, dummy) ||
         run_method(s, "rl", "even", g, c, episodes, seed, &tre, se) ||
         (!even_only && run_method(s, "rl", "optimal", g, c, episodes, seed, &tro, so));
    sim_get_stats(s, &b);
    if (rc == 0) {
      long ev = b.evaluations - a.evaluations, hits = b.cache_hits - a.cache_hits;
      const char *base = strrchr(graphs[k], '/');
      printf("%-22s %-8s %10.6g %10.6g %10.6g %6.1f%% %6.1f/%6.1f %10.6g %6.1f%% %6.1f/%6.1f %5.0f%%\n",
             base ? base + 1 : graphs[k], c->name, te, to, tre, 100 * tre / to, se[0], se[1], tro, 100 * tro / to, so[0],
             so[1], ev > 0 ? 100.0 * hits / ev : 0.0);
      fflush(stdout);
    }
    graph_free(g);
  }
  sim_free(s);
  chip_free(c);
  return rc;
}
