/* test_memplan: the storage planner against hand counts, and its invariant on random inputs: two
 * tensors whose bytes overlap never live at the same step, unless one is written in place over the other
 * at the step it dies. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "memplan.h"
#include "testutil.h"

static void memplan_should_write_in_place_and_reuse_a_freed_block(void) {
  /* t0 [0,1] 100, t1 [1,2] 100 over t0 in place, t2 [2,3] 50 (t1 still lives: a new block), t3 [3,4] 80
   * (t1 died at 2: its 100-byte block, the smallest that holds 80) */
  memplan_tensor t[4] = {{100, 0, 1, -1}, {100, 1, 2, 0}, {50, 2, 3, -1}, {80, 3, 4, -1}};
  uint64_t off[4];
  memplan_result r;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(memplan_run(t, 4, 5, off, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(r.planned, 150);
  CU_ASSERT_EQUAL(r.naive, 330);
  CU_ASSERT_EQUAL(r.live, 150); /* step 1: t1 replaces t0; step 2: t1 + t2 */
  CU_ASSERT_EQUAL(r.blocks, 2);
  CU_ASSERT_EQUAL(r.inplace, 1);
  CU_ASSERT_EQUAL(off[0], 0);
  CU_ASSERT_EQUAL(off[1], 0);
  CU_ASSERT_EQUAL(off[2], 100);
  CU_ASSERT_EQUAL(off[3], 0);
}

static void memplan_should_prefer_the_smallest_fitting_block_then_grow_the_largest(void) {
  /* step 0: 64 and 32 in blocks 0 and 1; step 1: 40 takes the 64-byte block, 100 grows the 32-byte one;
   * step 2: 2000 is more than 16 x every free block: a block of its own */
  memplan_tensor t[5] = {{64, 0, 0, -1}, {32, 0, 0, -1}, {40, 1, 1, -1}, {100, 1, 1, -1}, {2000, 2, 2, -1}};
  uint64_t off[5];
  memplan_result r;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(memplan_run(t, 5, 3, off, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(off[2], 0);
  CU_ASSERT_EQUAL(off[3], 64);
  CU_ASSERT_EQUAL(off[4], 164);
  CU_ASSERT_EQUAL(r.planned, 64 + 100 + 2000);
  CU_ASSERT_EQUAL(r.live, 2000);
  CU_ASSERT_EQUAL(r.inplace, 0);
}

static void memplan_should_not_pass_a_block_on_twice_in_one_step(void) {
  /* t1 is written over t0 in place at step 1 and dies there; t2 names t1, but t0 still holds the block
   * at step 1, so t2 must not share it; and t3 names t0, already taken */
  memplan_tensor t[4] = {{10, 0, 1, -1}, {10, 1, 1, 0}, {10, 1, 2, 1}, {10, 1, 2, 0}};
  uint64_t off[4];
  memplan_result r;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(memplan_run(t, 4, 3, off, &r, &err), MP_OK);
  CU_ASSERT_EQUAL(off[1], off[0]);
  CU_ASSERT_NOT_EQUAL(off[2], off[0]);
  CU_ASSERT_NOT_EQUAL(off[3], off[0]);
  CU_ASSERT_NOT_EQUAL(off[3], off[2]);
  CU_ASSERT_EQUAL(r.inplace, 1);
}

static void memplan_should_reject_bad_lifetimes_and_sources(void) {
  memplan_result r;
  mp_error err;
  memplan_tensor late[1] = {{8, 2, 5, -1}}, backwards[1] = {{8, 3, 2, -1}};
  CU_ASSERT_EQUAL(memplan_run(late, 1, 5, NULL, &r, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "tensor 0"));
  CU_ASSERT_EQUAL(memplan_run(backwards, 1, 5, NULL, &r, &err), MP_INPUT);
  memplan_tensor alive[2] = {{8, 0, 3, -1}, {8, 1, 2, 0}}, self[1] = {{8, 0, 0, 0}}, out[1] = {{8, 0, 0, 4}};
  CU_ASSERT_EQUAL(memplan_run(alive, 2, 4, NULL, &r, &err), MP_INPUT); /* t0 does not die at step 1 */
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "in-place"));
  CU_ASSERT_EQUAL(memplan_run(self, 1, 1, NULL, &r, &err), MP_INPUT);
  CU_ASSERT_EQUAL(memplan_run(out, 1, 1, NULL, &r, &err), MP_INPUT);
  CU_ASSERT_EQUAL(memplan_run(NULL, 0, 0, NULL, &r, &err), MP_OK); /* nothing to plan */
  CU_ASSERT_EQUAL(r.planned, 0);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static unsigned below(unsigned n) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (unsigned)(rng % n);
}

static void memplan_should_never_let_two_live_tensors_share_bytes(void) {
  enum { MAXN = 80 };
  memplan_tensor t[MAXN];
  uint64_t off[MAXN], off2[MAXN];
  int bad = 0, shared = 0, inplace = 0;
  for (int inst = 0; inst < 2000; inst++) {
    int n = 1 + (int)below(MAXN), steps = 1 + (int)below(30);
    for (int i = 0; i < n; i++) {
      int a = (int)below((unsigned)steps), b = (int)below((unsigned)steps);
      t[i] = (memplan_tensor){below(4) == 0 ? 0 : 1 + below(below(2) ? 64 : 4096), a < b ? a : b, a < b ? b : a, -1};
      if (below(2)) { /* an in-place source: any earlier tensor dying at this birth */
        for (int k = 0; k < i; k++)
          if (t[k].death == t[i].birth && below(2)) {
            t[i].inplace = k;
            break;
          }
      }
    }
    memplan_result r, r2;
    mp_error err;
    if (memplan_run(t, n, steps, off, &r, &err) != MP_OK || memplan_run(t, n, steps, off2, &r2, &err) != MP_OK) {
      bad++;
      continue;
    }
    if (memcmp(off, off2, (size_t)n * sizeof *off) != 0 || r.planned != r2.planned) bad++; /* deterministic */
    if (!(r.live <= r.planned && r.planned <= r.naive)) bad++;
    inplace += r.inplace;
    for (int i = 0; i < n; i++) {
      if (off[i] + t[i].bytes > r.planned) bad++;
      for (int k = i + 1; k < n; k++) {
        if (t[i].bytes == 0 || t[k].bytes == 0) continue;
        int bytes = off[i] < off[k] + t[k].bytes && off[k] < off[i] + t[i].bytes;
        int lives = t[i].birth <= t[k].death && t[k].birth <= t[i].death;
        if (!bytes) continue;
        shared++;
        int in_place = (t[k].inplace == i && t[i].death == t[k].birth) || (t[i].inplace == k && t[k].death == t[i].birth);
        if (lives && !in_place) {
          if (bad < 5) fprintf(stderr, "\n  instance %d: tensors %d and %d live together in shared bytes", inst, i, k);
          bad++;
        }
      }
    }
  }
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(shared > 1000); /* the property is not vacuous: storage is shared, and in place */
  CU_ASSERT(inplace > 100);
}

int main(int argc, char **argv) {
  CU_TestInfo tests[] = {
      {"memplan_should_write_in_place_and_reuse_a_freed_block", memplan_should_write_in_place_and_reuse_a_freed_block},
      {"memplan_should_prefer_the_smallest_fitting_block_then_grow_the_largest",
       memplan_should_prefer_the_smallest_fitting_block_then_grow_the_largest},
      {"memplan_should_not_pass_a_block_on_twice_in_one_step", memplan_should_not_pass_a_block_on_twice_in_one_step},
      {"memplan_should_reject_bad_lifetimes_and_sources", memplan_should_reject_bad_lifetimes_and_sources},
      {"memplan_should_never_let_two_live_tensors_share_bytes", memplan_should_never_let_two_live_tensors_share_bytes},
      CU_TEST_INFO_NULL};
  return testutil_run("memplan", tests, argc, argv);
}
