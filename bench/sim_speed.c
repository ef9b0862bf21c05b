/* sim_speed: how fast the SimGrid simulator evaluates plans, and what a 32x32 chip costs to start.
 *
 * For ResNet-50 (traces/resnet50.json, or the graph given as argv[1]) on the 4x4, 8x8, 16x16 and
 * 32x32 meshes (the last with a twentieth of the evaluations), each in a child process of its own
 * (SimGrid starts once per process): N random plans of 1..16 stages run to steady state (the
 * simulator's default; M > 0 forces M micro-batches), cache off, one after the other in one sim;
 * prints evaluations per second (wall) and per CPU-second, micro-batches and activities per
 * evaluation, simulated activities/s and how many runs settled; then all of it again with
 * sim_options.fast_gather, again with sim_options.fast_streams, and on 8x8 with sim_options.isolate.
 * Then, in another child, the start-up time of a sim on the 32x32 mesh, one steady evaluation there,
 * and the child's peak resident memory.
 *
 * Usage, from the source tree: sim_speed [GRAPH [EVALUATIONS [CHIP [M [FAST [ISOLATE [DUMP [ROUTING
 * [RERUN [STREAMS]]]]]]]]]] (default 2000 evaluations per chip; M 0 for steady state, the default).
 * With CHIP, that chip only, with M micro-batches, fast_gather = FAST, isolate = ISOLATE,
 * sim_options.routing = ROUTING (0 automatic, 1 Full, 2 DijkstraCache, 3 many, 4 Torus), sim_options.rerun_private =
 * RERUN and sim_options.fast_streams = STREAMS; with DUMP (not "-"), every evaluation's `simulate
 * --json` object is also written to the file DUMP, one line each (timed too), so that two builds can be
 * compared figure for figure: `cmp` of two dumps of the same arguments is the before/after equality
 * check of a simulator change. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "chip.h"
#include "graph.h"
#include "plan.h"
#include "rng.h"
#include "sim.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of this process (all its threads) and of its finished children (isolated evaluations):
 * on a shared machine, evaluations per CPU-second are the steadier figure. */
static double cpu_now(void) {
  double t = 0;
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    t += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
    t += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + 1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
  return t;
}

/* k-1 distinct cut points in 1..n-1, ascending, as k counts summing to n. */
static void random_counts(rng *r, int n, int k, int *counts) {
  int *cut = calloc((size_t)n + 1, sizeof *cut);
  int made = 0;
  while (made < k - 1) {
    int x = 1 + (int)rng_below(r, (uint64_t)(n - 1));
    if (!cut[x]) {
      cut[x] = 1;
      made++;
    }
  }
  int prev = 0, i = 0;
  for (int x = 1; x <= n; x++)
    if (x == n || cut[x]) {
      counts[i++] = x - prev;
      prev = x;
    }
  free(cut);
}

static int microbatches = 0, fast_gather = 0, fast_streams = 0, isolate = 0; /* 0: steady state */
static const char *dump_path; /* NULL, or where every evaluation's JSON goes */
static int routing = SIM_ROUTING_AUTO;
static int rerun_private = 0; /* sim_options.rerun_private */

/* Appends r's JSON to f as one line; 0 on failure. */
static int dump_result(FILE *f, const sim_result *r) {
  cJSON *o = sim_result_to_json(r);
  char *text = o ? cJSON_PrintUnformatted(o) : NULL;
  int ok = text && fprintf(f, "%s\n", text) >= 0;
  cJSON_free(text);
  cJSON_Delete(o);
  return ok;
}

static int bench_chip(const char *graph_path, const char *chip_path, int n_evals) {
  graph *g = NULL;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  err_clear(&err);
  if (graph_load(graph_path, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  sim_options o;
  sim_options_init(&o);
  o.cache_size = 0;
  o.microbatches = microbatches;
  o.fast_gather = fast_gather;
  o.isolate = isolate;
  o.fast_streams = fast_streams;
  o.routing = routing;
  o.rerun_private = rerun_private;
  if (sim_new(c, &o, &s, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  rng r;
  rng_seed(&r, 42);
  int max_k = 16;
  if (max_k > g->n_ops) max_k = g->n_ops;
  if (max_k > c->n_cores) max_k = c->n_cores;
  int *layers = malloc((size_t)max_k * sizeof *layers), *cores = malloc((size_t)max_k * sizeof *cores);
  FILE *dump = dump_path ? fopen(dump_path, "w") : NULL;
  if (dump_path && !dump) {
    perror(dump_path);
    return 1;
  }
  long acts = 0, mbs = 0;
  int settled = 0;
  double stages = 0, first_makespan = 0, first_throughput = 0, t = now(), cpu = cpu_now();
  for (int e = 0; e < n_evals; e++) {
    int k = 1 + (int)rng_below(&r, (uint64_t)max_k);
    random_counts(&r, g->n_ops, k, layers);
    random_counts(&r, c->n_cores, k, cores);
    plan *p = NULL;
    sim_result res;
    if (plan_from_stages(layers, cores, k, &p, &err) != MP_OK || sim_evaluate(s, g, p, &res, &err) != MP_OK) {
      fprintf(stderr, "sim_speed: %s\n", err.msg);
      return 1;
    }
    if (dump && !dump_result(dump, &res)) {
      fprintf(stderr, "sim_speed: cannot write %s\n", dump_path);
      return 1;
    }
    acts += res.activities;
    mbs += res.microbatches;
    settled += res.period_kind != SIM_PERIOD_UNSETTLED;
    stages += k;
    if (e == 0) {
      first_makespan = res.makespan_s;
      first_throughput = res.samples_per_s;
    }
    sim_result_clear(&res);
    plan_free(p);
  }
  double dt = now() - t, dcpu = cpu_now() - cpu;
  if (dump && fclose(dump) != 0) {
    perror(dump_path);
    return 1;
  }
  /* the first plan again, after all the others: the clock has grown, the figures must not move */
  rng_seed(&r, 42);
  int k0 = 1 + (int)rng_below(&r, (uint64_t)max_k);
  random_counts(&r, g->n_ops, k0, layers);
  random_counts(&r, c->n_cores, k0, cores);
  plan *p0 = NULL;
  sim_result again;
  if (plan_from_stages(layers, cores, k0, &p0, &err) != MP_OK || sim_evaluate(s, g, p0, &again, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  int same = again.makespan_s == first_makespan && again.samples_per_s == first_throughput;
  if (!same)
    printf("  first plan: makespan %.17g then %.17g s, throughput %.17g then %.17g samples/s\n", first_makespan,
           again.makespan_s, first_throughput, again.samples_per_s);
  sim_result_clear(&again);
  plan_free(p0);
  sim_stats st;
  sim_get_stats(s, &st);
  char m[32], kind[32];
  snprintf(kind, sizeof kind, "%s%s%s", fast_gather ? "fast-gather" : "", fast_gather && fast_streams ? "+" : "",
           fast_streams ? "fast-streams" : "");
  if (!fast_gather && !fast_streams) snprintf(kind, sizeof kind, "%s", isolate ? "isolated" : "chain");
  if (microbatches > 0)
    snprintf(m, sizeof m, "M=%d", microbatches);
  else
    snprintf(m, sizeof m, "steady");
  printf("%-10s %4d cores  %-12s %-6s %6d evals  %8.1f evals/s  %8.1f evals/CPU-s  %6.1f micro-batches/eval  %7.1f "
         "activities/eval  %9.0f activities/s  (mean %.1f stages, %d of %d settled, start-up %.3f s, %.0f%% of the time "
         "in the engine; first plan again after all: %s)\n",
         c->name, c->n_cores, kind, m, n_evals, n_evals / dt, n_evals / dcpu, (double)mbs / n_evals,
         (double)acts / n_evals, (double)acts / dt,
         stages / n_evals, settled, n_evals, st.startup_s, 100 * st.engine_s / dt, same ? "identical" : "DIFFERENT");
  fflush(stdout);
  free(layers);
  free(cores);
  sim_free(s);
  chip_free(c);
  graph_free(g);
  return 0;
}

static int bench_startup(const char *graph_path, const char *chip_path) {
  graph *g = NULL;
  chip *c = NULL;
  sim *s = NULL;
  mp_error err;
  err_clear(&err);
  if (graph_load(graph_path, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  double t = now();
  if (sim_new(c, NULL, &s, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  double startup = now() - t;
  int k = 16, layers[16], cores[16];
  rng r;
  rng_seed(&r, 7);
  random_counts(&r, g->n_ops, k, layers);
  random_counts(&r, c->n_cores, k, cores);
  plan *p = NULL;
  sim_result res;
  t = now();
  if (plan_from_stages(layers, cores, k, &p, &err) != MP_OK || sim_evaluate(s, g, p, &res, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  double first = now() - t;
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("%-10s %4d cores  start-up %.3f s  first 16-stage evaluation %.3f s (%d micro-batches, %ld activities)  peak "
         "RSS %.1f MB\n",
         c->name, c->n_cores, startup, first, res.microbatches, res.activities, ru.ru_maxrss / 1024.0);
  fflush(stdout);
  sim_result_clear(&res);
  plan_free(p);
  sim_free(s);
  chip_free(c);
  graph_free(g);
  return 0;
}

static int in_child(int (*fn)(const char *, const char *, int), const char *a, const char *b, int n) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) return 1;
  if (pid == 0) _exit(fn(a, b, n));
  int status;
  if (waitpid(pid, &status, 0) < 0) return 1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int startup_adapter(const char *a, const char *b, int n) {
  (void)n;
  return bench_startup(a, b);
}

static const char usage[] = "usage: sim_speed [GRAPH [EVALUATIONS [CHIP [M [FAST [ISOLATE [DUMP [ROUTING "
                            "[RERUN [STREAMS]]]]]]]]]]   (from the source tree; see bench/sim_speed.c)";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  const char *graph_path = argc > 1 ? argv[1] : "traces/resnet50.json";
  int n = 2000;
  static const char *const chips[] = {"mesh4x4", "mesh8x8", "mesh16x16", "mesh32x32"};
  int rc = 0;
  if (argc > 2 && !bench_int("sim_speed", usage, "EVALUATIONS", argv[2], 1, INT_MAX, &n)) return 2;
  if (argc > 4 && !bench_int("sim_speed", usage, "M", argv[4], 0, INT_MAX, &microbatches)) return 2;
  if (argc > 5 && !bench_int("sim_speed", usage, "FAST", argv[5], 0, 1, &fast_gather)) return 2;
  if (argc > 6 && !bench_int("sim_speed", usage, "ISOLATE", argv[6], 0, 1, &isolate)) return 2;
  if (argc > 7 && strcmp(argv[7], "-") != 0) dump_path = argv[7];
  if (argc > 8 && !bench_int("sim_speed", usage, "ROUTING", argv[8], 0, 4, &routing)) return 2;
  if (argc > 9 && !bench_int("sim_speed", usage, "RERUN", argv[9], 0, 1, &rerun_private)) return 2;
  if (argc > 10 && !bench_int("sim_speed", usage, "STREAMS", argv[10], 0, 1, &fast_streams)) return 2;
  if (argc > 11) {
    fprintf(stderr, "sim_speed: too many arguments\n%s\n", usage);
    return 2;
  }
  graph *g = NULL; /* once here, so that a bad graph is said once rather than by every child */
  mp_error err;
  if (graph_load(graph_path, &g, &err) != MP_OK) {
    fprintf(stderr, "sim_speed: %s\n", err.msg);
    return 1;
  }
  graph_free(g);
  if (argc > 3) return in_child(bench_chip, graph_path, argv[3], n); /* one chip only */
  printf("sim_speed: %s, steady state, random plans of 1..16 stages, one process per chip\n", graph_path);
  for (int pass = 0; pass < 3; pass++) { /* the default, fast_gather, fast_streams */
    fast_gather = pass == 1;
    fast_streams = pass == 2;
    for (int i = 0; i < 4; i++) {
      char path[512];
      snprintf(path, sizeof path, "platforms/%s.json", chips[i]);
      int evals = i == 3 ? (n / 20 > 0 ? n / 20 : 1) : n;
      rc |= in_child(bench_chip, graph_path, path, evals);
    }
  }
  isolate = 1; /* bit-identical mode, on 8x8 */
  fast_gather = fast_streams = 0;
  rc |= in_child(bench_chip, graph_path, "platforms/mesh8x8.json", n / 4 > 0 ? n / 4 : 1);
  rc |= in_child(startup_adapter, graph_path, "platforms/mesh32x32.json", 0);
  return rc;
}
