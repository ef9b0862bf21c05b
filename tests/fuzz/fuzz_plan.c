/* Fuzz target: the plan loader, against the bundled tiny_resnet graph on the 4x4 chip and against
 * no graph and chip (counts from the list itself); a loaded plan is serialised and looked up. */
#include "fuzz.h"
#include "plan.h"

static graph *g;
static chip *c;

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  g = fuzz_graph("traces/tiny_resnet.json");
  c = fuzz_chip("platforms/mesh4x4.json");
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!g) LLVMFuzzerInitialize(NULL, NULL);
  for (int against = 0; against < 2; against++) {
    plan *p = NULL;
    mp_error err;
    mp_status st = plan_parse("fuzz.json", (const char *)data, size, against ? g : NULL, against ? c : NULL, &p, &err);
    fuzz_check_refusal(st, &err, "fuzz.json");
    if (p) {
      if (plan_stage_of_layer(p, p->n_layers - 1) != p->n_stages - 1 || plan_stage_of_core(p, 0) != 0) abort();
      cJSON *j = plan_to_json(p, against ? g : NULL, against ? c : NULL);
      cJSON_Delete(j);
      plan_hash(p);
    }
    plan_free(p);
  }
  return 0;
}
