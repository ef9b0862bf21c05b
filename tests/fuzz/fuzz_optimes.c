/* Fuzz target: measured op times for the bundled tiny_resnet graph, as CSV, as JSON and guessed. */
#include "fuzz.h"
#include "optimes.h"

static graph *g;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  g = fuzz_graph("traces/tiny_resnet.json");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g) LLVMFuzzerInitialize(NULL, NULL);
  for (int csv = -1; csv <= 1; csv++) {
    optimes *t = NULL;
    mp_error err;
    mp_status st = optimes_parse("fuzz.csv", (const char *)data, size, csv, g, &t, &err);
    fuzz_check_refusal(st, &err, "fuzz.csv");
    for (int l = 0; t && l < g->n_ops; l++) {
      double f = optimes_flops(t, g, 1e12, l);
      if (!(f >= 0) || f > 1e30) abort(); /* what the simulator would charge: finite and sane */
    }
    optimes_free(t);
  }
  return 0;
}
