/* Fuzz target: the graph loader (JSON text -> graph_from_json), then what meshpipe does with a graph:
 * totals, the canonical serialisation, name lookups. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "jsonio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *root = NULL;
  graph *g = NULL;
  mp_error err;
  mp_status st = jsonio_parse("fuzz.json", (const char *)data, size, &root, &err);
  if (st == MP_OK) st = graph_from_json(root, "fuzz.json", &g, &err);
  fuzz_check_refusal(st, &err, "fuzz.json");
  if (g) {
    graph_totals t;
    graph_get_totals(g, &t);
    cJSON *again = graph_to_json(g);
    graph *g2 = NULL;
    if (again && graph_from_json(again, "again.json", &g2, &err) != MP_OK) {
      fprintf(stderr, "fuzz: the canonical form of a loaded graph does not load: %s\n", err.msg);
      abort();
    }
    if (g2 && g2->hash != g->hash) abort(); /* equal graphs hash equal */
    graph_find_op(g, g->ops[g->n_ops - 1].name);
    graph_find_tensor(g, g->tensors[g->n_tensors - 1].name);
    graph_free(g2);
    cJSON_Delete(again);
  }
  graph_free(g);
  cJSON_Delete(root);
  return 0;
}
