/* Tests of rng: the published xoshiro256** and splitmix64 sequences, reproducibility, and the
 * distributions of the derived draws (fixed seeds, so the statistical bounds are deterministic). */
#include <math.h>
#include <stdint.h>

#include "rng.h"
#include "testutil.h"

static void splitmix64_should_match_the_reference_sequence_from_seed_zero(void) {
  uint64_t x = 0;
  CU_ASSERT_EQUAL(rng_splitmix64(&x), UINT64_C(0xe220a8397b1dcdaf));
  CU_ASSERT_EQUAL(rng_splitmix64(&x), UINT64_C(0x6e789e6aa1b965f4));
  CU_ASSERT_EQUAL(rng_splitmix64(&x), UINT64_C(0x06c45d188009454f));
  CU_ASSERT_EQUAL(rng_splitmix64(&x), UINT64_C(0xf88bb8a8724c81ec));
}

static void xoshiro_should_match_the_reference_sequence_from_state_1_2_3_4(void) {
  rng r = {{1, 2, 3, 4}};
  const uint64_t want[] = {11520u, 0u, 1509978240u, UINT64_C(1215971899390074240), UINT64_C(1216172134540287360),
                           UINT64_C(607988272756665600)};
  for (int i = 0; i < 6; i++) CU_ASSERT_EQUAL(rng_next(&r), want[i]);
}

static void rng_seed_should_fill_the_state_with_splitmix64_outputs(void) {
  rng r;
  rng_seed(&r, 0);
  CU_ASSERT_EQUAL(r.s[0], UINT64_C(0xe220a8397b1dcdaf));
  CU_ASSERT_EQUAL(r.s[3], UINT64_C(0xf88bb8a8724c81ec));
  rng_seed(&r, 42);
  CU_ASSERT_EQUAL(rng_next(&r), UINT64_C(1546998764402558742));
  CU_ASSERT_EQUAL(rng_next(&r), UINT64_C(6990951692964543102));
  CU_ASSERT_EQUAL(rng_next(&r), UINT64_C(12544586762248559009));
}

static void a_copied_state_should_continue_the_same_stream(void) {
  rng a, b;
  rng_seed(&a, 7);
  for (int i = 0; i < 10; i++) rng_next(&a);
  b = a;
  for (int i = 0; i < 100; i++) CU_ASSERT_EQUAL(rng_next(&a), rng_next(&b));
  rng c;
  rng_seed(&c, 8);
  rng_seed(&a, 7);
  int same = 0;
  for (int i = 0; i < 100; i++) same += rng_next(&a) == rng_next(&c);
  CU_ASSERT_EQUAL(same, 0);
}

static void rng_uniform_should_stay_in_0_1_with_mean_one_half(void) {
  rng r;
  rng_seed(&r, 1);
  double sum = 0, lo = 1, hi = 0;
  const int n = 200000;
  for (int i = 0; i < n; i++) {
    double u = rng_uniform(&r);
    CU_ASSERT(u >= 0.0 && u < 1.0);
    sum += u;
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
  }
  CU_ASSERT_DOUBLE_EQUAL(sum / n, 0.5, 0.005);
  CU_ASSERT(lo < 1e-3 && hi > 1 - 1e-3);
}

static void rng_below_should_hit_every_value_equally_often(void) {
  rng r;
  rng_seed(&r, 2);
  enum { K = 6, N = 60000 };
  int count[K] = {0};
  for (int i = 0; i < N; i++) {
    uint64_t v = rng_below(&r, K);
    CU_ASSERT_FATAL(v < K);
    count[v]++;
  }
  double chi2 = 0, e = (double)N / K;
  for (int k = 0; k < K; k++) chi2 += (count[k] - e) * (count[k] - e) / e;
  CU_ASSERT(chi2 < 20.5); /* 5 degrees of freedom, p = 0.001 */
  CU_ASSERT_EQUAL(rng_below(&r, 1), 0u);
  CU_ASSERT_EQUAL(rng_below(&r, 0), 0u);
  /* A range just above half of 2^64 rejects almost half the words and must still come out uniform. */
  uint64_t big = UINT64_C(0x8000000000000001), above = 0;
  for (int i = 0; i < 4000; i++) above += rng_below(&r, big) >= big / 2;
  CU_ASSERT(above > 1800 && above < 2200);
}

static void rng_normal_should_have_mean_zero_and_unit_variance(void) {
  rng r;
  rng_seed(&r, 3);
  const int n = 200000;
  double s = 0, s2 = 0, s4 = 0;
  for (int i = 0; i < n; i++) {
    double x = rng_normal(&r);
    CU_ASSERT_FATAL(isfinite(x));
    s += x;
    s2 += x * x;
    s4 += x * x * x * x;
  }
  CU_ASSERT_DOUBLE_EQUAL(s / n, 0.0, 0.01);
  CU_ASSERT_DOUBLE_EQUAL(s2 / n, 1.0, 0.02);
  CU_ASSERT_DOUBLE_EQUAL(s4 / n, 3.0, 0.1); /* the kurtosis of a normal */
}

static void rng_normal_should_consume_exactly_two_words(void) {
  rng a, b;
  rng_seed(&a, 4);
  b = a;
  rng_normal(&a);
  rng_next(&b);
  rng_next(&b);
  CU_ASSERT_EQUAL(rng_next(&a), rng_next(&b));
}

static void rng_split_should_give_a_new_stream_and_advance_the_parent_by_one_word(void) {
  rng p, q, child;
  rng_seed(&p, 5);
  q = p;
  rng_split(&p, &child);
  rng_next(&q);
  CU_ASSERT_EQUAL(rng_next(&p), rng_next(&q));
  int same = 0;
  for (int i = 0; i < 50; i++) same += rng_next(&child) == rng_next(&p);
  CU_ASSERT_EQUAL(same, 0);
}

static CU_TestInfo tests[] = {
    {"splitmix64_should_match_the_reference_sequence_from_seed_zero",
     splitmix64_should_match_the_reference_sequence_from_seed_zero},
    {"xoshiro_should_match_the_reference_sequence_from_state_1_2_3_4",
     xoshiro_should_match_the_reference_sequence_from_state_1_2_3_4},
    {"rng_seed_should_fill_the_state_with_splitmix64_outputs", rng_seed_should_fill_the_state_with_splitmix64_outputs},
    {"a_copied_state_should_continue_the_same_stream", a_copied_state_should_continue_the_same_stream},
    {"rng_uniform_should_stay_in_0_1_with_mean_one_half", rng_uniform_should_stay_in_0_1_with_mean_one_half},
    {"rng_below_should_hit_every_value_equally_often", rng_below_should_hit_every_value_equally_often},
    {"rng_normal_should_have_mean_zero_and_unit_variance", rng_normal_should_have_mean_zero_and_unit_variance},
    {"rng_normal_should_consume_exactly_two_words", rng_normal_should_consume_exactly_two_words},
    {"rng_split_should_give_a_new_stream_and_advance_the_parent_by_one_word",
     rng_split_should_give_a_new_stream_and_advance_the_parent_by_one_word},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rng", tests, argc, argv); }
