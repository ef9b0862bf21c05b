/* sim_platform: the SimGrid platform of a chip (layout in sim_int.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

/* Writes one link's name into buf (a visit callback of chip_route). */
typedef struct route_text {
  FILE *f;
  const chip *c;
} route_text;

static void put_link(void *ctx, int link) {
  route_text *r = ctx;
  char l[64];
  chip_link_name(r->c, link, l, sizeof l);
  fprintf(r->f, "<link_ctn id=\"%s\"/>", l);
}

static void route(FILE *f, const char *src, const char *dst, const char *link, int times) {
  fprintf(f, "<route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", src, dst);
  for (int i = 0; i < times; i++) fprintf(f, "<link_ctn id=\"%s\"/>", link);
  fputs("</route>\n", f);
}

/* The explicit route of the Full platform between two ends (chip_route's: cores, or ports as
 * CHIP_PORT(i)): its links, the DijkstraCache platform's route without its zero-cost turn and out
 * links. */
static void full_route(FILE *f, const chip *c, int from, int to) {
  char a[32], b[32];
  if (from < 0)
    snprintf(a, sizeof a, "dram%d", -1 - from);
  else
    snprintf(a, sizeof a, "c%d", from);
  if (to < 0)
    snprintf(b, sizeof b, "dram%d", -1 - to);
  else
    snprintf(b, sizeof b, "c%d", to);
  fprintf(f, "<route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", a, b);
  route_text r = {f, c};
  chip_route(c, from, to, put_link, &r);
  fputs("</route>\n", f);
}

int sim_platform_torus_ok(const chip *c) { /* every core of one speed: a cluster zone has one */
  for (int i = 1; i < c->n_cores; i++)
    if (c->cores[i].flops != c->cores[0].flops) return 0;
  return 1;
}

int sim_platform_kind(const chip *c, int routing, int traced) {
  if (routing == SIM_ROUTING_FULL || (routing == SIM_ROUTING_AUTO && c->n_cores <= SIM_FULL_ROUTING_MAX_CORES) ||
      (routing == SIM_ROUTING_MANY && c->n_cores <= SIM_FULL_ROUTING_MANY_CORES))
    return SIM_PLATFORM_FULL;
  if (routing == SIM_ROUTING_TORUS || (routing != SIM_ROUTING_DIJKSTRA && !traced && sim_platform_torus_ok(c)))
    return SIM_PLATFORM_TORUS;
  return SIM_PLATFORM_DIJKSTRA;
}

void sim_platform_host_name(const chip *c, int kind, int core, char *buf, size_t n) {
  if (kind == SIM_PLATFORM_TORUS)
    snprintf(buf, n, "c%d", c->cores[core].x + 2 * c->width * c->cores[core].y);
  else
    snprintf(buf, n, "c%d", core);
}

int sim_platform_torus_link(const chip *c, const char *name) {
  int a, b, n = 0, W2 = 2 * c->width;
  char dir[8];
  if (sscanf(name, "mesh_link_from_%d_to_%d_%7[A-Z]%n", &a, &b, dir, &n) != 3 || name[n] != '\0') return -1;
  int up = strcmp(dir, "UP") == 0;
  if (!up && strcmp(dir, "DOWN") != 0) return -1;
  int from = up ? a : b, to = up ? b : a, x = from % W2, y = from / W2, tx = to % W2, ty = to / W2;
  if (x >= c->width || y >= c->height || tx >= c->width || ty >= c->height) return -1;
  int d = tx == x + 1 && ty == y ? CHIP_XPLUS : tx == x - 1 && ty == y ? CHIP_XMINUS
        : ty == y + 1 && tx == x ? CHIP_YPLUS : ty == y - 1 && tx == x ? CHIP_YMINUS : -1;
  return d < 0 ? -1 : chip_link_index(c, x, y, d);
}

/* The Torus platform (sim_int.h): a cluster zone "mesh" of (2W) x (2H) hosts whose first W x H hold
 * the cores, and per port a zone of its host whose routes to and from the mesh go through the
 * port's core. */
static void torus_platform(FILE *f, const chip *c) {
  int W = c->width, H = c->height;
  char l[64], core[32];
  fprintf(f,
          "<cluster id=\"mesh\" prefix=\"c\" suffix=\"\" radical=\"0-%d\" speed=\"%.17gf\" bw=\"%.17gBps\" "
          "lat=\"%.17gs\" topology=\"TORUS\" topo_parameters=\"%d,%d\" sharing_policy=\"SPLITDUPLEX\"/>\n",
          4 * W * H - 1, c->cores[0].flops, c->noc_bandwidth, c->noc_latency, 2 * W, 2 * H);
  for (int i = 0; i < c->n_dram; i++) /* the DTD wants zones, then links, then routes */
    fprintf(f, "<zone id=\"port%d\" routing=\"Full\"><host id=\"dram%d\" speed=\"1f\"/></zone>\n", i, i);
  for (int k = 4 * W * H; k < chip_n_links(c); k++) { /* the ports' down and up links */
    chip_link_name(c, k, l, sizeof l);
    fprintf(f, "<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", l, c->dram_bandwidth);
  }
  for (int i = 0; i < c->n_dram; i++) {
    sim_platform_host_name(c, SIM_PLATFORM_TORUS, c->dram[i].core, core, sizeof core);
    chip_link_name(c, chip_port_link(c, i, 0), l, sizeof l);
    fprintf(f, "<zoneRoute src=\"port%d\" dst=\"mesh\" gw_src=\"dram%d\" gw_dst=\"%s\" symmetrical=\"NO\">", i, i,
            core);
    fprintf(f, "<link_ctn id=\"%s\"/></zoneRoute>\n", l);
    chip_link_name(c, chip_port_link(c, i, 1), l, sizeof l);
    fprintf(f, "<zoneRoute src=\"mesh\" dst=\"port%d\" gw_src=\"%s\" gw_dst=\"dram%d\" symmetrical=\"NO\">", i, core,
            i);
    fprintf(f, "<link_ctn id=\"%s\"/></zoneRoute>\n", l);
  }
}

/* The Dijkstra graph of the DijkstraCache platform (sim_int.h).  Vertical edges first: SimGrid
 * numbers the graph's nodes in the order routes mention them, so every Y router gets a smaller
 * number than every host, which settles the one tie. */
static void dijkstra_edges(FILE *f, const chip *c) {
  int W = c->width, H = c->height;
  char a[64], b[64], l[64];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int d = CHIP_YPLUS; d <= CHIP_YMINUS; d++) {
        int ny = y + (d == CHIP_YPLUS) - (d == CHIP_YMINUS);
        if (ny < 0 || ny >= H) continue;
        snprintf(a, sizeof a, "Y%d_%d", x, y);
        snprintf(b, sizeof b, "Y%d_%d", x, ny);
        chip_link_name(c, chip_link_index(c, x, y, d), l, sizeof l);
        route(f, a, b, l, 1);
      }
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int id = chip_core_at(c, x, y);
      for (int d = CHIP_XPLUS; d <= CHIP_XMINUS; d++) {
        int nx = x + (d == CHIP_XPLUS) - (d == CHIP_XMINUS);
        if (nx < 0 || nx >= W) continue;
        snprintf(a, sizeof a, "c%d", id);
        snprintf(b, sizeof b, "c%d", chip_core_at(c, nx, y));
        chip_link_name(c, chip_link_index(c, x, y, d), l, sizeof l);
        route(f, a, b, l, 1);
      }
      snprintf(a, sizeof a, "c%d", id);
      snprintf(b, sizeof b, "Y%d_%d", x, y);
      snprintf(l, sizeof l, "turn%d", id);
      route(f, a, b, l, 1);
      snprintf(l, sizeof l, "out%d", id);
      route(f, b, a, l, 1);
    }
  for (int i = 0; i < c->n_dram; i++) {
    snprintf(a, sizeof a, "dram%d", i);
    snprintf(b, sizeof b, "c%d", c->dram[i].core);
    chip_link_name(c, chip_port_link(c, i, 0), l, sizeof l);
    route(f, a, b, l, 1);
    chip_link_name(c, chip_port_link(c, i, 1), l, sizeof l);
    route(f, b, a, l, 1);
  }
}

mp_status sim_platform_write(const chip *c, const char *path, mp_error *err) {
  return sim_platform_write_routed(c, sim_platform_kind(c, SIM_ROUTING_AUTO, 0), path, err);
}

/* The Full or DijkstraCache platform's hosts, links and routes (sim_int.h). */
static void routed_platform(FILE *f, const chip *c, int full) {
  int W = c->width, H = c->height;
  char l[64];
  for (int i = 0; i < c->n_cores; i++) fprintf(f, "<host id=\"c%d\" speed=\"%.17gf\"/>\n", i, c->cores[i].flops);
  for (int i = 0; i < c->n_dram; i++) fprintf(f, "<host id=\"dram%d\" speed=\"1f\"/>\n", i);
  if (!full) {
    for (int y = 0; y < H; y++)
      for (int x = 0; x < W; x++) fprintf(f, "<router id=\"Y%d_%d\"/>\n", x, y);
    for (int i = 0; i < c->n_cores; i++)
      fprintf(f,
              "<link id=\"turn%d\" bandwidth=\"1e18Bps\" latency=\"0s\"/>\n"
              "<link id=\"out%d\" bandwidth=\"1e18Bps\" latency=\"0s\"/>\n",
              i, i);
  }
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int d = CHIP_XPLUS; d <= CHIP_YMINUS; d++) {
        int nx = x + (d == CHIP_XPLUS) - (d == CHIP_XMINUS), ny = y + (d == CHIP_YPLUS) - (d == CHIP_YMINUS);
        if (nx < 0 || ny < 0 || nx >= W || ny >= H) continue;
        chip_link_name(c, chip_link_index(c, x, y, d), l, sizeof l);
        fprintf(f, "<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", l, c->noc_bandwidth,
                c->noc_latency);
      }
  for (int k = 4 * W * H; k < chip_n_links(c); k++) { /* the ports' down and up links */
    chip_link_name(c, k, l, sizeof l);
    fprintf(f, "<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", l, c->dram_bandwidth);
  }
  if (full) {
    for (int from = 0; from < c->n_cores; from++)
      for (int to = 0; to < c->n_cores; to++)
        if (from != to) full_route(f, c, from, to);
    for (int i = 0; i < c->n_dram; i++)
      for (int k = 0; k < c->n_cores; k++) {
        full_route(f, c, CHIP_PORT(i), k);
        full_route(f, c, k, CHIP_PORT(i));
      }
  } else {
    dijkstra_edges(f, c);
  }
}

mp_status sim_platform_write_routed(const chip *c, int kind, const char *path, mp_error *err) {
  FILE *f = fopen(path, "w");
  if (!f) return err_set(err, MP_OUTPUT, "%s: cannot write the SimGrid platform: %s", path, strerror(errno));
  fprintf(f,
          "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
          "<platform version=\"4.1\">\n<zone id=\"chip\" routing=\"%s\">\n",
          kind == SIM_PLATFORM_DIJKSTRA ? "DijkstraCache" : "Full");
  if (kind == SIM_PLATFORM_TORUS)
    torus_platform(f, c);
  else
    routed_platform(f, c, kind == SIM_PLATFORM_FULL);
  fputs("</zone>\n</platform>\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return err_set(err, MP_OUTPUT, "%s: cannot write the SimGrid platform: %s", path, strerror(errno));
  return MP_OK;
}
