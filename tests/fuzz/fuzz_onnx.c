/* Fuzz target: the ONNX importer on protobuf bytes, then the graph it makes (as 'meshpipe info
 * MODEL.onnx' does), with and without fusion. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "onnx_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int no_fuse = 0; no_fuse < 2; no_fuse++) {
    onnx_options o = {"fp16", 0, no_fuse};
    onnx_report rep;
    cJSON *doc = NULL;
    graph *g = NULL;
    mp_error err;
    mp_status st = onnx_import_json_mem("fuzz.onnx", data, size, &o, &doc, &rep, &err);
    if (st == MP_OK) {
      char warning[1024];
      onnx_report_warning(&rep, warning, sizeof warning);
      st = graph_from_json(doc, "fuzz.onnx", &g, &err);
      onnx_report_free(&rep);
    }
    if (st != MP_USAGE) fuzz_check_refusal(st, &err, "fuzz.onnx"); /* USAGE: --batch against the model's */
    if (g) {
      graph_totals t;
      graph_get_totals(g, &t);
    }
    graph_free(g);
    cJSON_Delete(doc);
  }
  return 0;
}
