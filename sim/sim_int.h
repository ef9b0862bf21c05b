/* sim_int: what the simulator's files share — the platform generated from a chip and the naming and
 * numbering of its hosts and links.
 *
 * Platform (one DijkstraCache zone, so that a 32x32 mesh loads in well under a second): per core a
 * host "cID", which is also the core's x-router, and a y-router "Yx_y".  Edges (one link each):
 * cID -> the x-neighbours' hosts (a NoC link), cID -> Yx_y ("turnID"), Yx_y -> Yx_y±1 (a NoC
 * link), Yx_y -> cID ("outID"); turn and out links have no latency and practically infinite
 * bandwidth (per core: one link shared by every route would couple all transfers in SimGrid's
 * solver).  SimGrid's Dijkstra counts links, so a shortest route takes the fewest x-moves and
 * y-moves: the XY route (x-moves, turn, y-moves, out) and the YX-like routes (turn, y-moves, out,
 * x-moves) tie.  The tie is settled by SimGrid's queue, which pops equal costs lowest node number
 * first: the platform mentions every Y router before any host, so at the destination the XY
 * route's Y router wins over the neighbouring host, and every other node on the way has a unique
 * best predecessor.  Hence routes are exactly the XY routes (tests/test_sim.c checks every pair
 * on three meshes), and a route along a row is its NoC links alone.  Every node must stay reachable
 * from every other (SimGrid's Dijkstra overflows its costs on unreachable nodes), so the port's
 * host -> DRAM host edge exists too, W+H+2 links long (the never-used link "detour"), longer than
 * any XY route.  DRAM port i is a host "dramI" whose link "dramI>xXyY" (the port's bandwidth) enters
 * the host of the core at its position.
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
