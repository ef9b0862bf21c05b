/* sim_int: what the simulator's files share — the platform generated from a chip and the naming and
 * numbering of its hosts and links.
 *
 * Platform (one DijkstraCache zone, so that a 32x32 mesh loads in well under a second): per core a
 * host "cID" and two routers "Xx_y", "Yx_y".  Edges: cID -> Xx_y (inject), Xx_y -> Xx±1_y (a NoC
 * link), Xx_y -> Yx_y (turn), Yx_y -> Yx_y±1 (a NoC link), Yx_y -> cID (eject); inject, turn and
 * eject carry the core's own zero-latency links "inID", "turnID", "outID" of practically infinite
 * bandwidth (one link shared by every route would couple all transfers in SimGrid's solver).  A
 * route can only go along x first and then along y, never back, so the shortest route (SimGrid's
 * Dijkstra counts links) between two cores is exactly the dimension-ordered XY route.  Every node
 * must stay reachable from every other (SimGrid's Dijkstra overflows its costs on unreachable nodes),
 * so each Yx_y -> Xx_y and each port router -> DRAM host has an edge too, but one W+H+2 links long
 * (the never-used link "detour"), longer than any XY route: it is never on a shortest path.  DRAM
 * port i is a host "dramI" whose link "dramI>xXyY" (the port's bandwidth) enters router Xx_y.
 * NoC links are one per direction (full duplex): "xAyB>xCyD" from (A,B) to (C,D). */
#ifndef MESHPIPE_SIM_INT_H
#define MESHPIPE_SIM_INT_H

#include <stddef.h>

#include "chip.h"
#include "err.h"

/* Directions of the NoC links leaving a router. */
enum { SIM_DIR_XPLUS, SIM_DIR_XMINUS, SIM_DIR_YPLUS, SIM_DIR_YMINUS };

/* Link numbering for traffic accounting: NoC link from (x,y) in direction d is (y*W + x)*4 + d;
 * DRAM port i is 4*W*H + i.  sim_n_links is the size of that numbering. */
int sim_n_links(const chip *c);
int sim_link_index(const chip *c, int x, int y, int dir);

/* Writes the name of link index k (as in the platform) into buf. */
void sim_link_name(const chip *c, int k, char *buf, size_t n);

/* Calls visit(ctx, link, bytes) for every link of the XY route from core a to core b (a != b), in
 * order; from_dram >= 0 starts the route at that DRAM port instead of core a (its link first). */
void sim_route_visit(const chip *c, int from_dram, int a, int b, void (*visit)(void *, int, double), void *ctx,
                     double bytes);

/* Writes the platform XML of c to path.  MP_OUTPUT on a write failure. */
mp_status sim_platform_write(const chip *c, const char *path, mp_error *err);

#endif
