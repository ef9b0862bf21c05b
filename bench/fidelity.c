/* fidelity: the analytical model against the simulator over the matrix of harness/fidelity.h.
 *
 *   build/fidelity [--quick] [--fast-streams] [-j N] [--filter TEXT] [--json FILE] [--methods a,b,...]
 *
 * Run from the top of the repository (it reads tests/models, traces and platforms).  Prints one line
 * per case (optimal's plan: the model's period, the simulated steady period, their ratio, what sets
 * the model's period, how the simulator measured its own, the term that makes most of the difference,
 * optimal's simulated throughput and its share of the best plan's over the methods) and the summary;
 * --json also writes every figure.  Each case runs in a process of its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "fidelity.h"
#include "jsonio.h"

static void progress(void *ctx, int done, int total) {
  (void)ctx;
  fprintf(stderr, "\rfidelity: %d of %d cases", done, total);
  if (done == total) fprintf(stderr, "\n");
}

static const char usage[] =
    "usage: fidelity [--quick] [--fast-streams] [-j N] [--filter TEXT] [--json FILE] [--methods a,b,...]";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  int quick = 0, jobs = 1, fast_streams = 0;
  const char *filter = NULL, *json = NULL, *methods[FIDELITY_MAX_METHODS];
  int n_methods = 0;
  char list[256] = "";
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0)
      quick = 1;
    else if (strcmp(argv[i], "--fast-streams") == 0)
      fast_streams = 1;
    else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc) {
      if (!bench_int("fidelity", usage, "-j", argv[++i], 1, 256, &jobs)) return 2;
    } else if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc)
      filter = argv[++i];
    else if (strcmp(argv[i], "--json") == 0 && i + 1 < argc)
      json = argv[++i];
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
  mp_error err;
  err_clear(&err);
  fidelity_matrix *m = NULL;
  mp_status st = fidelity_new(".", quick, n_methods ? methods : NULL, n_methods, &m, &err);
  if (st == MP_OK) {
    m->fast_streams = fast_streams;
    st = fidelity_run(m, jobs, filter, progress, NULL, &err);
  }
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
  if (json) {
    cJSON *root = fidelity_to_json(m);
    if (!root || jsonio_save(json, root, &err) != MP_OK) {
      fprintf(stderr, "fidelity: %s\n", root ? err.msg : "out of memory");
      rc = 1;
    }
    cJSON_Delete(root);
  }
  fidelity_free(m);
  return rc;
}
