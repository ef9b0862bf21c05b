/* sim_int: what the simulator's files share — the platform generated from a chip and the naming and
 * numbering of its hosts and links.
 *
 * Hosts: per core "cID", per DRAM port "dramI".  NoC links are one per direction (full duplex):
 * "xAyB>xCyD" from (A,B) to (C,D); DRAM port i's link "dramI>xXyY" (the port's bandwidth) enters the
 * core at its position.  Routes are the XY routes (x-moves, then y-moves), from a port through its
 * link first.  Two platforms give exactly those routes:
 *
 * Full (sim_options.routing SIM_ROUTING_FULL, or AUTO on chips of up to SIM_FULL_ROUTING_MAX_CORES
 * cores): one "Full" zone listing every route (core to core, port to core) as its NoC links.  A
 * lookup is a table read, and a transfer's SimGrid variable touches only the links that carry it:
 * ~1.35x the evaluations per CPU-second of the DijkstraCache platform on 8x8, ~1.5x on 16x16
 * (bench/sim_speed),
 * with bit-identical figures (tests/test_sim.c compares both).  The turn/out links below never
 * bind (their capacity is ~10^7 times a NoC link's, so SimGrid's bottleneck solver never takes
 * its minimum there nor saturates them, and computes each variable from its binding constraints
 * only), so leaving them out changes nothing but the work.  The file grows as cores^2 times the
 * mean route length (1 MB for 8x8; 16x16 takes ~0.6 s to load instead of 0.01 s), hence the limit.
 *
 * DijkstraCache (SIM_ROUTING_DIJKSTRA, or AUTO on bigger chips, so that a 32x32 mesh loads in well
 * under a second): per core a host "cID", which is also the core's x-router, and a y-router
 * "Yx_y".  Edges (one link each): cID -> the x-neighbours' hosts (a NoC link), cID -> Yx_y
 * ("turnID"), Yx_y -> Yx_y±1 (a NoC link), Yx_y -> cID ("outID"); turn and out links have no
 * latency and practically infinite bandwidth (per core: one link shared by every route would
 * couple all transfers in SimGrid's solver).  SimGrid's Dijkstra counts links, so a shortest
 * route takes the fewest x-moves and y-moves: the XY route (x-moves, turn, y-moves, out) and the
 * YX-like routes (turn, y-moves, out, x-moves) tie.  The tie is settled by SimGrid's queue, which
 * pops equal costs lowest node number first: the platform mentions every Y router before any
 * host, so at the destination the XY route's Y router wins over the neighbouring host, and every
 * other node on the way has a unique best predecessor.  Hence routes are exactly the XY routes
 * (tests/test_sim.c checks every pair on three meshes, and that both platforms route alike on two
 * more), and a route along a row is its NoC links alone.  Every node must stay reachable from
 * every other (SimGrid's Dijkstra overflows its costs on unreachable nodes), so the port's host ->
 * DRAM host edge exists too, W+H+2 links long (the never-used link "detour"), longer than any XY
 * route. */
#ifndef MESHPIPE_SIM_INT_H
#define MESHPIPE_SIM_INT_H

#include <stddef.h>

#include "chip.h"
#include "err.h"
#include "sim.h"

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

/* Chips of up to this many cores get a "Full" zone listing every route (faster lookups, bigger file). */
#define SIM_FULL_ROUTING_MAX_CORES 64

/* 1 when c's platform with routing (SIM_ROUTING_*, sim.h) is a Full zone rather than the
 * DijkstraCache one. */
int sim_platform_full(const chip *c, int routing);

/* Writes the platform XML of c to path, with SIM_ROUTING_AUTO.  MP_OUTPUT on a write failure. */
mp_status sim_platform_write(const chip *c, const char *path, mp_error *err);

/* The same with routing SIM_ROUTING_AUTO, _FULL or _DIJKSTRA. */
mp_status sim_platform_write_routed(const chip *c, int routing, const char *path, mp_error *err);

#endif
