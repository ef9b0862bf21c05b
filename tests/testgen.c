/* testgen: see testgen.h. */
#include "testgen.h"

#include <stdio.h>

#include "chip.h"
#include "plan.h"
#include "strbuf.h"
#include "testutil.h"

static uint64_t rng_state;

static uint64_t next_u64(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * UINT64_C(2685821657736338717);
}

void testgen_seed(uint64_t seed) { rng_state = seed; }

static int below(int n) { return (int)(next_u64() % (uint64_t)n); }

int testgen_below(int n) { return below(n); }

chip *testgen_chip(int w, int h, int hetero, double sram_scale, int n_ports, int flags) {
  strbuf b = {0};
  double bw = 1e8 * (1 + below(20)), lat = below(3) == 0 ? 0 : 1e-6 * (1 + below(20));
  char model[256] = "";
  /* drawn in the order GCC evaluated the printf arguments these came from (right to left), so that
   * chips without a core model are the ones the suites have always drawn */
  double gamma = 1.0 + below(2);
  unsigned long long sram_bytes = 1 + (unsigned long long)(sram_scale * below(100000));
  double flops = 1e9 * (1 + below(8));
  if (flags & TESTGEN_CORE_MODEL) {
    int matrix = below(4) > 0, lanes = below(4) > 0 ? 1 + below(64) : 0, sram = below(4) == 0;
    double clock = 1e5 * (1 + below(10));
    int cols = matrix ? 1 << below(5) : 0, rows = matrix ? 1 << below(5) : 0; /* GCC's order, as above */
    if (matrix && 2.0 * rows * cols * clock < 1e6) clock = 1e6 / (2.0 * rows * cols); /* a chip's least peak */
    int len = snprintf(model, sizeof model, ",\"clock_hz\":%g", clock);
    if (matrix)
      len += snprintf(model + len, sizeof model - (size_t)len, ",\"matrix\":{\"rows\":%d,\"cols\":%d}", rows, cols);
    if (lanes) len += snprintf(model + len, sizeof model - (size_t)len, ",\"vector_lanes\":%d", lanes);
    if (sram) snprintf(model + len, sizeof model - (size_t)len, ",\"sram_bandwidth\":%g", 1e8 * (1 + below(50)));
    if (matrix) flops = 0; /* the array's peak */
  }
  char fl[64] = "";
  if (flops > 0) snprintf(fl, sizeof fl, "\"flops\":%g,", flops);
  strbuf_printf(&b,
                "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"r\",\"mesh\":{\"width\":%d,\"height\":%d},"
                "\"core\":{%s\"sram_bytes\":%llu,\"transfer_factor\":%g%s},"
                "\"noc\":{\"bandwidth\":%g,\"latency\":%g}",
                w, h, fl, sram_bytes, gamma, model, bw, lat);
  if (n_ports > 0) {
    int taken[64] = {0};
    strbuf_printf(&b, ",\"dram\":{\"bandwidth\":%g,\"ports\":[", bw * (0.1 + 0.1 * below(40)));
    for (int i = 0; i < n_ports; i++) {
      int at = below(w * h);
      while (taken[at]) at = (at + 1) % (w * h);
      taken[at] = 1;
      strbuf_printf(&b, "%s[%d,%d]", i ? "," : "", at % w, at / w);
    }
    strbuf_printf(&b, "]}");
  }
  if (hetero) {
    strbuf_printf(&b, ",\"overrides\":[");
    int n = w * h, first = 1;
    for (int i = 0; i < n; i++)
      if (below(2) || i == n - 1) {
        double core_gamma = 1.0 + below(3); /* GCC's order, as above */
        unsigned long long core_sram = 1 + (unsigned long long)(sram_scale * below(100000));
        double core_flops = 1e9 * (1 + below(8));
        strbuf_printf(&b, "%s{\"core\":%d,\"flops\":%g,\"sram_bytes\":%llu,\"transfer_factor\":%g}", first ? "" : ",",
                      i, core_flops, core_sram, core_gamma);
        first = 0;
      }
    strbuf_printf(&b, "]");
  }
  if (flags & TESTGEN_ENERGY) {
    double mac = 0.1 * (1 + below(10)), vec = 0.1 * (1 + below(10)), sram_e = 0.5 * (1 + below(10));
    double noc = 10.0 * (1 + below(100)), dram = 10.0 * (1 + below(100));
    double leak = below(4) == 0 ? 0 : 1e-3 * (1 + below(100));
    strbuf_printf(&b,
                  ",\"energy\":{\"mac_pj\":%g,\"vector_op_pj\":%g,\"sram_pj_per_byte\":%g,"
                  "\"noc_pj_per_byte_hop\":%g,\"dram_pj_per_byte\":%g,\"static_w_per_core\":%g}",
                  mac, vec, sram_e, noc, dram, leak);
  }
  strbuf_printf(&b, "}");
  chip *c = b.oom ? NULL : testutil_chip_text(b.s);
  strbuf_clear(&b);
  return c;
}

typedef struct each_plan {
  int n_cores, n_layers, refused, arr[16];
  void (*visit)(void *ctx, const plan *p);
  void *ctx;
} each_plan;

static void each_from(each_plan *e, int i, int left) {
  if (i == e->n_cores - 1) {
    if (left == 0) return;
    e->arr[i] = left;
    plan *p = NULL;
    mp_error err;
    if (plan_new(e->arr, e->n_cores, e->n_layers, &p, &err) != MP_OK) {
      e->refused++;
      return;
    }
    e->visit(e->ctx, p);
    plan_free(p);
    return;
  }
  for (int k = 0; k <= left; k++) {
    e->arr[i] = k;
    each_from(e, i + 1, left - k);
  }
}

int testgen_each_plan(int n_cores, int n_layers, void (*visit)(void *ctx, const plan *p), void *ctx) {
  each_plan e = {.n_cores = n_cores, .n_layers = n_layers, .visit = visit, .ctx = ctx};
  each_from(&e, 0, n_layers);
  return e.refused;
}
