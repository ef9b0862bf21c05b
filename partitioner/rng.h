/* rng: a small, seeded, reproducible random number generator (xoshiro256** seeded by splitmix64).
 *
 * Every random component of meshpipe owns one rng value and never touches a global generator, so a
 * seed fixes a run completely.  The whole state is the four words of s[]: copying the struct (or
 * saving and restoring s[]) continues the stream exactly where it was.  Invariant after rng_seed:
 * s[] is not all zero (splitmix64 never yields four zero words in a row).  All functions borrow r. */
#ifndef MESHPIPE_RNG_H
#define MESHPIPE_RNG_H

#include <stdint.h>

typedef struct rng {
  uint64_t s[4];
} rng;

/* Seeds r from one 64-bit seed: s[0..3] are four successive splitmix64 outputs of seed. */
void rng_seed(rng *r, uint64_t seed);

/* One splitmix64 step on *x (advances it, returns the mixed value); used for seeding and hashing. */
uint64_t rng_splitmix64(uint64_t *x);

/* The next 64 random bits (xoshiro256**). */
uint64_t rng_next(rng *r);

/* A uniform double in [0, 1) with 53 random bits. */
double rng_uniform(rng *r);

/* A uniform integer in [0, n) without modulo bias; n must be > 0 (returns 0 for n == 0). */
uint64_t rng_below(rng *r, uint64_t n);

/* A standard normal deviate (Box-Muller; consumes exactly two rng_next words per call, so the
 * stream position never depends on a cached spare). */
double rng_normal(rng *r);

/* Seeds child from the next word of parent: an independent stream for a sub-component whose
 * draws must not shift the parent's sequence when the sub-component changes. */
void rng_split(rng *parent, rng *child);

#endif
