/* fidelity: the analytical model against the simulator over the matrix of harness/fidelity.h.
 *
 *   build/fidelity [--quick] [--fast-streams] [-j N] [--filter TEXT] [--json FILE [--resume]]
 *                  [--methods a,b,...] [--plans DIR]
 *
 * Run from the top of the repository (it reads tests/models, traces and platforms).  Prints one line
 * per case (optimal's plan: the model's period, the simulated steady period, their ratio, what sets
 * the model's period, how the simulator measured its own, the term that makes most of the difference,
 * optimal's simulated throughput and its share of the best plan's over the methods) and the summary;
 * --json also writes every figure, rewritten as each case finishes; --resume takes the finished cases of
 * that file (an earlier run stopped before its end) and runs the rest; --plans keeps the chips and every
 * method's plan in DIR (fidelity.h).  Each case runs in a process of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "fidelity.h"
#include "jsonio.h"

static void progress(void *ctx, int done, int total) {
  (void)ctx;
  fprintf(stderr, "\rfidelity: %d of %d cases", done, total);
  if (done == total) fprintf(stderr, "\n");
}

static const char usage[] =
    "usage: fidelity [--quick] [--fast-streams] [-j N] [--filter TEXT] [--json FILE [--resume]] [--methods a,b,...]\n"
    "                [--plans DIR]";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  int quick = 0, jobs = 1, fast_streams = 0, resume = 0;
  const char *filter = NULL, *json = NULL, *plans = NULL, *methods[FIDELITY_MAX_METHODS];
  int n_methods = 0;
  char list[256] = "";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--fast-streams") == 0)
      fast_streams = 1;
    else if (strcmp(argv[i], "--resume") == 0)
      resume = 1;
    else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc) {
      if (!bench_int("fidelity", usage, "-j", argv[++i], 1, 256, &jobs)) return 2;
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
      filter = argv[++i];
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
    else if (strcmp(argv[i], "--plans") == 0 && i + 1 < argc)
      plans = argv[++i];
    else if (strcmp(argv[i], "--methods") == 0 && i + 1 < argc) {
      snprintf(list, sizeof list, "%s", argv[++i]);
      for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
        if (n_methods == FIDELITY_MAX_METHODS) {
          fprintf(stderr, "fidelity: --methods: at most %d methods\n%s\n", FIDELITY_MAX_METHODS, usage);
          return 2;
        }
        methods[n_methods++] = t;
      }
    } else {
      fprintf(stderr, "%s\n", usage);
      return 2;
    }
  }
  if (resume && !json) {
    fprintf(stderr, "fidelity: --resume needs --json FILE, the run to resume\n%s\n", usage);
    return 2;
  }
  mp_error err;
  err_clear(&err);
  fidelity_matrix *m = NULL;
  mp_status st = fidelity_new(".", quick, n_methods ? methods : NULL, n_methods, &m, &err);
  if (st == MP_OK) {
    m->fast_streams = fast_streams;
    m->save_path = json;
    m->plans_dir = plans;
    int taken = 0, stale = 0;
    if (resume && access(json, F_OK) == 0) st = fidelity_resume(m, json, &taken, &stale, &err);
    if (st == MP_OK && resume) fprintf(stderr, "fidelity: %d cases taken from %s, %d changed since\n", taken, json, stale);
  }
  if (st == MP_OK) st = fidelity_run(m, jobs, filter, progress, NULL, &err);
  if (st != MP_OK) {
    fprintf(stderr, "fidelity: %s\n", err.msg);
    fidelity_free(m);
    return 1;
  }
  strbuf table = {0};
  fidelity_table(m, &table);
  fputs(table.s ? table.s : "", stdout);
  strbuf_clear(&table);
  int rc = 0;
  if (json && fidelity_save(m, json, &err) != MP_OK) {
    fprintf(stderr, "fidelity: %s\n", err.msg);
    rc = 1;
  }
  fidelity_free(m);
  return rc;
}
