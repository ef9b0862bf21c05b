/* sim_platform: the SimGrid platform of a chip (layout in sim_int.h) and the XY routes the
 * simulator accounts link traffic on. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim_int.h"

int sim_n_links(const chip *c) { return 4 * c->width * c->height + c->n_dram; }

int sim_link_index(const chip *c, int x, int y, int dir) { return (y * c->width + x) * 4 + dir; }

void sim_link_name(const chip *c, int k, char *buf, size_t n) {
  int noc = 4 * c->width * c->height;
  if (k >= noc) {
    const chip_dram *d = &c->dram[k - noc];
    snprintf(buf, n, "dram%d>x%dy%d", k - noc, d->x, d->y);
    return;
  }
  int node = k / 4, dir = k % 4, x = node % c->width, y = node / c->width;
  int nx = x + (dir == SIM_DIR_XPLUS) - (dir == SIM_DIR_XMINUS);
  int ny = y + (dir == SIM_DIR_YPLUS) - (dir == SIM_DIR_YMINUS);
  snprintf(buf, n, "x%dy%d>x%dy%d", x, y, nx, ny);
}

void sim_route_visit(const chip *c, int from_dram, int a, int b, void (*visit)(void *, int, double), void *ctx,
                     double bytes) {
  int x, y;
  if (from_dram >= 0) {
    visit(ctx, 4 * c->width * c->height + from_dram, bytes);
    x = c->dram[from_dram].x;
    y = c->dram[from_dram].y;
  } else {
    x = c->cores[a].x;
    y = c->cores[a].y;
  }
  int tx = c->cores[b].x, ty = c->cores[b].y;
  while (x != tx) {
    int dir = tx > x ? SIM_DIR_XPLUS : SIM_DIR_XMINUS;
    visit(ctx, sim_link_index(c, x, y, dir), bytes);
    x += tx > x ? 1 : -1;
  }
  while (y != ty) {
    int dir = ty > y ? SIM_DIR_YPLUS : SIM_DIR_YMINUS;
    visit(ctx, sim_link_index(c, x, y, dir), bytes);
    y += ty > y ? 1 : -1;
  }
}

static void route(FILE *f, const char *src, const char *dst, const char *link, int times) {
  fprintf(f, "<route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">", src, dst);
  for (int i = 0; i < times; i++) fprintf(f, "<link_ctn id=\"%s\"/>", link);
  fputs("</route>\n", f);
}

/* The explicit route of the Full platform from core a (or DRAM port from_dram >= 0) to core b: the
 * port's link, then the XY route's NoC links (the DijkstraCache platform's route without its
 * zero-cost turn and out links). */
static void full_route(FILE *f, const chip *c, int from_dram, int a, int b) {
  char l[64];
  int x, y;
  if (from_dram >= 0) {
    fprintf(f, "<route src=\"dram%d\" dst=\"c%d\" symmetrical=\"NO\">", from_dram, b);
    sim_link_name(c, 4 * c->width * c->height + from_dram, l, sizeof l);
    fprintf(f, "<link_ctn id=\"%s\"/>", l);
    x = c->dram[from_dram].x;
    y = c->dram[from_dram].y;
  } else {
    fprintf(f, "<route src=\"c%d\" dst=\"c%d\" symmetrical=\"NO\">", a, b);
    x = c->cores[a].x;
    y = c->cores[a].y;
  }
  int tx = c->cores[b].x, ty = c->cores[b].y;
  for (; x != tx; x += tx > x ? 1 : -1) {
    sim_link_name(c, sim_link_index(c, x, y, tx > x ? SIM_DIR_XPLUS : SIM_DIR_XMINUS), l, sizeof l);
    fprintf(f, "<link_ctn id=\"%s\"/>", l);
  }
  for (; y != ty; y += ty > y ? 1 : -1) {
    sim_link_name(c, sim_link_index(c, x, y, ty > y ? SIM_DIR_YPLUS : SIM_DIR_YMINUS), l, sizeof l);
    fprintf(f, "<link_ctn id=\"%s\"/>", l);
  }
  fputs("</route>\n", f);
}

int sim_platform_full(const chip *c, int routing) {
  return routing == SIM_ROUTING_FULL || (routing == SIM_ROUTING_AUTO && c->n_cores <= SIM_FULL_ROUTING_MAX_CORES);
}

/* The Dijkstra graph of the DijkstraCache platform (sim_int.h).  Vertical edges first: SimGrid
 * numbers the graph's nodes in the order routes mention them, so every Y router gets a smaller
 * number than every host, which settles the one tie. */
static void dijkstra_edges(FILE *f, const chip *c) {
  int W = c->width, H = c->height, detour = W + H + 2;
  char a[64], b[64], l[64];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int d = SIM_DIR_YPLUS; d <= SIM_DIR_YMINUS; d++) {
        int ny = y + (d == SIM_DIR_YPLUS) - (d == SIM_DIR_YMINUS);
        if (ny < 0 || ny >= H) continue;
        snprintf(a, sizeof a, "Y%d_%d", x, y);
        snprintf(b, sizeof b, "Y%d_%d", x, ny);
        sim_link_name(c, sim_link_index(c, x, y, d), l, sizeof l);
        route(f, a, b, l, 1);
      }
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      int id = chip_core_at(c, x, y);
      for (int d = SIM_DIR_XPLUS; d <= SIM_DIR_XMINUS; d++) {
        int nx = x + (d == SIM_DIR_XPLUS) - (d == SIM_DIR_XMINUS);
        if (nx < 0 || nx >= W) continue;
        snprintf(a, sizeof a, "c%d", id);
        snprintf(b, sizeof b, "c%d", chip_core_at(c, nx, y));
        sim_link_name(c, sim_link_index(c, x, y, d), l, sizeof l);
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
    sim_link_name(c, 4 * W * H + i, l, sizeof l);
    route(f, a, b, l, 1);
    route(f, b, a, "detour", detour);
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
    fputs("<link id=\"detour\" bandwidth=\"1Bps\" latency=\"1s\"/>\n", f);
    for (int i = 0; i < c->n_cores; i++)
      fprintf(f,
              "<link id=\"turn%d\" bandwidth=\"1e18Bps\" latency=\"0s\"/>\n"
              "<link id=\"out%d\" bandwidth=\"1e18Bps\" latency=\"0s\"/>\n",
              i, i);
  }
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int d = 0; d < 4; d++) {
        int nx = x + (d == SIM_DIR_XPLUS) - (d == SIM_DIR_XMINUS),
            ny = y + (d == SIM_DIR_YPLUS) - (d == SIM_DIR_YMINUS);
        if (nx < 0 || ny < 0 || nx >= W || ny >= H) continue;
        sim_link_name(c, sim_link_index(c, x, y, d), l, sizeof l);
        fprintf(f, "<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"%.17gs\"/>\n", l, c->noc_bandwidth,
                c->noc_latency);
      }
  for (int i = 0; i < c->n_dram; i++) {
    sim_link_name(c, 4 * W * H + i, l, sizeof l);
    fprintf(f, "<link id=\"%s\" bandwidth=\"%.17gBps\" latency=\"0s\"/>\n", l, c->dram_bandwidth);
  }
  if (full) {
    for (int from = 0; from < c->n_cores; from++)
      for (int to = 0; to < c->n_cores; to++)
        if (from != to) full_route(f, c, -1, from, to);
    for (int i = 0; i < c->n_dram; i++)
      for (int to = 0; to < c->n_cores; to++) full_route(f, c, i, -1, to);
  } else {
    dijkstra_edges(f, c);
  }
  fputs("</zone>\n</platform>\n", f);
  int bad = ferror(f);
  if (fclose(f) != 0 || bad)
    return err_set(err, MP_OUTPUT, "%s: cannot write the SimGrid platform: %s", path, strerror(errno));
  return MP_OK;
}
