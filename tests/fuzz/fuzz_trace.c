/* Fuzz target: the trace reader; a trace that reads is written back (and must read back to the same
 * text) and placed on a larger chip, as replay does with --map. */
#include "fuzz.h"
#include "trace.h"

static chip *big;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  big = fuzz_chip("platforms/mesh16x16.json");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!big) LLVMFuzzerInitialize(NULL, NULL);
  trace *t = NULL, *m = NULL;
  mp_error err;
  mp_status st = trace_parse("fuzz.trace", (const char *)data, size, &t, &err);
  fuzz_check_refusal(st, &err, "fuzz.trace");
  if (t) {
    char *text = NULL, *text2 = NULL;
    size_t len = 0, len2 = 0;
    trace *back = NULL;
    if (trace_to_string(t, &text, &len, &err) == MP_OK) {
      if (trace_parse("again.trace", text, len, &back, &err) != MP_OK) {
        fprintf(stderr, "fuzz: a written trace does not read back: %s\n", err.msg);
        abort();
      }
      if (trace_to_string(back, &text2, &len2, &err) != MP_OK || len != len2 || memcmp(text, text2, len) != 0) abort();
    }
    trace_count_actions(t);
    if (trace_map(t, big, "snake", &m, &err) != MP_OK) fuzz_check_refusal(err.status, &err, "fuzz.trace");
    free(text);
    free(text2);
    trace_free(back);
  }
  trace_free(m);
  trace_free(t);
  return 0;
}
