/* chip: see chip.h.  Reading checks every member and names the place of the first problem; the
 * canonical serialisation (and so the hash) depends only on the name and the figures of the cores,
 * the NoC and the DRAM ports, never on how the file happened to spell them. */
#include "chip.h"

#include <assert.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonio.h"

/* ---- reading ---------------------------------------------------------------------------------- */

/* A byte count that must be at least 1. */
static mp_status get_size(const jsonio_reader *in, const cJSON *obj, const char *key, unsigned flags, uint64_t *out,
                          int *present) {
  int here = 0;
  mp_status st = jsonio_get_u64(in, obj, key, flags, out, &here);
  if (present) *present = here;
  if (st == MP_OK && here && *out == 0) {
    char path[256];
    snprintf(path, sizeof path, "%s.%s", in->where, key);
    return err_at(in->err, MP_INPUT, in->file, path, "must be > 0 (got 0)");
  }
  return st;
}

static mp_status read_header(const cJSON *root, const char *file, mp_error *err) {
  const char *format = NULL;
  int version = 0;
  jsonio_reader top = {file, "", err};
  mp_status st = jsonio_get_str(&top, root, "format", JSONIO_REQUIRED, &format, NULL);
  if (st != MP_OK) return st;
  if (strcmp(format, CHIP_FORMAT) != 0)
    return err_at(err, MP_INPUT, file, "format", "expected \"%s\", got \"%.80s\" (not a chip file)", CHIP_FORMAT,
                  format);
  st = jsonio_get_int(&top, root, "version", JSONIO_REQUIRED, 0, INT_MAX, &version, NULL);
  if (st == MP_OK && version != CHIP_VERSION)
    return err_at(err, MP_INPUT, file, "version", "version %d is not supported (this meshpipe reads version %d)",
                  version, CHIP_VERSION);
  return st;
}

static mp_status read_mesh(const cJSON *root, const char *file, int *width, int *height, mp_error *err) {
  static const char *const keys[] = {"width", "height", NULL};
  const cJSON *mesh = NULL;
  jsonio_reader top = {file, "", err}, in = {file, "mesh", err};
  mp_status st = jsonio_get_object(&top, root, "mesh", JSONIO_REQUIRED, &mesh, NULL);
  if (st == MP_OK) st = jsonio_known_keys(&in, mesh, keys);
  if (st == MP_OK) st = jsonio_get_int(&in, mesh, "width", JSONIO_REQUIRED, 1, CHIP_MAX_CORES, width, NULL);
  if (st == MP_OK) st = jsonio_get_int(&in, mesh, "height", JSONIO_REQUIRED, 1, CHIP_MAX_CORES, height, NULL);
  if (st == MP_OK && (long)*width * *height > CHIP_MAX_CORES)
    return err_at(err, MP_INPUT, file, "mesh", "%d x %d = %ld cores, more than the %d meshpipe supports (64 x 64)",
                  *width, *height, (long)*width * *height, CHIP_MAX_CORES);
  return st;
}

/* core.matrix {rows, cols}. */
static mp_status read_matrix(const jsonio_reader *in, const cJSON *core, chip_arch *a, int *present) {
  static const char *const keys[] = {"rows", "cols", NULL};
  const cJSON *m = NULL;
  jsonio_reader at = {in->file, "core.matrix", in->err};
  mp_status st = jsonio_get_object(in, core, "matrix", JSONIO_OPTIONAL, &m, present);
  if (st != MP_OK || !*present) return st;
  st = jsonio_known_keys(&at, m, keys);
  if (st == MP_OK) st = jsonio_get_int(&at, m, "rows", JSONIO_REQUIRED, 1, 1 << 16, &a->matrix_rows, NULL);
  if (st == MP_OK) st = jsonio_get_int(&at, m, "cols", JSONIO_REQUIRED, 1, 1 << 16, &a->matrix_cols, NULL);
  return st;
}

/* The core model's keys of "core" (all optional): cycles need a clock, and with an array the peak is
 * the array's, 2 x rows x cols x clock_hz (a flops given beside it must say the same). */
static mp_status read_arch(const jsonio_reader *in, const cJSON *core, chip *c, chip_core *base, int has_flops) {
  chip_arch *a = &c->arch;
  int has_clock = 0, has_matrix = 0, has_lanes = 0, has_sram = 0;
  mp_status st = jsonio_get_num(in, core, "clock_hz", JSONIO_OPTIONAL, CHIP_MIN_CLOCK_HZ, CHIP_MAX_CLOCK_HZ,
                                &a->clock_hz, &has_clock);
  if (st == MP_OK) st = read_matrix(in, core, a, &has_matrix);
  if (st == MP_OK) st = jsonio_get_int(in, core, "vector_lanes", JSONIO_OPTIONAL, 1, 1 << 20, &a->vector_lanes, &has_lanes);
  if (st == MP_OK)
    st = jsonio_get_num(in, core, "sram_bandwidth", JSONIO_OPTIONAL, CHIP_MIN_BANDWIDTH, CHIP_MAX_BANDWIDTH,
                        &a->sram_bandwidth, &has_sram);
  if (st != MP_OK) return st;
  c->has_arch = has_clock || has_matrix || has_lanes || has_sram;
  if ((has_matrix || has_lanes) && !has_clock)
    return err_at(in->err, MP_INPUT, in->file, has_matrix ? "core.matrix" : "core.vector_lanes",
                  "needs core.clock_hz: the core model counts cycles");
  if (!has_matrix) {
    if (!has_flops) return err_at(in->err, MP_INPUT, in->file, "core.flops", "missing (required without core.matrix)");
    return MP_OK;
  }
  double peak = 2.0 * a->matrix_rows * a->matrix_cols * a->clock_hz;
  if (!(peak >= CHIP_MIN_FLOPS && peak <= CHIP_MAX_FLOPS))
    return err_at(in->err, MP_INPUT, in->file, "core.clock_hz",
                  "the MAC array's peak 2 x %d x %d x %g Hz = %g flop/s is outside %g to %g (core.flops' range)",
                  a->matrix_rows, a->matrix_cols, a->clock_hz, peak, CHIP_MIN_FLOPS, CHIP_MAX_FLOPS);
  if (has_flops && fabs(base->flops - peak) > 1e-9 * peak)
    return err_at(in->err, MP_INPUT, in->file, "core.flops",
                  "%g disagrees with the MAC array's peak 2 x %d x %d x %g Hz = %g flop/s (give one or make them agree)",
                  base->flops, a->matrix_rows, a->matrix_cols, a->clock_hz, peak);
  base->flops = peak; /* exactly the array's, so that a full tile is work at peak (opcost.h) */
  return MP_OK;
}

static mp_status read_core(const cJSON *root, const char *file, chip *c, chip_core *base, mp_error *err) {
  static const char *const keys[] = {"flops", "sram_bytes", "transfer_factor", "clock_hz", "matrix", "vector_lanes",
                                     "sram_bandwidth", NULL};
  const cJSON *core = NULL;
  int has_flops = 0;
  base->transfer_factor = 1.0;
  jsonio_reader top = {file, "", err}, in = {file, "core", err};
  mp_status st = jsonio_get_object(&top, root, "core", JSONIO_REQUIRED, &core, NULL);
  if (st == MP_OK) st = jsonio_known_keys(&in, core, keys);
  if (st == MP_OK)
    st = jsonio_get_num(&in, core, "flops", JSONIO_OPTIONAL, CHIP_MIN_FLOPS, CHIP_MAX_FLOPS, &base->flops, &has_flops);
  if (st == MP_OK) st = get_size(&in, core, "sram_bytes", JSONIO_REQUIRED, &base->sram_bytes, NULL);
  if (st == MP_OK)
    st = jsonio_get_num(&in, core, "transfer_factor", JSONIO_OPTIONAL, 1, CHIP_MAX_TRANSFER_FACTOR,
                        &base->transfer_factor, NULL);
  if (st == MP_OK) st = read_arch(&in, core, c, base, has_flops);
  return st;
}

/* "energy": every figure optional, from 0 to CHIP_MAX_PJ (static_w_per_core to CHIP_MAX_STATIC_W). */
static mp_status read_energy(const cJSON *root, const char *file, chip *c, mp_error *err) {
  static const char *const keys[] = {"mac_pj", "vector_op_pj", "sram_pj_per_byte", "noc_pj_per_byte_hop",
                                     "dram_pj_per_byte", "static_w_per_core", NULL};
  const cJSON *e = NULL;
  jsonio_reader top = {file, "", err}, in = {file, "energy", err};
  mp_status st = jsonio_get_object(&top, root, "energy", JSONIO_OPTIONAL, &e, &c->has_energy);
  if (st != MP_OK || !c->has_energy) return st;
  st = jsonio_known_keys(&in, e, keys);
  double *v[] = {&c->energy.mac_pj,           &c->energy.vector_op_pj,     &c->energy.sram_pj_per_byte,
                 &c->energy.noc_pj_per_byte_hop, &c->energy.dram_pj_per_byte, &c->energy.static_w_per_core};
  for (int i = 0; keys[i] && st == MP_OK; i++)
    st = jsonio_get_num(&in, e, keys[i], JSONIO_OPTIONAL, 0, v[i] == &c->energy.static_w_per_core ? CHIP_MAX_STATIC_W
                                                                                                : CHIP_MAX_PJ,
                        v[i], NULL);
  return st;
}

static mp_status read_noc(const cJSON *root, const char *file, chip *c, mp_error *err) {
  static const char *const keys[] = {"bandwidth", "latency", NULL};
  const cJSON *noc = NULL;
  jsonio_reader top = {file, "", err}, in = {file, "noc", err};
  mp_status st = jsonio_get_object(&top, root, "noc", JSONIO_REQUIRED, &noc, NULL);
  if (st == MP_OK) st = jsonio_known_keys(&in, noc, keys);
  if (st == MP_OK)
    st = jsonio_get_num(&in, noc, "bandwidth", JSONIO_REQUIRED, CHIP_MIN_BANDWIDTH, CHIP_MAX_BANDWIDTH,
                        &c->noc_bandwidth, NULL);
  if (st == MP_OK)
    st = jsonio_get_num(&in, noc, "latency", JSONIO_REQUIRED, 0, CHIP_MAX_LATENCY, &c->noc_latency, NULL);
  return st;
}

static mp_status read_dram(const cJSON *root, const char *file, chip *c, mp_error *err) {
  static const char *const keys[] = {"bandwidth", "ports", NULL};
  const cJSON *dram = NULL, *ports = NULL;
  int present = 0;
  jsonio_reader top = {file, "", err}, in = {file, "dram", err};
  mp_status st = jsonio_get_object(&top, root, "dram", JSONIO_OPTIONAL, &dram, &present);
  if (st != MP_OK || !present) return st;
  st = jsonio_known_keys(&in, dram, keys);
  if (st == MP_OK)
    st = jsonio_get_num(&in, dram, "bandwidth", JSONIO_REQUIRED, CHIP_MIN_BANDWIDTH, CHIP_MAX_BANDWIDTH,
                        &c->dram_bandwidth, NULL);
  if (st == MP_OK) st = jsonio_get_array(&in, dram, "ports", JSONIO_REQUIRED, &ports, NULL);
  if (st != MP_OK) return st;
  int n = cJSON_GetArraySize(ports);
  if (n == 0) return err_at(err, MP_INPUT, file, "dram.ports", "empty: list at least one [x, y] port or drop \"dram\"");
  c->dram = calloc((size_t)n, sizeof *c->dram);
  if (!c->dram) return err_nomem(err);
  const cJSON *port = ports->child;
  for (int i = 0; i < n; i++, port = port->next) {
    char where[64], what[80];
    snprintf(where, sizeof where, "dram.ports[%d]", i);
    if (!cJSON_IsArray(port) || cJSON_GetArraySize(port) != 2)
      return err_at(err, MP_INPUT, file, where, "expected [x, y], a mesh position");
    int xy[2];
    for (int k = 0; k < 2; k++) {
      snprintf(what, sizeof what, "%s[%d] (%c)", where, k, "xy"[k]);
      jsonio_reader at = {file, what, err};
      st = jsonio_as_int(&at, cJSON_GetArrayItem(port, k), INT_MIN, INT_MAX, &xy[k]);
      if (st != MP_OK) return st;
    }
    if (xy[0] < 0 || xy[0] >= c->width || xy[1] < 0 || xy[1] >= c->height)
      return err_at(err, MP_INPUT, file, where, "(%d, %d) is off the %d x %d mesh (x 0-%d, y 0-%d)", xy[0], xy[1],
                    c->width, c->height, c->width - 1, c->height - 1);
    for (int j = 0; j < i; j++)
      if (c->dram[j].x == xy[0] && c->dram[j].y == xy[1])
        return err_at(err, MP_INPUT, file, where, "(%d, %d) is already dram.ports[%d]", xy[0], xy[1], j);
    c->dram[i].x = xy[0];
    c->dram[i].y = xy[1];
    c->dram[i].core = chip_core_at(c, xy[0], xy[1]);
    c->n_dram = i + 1;
  }
  return MP_OK;
}

static mp_status read_overrides(const cJSON *root, const char *file, chip *c, mp_error *err) {
  static const char *const keys[] = {"core", "flops", "sram_bytes", "transfer_factor", NULL};
  const cJSON *list = NULL;
  int present = 0;
  jsonio_reader top = {file, "", err};
  mp_status st = jsonio_get_array(&top, root, "overrides", JSONIO_OPTIONAL, &list, &present);
  if (st != MP_OK || !present) return st;
  int *given_by = malloc((size_t)c->n_cores * sizeof *given_by); /* overrides index per core, or -1 */
  if (!given_by) return err_nomem(err);
  for (int k = 0; k < c->n_cores; k++) given_by[k] = -1;
  int i = 0;
  for (const cJSON *o = list->child; o && st == MP_OK; o = o->next, i++) {
    char where[64], path[80];
    snprintf(where, sizeof where, "overrides[%d]", i);
    snprintf(path, sizeof path, "%s.core", where);
    int id = -1, has_flops = 0, has_sram = 0, has_gamma = 0;
    if (!cJSON_IsObject(o)) {
      st = err_at(err, MP_INPUT, file, where, "expected an object {\"core\": ID, ...}");
      break;
    }
    jsonio_reader in = {file, where, err};
    st = jsonio_known_keys(&in, o, keys);
    if (st == MP_OK) st = jsonio_get_int(&in, o, "core", JSONIO_REQUIRED, 0, INT_MAX, &id, NULL);
    if (st != MP_OK) break;
    if (id >= c->n_cores) {
      st = err_at(err, MP_INPUT, file, path, "core %d is not on this chip (%d x %d = %d cores, ids 0-%d)", id,
                  c->width, c->height, c->n_cores, c->n_cores - 1);
      break;
    }
    if (given_by[id] >= 0) {
      st = err_at(err, MP_INPUT, file, path, "core %d is already overridden by overrides[%d]", id, given_by[id]);
      break;
    }
    given_by[id] = i;
    chip_core *core = &c->cores[id];
    st = jsonio_get_num(&in, o, "flops", JSONIO_OPTIONAL, CHIP_MIN_FLOPS, CHIP_MAX_FLOPS, &core->flops, &has_flops);
    if (st == MP_OK) st = get_size(&in, o, "sram_bytes", JSONIO_OPTIONAL, &core->sram_bytes, &has_sram);
    if (st == MP_OK)
      st = jsonio_get_num(&in, o, "transfer_factor", JSONIO_OPTIONAL, 1, CHIP_MAX_TRANSFER_FACTOR,
                          &core->transfer_factor, &has_gamma);
    if (st == MP_OK && !has_flops && !has_sram && !has_gamma)
      st = err_at(err, MP_INPUT, file, where, "changes nothing (give flops, sram_bytes or transfer_factor)");
  }
  free(given_by);
  return st;
}

static chip_core typical_of(const chip *c);

/* Hash of the canonical serialisation, printed without formatting. */
static mp_status compute_hash(chip *c, mp_error *err) {
  cJSON *j = chip_to_json(c);
  char *text = j ? cJSON_PrintUnformatted(j) : NULL;
  cJSON_Delete(j);
  if (!text) return err_nomem(err);
  c->hash = fileio_hash(FILEIO_HASH_INIT, text, strlen(text));
  free(text);
  return MP_OK;
}

mp_status chip_from_json(const cJSON *root, const char *file, chip **out, mp_error *err) {
  static const char *const keys[] = {"format", "name",      "version", "mesh", "core",
                                     "noc",    "dram",      "overrides", "energy", NULL};
  const char *name = NULL;
  chip_core base = {0};
  *out = NULL;
  if (!file) file = "(input)";
  if (!cJSON_IsObject(root)) return err_at(err, MP_INPUT, file, NULL, "expected a JSON object (a meshpipe chip)");
  chip *c = calloc(1, sizeof *c);
  if (!c) return err_nomem(err);
  jsonio_reader top = {file, "", err};
  mp_status st = jsonio_known_keys(&top, root, keys);
  if (st == MP_OK) st = read_header(root, file, err);
  if (st == MP_OK) st = jsonio_get_str(&top, root, "name", JSONIO_REQUIRED, &name, NULL);
  if (st == MP_OK) st = read_mesh(root, file, &c->width, &c->height, err);
  if (st == MP_OK) st = read_core(root, file, c, &base, err);
  if (st == MP_OK) st = read_noc(root, file, c, err);
  if (st == MP_OK) st = read_energy(root, file, c, err);
  if (st != MP_OK) goto cleanup;

  c->name = strdup(name);
  c->file = strdup(file);
  c->n_cores = c->width * c->height;
  c->cores = calloc((size_t)c->n_cores, sizeof *c->cores);
  if (!c->name || !c->file || !c->cores) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int id = 0; id < c->n_cores; id++) {
    c->cores[id] = base;
    c->cores[id].y = id / c->width;
    int i = id % c->width;
    c->cores[id].x = c->cores[id].y % 2 == 0 ? i : c->width - 1 - i;
  }
  st = read_dram(root, file, c, err);
  if (st == MP_OK) st = read_overrides(root, file, c, err);
  if (st != MP_OK) goto cleanup;
  if (c->n_dram == 0) c->dram_bandwidth = 0;
  for (int id = 1; id < c->n_cores && !c->heterogeneous; id++) {
    const chip_core *a = &c->cores[0], *b = &c->cores[id];
    c->heterogeneous =
        a->flops != b->flops || a->sram_bytes != b->sram_bytes || a->transfer_factor != b->transfer_factor;
  }
  c->typical = typical_of(c);
  st = compute_hash(c, err);

cleanup:
  if (st != MP_OK)
    chip_free(c);
  else
    *out = c;
  return st;
}

mp_status chip_load(const char *path, chip **out, mp_error *err) {
  cJSON *root = NULL;
  *out = NULL;
  mp_status st = jsonio_load(path, &root, err);
  if (st == MP_OK) st = chip_from_json(root, path, out, err);
  cJSON_Delete(root);
  return st;
}

void chip_free(chip *c) {
  if (!c) return;
  free(c->name);
  free(c->file);
  free(c->cores);
  free(c->dram);
  free(c);
}

/* ---- geometry --------------------------------------------------------------------------------- */

int chip_core_at(const chip *c, int x, int y) {
  assert(x >= 0 && x < c->width && y >= 0 && y < c->height);
  return y * c->width + (y % 2 == 0 ? x : c->width - 1 - x);
}

int chip_hops(const chip *c, int a, int b) {
  assert(a >= 0 && a < c->n_cores && b >= 0 && b < c->n_cores);
  return abs(c->cores[a].x - c->cores[b].x) + abs(c->cores[a].y - c->cores[b].y);
}

int chip_nearest_dram(const chip *c, int core) {
  int best = -1, best_hops = INT_MAX;
  for (int i = 0; i < c->n_dram; i++) {
    int h = chip_hops(c, core, c->dram[i].core);
    if (h < best_hops) {
      best = i;
      best_hops = h;
    }
  }
  return best;
}

/* ---- links and routes ------------------------------------------------------------------------- */

void chip_link_name(const chip *c, int link, char *buf, size_t n) {
  int noc = 4 * c->width * c->height;
  if (link >= noc) {
    int port = (link - noc) / 2, up = (link - noc) % 2;
    const chip_dram *d = &c->dram[port];
    if (up)
      snprintf(buf, n, "x%dy%d>dram%d", d->x, d->y, port);
    else
      snprintf(buf, n, "dram%d>x%dy%d", port, d->x, d->y);
    return;
  }
  int node = link / 4, dir = link % 4, x = node % c->width, y = node / c->width;
  int nx = x + (dir == CHIP_XPLUS) - (dir == CHIP_XMINUS);
  int ny = y + (dir == CHIP_YPLUS) - (dir == CHIP_YMINUS);
  snprintf(buf, n, "x%dy%d>x%dy%d", x, y, nx, ny);
}

int chip_route(const chip *c, int from, int to, void (*visit)(void *ctx, int link), void *ctx) {
  int x, y, tx, ty, hops = 0;
  if (from < 0) {
    const chip_dram *d = &c->dram[-1 - from];
    visit(ctx, chip_port_link(c, -1 - from, 0));
    x = d->x;
    y = d->y;
  } else {
    x = c->cores[from].x;
    y = c->cores[from].y;
  }
  if (to < 0) {
    tx = c->dram[-1 - to].x;
    ty = c->dram[-1 - to].y;
  } else {
    tx = c->cores[to].x;
    ty = c->cores[to].y;
  }
  for (; x != tx; x += tx > x ? 1 : -1, hops++) visit(ctx, chip_link_index(c, x, y, tx > x ? CHIP_XPLUS : CHIP_XMINUS));
  for (; y != ty; y += ty > y ? 1 : -1, hops++) visit(ctx, chip_link_index(c, x, y, ty > y ? CHIP_YPLUS : CHIP_YMINUS));
  if (to < 0) visit(ctx, chip_port_link(c, -1 - to, 1));
  return hops;
}

/* ---- figures ---------------------------------------------------------------------------------- */

enum { FIELD_FLOPS, FIELD_SRAM, FIELD_GAMMA };

static double field_of(const chip_core *k, int field) {
  return field == FIELD_FLOPS ? k->flops : field == FIELD_SRAM ? (double)k->sram_bytes : k->transfer_factor;
}

/* Most common value of one field over the cores, ties to the one that occurs first.  sram_bytes is at
 * most 2^53, so comparing it as a double is exact.  Stops as soon as a value holds a majority, so a
 * uniform chip costs one pass. */
static double most_common(const chip *c, int field) {
  int n = c->n_cores, best_n = 0;
  double best = field_of(&c->cores[0], field);
  for (int i = 0; i < n && best_n * 2 <= n && best_n < n - i; i++) {
    double v = field_of(&c->cores[i], field);
    int seen = 0;
    for (int j = 0; j < i && !seen; j++) seen = field_of(&c->cores[j], field) == v;
    if (seen) continue;
    int count = 0;
    for (int j = i; j < n; j++) count += field_of(&c->cores[j], field) == v;
    if (count > best_n) {
      best = v;
      best_n = count;
    }
  }
  return best;
}

chip_core chip_typical_core(const chip *c) { return c->typical; }

/* The typical core, once per chip (chip_from_json). */
static chip_core typical_of(const chip *c) {
  chip_core t = {.x = -1, .y = -1};
  t.flops = most_common(c, FIELD_FLOPS);
  t.sram_bytes = (uint64_t)most_common(c, FIELD_SRAM);
  t.transfer_factor = most_common(c, FIELD_GAMMA);
  return t;
}

chip_group chip_group_of(const chip *c, int first, int n) {
  const chip_core *k = &c->cores[first];
  chip_group g = {.speed = (double)n * k->flops, .gamma = k->transfer_factor, .sram_bytes = k->sram_bytes};
  if (!c->heterogeneous) return g;
  g.speed = 0;
  for (int i = first; i < first + n; i++) {
    const chip_core *x = &c->cores[i];
    g.speed += x->flops;
    if (x->transfer_factor > g.gamma) g.gamma = x->transfer_factor;
    if (x->sram_bytes < g.sram_bytes) g.sram_bytes = x->sram_bytes;
  }
  return g;
}

double chip_total_flops(const chip *c) {
  double sum = 0;
  for (int i = 0; i < c->n_cores; i++) sum += c->cores[i].flops;
  return sum;
}

uint64_t chip_total_sram(const chip *c) {
  uint64_t sum = 0;
  for (int i = 0; i < c->n_cores; i++) sum += c->cores[i].sram_bytes;
  return sum;
}

/* ---- writing ---------------------------------------------------------------------------------- */

#define TRY(x)            \
  do {                    \
    if (!(x)) goto fail;  \
  } while (0)

/* The members of one core object that differ from t (all of them when t is NULL). */
static int add_core_figures(cJSON *o, const chip_core *k, const chip_core *t) {
  if (!t || k->flops != t->flops)
    if (!cJSON_AddNumberToObject(o, "flops", k->flops)) return 0;
  if (!t || k->sram_bytes != t->sram_bytes)
    if (!jsonio_add_u64(o, "sram_bytes", k->sram_bytes)) return 0;
  if (t ? k->transfer_factor != t->transfer_factor : k->transfer_factor != 1.0)
    if (!cJSON_AddNumberToObject(o, "transfer_factor", k->transfer_factor)) return 0;
  return 1;
}

/* The core model's keys that are given (none on a chip without one, so its hash is unchanged). */
static int add_arch(cJSON *o, const chip_arch *a) {
  if (a->clock_hz > 0 && !cJSON_AddNumberToObject(o, "clock_hz", a->clock_hz)) return 0;
  if (a->matrix_rows > 0) {
    cJSON *m = cJSON_AddObjectToObject(o, "matrix");
    if (!m || !cJSON_AddNumberToObject(m, "rows", a->matrix_rows) || !cJSON_AddNumberToObject(m, "cols", a->matrix_cols))
      return 0;
  }
  if (a->vector_lanes > 0 && !cJSON_AddNumberToObject(o, "vector_lanes", a->vector_lanes)) return 0;
  if (a->sram_bandwidth > 0 && !cJSON_AddNumberToObject(o, "sram_bandwidth", a->sram_bandwidth)) return 0;
  return 1;
}

static int add_energy(cJSON *root, const chip_energy *e) {
  cJSON *o = cJSON_AddObjectToObject(root, "energy");
  return o && cJSON_AddNumberToObject(o, "mac_pj", e->mac_pj) &&
         cJSON_AddNumberToObject(o, "vector_op_pj", e->vector_op_pj) &&
         cJSON_AddNumberToObject(o, "sram_pj_per_byte", e->sram_pj_per_byte) &&
         cJSON_AddNumberToObject(o, "noc_pj_per_byte_hop", e->noc_pj_per_byte_hop) &&
         cJSON_AddNumberToObject(o, "dram_pj_per_byte", e->dram_pj_per_byte) &&
         cJSON_AddNumberToObject(o, "static_w_per_core", e->static_w_per_core);
}

cJSON *chip_to_json(const chip *c) {
  chip_core t = chip_typical_core(c);
  cJSON *root = cJSON_CreateObject(), *o, *a;
  TRY(root);
  TRY(cJSON_AddStringToObject(root, "format", CHIP_FORMAT));
  TRY(cJSON_AddNumberToObject(root, "version", CHIP_VERSION));
  TRY(cJSON_AddStringToObject(root, "name", c->name));
  TRY(o = cJSON_AddObjectToObject(root, "mesh"));
  TRY(cJSON_AddNumberToObject(o, "width", c->width));
  TRY(cJSON_AddNumberToObject(o, "height", c->height));
  TRY(o = cJSON_AddObjectToObject(root, "core"));
  TRY(add_core_figures(o, &t, NULL));
  TRY(add_arch(o, &c->arch));
  TRY(o = cJSON_AddObjectToObject(root, "noc"));
  TRY(cJSON_AddNumberToObject(o, "bandwidth", c->noc_bandwidth));
  TRY(cJSON_AddNumberToObject(o, "latency", c->noc_latency));
  if (c->n_dram > 0) {
    TRY(o = cJSON_AddObjectToObject(root, "dram"));
    TRY(cJSON_AddNumberToObject(o, "bandwidth", c->dram_bandwidth));
    TRY(a = cJSON_AddArrayToObject(o, "ports"));
    for (int i = 0; i < c->n_dram; i++) {
      int xy[2] = {c->dram[i].x, c->dram[i].y};
      cJSON *p = cJSON_CreateIntArray(xy, 2);
      if (!p || !cJSON_AddItemToArray(a, p)) {
        cJSON_Delete(p);
        goto fail;
      }
    }
  }
  if (c->has_energy) TRY(add_energy(root, &c->energy));
  a = NULL;
  for (int id = 0; id < c->n_cores; id++) {
    const chip_core *k = &c->cores[id];
    if (k->flops == t.flops && k->sram_bytes == t.sram_bytes && k->transfer_factor == t.transfer_factor) continue;
    if (!a) TRY(a = cJSON_AddArrayToObject(root, "overrides"));
    o = cJSON_CreateObject();
    if (!o || !cJSON_AddItemToArray(a, o)) {
      cJSON_Delete(o);
      goto fail;
    }
    TRY(cJSON_AddNumberToObject(o, "core", id));
    TRY(add_core_figures(o, k, &t));
  }
  return root;
fail:
  cJSON_Delete(root);
  return NULL;
}
