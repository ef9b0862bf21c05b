/* trace_speed: how long recording and replaying a time-independent trace take.
 *
 * For a graph and a chip (default: ResNet-50 from traces/ on the bundled 16x16 mesh) it makes the
 * optimal plan, then measures in one process: starting the engine; recording (simulate the plan,
 * compile its trace, write it); replaying (read the file back, place it on the chip, simulate it);
 * and checks that the replay gives the figures of the simulation.  Prints wall-clock seconds.
 *
 * usage: trace_speed [GRAPH.json [CHIP.json [M]]]   (run from the source tree for the defaults) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "chip.h"
#include "fileio.h"
#include "graph.h"
#include "method.h"
#include "plan.h"
#include "sim.h"
#include "trace.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static char *result_text(const sim_result *r) {
  cJSON *o = sim_result_to_json(r);
  char *s = o ? cJSON_PrintUnformatted(o) : NULL;
  cJSON_Delete(o);
  return s;
}

static const char usage[] = "usage: trace_speed [GRAPH.json [CHIP.json [M]]]   (from the source tree)";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  const char *graph_path = argc > 1 ? argv[1] : "traces/resnet50.json";
  const char *chip_path = argc > 2 ? argv[2] : "platforms/mesh16x16.json";
  int M = 8;
  if (argc > 3 && !bench_int("trace_speed", usage, "M", argv[3], 1, 1000000, &M)) return 2;
  if (argc > 4) {
    fprintf(stderr, "trace_speed: too many arguments\n%s\n", usage);
    return 2;
  }
  const char *trace_path = "trace_speed.trace";
  graph *g = NULL;
  chip *c = NULL;
  plan *p = NULL;
  sim *s = NULL;
  trace *t = NULL, *back = NULL, *placed = NULL;
  sim_result a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  method_report rep;
  mp_error err;
  err_clear(&err);
  int rc = 1;
  if (M < 1) {
    fprintf(stderr, "trace_speed: M must be at least 1\n");
    return 2;
  }
  if (graph_load(graph_path, &g, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      method_run("optimal", g, c, NULL, &p, &rep, &err) != MP_OK)
    goto done;
  sim_options o;
  sim_options_init(&o);
  o.microbatches = M;
  o.cache_size = 0;
  double t0 = now();
  if (sim_new(c, &o, &s, &err) != MP_OK) goto done;
  double t1 = now();
  if (sim_evaluate(s, g, p, &a, &err) != MP_OK || sim_record(s, g, p, M, &t, &err) != MP_OK ||
      trace_write(t, trace_path, &err) != MP_OK)
    goto done;
  double t2 = now();
  if (trace_load(trace_path, &back, &err) != MP_OK || trace_map(back, c, NULL, &placed, &err) != MP_OK ||
      sim_replay(s, placed, &b, &err) != MP_OK)
    goto done;
  double t3 = now();
  char *x = result_text(&a), *y = result_text(&b);
  int same = x && y && strcmp(x, y) == 0;
  free(x);
  free(y);
  printf("%s (%d layers) on %s (%d cores), optimal plan of %d stages, %d micro-batches\n", g->name, g->n_ops, c->name,
         c->n_cores, p->n_stages, M);
  printf("engine start           %8.3f s\n", t1 - t0);
  printf("record                 %8.3f s  (simulate + compile + write %ld actions to %s)\n", t2 - t1,
         trace_count_actions(t), trace_path);
  printf("replay                 %8.3f s  (read + check + place + simulate)\n", t3 - t2);
  printf("record incl. start     %8.3f s\n", t2 - t0);
  printf("replay incl. start     %8.3f s  (engine start + replay, as 'meshpipe replay' pays it)\n",
         (t1 - t0) + (t3 - t2));
  printf("throughput             %.6g samples/s simulated, %.6g replayed: %s\n", a.samples_per_s, b.samples_per_s,
         same ? "identical figures" : "FIGURES DIFFER");
  rc = same ? 0 : 1;
  remove(trace_path);
done:
  if (err.status != MP_OK) fprintf(stderr, "trace_speed: %s\n", err.msg);
  sim_result_clear(&a);
  sim_result_clear(&b);
  trace_free(placed);
  trace_free(back);
  trace_free(t);
  sim_free(s);
  plan_free(p);
  chip_free(c);
  graph_free(g);
  return rc;
}
