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

int sim_platform_full(const chip *c, int routing) {
  return routing == SIM_ROUTING_FULL || (routing == SIM_ROUTING_AUTO && c->n_cores <= SIM_FULL_ROUTING_MAX_CORES) ||
         (routing == SIM_ROUTING_MANY && c->n_cores <= SIM_FULL_ROUTING_MANY_CORES);
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
  return sim_platform_write_routed(c, SIM_ROUTING_AUTO, path, err);
}

mp_status sim_platform_write_routed(const chip *c, int routing, const char *path, mp_error *err) {
  FILE *f = fopen(path, "w");
  if (!f) return err_set(err, MP_OUTPUT, "%s: cannot write the SimGrid platform: %s", path, strerror(errno));
  int W = c->width, H = c->height, full = sim_platform_full(c, routing);
  char l[64];
  fprintf(f,
          "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
          "<platform version=\"4.1\">\n<zone id=\"chip\" routing=\"%s\">\n",
          full ? "Full" : "DijkstraCache");
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
  fputs("</zone>\n</platform>\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return err_set(err, MP_OUTPUT, "%s: cannot write the SimGrid platform: %s", path, strerror(errno));
  return MP_OK;
}
