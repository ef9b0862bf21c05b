/* testutil: see testutil.h. */
#include "testutil.h"

#include <CUnit/Basic.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chip.h"
#include "graph.h"
#include "jsonio.h"

#define N_SLOTS 8

static char *slot(void) {
  static char bufs[N_SLOTS][4096];
  static int next;
  return bufs[next++ % N_SLOTS];
}

static const char *temp_dir(void) {
  static char dir[256];
  if (!dir[0]) {
    const char *base = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/meshpipe-test-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      dir[0] = '\0';
      return "/tmp";
    }
  }
  return dir;
}

static void remove_temp_dir(void) {
  const char *dir = temp_dir();
  if (strncmp(dir, "/tmp", 4) != 0 && !getenv("TMPDIR")) return;
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "testutil: could not remove %s\n", dir);
}

const char *testutil_src(const char *relative) {
  char *b = slot();
  snprintf(b, 4096, "%s/%s", MESHPIPE_SOURCE_DIR, relative);
  return b;
}

const char *testutil_model(const char *name) {
  char *b = slot();
  snprintf(b, 4096, "%s/tests/models/%s", MESHPIPE_SOURCE_DIR, name);
  return b;
}

const char *testutil_temp_path(const char *name) {
  char *b = slot();
  snprintf(b, 4096, "%s/%s", temp_dir(), name);
  return b;
}

const char *testutil_write_temp(const char *name, const char *text) {
  const char *path = testutil_temp_path(name);
  FILE *f = fopen(path, "wb");
  if (!f) return path;
  fputs(text, f);
  fclose(f);
  return path;
}

int testutil_json_close(const cJSON *a, const cJSON *b, double rel, double abs) {
  if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
    return fabs(a->valuedouble - b->valuedouble) <= rel * fmax(fabs(a->valuedouble), fabs(b->valuedouble)) + abs;
  if ((a->type & 0xff) != (b->type & 0xff)) return 0;
  if (cJSON_IsString(a)) return strcmp(a->valuestring, b->valuestring) == 0;
  if (!cJSON_IsArray(a) && !cJSON_IsObject(a)) return 1;
  if (cJSON_GetArraySize(a) != cJSON_GetArraySize(b)) return 0;
  for (const cJSON *x = a->child, *y = b->child; x && y; x = x->next, y = y->next)
    if ((x->string && (!y->string || strcmp(x->string, y->string) != 0)) || !testutil_json_close(x, y, rel, abs)) {
      fprintf(stderr, "\n  '%s' differs\n", x->string ? x->string : "(item)");
      return 0;
    }
  return 1;
}

int testutil_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

graph *testutil_graph_text(const char *text) {
  cJSON *root = NULL;
  mp_error err;
  graph *g = NULL;
  if (jsonio_parse("g.json", text, strlen(text), &root, &err) == MP_OK) graph_from_json(root, "g.json", &g, &err);
  if (!g) fprintf(stderr, "graph refused: %s\n%s\n", err.msg, text);
  cJSON_Delete(root);
  return g;
}

chip *testutil_chip_text(const char *text) {
  cJSON *root = NULL;
  mp_error err;
  chip *c = NULL;
  if (jsonio_parse("c.json", text, strlen(text), &root, &err) == MP_OK) chip_from_json(root, "c.json", &c, &err);
  if (!c) fprintf(stderr, "chip refused: %s\n%s\n", err.msg, text);
  cJSON_Delete(root);
  return c;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return strdup("");
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (n + 1 >= cap) {
      char *bigger = realloc(buf, cap *= 2);
      if (!bigger) break;
      buf = bigger;
    }
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  return buf;
}

int testutil_meshpipe(const char *args, char **out, char **errout) {
  const char *o = testutil_temp_path("meshpipe.stdout"), *e = testutil_temp_path("meshpipe.stderr");
  size_t n = strlen(args) + 2 * 4096 + 64;
  char *cmd = malloc(n);
  if (!cmd) return -1;
  snprintf(cmd, n, "'%s' %s </dev/null >'%s' 2>'%s'", MESHPIPE_BINARY, args, o, e);
  int rc = system(cmd);
  free(cmd);
  if (out) *out = slurp(o);
  if (errout) *errout = slurp(e);
  return rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int testutil_in_child(int (*fn)(void *), void *arg) {
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) _exit(fn(arg));
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int testutil_run(const char *suite, CU_TestInfo *tests, int argc, char **argv) {
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_SuiteInfo suites[] = {{(char *)suite, NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
  if (CU_register_suites(suites) != CUE_SUCCESS) {
    CU_cleanup_registry();
    return 1;
  }
  CU_basic_set_mode(CU_BRM_VERBOSE);
  int rc;
  if (argc > 1) {
    CU_pSuite s = CU_get_suite(suite);
    CU_pTest t = s ? CU_get_test(s, argv[1]) : NULL;
    if (!t) {
      fprintf(stderr, "%s: no test named %s\n", argv[0], argv[1]);
      CU_cleanup_registry();
      return 1;
    }
    CU_basic_run_test(s, t);
  } else {
    CU_basic_run_tests();
  }
  rc = (int)CU_get_number_of_failures();
  if (CU_get_error() != CUE_SUCCESS) rc = rc ? rc : 1;
  CU_cleanup_registry();
  remove_temp_dir();
  return rc > 255 ? 255 : rc;
}

int testutil_mpi_available(const char **why) {
  char *out = NULL, *err = NULL;
  int built = testutil_meshpipe("sweep --help", &out, &err) == 0 && strstr(out, "is built with Open MPI");
  free(out);
  free(err);
  if (!built) {
    *why = "this meshpipe is built without Open MPI (install libopenmpi-dev, re-run cmake)";
    return 0;
  }
  if (system("command -v mpirun >/dev/null 2>&1") != 0) {
    *why = "mpirun is not on the PATH (install openmpi-bin)";
    return 0;
  }
  /* a machine where Open MPI cannot start local processes at all (no usable transport, say) */
  if (system("mpirun --allow-run-as-root --oversubscribe -np 2 /bin/true >/dev/null 2>&1") != 0) {
    *why = "mpirun cannot start two local processes here ('mpirun -np 2 /bin/true' fails)";
    return 0;
  }
  return 1;
}
