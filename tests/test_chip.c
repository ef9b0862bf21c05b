/* Tests of chip: every rejection of a bad chip file, snake numbering and XY hops against a
 * breadth-first search of the mesh, nearest DRAM port against a brute-force scan, the canonical form
 * and its hash, the bundled platforms, and the 'meshpipe chip' command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "fileio.h"
#include "jsonio.h"
#include "testutil.h"

#define HEAD "\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"t\", "
#define MESH "\"mesh\": {\"width\": 4, \"height\": 2}, "
#define CORE "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024}, "
#define NOC "\"noc\": {\"bandwidth\": 1e10, \"latency\": 5e-9}"
#define DRAM(ports) ", \"dram\": {\"bandwidth\": 1e11, \"ports\": " ports "}"
#define OVER(list) ", \"overrides\": " list
#define GOOD "{" HEAD MESH CORE NOC "}"

/* Parses text and builds a chip labelled "bad.json"; returns the status. */
static mp_status chip_from_text(const char *text, chip **out, mp_error *err) {
  cJSON *root = NULL;
  *out = NULL;
  mp_status st = jsonio_parse("bad.json", text, strlen(text), &root, err);
  if (st == MP_OK) st = chip_from_json(root, "bad.json", out, err);
  cJSON_Delete(root);
  return st;
}

/* A chip of the given shape with uniform cores, the optional tail appended inside the object. */
static chip *mesh_chip(int w, int h, const char *tail) {
  char text[2048];
  snprintf(text, sizeof text,
           "{" HEAD "\"mesh\": {\"width\": %d, \"height\": %d}, " CORE NOC "%s}", w, h, tail ? tail : "");
  chip *c = NULL;
  mp_error err;
  err_clear(&err);
  if (chip_from_text(text, &c, &err) != MP_OK) fprintf(stderr, "mesh_chip: %s\n", err.msg);
  return c;
}

static void a_good_chip_should_load_with_the_figures_of_the_file(void) {
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_from_text("{" HEAD MESH CORE NOC DRAM("[[0, 1], [3, 0]]") "}", &c, &err), MP_OK);
  CU_ASSERT_STRING_EQUAL(c->name, "t");
  CU_ASSERT_STRING_EQUAL(c->file, "bad.json");
  CU_ASSERT_EQUAL(c->width, 4);
  CU_ASSERT_EQUAL(c->height, 2);
  CU_ASSERT_EQUAL(c->n_cores, 8);
  for (int i = 0; i < 8; i++) {
    CU_ASSERT_EQUAL(c->cores[i].flops, 1e12);
    CU_ASSERT_EQUAL(c->cores[i].sram_bytes, 1024u);
    CU_ASSERT_EQUAL(c->cores[i].transfer_factor, 1.0);
  }
  CU_ASSERT_EQUAL(c->noc_bandwidth, 1e10);
  CU_ASSERT_EQUAL(c->noc_latency, 5e-9);
  CU_ASSERT_EQUAL(c->dram_bandwidth, 1e11);
  CU_ASSERT_EQUAL_FATAL(c->n_dram, 2);
  CU_ASSERT_EQUAL(c->dram[0].x, 0);
  CU_ASSERT_EQUAL(c->dram[0].y, 1);
  CU_ASSERT_EQUAL(c->dram[0].core, 7); /* row 1 runs right to left */
  CU_ASSERT_EQUAL(c->dram[1].core, 3);
  CU_ASSERT_EQUAL(c->heterogeneous, 0);
  CU_ASSERT_EQUAL(chip_total_flops(c), 8e12);
  CU_ASSERT_EQUAL(chip_total_sram(c), 8192u);
  chip_free(c);
}

static void a_core_model_and_energy_should_load_and_give_the_array_peak(void) {
  chip *c = NULL;
  mp_error err;
  const char *text = "{" HEAD MESH
                     "\"core\": {\"sram_bytes\": 1024, \"clock_hz\": 1e9, \"matrix\": {\"rows\": 32, \"cols\": 16}, "
                     "\"vector_lanes\": 64, \"sram_bandwidth\": 2.56e11}, " NOC
                     ", \"energy\": {\"mac_pj\": 0.25, \"noc_pj_per_byte_hop\": 3.2, \"static_w_per_core\": 0.05}}";
  CU_ASSERT_EQUAL_FATAL(chip_from_text(text, &c, &err), MP_OK);
  CU_ASSERT(c->has_arch && c->has_energy);
  CU_ASSERT_EQUAL(c->cores[5].flops, 2.0 * 32 * 16 * 1e9); /* the array's peak */
  CU_ASSERT(c->arch.matrix_rows == 32 && c->arch.matrix_cols == 16 && c->arch.vector_lanes == 64);
  CU_ASSERT_EQUAL(c->arch.sram_bandwidth, 2.56e11);
  CU_ASSERT_EQUAL(c->energy.mac_pj, 0.25);
  CU_ASSERT_EQUAL(c->energy.vector_op_pj, 0); /* absent: 0 */
  CU_ASSERT_EQUAL(c->energy.static_w_per_core, 0.05);
  /* the canonical form keeps them, and reads back to the same chip */
  cJSON *j = chip_to_json(c);
  chip *back = NULL;
  CU_ASSERT_EQUAL_FATAL(chip_from_json(j, "back.json", &back, &err), MP_OK);
  CU_ASSERT_EQUAL(back->hash, c->hash);
  CU_ASSERT_EQUAL(back->arch.clock_hz, 1e9);
  cJSON_Delete(j);
  chip_free(back);
  /* a flops beside the array that agrees is accepted; a chip without the keys keeps its old hash */
  chip *d = NULL, *plain = NULL;
  CU_ASSERT_EQUAL(chip_from_text("{" HEAD MESH "\"core\": {\"flops\": 1.024e12, \"sram_bytes\": 1024, \"clock_hz\": 1e9, "
                                 "\"matrix\": {\"rows\": 32, \"cols\": 16}}, " NOC "}",
                                 &d, &err),
                  MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_from_text(GOOD, &plain, &err), MP_OK);
  CU_ASSERT(!plain->has_arch && !plain->has_energy);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(j = chip_to_json(plain), "energy"));
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(j, "core")), 2); /* flops and sram_bytes only */
  cJSON_Delete(j);
  chip_free(d);
  chip_free(plain);
  chip_free(c);
}

static void a_zero_latency_and_no_dram_should_be_accepted(void) {
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(
      chip_from_text("{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e10, \"latency\": 0}}", &c, &err), MP_OK);
  CU_ASSERT_EQUAL(c->noc_latency, 0.0);
  CU_ASSERT_EQUAL(c->n_dram, 0);
  CU_ASSERT_EQUAL(c->dram_bandwidth, 0.0);
  CU_ASSERT_EQUAL(chip_nearest_dram(c, 3), -1);
  chip_free(c);
}

static void overrides_should_change_only_their_core(void) {
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_from_text("{" HEAD MESH CORE NOC OVER("[{\"core\": 5, \"flops\": 2e12, \"sram_bytes\": "
                                                                  "2048, \"transfer_factor\": 2.5}, {\"core\": 0, "
                                                                  "\"sram_bytes\": 4096}]") "}",
                                       &c, &err),
                        MP_OK);
  CU_ASSERT_EQUAL(c->cores[5].flops, 2e12);
  CU_ASSERT_EQUAL(c->cores[5].sram_bytes, 2048u);
  CU_ASSERT_EQUAL(c->cores[5].transfer_factor, 2.5);
  CU_ASSERT_EQUAL(c->cores[0].flops, 1e12);
  CU_ASSERT_EQUAL(c->cores[0].sram_bytes, 4096u);
  CU_ASSERT_EQUAL(c->cores[0].transfer_factor, 1.0);
  for (int i = 1; i < 8; i++)
    if (i != 5) CU_ASSERT(c->cores[i].flops == 1e12 && c->cores[i].sram_bytes == 1024u);
  CU_ASSERT_EQUAL(c->heterogeneous, 1);
  CU_ASSERT_EQUAL(chip_total_flops(c), 9e12);
  CU_ASSERT_EQUAL(chip_total_sram(c), 6u * 1024 + 2048 + 4096);
  chip_free(c);
}

static void a_group_should_sum_speeds_and_take_the_largest_factor_and_smallest_sram(void) {
  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_from_text("{" HEAD MESH CORE NOC OVER("[{\"core\": 5, \"flops\": 2e12, \"sram_bytes\": "
                                                                  "512, \"transfer_factor\": 2.5}, {\"core\": 3, "
                                                                  "\"sram_bytes\": 4096, \"transfer_factor\": 1.5}]") "}",
                                       &c, &err),
                        MP_OK);
  chip_group g = chip_group_of(c, 3, 4); /* cores 3..6 */
  CU_ASSERT_EQUAL(g.speed, 5e12);
  CU_ASSERT_EQUAL(g.gamma, 2.5);
  CU_ASSERT_EQUAL(g.sram_bytes, 512u);
  g = chip_group_of(c, 3, 2); /* cores 3..4: the first core's factor is the largest, the other's SRAM the least */
  CU_ASSERT_EQUAL(g.speed, 2e12);
  CU_ASSERT_EQUAL(g.gamma, 1.5);
  CU_ASSERT_EQUAL(g.sram_bytes, 1024u);
  g = chip_group_of(c, 6, 1);
  CU_ASSERT(g.speed == 1e12 && g.gamma == 1.0 && g.sram_bytes == 1024u);
  chip_free(c);
  c = mesh_chip(8, 8, NULL); /* alike cores: n times the speed, exactly */
  CU_ASSERT_FATAL(c != NULL);
  g = chip_group_of(c, 7, 37);
  CU_ASSERT_EQUAL(g.speed, 37 * 1e12);
  CU_ASSERT(g.gamma == 1.0 && g.sram_bytes == 1024u);
  chip_free(c);
}

/* Every rejection: the input, and the "where: what" the one-line message must contain. */
static const struct {
  const char *text, *want;
} bad_chips[] = {
    {"[1, 2]", "bad.json: expected a JSON object"},
    {"{" HEAD MESH CORE NOC ", \"colour\": 1}", "bad.json: colour: unknown key"},
    {"{\"version\": 1, \"name\": \"t\", " MESH CORE NOC "}", "bad.json: format: missing (required)"},
    {"{\"format\": \"meshpipe-graph\", \"version\": 1, \"name\": \"t\", " MESH CORE NOC "}",
     "bad.json: format: expected \"meshpipe-chip\", got \"meshpipe-graph\""},
    {"{\"format\": \"meshpipe-chip\", \"version\": 2, \"name\": \"t\", " MESH CORE NOC "}",
     "bad.json: version: version 2 is not supported"},
    {"{\"format\": \"meshpipe-chip\", \"version\": 1, " MESH CORE NOC "}", "bad.json: name: missing (required)"},
    {"{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"\", " MESH CORE NOC "}",
     "bad.json: name: must not be empty"},
    {"{" HEAD MESH CORE NOC ", \"name\": \"u\"}", "bad.json: name: given twice"},
    {"{" HEAD CORE NOC "}", "bad.json: mesh: missing (required)"},
    {"{" HEAD "\"mesh\": {\"width\": 0, \"height\": 8}, " CORE NOC "}",
     "bad.json: mesh.width: must be between 1 and 4096 (got 0)"},
    {"{" HEAD "\"mesh\": {\"width\": 8, \"height\": -3}, " CORE NOC "}",
     "bad.json: mesh.height: must be between 1 and 4096 (got -3)"},
    {"{" HEAD "\"mesh\": {\"width\": 2.5, \"height\": 2}, " CORE NOC "}", "bad.json: mesh.width: expected a whole number"},
    {"{" HEAD "\"mesh\": {\"width\": 65, \"height\": 64}, " CORE NOC "}",
     "bad.json: mesh: 65 x 64 = 4160 cores, more than the 4096 meshpipe supports"},
    {"{" HEAD "\"mesh\": {\"width\": 4, \"height\": 2, \"depth\": 2}, " CORE NOC "}", "bad.json: mesh.depth: unknown key"},
    {"{" HEAD "\"mesh\": {\"width\": 4}, " CORE NOC "}", "bad.json: mesh.height: missing (required)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 0, \"sram_bytes\": 1024}, " NOC "}", "bad.json: core.flops: must be >= 1e+06 (got 0)"},
    {"{" HEAD MESH "\"core\": {\"flops\": -1e12, \"sram_bytes\": 1024}, " NOC "}", "bad.json: core.flops: must be >= 1e+06"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e999, \"sram_bytes\": 1024}, " NOC "}",
     "bad.json: core.flops: number is not finite"},
    {"{" HEAD MESH "\"core\": {\"flops\": \"1e12\", \"sram_bytes\": 1024}, " NOC "}",
     "bad.json: core.flops: expected a number"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 0}, " NOC "}",
     "bad.json: core.sram_bytes: must be > 0 (got 0)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": -1}, " NOC "}",
     "bad.json: core.sram_bytes: must not be negative"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12}, " NOC "}", "bad.json: core.sram_bytes: missing (required)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"transfer_factor\": 0.5}, " NOC "}",
     "bad.json: core.transfer_factor: must be >= 1 (got 0.5)"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 0, \"latency\": 5e-9}}", "bad.json: noc.bandwidth: must be >= 1 (got 0)"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e10, \"latency\": -1e-9}}",
     "bad.json: noc.latency: must be >= 0 (got -1e-09)"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e10}}", "bad.json: noc.latency: missing (required)"},
    {"{" HEAD MESH CORE "\"noc\": [1e10, 5e-9]}", "bad.json: noc: expected an object"},
    {"{" HEAD MESH CORE NOC DRAM("[[0, 0], [4, 0]]") "}", "bad.json: dram.ports[1]: (4, 0) is off the 4 x 2 mesh"},
    {"{" HEAD MESH CORE NOC DRAM("[[0, -1]]") "}", "bad.json: dram.ports[0]: (0, -1) is off the 4 x 2 mesh"},
    {"{" HEAD MESH CORE NOC DRAM("[[1, 1], [2, 0], [1, 1]]") "}", "bad.json: dram.ports[2]: (1, 1) is already dram.ports[0]"},
    {"{" HEAD MESH CORE NOC DRAM("[[1]]") "}", "bad.json: dram.ports[0]: expected [x, y]"},
    {"{" HEAD MESH CORE NOC DRAM("[[0.5, 0]]") "}", "bad.json: dram.ports[0][0] (x): expected a whole number"},
    {"{" HEAD MESH CORE NOC DRAM("[]") "}", "bad.json: dram.ports: empty"},
    {"{" HEAD MESH CORE NOC ", \"dram\": {\"ports\": [[0, 0]]}}", "bad.json: dram.bandwidth: missing (required)"},
    {"{" HEAD MESH CORE NOC ", \"dram\": {\"bandwidth\": -2e11, \"ports\": [[0, 0]]}}", "bad.json: dram.bandwidth: must be >= 1"},
    {"{" HEAD MESH CORE NOC ", \"dram\": {\"bandwidth\": 2e11, \"ports\": [[0, 0]], \"channels\": 2}}",
     "bad.json: dram.channels: unknown key"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 8, \"flops\": 2e12}]") "}",
     "bad.json: overrides[0].core: core 8 is not on this chip (4 x 2 = 8 cores, ids 0-7)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": -1, \"flops\": 2e12}]") "}", "bad.json: overrides[0].core: must be between 0"},
    {"{" HEAD MESH CORE NOC OVER("[{\"flops\": 2e12}]") "}", "bad.json: overrides[0].core: missing (required)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 3, \"flops\": 2e12}, {\"core\": 3, \"sram_bytes\": 1}]") "}",
     "bad.json: overrides[1].core: core 3 is already overridden by overrides[0]"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1, \"transfer_factor\": 0.9}]") "}",
     "bad.json: overrides[0].transfer_factor: must be >= 1 (got 0.9)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1, \"flops\": 0}]") "}", "bad.json: overrides[0].flops: must be >= 1e+06 (got 0)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1, \"sram_bytes\": 0}]") "}",
     "bad.json: overrides[0].sram_bytes: must be > 0 (got 0)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1}]") "}", "bad.json: overrides[0]: changes nothing"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1, \"speed\": 2}]") "}", "bad.json: overrides[0].speed: unknown key"},
    /* figures outside the physical range, which SimGrid could not represent or would grind on */
    {"{" HEAD MESH "\"core\": {\"flops\": 5e-324, \"sram_bytes\": 1024}, " NOC "}",
     "bad.json: core.flops: must be >= 1e+06 (got 4.94066e-324)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e-300, \"sram_bytes\": 1024}, " NOC "}",
     "bad.json: core.flops: must be >= 1e+06 (got 1e-300)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 2e18, \"sram_bytes\": 1024}, " NOC "}",
     "bad.json: core.flops: must be <= 1e+18 (got 2e+18)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"transfer_factor\": 1e300}, " NOC "}",
     "bad.json: core.transfer_factor: must be <= 1000 (got 1e+300)"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e10, \"latency\": 1e308}}",
     "bad.json: noc.latency: must be <= 1 (got 1e+308)"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e10, \"latency\": 1.5}}", "bad.json: noc.latency: must be <= 1"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e-300, \"latency\": 0}}",
     "bad.json: noc.bandwidth: must be >= 1 (got 1e-300)"},
    {"{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e300, \"latency\": 0}}",
     "bad.json: noc.bandwidth: must be <= 1e+15 (got 1e+300)"},
    {"{" HEAD MESH CORE NOC ", \"dram\": {\"bandwidth\": 0.5, \"ports\": [[0, 0]]}}",
     "bad.json: dram.bandwidth: must be >= 1 (got 0.5)"},
    {"{" HEAD MESH CORE NOC ", \"dram\": {\"bandwidth\": 1e16, \"ports\": [[0, 0]]}}",
     "bad.json: dram.bandwidth: must be <= 1e+15 (got 1e+16)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1, \"flops\": 1e-300}]") "}",
     "bad.json: overrides[0].flops: must be >= 1e+06 (got 1e-300)"},
    {"{" HEAD MESH CORE NOC OVER("[{\"core\": 1, \"transfer_factor\": 1001}]") "}",
     "bad.json: overrides[0].transfer_factor: must be <= 1000 (got 1001)"},
    {"{" HEAD MESH CORE NOC OVER("[5]") "}", "bad.json: overrides[0]: expected an object"},
    {"{" HEAD MESH CORE NOC OVER("{\"core\": 1}") "}", "bad.json: overrides: expected an array"},
    {"{" HEAD MESH "\"core\": {\"sram_bytes\": 1024}, " NOC "}", "bad.json: core.flops: missing (required without core.matrix)"},
    {"{" HEAD MESH "\"core\": {\"sram_bytes\": 1024, \"matrix\": {\"rows\": 8, \"cols\": 8}}, " NOC "}",
     "bad.json: core.matrix: needs core.clock_hz"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"vector_lanes\": 8}, " NOC "}",
     "bad.json: core.vector_lanes: needs core.clock_hz"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"clock_hz\": 1e9, \"matrix\": {\"rows\": 8, \"cols\": 8}}, " NOC "}",
     "bad.json: core.flops: 1e+12 disagrees with the MAC array's peak 2 x 8 x 8 x 1e+09 Hz = 1.28e+11 flop/s"},
    {"{" HEAD MESH "\"core\": {\"sram_bytes\": 1024, \"clock_hz\": 1e9, \"matrix\": {\"rows\": 0, \"cols\": 8}}, " NOC "}",
     "bad.json: core.matrix.rows: must be between 1 and 65536 (got 0)"},
    {"{" HEAD MESH "\"core\": {\"sram_bytes\": 1024, \"clock_hz\": 1e9, \"matrix\": {\"rows\": 8}}, " NOC "}",
     "bad.json: core.matrix.cols: missing (required)"},
    {"{" HEAD MESH "\"core\": {\"sram_bytes\": 1024, \"clock_hz\": 1e9, \"matrix\": {\"rows\": 8, \"cols\": 8, \"depth\": 2}}, " NOC "}",
     "bad.json: core.matrix.depth: unknown key"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"clock_hz\": 0}, " NOC "}",
     "bad.json: core.clock_hz: must be >= 1000 (got 0)"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"sram_bandwidth\": -1}, " NOC "}",
     "bad.json: core.sram_bandwidth: must be >= 1 (got -1)"},
    {"{" HEAD MESH CORE NOC ", \"energy\": {\"mac_pj\": -0.1}}", "bad.json: energy.mac_pj: must be >= 0 (got -0.1)"},
    {"{" HEAD MESH CORE NOC ", \"energy\": {\"mac_nj\": 0.1}}", "bad.json: energy.mac_nj: unknown key"},
    {"{" HEAD MESH CORE NOC ", \"energy\": 3}", "bad.json: energy: expected an object"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"clock_hz\": 1e13}, " NOC "}",
     "bad.json: core.clock_hz: must be <= 1e+12 (got 1e+13)"},
    {"{" HEAD MESH "\"core\": {\"sram_bytes\": 1024, \"clock_hz\": 1e3, \"matrix\": {\"rows\": 16, \"cols\": 16}}, " NOC "}",
     "bad.json: core.clock_hz: the MAC array's peak 2 x 16 x 16 x 1000 Hz = 512000 flop/s is outside 1e+06 to 1e+18"},
    {"{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1024, \"sram_bandwidth\": 1e16}, " NOC "}",
     "bad.json: core.sram_bandwidth: must be <= 1e+15 (got 1e+16)"},
    {"{" HEAD MESH CORE NOC ", \"energy\": {\"dram_pj_per_byte\": 1e300}}",
     "bad.json: energy.dram_pj_per_byte: must be <= 1e+09 (got 1e+300)"},
    {"{" HEAD MESH CORE NOC ", \"energy\": {\"static_w_per_core\": 2e6}}",
     "bad.json: energy.static_w_per_core: must be <= 1e+06 (got 2e+06)"},
};

static void every_bad_chip_should_be_rejected_with_a_one_line_message_naming_the_place(void) {
  int n = (int)(sizeof bad_chips / sizeof bad_chips[0]);
  CU_ASSERT(n >= 15);
  for (int i = 0; i < n; i++) {
    chip *c = (chip *)1;
    mp_error err;
    err_clear(&err);
    mp_status st = chip_from_text(bad_chips[i].text, &c, &err);
    int ok = st == MP_INPUT && err.status == MP_INPUT && c == NULL && strstr(err.msg, bad_chips[i].want) == err.msg &&
             !strchr(err.msg, '\n');
    if (!ok) fprintf(stderr, "\nbad chip %d: status %s, message '%s', wanted '%s'\n", i, err_name(st), err.msg,
                     bad_chips[i].want);
    CU_ASSERT(ok);
    if (st == MP_OK) chip_free(c);
  }
  /* the ends of every range are accepted */
  static const char *const edges[] = {
      "{" HEAD MESH "\"core\": {\"flops\": 1e6, \"sram_bytes\": 1, \"transfer_factor\": 1000}, "
      "\"noc\": {\"bandwidth\": 1, \"latency\": 1}, \"dram\": {\"bandwidth\": 1, \"ports\": [[0, 0]]}}",
      "{" HEAD MESH "\"core\": {\"flops\": 1e18, \"sram_bytes\": 9007199254740992}, "
      "\"noc\": {\"bandwidth\": 1e15, \"latency\": 0}, \"dram\": {\"bandwidth\": 1e15, \"ports\": [[0, 0]]}}"};
  for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
    chip *c = NULL;
    mp_error err;
    CU_ASSERT_EQUAL(chip_from_text(edges[i], &c, &err), MP_OK);
    chip_free(c);
  }
  chip *largest = mesh_chip(64, 64, NULL), *line = mesh_chip(4096, 1, NULL); /* the limit itself is accepted */
  CU_ASSERT(largest && largest->n_cores == 4096 && line && line->n_cores == 4096);
  chip_free(largest);
  chip_free(line);
}

static void chip_load_should_report_a_missing_file_and_bad_json_with_the_path(void) {
  chip *c = (chip *)1;
  mp_error err;
  CU_ASSERT_EQUAL(chip_load(testutil_temp_path("nowhere.json"), &c, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(c);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "nowhere.json"));
  const char *path = testutil_write_temp("broken.json", "{\"format\": \"meshpipe-chip\",\n \"name\": }\n");
  CU_ASSERT_EQUAL(chip_load(path, &c, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "broken.json: line 2"));
  path = testutil_write_temp("width0.json", "{" HEAD "\"mesh\": {\"width\": 0, \"height\": 2}, " CORE NOC "}");
  CU_ASSERT_EQUAL(chip_load(path, &c, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "width0.json: mesh.width: "));
  chip_free(NULL);
}

static void snake_order_should_make_consecutive_ids_mesh_neighbours(void) {
  static const int shapes[][2] = {{1, 1}, {1, 7}, {7, 1}, {2, 2}, {3, 2}, {2, 3}, {4, 4}, {5, 3}, {8, 8}, {64, 64}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int w = shapes[s][0], h = shapes[s][1];
    chip *c = mesh_chip(w, h, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT_EQUAL(c->n_cores, w * h);
    for (int id = 0; id < c->n_cores; id++) {
      int x = c->cores[id].x, y = c->cores[id].y;
      CU_ASSERT_FATAL(x >= 0 && x < w && y >= 0 && y < h);
      CU_ASSERT_EQUAL(chip_core_at(c, x, y), id);
      CU_ASSERT_EQUAL(id, y * w + (y % 2 == 0 ? x : w - 1 - x));
      if (id + 1 < c->n_cores) CU_ASSERT_EQUAL(chip_hops(c, id, id + 1), 1);
    }
    for (int y = 0; y < h; y++)
      for (int x = 0; x < w; x++) {
        int id = chip_core_at(c, x, y);
        CU_ASSERT(c->cores[id].x == x && c->cores[id].y == y);
      }
    chip_free(c);
  }
}

static void snake_order_should_number_a_3x3_mesh_like_the_picture(void) {
  /* y=0: 0 1 2 / y=1: 5 4 3 / y=2: 6 7 8 */
  static const int want[3][3] = {{0, 1, 2}, {5, 4, 3}, {6, 7, 8}};
  chip *c = mesh_chip(3, 3, NULL);
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 3; x++) CU_ASSERT_EQUAL(chip_core_at(c, x, y), want[y][x]);
  chip_free(c);
}

/* Shortest path lengths from core src over mesh links, by breadth-first search (the reference). */
static void bfs_hops(const chip *c, int src, int *dist) {
  int *queue = malloc((size_t)c->n_cores * sizeof *queue), head = 0, tail = 0;
  for (int i = 0; i < c->n_cores; i++) dist[i] = -1;
  dist[src] = 0;
  queue[tail++] = src;
  while (head < tail) {
    int u = queue[head++];
    static const int dx[] = {1, -1, 0, 0}, dy[] = {0, 0, 1, -1};
    for (int k = 0; k < 4; k++) {
      int x = c->cores[u].x + dx[k], y = c->cores[u].y + dy[k];
      if (x < 0 || x >= c->width || y < 0 || y >= c->height) continue;
      int v = chip_core_at(c, x, y);
      if (dist[v] < 0) {
        dist[v] = dist[u] + 1;
        queue[tail++] = v;
      }
    }
  }
  free(queue);
}

static void chip_hops_should_equal_the_shortest_mesh_path(void) {
  static const int shapes[][2] = {{1, 6}, {6, 1}, {4, 4}, {5, 3}, {3, 7}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    chip *c = mesh_chip(shapes[s][0], shapes[s][1], NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    int *dist = malloc((size_t)c->n_cores * sizeof *dist);
    for (int a = 0; a < c->n_cores; a++) {
      bfs_hops(c, a, dist);
      for (int b = 0; b < c->n_cores; b++) {
        CU_ASSERT_EQUAL(chip_hops(c, a, b), dist[b]);
        CU_ASSERT_EQUAL(chip_hops(c, a, b), chip_hops(c, b, a));
      }
    }
    free(dist);
    chip_free(c);
  }
}

static void chip_nearest_dram_should_pick_the_fewest_hops_and_break_ties_by_port_index(void) {
  /* 3x1, ports listed (2,0) then (0,0): the middle core is one hop from both and gets port 0. */
  chip *c = mesh_chip(3, 1, DRAM("[[2, 0], [0, 0]]"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(chip_nearest_dram(c, 0), 1);
  CU_ASSERT_EQUAL(chip_nearest_dram(c, 1), 0);
  CU_ASSERT_EQUAL(chip_nearest_dram(c, 2), 0);
  chip_free(c);
  /* Against a brute-force scan on a larger mesh with many ties. */
  c = mesh_chip(6, 5, DRAM("[[5, 4], [0, 0], [2, 2], [3, 1], [0, 4]]"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  for (int core = 0; core < c->n_cores; core++) {
    int want = -1, best = 1 << 30;
    for (int p = 0; p < c->n_dram; p++) {
      int h = abs(c->cores[core].x - c->dram[p].x) + abs(c->cores[core].y - c->dram[p].y);
      if (h < best) {
        best = h;
        want = p;
      }
    }
    CU_ASSERT_EQUAL(chip_nearest_dram(c, core), want);
  }
  chip_free(c);
}

static int same_chip(const chip *a, const chip *b) {
  if (strcmp(a->name, b->name) || a->width != b->width || a->height != b->height || a->n_cores != b->n_cores ||
      a->noc_bandwidth != b->noc_bandwidth || a->noc_latency != b->noc_latency ||
      a->dram_bandwidth != b->dram_bandwidth || a->n_dram != b->n_dram || a->heterogeneous != b->heterogeneous ||
      a->hash != b->hash)
    return 0;
  for (int i = 0; i < a->n_cores; i++)
    if (a->cores[i].x != b->cores[i].x || a->cores[i].y != b->cores[i].y || a->cores[i].flops != b->cores[i].flops ||
        a->cores[i].sram_bytes != b->cores[i].sram_bytes || a->cores[i].transfer_factor != b->cores[i].transfer_factor)
      return 0;
  for (int i = 0; i < a->n_dram; i++)
    if (a->dram[i].x != b->dram[i].x || a->dram[i].y != b->dram[i].y || a->dram[i].core != b->dram[i].core) return 0;
  return 1;
}

static const char *const bundled[] = {"mesh4x4", "mesh8x8", "mesh16x16", "mesh32x32", "hetero3", "mesh8x8_fp16"};

static void chip_to_json_should_round_trip_every_bundled_platform_through_text(void) {
  for (size_t i = 0; i < sizeof bundled / sizeof bundled[0]; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "platforms/%s.json", bundled[i]);
    chip *a = NULL, *b = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src(rel), &a, &err), MP_OK);
    CU_ASSERT_STRING_EQUAL(a->name, bundled[i]);
    cJSON *j = chip_to_json(a), *back = NULL;
    CU_ASSERT_PTR_NOT_NULL_FATAL(j);
    char *text = cJSON_PrintUnformatted(j);
    CU_ASSERT_EQUAL(fileio_hash(FILEIO_HASH_INIT, text, strlen(text)), a->hash);
    CU_ASSERT_EQUAL_FATAL(jsonio_parse("canonical", text, strlen(text), &back, &err), MP_OK);
    CU_ASSERT_EQUAL_FATAL(chip_from_json(back, a->file, &b, &err), MP_OK);
    CU_ASSERT(same_chip(a, b));
    cJSON *again = chip_to_json(b);
    char *text2 = cJSON_PrintUnformatted(again);
    CU_ASSERT_STRING_EQUAL(text, text2);
    free(text);
    free(text2);
    cJSON_Delete(j);
    cJSON_Delete(back);
    cJSON_Delete(again);
    chip_free(a);
    chip_free(b);
  }
}

static uint64_t hash_of(const char *text) {
  chip *c = NULL;
  mp_error err;
  if (chip_from_text(text, &c, &err) != MP_OK) {
    fprintf(stderr, "\nhash_of: %s\n", err.msg);
    return 0;
  }
  uint64_t h = c->hash;
  chip_free(c);
  return h;
}

static void the_hash_should_depend_on_the_cores_not_on_how_the_file_spells_them(void) {
  /* Cores [2e12, 1e12, 1e12] written three ways: override on core 0; base 2e12 with two overrides;
   * reordered keys, extra spaces and a redundant override. */
  uint64_t a = hash_of("{" HEAD "\"mesh\": {\"width\": 3, \"height\": 1}, " CORE NOC OVER(
      "[{\"core\": 0, \"flops\": 2e12}]") "}");
  uint64_t b = hash_of("{" HEAD "\"mesh\": {\"width\": 3, \"height\": 1}, \"core\": {\"flops\": 2e12, "
                       "\"sram_bytes\": 1024}, " NOC OVER("[{\"core\": 2, \"flops\": 1e12}, {\"core\": 1, "
                                                          "\"flops\": 1000000000000}]") "}");
  uint64_t c = hash_of("{\"noc\": {\"latency\": 5e-9, \"bandwidth\": 1e10}, \"overrides\": [{\"core\": 1, "
                       "\"sram_bytes\": 1024, \"transfer_factor\": 1}, {\"flops\": 2e12, \"core\": 0}], "
                       "\"core\": {\"sram_bytes\": 1024, \"flops\": 1e12, \"transfer_factor\": 1.0}, "
                       "\"mesh\": {\"height\": 1, \"width\": 3}, \"name\": \"t\", \"version\": 1, "
                       "\"format\": \"meshpipe-chip\"}");
  CU_ASSERT_NOT_EQUAL(a, 0u);
  CU_ASSERT_EQUAL(a, b);
  CU_ASSERT_EQUAL(a, c);
  /* Any figure, the name, the shape or the port order changes it. */
  uint64_t base = hash_of(GOOD);
  CU_ASSERT_NOT_EQUAL(base, 0u);
  CU_ASSERT_NOT_EQUAL(base, hash_of("{" HEAD MESH CORE "\"noc\": {\"bandwidth\": 1e10, \"latency\": 6e-9}}"));
  CU_ASSERT_NOT_EQUAL(base, hash_of("{" HEAD MESH "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1025}, " NOC "}"));
  CU_ASSERT_NOT_EQUAL(base, hash_of("{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"u\", " MESH CORE NOC "}"));
  CU_ASSERT_NOT_EQUAL(base, hash_of("{" HEAD "\"mesh\": {\"width\": 2, \"height\": 4}, " CORE NOC "}"));
  CU_ASSERT_NOT_EQUAL(base, hash_of("{" HEAD MESH CORE NOC OVER("[{\"core\": 7, \"transfer_factor\": 2}]") "}"));
  CU_ASSERT_NOT_EQUAL(hash_of("{" HEAD MESH CORE NOC DRAM("[[0, 0], [3, 1]]") "}"),
                      hash_of("{" HEAD MESH CORE NOC DRAM("[[3, 1], [0, 0]]") "}"));
}

static void the_typical_core_should_be_the_most_common_figures_ties_to_the_lowest_id(void) {
  chip *c = mesh_chip(3, 1, OVER("[{\"core\": 0, \"flops\": 2e12}, {\"core\": 1, \"sram_bytes\": 8, "
                                 "\"transfer_factor\": 3}, {\"core\": 2, \"transfer_factor\": 2}]"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  chip_core t = chip_typical_core(c);
  CU_ASSERT_EQUAL(t.flops, 1e12);           /* two of three */
  CU_ASSERT_EQUAL(t.sram_bytes, 1024u);     /* two of three */
  CU_ASSERT_EQUAL(t.transfer_factor, 1.0);  /* 1, 3, 2: a three-way tie, core 0's value */
  CU_ASSERT(t.x == -1 && t.y == -1);
  chip_free(c);
  c = mesh_chip(2, 1, OVER("[{\"core\": 0, \"flops\": 5e11}]"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(chip_typical_core(c).flops, 5e11); /* one each: core 0 wins */
  chip_free(c);
}

static void an_override_equal_to_the_base_should_leave_the_chip_homogeneous(void) {
  chip *c = mesh_chip(4, 2, OVER("[{\"core\": 6, \"flops\": 1e12}]"));
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  CU_ASSERT_EQUAL(c->heterogeneous, 0);
  cJSON *j = chip_to_json(c);
  CU_ASSERT_PTR_NULL(cJSON_GetObjectItem(j, "overrides"));
  CU_ASSERT_EQUAL(c->hash, hash_of(GOOD));
  cJSON_Delete(j);
  chip_free(c);
}

static void the_bundled_platforms_should_have_the_documented_shapes(void) {
  static const int side[] = {4, 8, 16, 32};
  for (int i = 0; i < 4; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "platforms/%s.json", bundled[i]);
    chip *c = NULL;
    mp_error err;
    CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src(rel), &c, &err), MP_OK);
    CU_ASSERT(c->width == side[i] && c->height == side[i]);
    CU_ASSERT(c->n_dram >= 1);
    CU_ASSERT_EQUAL(c->heterogeneous, 0);
    for (int p = 0; p < c->n_dram; p++) /* DRAM ports sit on the mesh edge */
      CU_ASSERT(c->dram[p].x == 0 || c->dram[p].y == 0 || c->dram[p].x == c->width - 1 ||
                c->dram[p].y == c->height - 1);
    chip_free(c);
  }
  chip *h = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/hetero3.json"), &h, &err), MP_OK);
  CU_ASSERT(h->width == 3 && h->height == 1 && h->heterogeneous);
  CU_ASSERT_EQUAL(h->cores[0].transfer_factor, 1.0);
  CU_ASSERT_EQUAL(h->cores[1].transfer_factor, 1.0);
  CU_ASSERT_EQUAL(h->cores[2].transfer_factor, 2.0);
  CU_ASSERT_EQUAL(h->cores[0].flops, h->cores[1].flops);
  CU_ASSERT(h->cores[2].flops < h->cores[0].flops);
  chip_free(h);
}

/* mesh8x8_fp16 differs from mesh8x8 only by its core model and energy figures, at the same peak, so
 * the README's before/after compares per-op efficiency alone. */
static void the_fp16_8x8_should_be_the_8x8_with_a_core_model_and_energy_at_the_same_peak(void) {
  chip *a = NULL, *b = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh8x8.json"), &a, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh8x8_fp16.json"), &b, &err), MP_OK);
  CU_ASSERT(!a->has_arch && !a->has_energy && b->has_arch && b->has_energy);
  CU_ASSERT(a->width == b->width && a->height == b->height && a->noc_bandwidth == b->noc_bandwidth &&
            a->noc_latency == b->noc_latency && a->dram_bandwidth == b->dram_bandwidth && a->n_dram == b->n_dram);
  for (int p = 0; p < a->n_dram && p < b->n_dram; p++) CU_ASSERT_EQUAL(a->dram[p].core, b->dram[p].core);
  for (int k = 0; k < a->n_cores; k++)
    CU_ASSERT(a->cores[k].flops == b->cores[k].flops && a->cores[k].sram_bytes == b->cores[k].sram_bytes &&
              a->cores[k].transfer_factor == b->cores[k].transfer_factor);
  CU_ASSERT_EQUAL(b->cores[0].flops, 1e12); /* 2 x 32 x 16 x 976.5625 MHz, exactly */
  CU_ASSERT(b->arch.vector_lanes > 0 && b->arch.sram_bandwidth > 0);
  const chip_energy *e = &b->energy;
  CU_ASSERT(e->mac_pj > 0 && e->vector_op_pj > 0 && e->sram_pj_per_byte > 0 && e->noc_pj_per_byte_hop > 0 &&
            e->dram_pj_per_byte > 0 && e->static_w_per_core > 0);
  CU_ASSERT(a->hash != b->hash);
  chip_free(a);
  chip_free(b);
}

static void meshpipe_chip_should_print_the_summary_or_the_error(void) {
  char *out = NULL, *errout = NULL;
  CU_ASSERT_EQUAL(testutil_meshpipe("chip platforms/hetero3.json", &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "3 x 1 = 3 cores"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "30 TFLOP/s peak"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "core 2 at (2, 0): 2 TFLOP/s peak, 64 GiB SRAM, transfer factor 2"));
  free(out);
  free(errout);

  CU_ASSERT_EQUAL(testutil_meshpipe("chip", &out, &errout), 0); /* the default chip */
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "chip mesh8x8"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "64 GB/s per link and direction, 5 ns per hop"));
  free(out);
  free(errout);

  chip *c = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(chip_load(testutil_src("platforms/mesh16x16.json"), &c, &err), MP_OK);
  CU_ASSERT_EQUAL(testutil_meshpipe("chip --json platforms/mesh16x16.json", &out, &errout), 0);
  cJSON *j = NULL;
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("stdout", out, strlen(out), &j, &err), MP_OK);
  char hex[17];
  CU_ASSERT_STRING_EQUAL(cJSON_GetStringValue(cJSON_GetObjectItem(j, "hash")), fileio_hash_hex(c->hash, hex));
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "cores")), 256);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "total_flops")), 256e12);
  CU_ASSERT_EQUAL(cJSON_GetNumberValue(cJSON_GetObjectItem(j, "total_sram_bytes")), 256.0 * 2097152);
  chip *back = NULL;
  CU_ASSERT_EQUAL(chip_from_json(cJSON_GetObjectItem(j, "chip"), "stdout", &back, &err), MP_OK);
  CU_ASSERT(back && back->hash == c->hash);
  chip_free(back);
  chip_free(c);
  cJSON_Delete(j);
  free(out);
  free(errout);

  const char *bad = testutil_write_temp("zero.json", "{" HEAD "\"mesh\": {\"width\": 0, \"height\": 2}, " CORE NOC "}");
  char args[4200];
  snprintf(args, sizeof args, "chip '%s'", bad);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &errout), 2);
  CU_ASSERT_STRING_EQUAL(out, "");
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "meshpipe: "));
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "zero.json: mesh.width: must be between 1 and 4096 (got 0)\n"));
  free(out);
  free(errout);

  CU_ASSERT_EQUAL(testutil_meshpipe("chip --frobnicate platforms/mesh4x4.json", &out, &errout), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(errout, "unknown option"));
  free(out);
  free(errout);
  CU_ASSERT_EQUAL(testutil_meshpipe("chip platforms/mesh4x4.json platforms/mesh8x8.json", &out, &errout), 2);
  free(out);
  free(errout);
  CU_ASSERT_EQUAL(testutil_meshpipe("chip --help", &out, &errout), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: meshpipe chip"));
  free(out);
  free(errout);
}

static CU_TestInfo tests[] = {
    {"a_good_chip_should_load_with_the_figures_of_the_file", a_good_chip_should_load_with_the_figures_of_the_file},
    {"the_fp16_8x8_should_be_the_8x8_with_a_core_model_and_energy_at_the_same_peak",
     the_fp16_8x8_should_be_the_8x8_with_a_core_model_and_energy_at_the_same_peak},
    {"a_core_model_and_energy_should_load_and_give_the_array_peak",
     a_core_model_and_energy_should_load_and_give_the_array_peak},
    {"a_zero_latency_and_no_dram_should_be_accepted", a_zero_latency_and_no_dram_should_be_accepted},
    {"overrides_should_change_only_their_core", overrides_should_change_only_their_core},
    {"a_group_should_sum_speeds_and_take_the_largest_factor_and_smallest_sram",
     a_group_should_sum_speeds_and_take_the_largest_factor_and_smallest_sram},
    {"every_bad_chip_should_be_rejected_with_a_one_line_message_naming_the_place",
     every_bad_chip_should_be_rejected_with_a_one_line_message_naming_the_place},
    {"chip_load_should_report_a_missing_file_and_bad_json_with_the_path",
     chip_load_should_report_a_missing_file_and_bad_json_with_the_path},
    {"snake_order_should_make_consecutive_ids_mesh_neighbours", snake_order_should_make_consecutive_ids_mesh_neighbours},
    {"snake_order_should_number_a_3x3_mesh_like_the_picture", snake_order_should_number_a_3x3_mesh_like_the_picture},
    {"chip_hops_should_equal_the_shortest_mesh_path", chip_hops_should_equal_the_shortest_mesh_path},
    {"chip_nearest_dram_should_pick_the_fewest_hops_and_break_ties_by_port_index",
     chip_nearest_dram_should_pick_the_fewest_hops_and_break_ties_by_port_index},
    {"chip_to_json_should_round_trip_every_bundled_platform_through_text",
     chip_to_json_should_round_trip_every_bundled_platform_through_text},
    {"the_hash_should_depend_on_the_cores_not_on_how_the_file_spells_them",
     the_hash_should_depend_on_the_cores_not_on_how_the_file_spells_them},
    {"the_typical_core_should_be_the_most_common_figures_ties_to_the_lowest_id",
     the_typical_core_should_be_the_most_common_figures_ties_to_the_lowest_id},
    {"an_override_equal_to_the_base_should_leave_the_chip_homogeneous",
     an_override_equal_to_the_base_should_leave_the_chip_homogeneous},
    {"the_bundled_platforms_should_have_the_documented_shapes", the_bundled_platforms_should_have_the_documented_shapes},
    {"meshpipe_chip_should_print_the_summary_or_the_error", meshpipe_chip_should_print_the_summary_or_the_error},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("chip", tests, argc, argv); }
