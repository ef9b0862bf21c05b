/* Tests of rl_env: the action semantics on the example, the mask against a brute-force
 * definition (an action applies exactly when it changes the list into another valid plan), and
 * that the actions connect every plan of a small instance to every other. */
#include <stdlib.h>
#include <string.h>

#include "rl_env.h"
#include "testutil.h"

static rl_env *make_env_w(int n_cores, int n_layers, const uint64_t *macs, const uint64_t *weights) {
  rl_env *e = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(rl_env_new(n_cores, n_layers, macs, weights, &e, &err), MP_OK);
  return e;
}

static rl_env *make_env(int n_cores, int n_layers, const uint64_t *macs) {
  return make_env_w(n_cores, n_layers, macs, NULL);
}

static void rl_env_new_should_reject_fewer_than_two_cores_or_no_layers(void) {
  rl_env *e = NULL;
  mp_error err;
  CU_ASSERT_EQUAL(rl_env_new(1, 5, NULL, NULL, &e, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(e);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "at least 2 cores"));
  CU_ASSERT_EQUAL(rl_env_new(4, 0, NULL, NULL, &e, &err), MP_INPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "no layers"));
  rl_env_free(NULL);
}

static void rl_env_should_number_four_actions_per_neighbour_pair(void) {
  rl_env *e = make_env(6, 10, NULL);
  CU_ASSERT_EQUAL(e->n_actions, 20);
  CU_ASSERT_EQUAL(e->n_pairs, 5);
  CU_ASSERT_EQUAL(e->n_features, 5 * RL_PAIR_FEATURES);
  rl_env_free(e);
}

static void each_action_should_edit_the_list_as_documented(void) {
  rl_env *e = make_env(6, 10, NULL);
  const int s[6] = {0, 3, 5, 0, 0, 2};
  int next[6];
  struct {
    int action, applies;
    int want[6];
  } cases[] = {
      {4 * 1 + 0, 1, {0, 0, 8, 0, 0, 2}}, /* (a) on (1,2): core 1's layers join core 2's group */
      {4 * 1 + 1, 1, {0, 8, 0, 0, 0, 2}}, /* (b) on (1,2): core 2's layers go to core 1's group */
      {4 * 1 + 2, 1, {0, 2, 6, 0, 0, 2}}, /* (c) on (1,2) */
      {4 * 1 + 3, 1, {0, 4, 4, 0, 0, 2}}, /* (d) on (1,2) */
      {4 * 0 + 0, 0, {0, 3, 5, 0, 0, 2}}, /* (a) on (0,1): core 0 is already in core 1's group */
      {4 * 0 + 3, 1, {1, 2, 5, 0, 0, 2}}, /* (d) on (0,1): core 0 becomes a one-layer group */
      {4 * 2 + 2, 1, {0, 3, 4, 1, 0, 2}}, /* (c) on (2,3): core 3 leaves 3-5 with one layer */
      {4 * 3 + 3, 0, {0, 3, 5, 0, 0, 2}}, /* (d) on (3,4): core 4 has nothing of its own */
      {4 * 4 + 1, 0, {0, 3, 5, 0, 0, 2}}, /* (b) on (4,5): the last core cannot be emptied */
      {4 * 4 + 3, 1, {0, 3, 5, 0, 1, 1}}, /* (d) on (4,5): the last core keeps one layer */
      {4 * 4 + 0, 0, {0, 3, 5, 0, 0, 2}},
      {-1, 0, {0, 3, 5, 0, 0, 2}},
      {20, 0, {0, 3, 5, 0, 0, 2}},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    CU_ASSERT_EQUAL(rl_env_apply(e, s, cases[k].action, next), cases[k].applies);
    CU_ASSERT_EQUAL(memcmp(next, cases[k].want, sizeof next), 0);
  }
  const int last1[6] = {2, 2, 2, 2, 1, 1};
  CU_ASSERT_FALSE(rl_env_can_apply(e, last1, 4 * 4 + 3)); /* would leave the last core empty */
  int inplace[6] = {0, 3, 5, 0, 0, 2};
  CU_ASSERT_EQUAL(rl_env_apply(e, inplace, 4 * 1 + 3, inplace), 1);
  CU_ASSERT_EQUAL(inplace[1], 4);
  CU_ASSERT_EQUAL(inplace[2], 4);
  rl_env_free(e);
}

/* All valid lists of n entries summing to L with a positive last entry, into a flat array. */
static int enumerate(int n, int L, int *out, int cap) {
  int count = 0, cur[8];
  memset(cur, 0, sizeof cur);
  for (;;) {
    int sum = 0;
    for (int i = 0; i < n; i++) sum += cur[i];
    if (sum == L && cur[n - 1] > 0) {
      if (count >= cap) return -1;
      memcpy(out + (size_t)count * n, cur, (size_t)n * sizeof *cur);
      count++;
    }
    int i = 0;
    while (i < n && ++cur[i] > L) cur[i++] = 0;
    if (i == n) return count;
  }
}

static int find_state(const int *all, int count, int n, const int *s) {
  for (int k = 0; k < count; k++)
    if (memcmp(all + (size_t)k * n, s, (size_t)n * sizeof *s) == 0) return k;
  return -1;
}

static void the_mask_should_hold_exactly_the_actions_that_change_the_state_into_a_valid_one(void) {
  enum { N = 4, L = 5, CAP = 200 };
  rl_env *e = make_env(N, L, NULL);
  int all[CAP * N], next[N];
  int count = enumerate(N, L, all, CAP);
  CU_ASSERT_FATAL(count > 0);
  unsigned char mask[4 * (N - 1)];
  for (int k = 0; k < count; k++) {
    const int *s = all + (size_t)k * N;
    CU_ASSERT_TRUE(rl_env_valid_state(e, s));
    int n_valid = rl_env_mask(e, s, mask), seen = 0;
    for (int a = 0; a < e->n_actions; a++) {
      /* Brute-force definition: perform the edit blindly, then judge the result. */
      int raw[N];
      memcpy(raw, s, sizeof raw);
      int i = a / 4;
      switch (a % 4) {
      case 0: raw[i + 1] += raw[i], raw[i] = 0; break;
      case 1: raw[i] += raw[i + 1], raw[i + 1] = 0; break;
      case 2: raw[i]--, raw[i + 1]++; break;
      default: raw[i + 1]--, raw[i]++; break;
      }
      int changes_validly = memcmp(raw, s, sizeof raw) != 0 && rl_env_valid_state(e, raw);
      CU_ASSERT_EQUAL(mask[a], changes_validly);
      CU_ASSERT_EQUAL(rl_env_apply(e, s, a, next), changes_validly);
      CU_ASSERT_EQUAL(memcmp(next, changes_validly ? raw : s, sizeof next), 0);
      seen += mask[a];
    }
    CU_ASSERT_EQUAL(seen, n_valid);
  }
  rl_env_free(e);
}

static void the_actions_should_connect_every_plan_to_every_other(void) {
  enum { N = 5, L = 4, CAP = 200 };
  rl_env *e = make_env(N, L, NULL);
  int all[CAP * N], next[N];
  int count = enumerate(N, L, all, CAP);
  CU_ASSERT_FATAL(count > 1);
  /* Breadth-first search from every state; each must reach all the others. */
  int *queue = malloc(sizeof(int) * (size_t)count), *seen = malloc(sizeof(int) * (size_t)count);
  for (int src = 0; src < count; src++) {
    memset(seen, 0, sizeof(int) * (size_t)count);
    int head = 0, tail = 0, reached = 1;
    queue[tail++] = src;
    seen[src] = 1;
    while (head < tail) {
      const int *s = all + (size_t)queue[head++] * N;
      for (int a = 0; a < e->n_actions; a++) {
        if (!rl_env_apply(e, s, a, next)) continue;
        int k = find_state(all, count, N, next);
        CU_ASSERT_FATAL(k >= 0);
        if (!seen[k]) seen[k] = 1, reached++, queue[tail++] = k;
      }
    }
    CU_ASSERT_EQUAL(reached, count);
  }
  free(queue);
  free(seen);
  rl_env_free(e);
}

/* Core feature f of core c as it appears in the rows (row c-1 holds core c at window slot 2, or
 * row 0 slot 1 for core 0). */
static double core_feature(const double *x, int c, int f) {
  return c == 0 ? x[1 * RL_CORE_FEATURES + f] : x[(size_t)(c - 1) * RL_PAIR_FEATURES + 2 * RL_CORE_FEATURES + f];
}

static void features_should_be_one_per_core_for_an_even_split_of_equal_layers(void) {
  const uint64_t macs[8] = {5, 5, 5, 5, 5, 5, 5, 5}, w[8] = {2, 2, 2, 2, 2, 2, 2, 2};
  rl_env *e = make_env_w(4, 8, macs, w);
  const int even[4] = {2, 2, 2, 2};
  double x[3 * RL_PAIR_FEATURES];
  rl_env_features(e, even, x);
  for (int c = 0; c < 4; c++)
    for (int f = 0; f < RL_CORE_FEATURES; f++) CU_ASSERT_DOUBLE_EQUAL(core_feature(x, c, f), 1.0, 1e-15);
  rl_env_free(e);
}

static void rows_should_hold_the_four_cores_around_each_pair_and_the_edge_flags(void) {
  const uint64_t macs[5] = {100, 0, 300, 0, 600};
  rl_env *e = make_env(4, 5, macs);
  const int s[4] = {2, 0, 2, 1};
  double x[3 * RL_PAIR_FEATURES];
  rl_env_features(e, s, x);
  const int F = RL_CORE_FEATURES;
  /* Row 0 (pair 0,1): no core -1, so slot 0 is zeros and the left flag is 0. */
  for (int f = 0; f < F; f++) CU_ASSERT_EQUAL(x[f], 0.0);
  CU_ASSERT_EQUAL(x[4 * F], 0.0);
  CU_ASSERT_EQUAL(x[4 * F + 1], 1.0);
  /* Row 2 (pair 2,3): no core 4. */
  const double *r2 = x + 2 * RL_PAIR_FEATURES;
  for (int f = 0; f < F; f++) CU_ASSERT_EQUAL(r2[3 * F + f], 0.0);
  CU_ASSERT_EQUAL(r2[4 * F], 1.0);
  CU_ASSERT_EQUAL(r2[4 * F + 1], 0.0);
  /* Row 1 (pair 1,2) holds cores 0..3 in order: compare its slots with the other rows' copies. */
  const double *r1 = x + RL_PAIR_FEATURES;
  for (int f = 0; f < F; f++) {
    CU_ASSERT_EQUAL(r1[0 * F + f], x[1 * F + f]);  /* core 0 */
    CU_ASSERT_EQUAL(r1[1 * F + f], x[2 * F + f]);  /* core 1 */
    CU_ASSERT_EQUAL(r1[2 * F + f], r2[1 * F + f]); /* core 2 */
    CU_ASSERT_EQUAL(r1[3 * F + f], r2[2 * F + f]); /* core 3 */
  }
  CU_ASSERT_EQUAL(r1[4 * F], 1.0);
  CU_ASSERT_EQUAL(r1[4 * F + 1], 1.0);
  rl_env_free(e);
}

static void core_features_should_follow_the_groups_loads(void) {
  /* Groups: core 0 takes layers 0-1 (100 MACs, 10 weight bytes); cores 1-2 take layers 2-4
   * (900 MACs, 60 bytes: 450 and 30 per core). */
  const uint64_t macs[5] = {100, 0, 300, 0, 600}, w[5] = {4, 6, 20, 20, 20};
  rl_env *e = make_env_w(3, 5, macs, w);
  const int s[3] = {2, 0, 3};
  double x[2 * RL_PAIR_FEATURES];
  rl_env_features(e, s, x);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 0, 0), 2.0 * 3 / 5, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 1, 0), 0.0, 0);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 0, 1), 100.0 * 3 / 1000, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 2, 1), 900.0 * 3 / 1000, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 0, 2), 100.0 / 450, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 1, 2), 1.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 2, 2), 1.0, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 0, 3), 10.0 / 30, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 1, 3), 1.0, 1e-15);
  CU_ASSERT_EQUAL(core_feature(x, 0, 4), 1.0);
  CU_ASSERT_EQUAL(core_feature(x, 1, 4), 0.0);
  CU_ASSERT_EQUAL(core_feature(x, 2, 4), 1.0);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 0, 5), 1.0 * 2 / 3, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(core_feature(x, 1, 5), 2.0 * 2 / 3, 1e-15);
  rl_env_free(e);
  e = make_env(3, 5, NULL); /* no MACs or weights at all: those features are zero, not NaN */
  rl_env_features(e, s, x);
  for (int c = 0; c < 3; c++)
    for (int f = 1; f <= 3; f++) CU_ASSERT_EQUAL(core_feature(x, c, f), 0.0);
  rl_env_free(e);
}

static void rl_env_valid_state_should_reject_bad_lists(void) {
  rl_env *e = make_env(3, 4, NULL);
  const int ok[3] = {1, 0, 3}, neg[3] = {-1, 2, 3}, sum[3] = {1, 1, 1}, last0[3] = {2, 2, 0};
  CU_ASSERT_TRUE(rl_env_valid_state(e, ok));
  CU_ASSERT_FALSE(rl_env_valid_state(e, neg));
  CU_ASSERT_FALSE(rl_env_valid_state(e, sum));
  CU_ASSERT_FALSE(rl_env_valid_state(e, last0));
  rl_env_free(e);
}

static CU_TestInfo tests[] = {
    {"rl_env_new_should_reject_fewer_than_two_cores_or_no_layers",
     rl_env_new_should_reject_fewer_than_two_cores_or_no_layers},
    {"rl_env_should_number_four_actions_per_neighbour_pair", rl_env_should_number_four_actions_per_neighbour_pair},
    {"each_action_should_edit_the_list_as_documented", each_action_should_edit_the_list_as_documented},
    {"the_mask_should_hold_exactly_the_actions_that_change_the_state_into_a_valid_one",
     the_mask_should_hold_exactly_the_actions_that_change_the_state_into_a_valid_one},
    {"the_actions_should_connect_every_plan_to_every_other", the_actions_should_connect_every_plan_to_every_other},
    {"features_should_be_one_per_core_for_an_even_split_of_equal_layers",
     features_should_be_one_per_core_for_an_even_split_of_equal_layers},
    {"rows_should_hold_the_four_cores_around_each_pair_and_the_edge_flags",
     rows_should_hold_the_four_cores_around_each_pair_and_the_edge_flags},
    {"core_features_should_follow_the_groups_loads", core_features_should_follow_the_groups_loads},
    {"rl_env_valid_state_should_reject_bad_lists", rl_env_valid_state_should_reject_bad_lists},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("rl_env", tests, argc, argv); }
