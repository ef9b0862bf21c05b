/* fuzz: what the fuzz targets (tests/fuzz/fuzz_<loader>.c) share.  Each target defines
 *     int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
 * and, when it needs a graph or a chip to load against, LLVMFuzzerInitialize; built with clang's
 * -fsanitize=fuzzer (libFuzzer) when it is there, else linked with driver.c, a standalone driver that
 * replays and mutates a corpus.  A target feeds the bytes to one loader, and when they load, uses what
 * came out the way meshpipe does (serialises it, walks it), then frees everything: a crash, a sanitizer
 * report, a leak or a hang is a finding.  Bad input must simply be refused. */
#ifndef MESHPIPE_FUZZ_H
#define MESHPIPE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "err.h"
#include "graph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A bundled file of the source tree, loaded once; aborts when it does not load (a broken build, not
 * a finding). */
static inline graph *fuzz_graph(const char *relative) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", MESHPIPE_SOURCE_DIR, relative);
  graph *g = NULL;
  mp_error err;
  if (graph_load(path, &g, &err) != MP_OK) {
    fprintf(stderr, "fuzz: %s\n", err.msg);
    abort();
  }
  return g;
}

static inline chip *fuzz_chip(const char *relative) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", MESHPIPE_SOURCE_DIR, relative);
  chip *c = NULL;
  mp_error err;
  if (chip_load(path, &c, &err) != MP_OK) {
    fprintf(stderr, "fuzz: %s\n", err.msg);
    abort();
  }
  return c;
}

/* Every refusal must be one line naming the file, and nothing else may come back (a loader that fails
 * with MP_OK, or an empty message, is a finding too). */
static inline void fuzz_check_refusal(mp_status st, const mp_error *err, const char *file) {
  if (st == MP_OK) return;
  if (err->status != st || !err->msg[0] || strchr(err->msg, '\n') || (st == MP_INPUT && !strstr(err->msg, file))) {
    fprintf(stderr, "fuzz: a refusal that is not one line naming %s: status %d, '%s'\n", file, (int)st, err->msg);
    abort();
  }
}

#endif
