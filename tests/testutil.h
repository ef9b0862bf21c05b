/* testutil: what every CUnit suite shares — the runner, temporary files, graphs and chips from JSON
 * text, running the meshpipe binary, and running a function in a child process (SimGrid's engine
 * starts once per process).
 * Each tests/test_<module>.c ends with
 *     int main(int argc, char **argv) { return testutil_run("module", tests, argc, argv); }
 * and the runner's exit status is CU_get_number_of_failures() (non-zero when anything failed). */
#ifndef MESHPIPE_TESTUTIL_H
#define MESHPIPE_TESTUTIL_H

#include <stddef.h>

#include <CUnit/CUnit.h>

struct chip;  /* chip.h */
struct cJSON; /* cJSON.h */
struct graph; /* graph.h */

/* Registers one suite of tests (NULL-terminated CU_TestInfo array) and runs it verbosely.  With an
 * argument, only the test of that name runs.  Returns the number of failures (0 = success), or 1 when
 * CUnit itself failed or the named test does not exist. */
int testutil_run(const char *suite, CU_TestInfo *tests, int argc, char **argv);

/* Absolute path of a file in the source tree / of a real model in tests/models (result is a static
 * buffer rotated over 8 calls, so a few may be live at once). */
const char *testutil_src(const char *relative);
const char *testutil_model(const char *name);

/* Writes text to a new file in a fresh temporary directory; returns its path (static, rotated). */
const char *testutil_write_temp(const char *name, const char *text);

/* A path in the temporary directory that does not exist yet. */
const char *testutil_temp_path(const char *name);

/* A graph / chip built from its JSON text (borrowed), labelled "g.json" / "c.json" in messages; an owned
 * object (graph_free / chip_free), or NULL when refused, the reason and the text then on stderr. */
struct graph *testutil_graph_text(const char *text);
struct chip *testutil_chip_text(const char *text);

/* Runs the meshpipe binary with the given arguments (a shell command line fragment, already quoted),
 * capturing stdout and stderr into owned strings (free()).  Returns the exit status, or -1. */
int testutil_meshpipe(const char *args, char **out, char **errout);

/* Runs fn(arg) in a forked child and returns the child's exit status (fn's return value), or -1 if it
 * died by a signal.  CUnit assertions inside fn count in the child only: return non-zero instead. */
int testutil_in_child(int (*fn)(void *), void *arg);

/* 1 when a and b hold the same keys, strings and booleans, and numbers equal to rel relative or abs
 * absolute (figures of two runs whose engine clocks differ in their last bits); else 0, the first key
 * that differs then on stderr. */
int testutil_json_close(const struct cJSON *a, const struct cJSON *b, double rel, double abs);

/* 1 if the file exists. */
int testutil_exists(const char *path);

/* 1 when this meshpipe is built with Open MPI and mpirun is on the PATH and can start two local
 * processes; else 0 and *why says which is missing (tests that need mpirun print it and skip). */
int testutil_mpi_available(const char **why);

#endif
