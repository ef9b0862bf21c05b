/* Fuzz target: the chip loader (JSON text -> chip_from_json), then routes, groups and the canonical
 * form, which must load back to the same hash. */
#include <cjson/cJSON.h>

#include "fuzz.h"
#include "jsonio.h"

static void count(void *ctx, int link) { *(long *)ctx += link >= 0; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cJSON *root = NULL;
  chip *c = NULL;
  mp_error err;
  mp_status st = jsonio_parse("fuzz.json", (const char *)data, size, &root, &err);
  if (st == MP_OK) st = chip_from_json(root, "fuzz.json", &c, &err);
  fuzz_check_refusal(st, &err, "fuzz.json");
  if (c) {
    long links = 0;
    char name[64];
    int last = c->n_cores - 1;
    chip_route(c, 0, last, count, &links);
    if (c->n_dram > 0) chip_route(c, CHIP_PORT(c->n_dram - 1), last, count, &links);
    for (int l = 0; l < chip_n_links(c); l += 1 + chip_n_links(c) / 64) chip_link_name(c, l, name, sizeof name);
    chip_group g = chip_group_of(c, 0, c->n_cores);
    if (!(g.speed > 0) || !(g.gamma >= 1) || chip_total_flops(c) <= 0) abort();
    chip_nearest_dram(c, last);
    cJSON *again = chip_to_json(c);
    chip *c2 = NULL;
    if (again && chip_from_json(again, "again.json", &c2, &err) != MP_OK) {
      fprintf(stderr, "fuzz: the canonical form of a loaded chip does not load: %s\n", err.msg);
      abort();
    }
    if (c2 && c2->hash != c->hash) abort();
    chip_free(c2);
    cJSON_Delete(again);
  }
  chip_free(c);
  cJSON_Delete(root);
  return 0;
}
