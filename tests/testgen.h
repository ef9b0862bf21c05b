/* testgen: the random instances that test_optimal.c and test_optimal_train.c check optimal against
 * brute force on: one xorshift64* generator (process-wide state, seeded by each test) and the random
 * chip both suites draw.  An instance is a function of the seed and of the sequence of draws, so the
 * order of the draws is fixed in the code (never left to the unspecified evaluation order of a
 * function's arguments): it is the order GCC evaluated them in when the figures the suites print (and
 * partitioner/README.md quotes) were measured.  Changing it changes every instance. */
#ifndef MESHPIPE_TESTGEN_H
#define MESHPIPE_TESTGEN_H

#include <stdint.h>

struct chip; /* chip.h */
struct plan; /* plan.h */

/* Restarts the generator at seed (not 0). */
void testgen_seed(uint64_t seed);

/* A draw in [0, n), n > 0. */
int testgen_below(int n);

/* A random chip of w x h cores (w h <= 64): heterogeneous chips override some cores' figures; sram_scale
 * makes memory tight (small) or plentiful (large); n_ports DRAM ports at distinct random positions with
 * a random bandwidth (from a tenth of the NoC's to a few times it); a hop's latency of 0 or up to 20 us.
 * With TESTGEN_CORE_MODEL in flags, a core model: mostly a MAC array of 1-16 x 1-16 at 0.1-1 MHz (its
 * peak the flops, raised to the 10^6 flop/s a chip allows; slow, so that its steps show beside the
 * all-gathers), often vector lanes, a quarter of the time an SRAM bandwidth that can bind.  With
 * TESTGEN_ENERGY, energy figures drawn last (NoC and DRAM energy large enough to trade against static
 * power; no static power one time in four).  With neither it draws exactly what it drew before core
 * models existed.  Returns an owned chip (chip_free), or NULL (the reason on stderr). */
enum { TESTGEN_CORE_MODEL = 1, TESTGEN_ENERGY = 2 };
struct chip *testgen_chip(int w, int h, int hetero, double sram_scale, int n_ports, int flags);

/* Calls visit(ctx, p) with every plan of n_layers layers on n_cores cores (1 <= n_cores <= 16): every
 * arranged_core list of entries >= 0 summing to n_layers whose last entry is > 0, in lexicographic order;
 * p is borrowed for the call.  Returns how many lists plan_new refused (0 when all is well). */
int testgen_each_plan(int n_cores, int n_layers, void (*visit)(void *ctx, const struct plan *p), void *ctx);

#endif
