/* onnx_import_speed: how long importing each ONNX model takes (read, decode, shapes, costs, fusion,
 * and building and validating the graph).
 *
 *     onnx_import_speed [DIR] [REPEATS]     (DIR defaults to tests/models, REPEATS to 10)
 *
 * Prints one line per model: file size, nodes, layers, GMACs and the best and mean wall time of
 * REPEATS imports. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "fileio.h"
#include "onnx_import.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static const char usage[] = "usage: onnx_import_speed [DIR [REPEATS]]   (DIR: tests/models, REPEATS: 10)";

int main(int argc, char **argv) {
  if (bench_help(argc, argv, usage)) return 0;
  const char *dir = argc > 1 ? argv[1] : "tests/models";
  int repeats = 10;
  if (argc > 2 && !bench_int("onnx_import_speed", usage, "REPEATS", argv[2], 1, 1000000, &repeats)) return 2;
  if (argc > 3) {
    fprintf(stderr, "onnx_import_speed: too many arguments\n%s\n", usage);
    return 2;
  }
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "onnx_import_speed: cannot open %s\n", dir);
    return 2;
  }
  char *names[256];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < 256;)
    if (fileio_has_suffix(e->d_name, ".onnx")) names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  printf("%-24s %10s %6s %7s %9s %10s %10s\n", "model", "bytes", "nodes", "layers", "GMACs", "best ms", "mean ms");
  int status = 0;
  for (int i = 0; i < n; i++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    struct stat sb;
    long long size = stat(path, &sb) == 0 ? (long long)sb.st_size : -1;
    double best = 1e30, total = 0;
    onnx_report rep = {0};
    mp_error err;
    int ok = 1;
    for (int r = 0; r < repeats && ok; r++) {
      graph *g = NULL;
      onnx_report_free(&rep);
      double t0 = now();
      mp_status st = onnx_import(path, NULL, &g, &rep, &err);
      double dt = now() - t0;
      graph_free(g);
      if (st != MP_OK) {
        fprintf(stderr, "onnx_import_speed: %s\n", err.msg);
        ok = 0;
        status = 1;
        break;
      }
      total += dt;
      if (dt < best) best = dt;
    }
    if (ok)
      printf("%-24s %10lld %6d %7d %9.4f %10.3f %10.3f\n", names[i], size, rep.nodes, rep.layers,
             (double)rep.macs / 1e9, best * 1e3, total / repeats * 1e3);
    onnx_report_free(&rep);
    free(names[i]);
  }
  return status;
}
