/* chip: a many-core chip — a W x H mesh of cores joined by NoC links, with optional DRAM ports.
 *
 * Cores are numbered in snake (boustrophedon) order: row 0 left to right, row 1 right to left, and
 * so on, so consecutive ids are mesh neighbours and a core group is a contiguous id range.  Packets
 * follow dimension-ordered XY routes (first along x, then along y).  A chip is immutable after
 * chip_load / chip_from_json.  The file format is described in platforms/README.md. */
#ifndef MESHPIPE_CHIP_H
#define MESHPIPE_CHIP_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define CHIP_FORMAT "meshpipe-chip"
#define CHIP_VERSION 1
#define CHIP_MAX_CORES 4096 /* largest mesh meshpipe accepts: 64 x 64 or any W x H with W * H <= 4096 */

/* The range of every figure (platforms/README.md says why): physically meaningful, and such that
 * SimGrid's parser holds each one (no subnormal number, nothing near overflow) and every time the
 * simulator derives from them and a graph (whose counts are at most 2^53) is a finite double. */
#define CHIP_MIN_FLOPS 1e6      /* flop/s of one core: a microcontroller ... */
#define CHIP_MAX_FLOPS 1e18     /* ... to an exaflop, beyond any device built */
#define CHIP_MIN_BANDWIDTH 1.0  /* bytes/s of a NoC link or a DRAM port: a byte a second ... */
#define CHIP_MAX_BANDWIDTH 1e15 /* ... to a petabyte/s, below the simulator's internal 1e18 B/s links */
#define CHIP_MAX_LATENCY 1.0    /* seconds per hop (0 is allowed) */
#define CHIP_MAX_TRANSFER_FACTOR 1000.0
#define CHIP_MIN_CLOCK_HZ 1e3  /* the core model's clock: a kilohertz ... */
#define CHIP_MAX_CLOCK_HZ 1e12 /* ... to a terahertz */
#define CHIP_MAX_PJ 1e9        /* picojoules of one operation or byte (a millijoule) */
#define CHIP_MAX_STATIC_W 1e6  /* watts of one core's static power (a megawatt) */

typedef struct chip_core {
  int x, y;               /* mesh position */
  double flops;           /* peak flop/s */
  uint64_t sram_bytes;    /* on-chip memory */
  double transfer_factor; /* gamma >= 1: a device that reaches the NoC through a host sends slower */
} chip_core;

/* The core model (platforms/README.md, "Core model"; opcost.h): the chip file's core.clock_hz,
 * core.matrix {rows, cols}, core.vector_lanes and core.sram_bandwidth, each 0 when absent.  It is
 * chip-wide: an override's flops scales that core's whole model (its clock), the shape stays. */
typedef struct chip_arch {
  double clock_hz;            /* cycles per second; > 0 when matrix or vector_lanes is given */
  int matrix_rows, matrix_cols; /* a MAC array: rows x cols multiply-accumulates per cycle */
  int vector_lanes;           /* element operations per cycle for the work off the array */
  double sram_bandwidth;      /* bytes/s between a core and its SRAM */
} chip_arch;

/* Energy figures (the chip file's "energy"; energy.h), each 0 when absent. */
typedef struct chip_energy {
  double mac_pj;              /* one multiply-accumulate */
  double vector_op_pj;        /* one flop of the work off the MAC array */
  double sram_pj_per_byte;    /* one byte read from or written to a core's SRAM */
  double noc_pj_per_byte_hop; /* one byte over one NoC link */
  double dram_pj_per_byte;    /* one byte read from or written to DRAM */
  double static_w_per_core;   /* leakage and clock tree of one core, watts, all the time */
} chip_energy;

typedef struct chip_dram {
  int x, y; /* mesh position of the port */
  int core; /* id of the core at that position */
} chip_dram;

typedef struct chip {
  char *name;
  char *file; /* where it was read from, for messages */
  int width, height, n_cores;
  chip_core *cores;      /* indexed by core id (snake order) */
  double noc_bandwidth;  /* bytes/s of one link in one direction */
  double noc_latency;    /* seconds per hop */
  double dram_bandwidth; /* bytes/s of one port; 0 when n_dram == 0 */
  int n_dram;
  chip_dram *dram;
  int heterogeneous; /* 1 when overrides make cores differ */
  chip_arch arch;     /* the core model; all 0 when the chip has none (every op at peak flops) */
  int has_arch;       /* 1 when any of its keys is given */
  chip_energy energy; /* all 0 when the chip has no "energy" */
  int has_energy;
  chip_core typical;  /* chip_typical_core, computed once */
  uint64_t hash;     /* FNV-1a of the canonical serialisation */
} chip;

/* Reads and validates a chip file.  On success *out is owned by the caller (chip_free). */
mp_status chip_load(const char *path, chip **out, mp_error *err);

/* Validates and builds a chip from a parsed document (borrowed); file labels error messages. */
mp_status chip_from_json(const cJSON *root, const char *file, chip **out, mp_error *err);

/* The canonical serialisation, owned by the caller; NULL if out of memory. */
cJSON *chip_to_json(const chip *c);

/* Frees c; chip_free(NULL) is a no-op. */
void chip_free(chip *c);

/* Id of the core at (x, y); the position must be on the mesh. */
int chip_core_at(const chip *c, int x, int y);

/* Number of links on the XY route between two cores (0 for a == b). */
int chip_hops(const chip *c, int a, int b);

/* Index (into c->dram) of the port with the fewest hops to core, ties to the lowest index; -1 if none. */
int chip_nearest_dram(const chip *c, int core);

/* Links.  NoC links are one per direction (full duplex): the link from (x, y) in direction d is
 * (y * W + x) * 4 + d.  DRAM port i has a link down from the port into the core at its position,
 * 4WH + 2i, and one up from that core into the port, 4WH + 2i + 1, each of the port's bandwidth.
 * Names: "x0y0>x1y0", "dram0>x3y0" (down), "x3y0>dram0" (up). */
enum { CHIP_XPLUS, CHIP_XMINUS, CHIP_YPLUS, CHIP_YMINUS };
static inline int chip_n_links(const chip *c) { return 4 * c->width * c->height + 2 * c->n_dram; }
static inline int chip_link_index(const chip *c, int x, int y, int dir) { return (y * c->width + x) * 4 + dir; }
static inline int chip_port_link(const chip *c, int port, int up) {
  return 4 * c->width * c->height + 2 * port + (up ? 1 : 0);
}
/* (inline: the model reads it for every link of every plan it costs) */
static inline double chip_link_bandwidth(const chip *c, int link) {
  return link >= 4 * c->width * c->height ? c->dram_bandwidth : c->noc_bandwidth;
}
void chip_link_name(const chip *c, int link, char *buf, size_t n);

/* An end of a route: a core id (>= 0), or DRAM port i as CHIP_PORT(i). */
#define CHIP_PORT(i) (-1 - (i))

/* Calls visit(ctx, link) for every link of the XY route from `from` to `to` (ends as above, not both
 * ports, from != to), in order: a port's down link first, its up link last.  Returns the number of
 * NoC links (hops); a route between a core and its own port's position has none. */
int chip_route(const chip *c, int from, int to, void (*visit)(void *ctx, int link), void *ctx);

/* The figures most cores share: each field is its most common value over the cores, ties to the
 * value of the lowest core id (x and y are -1); O(1), computed when the chip is built.  The canonical file writes it as "core", and the
 * cores that differ from it as "overrides"; so the canonical form depends only on the cores. */
chip_core chip_typical_core(const chip *c);

/* The figures of the core group [first, first + n) that the cost model and the simulator use. */
typedef struct chip_group {
  double speed;        /* sum of the cores' flop/s; n times the core's on a chip whose cores are alike,
                          so that a group's speed does not depend on how it is summed */
  double gamma;        /* largest transfer factor (>= 1) */
  uint64_t sram_bytes; /* smallest SRAM */
} chip_group;

/* The group's figures; the range must lie on the chip and be non-empty.  O(1) when no core differs,
 * else O(n). */
chip_group chip_group_of(const chip *c, int first, int n);

/* Sums over all cores: peak flop/s and SRAM bytes. */
double chip_total_flops(const chip *c);
uint64_t chip_total_sram(const chip *c);

#endif
