/* Tests of objective.c: the three names parse and print back, anything else is refused without
 * touching the output, and each value is its formula. */
#include <string.h>

#include "objective.h"
#include "testutil.h"

static void objective_names_should_parse_and_print_back(void) {
  const char *names[] = {"time", "energy", "edp"};
  for (int i = 0; i < 3; i++) {
    objective o = OBJECTIVE_TIME;
    CU_ASSERT_EQUAL(objective_parse(names[i], &o), 1);
    CU_ASSERT_EQUAL((int)o, i);
    CU_ASSERT_STRING_EQUAL(objective_name(o), names[i]);
  }
  objective o = OBJECTIVE_EDP;
  CU_ASSERT_EQUAL(objective_parse("Energy", &o), 0); /* names are exact */
  CU_ASSERT_EQUAL(objective_parse("", &o), 0);
  CU_ASSERT_EQUAL(objective_parse("time ", &o), 0);
  CU_ASSERT_EQUAL(o, OBJECTIVE_EDP);
  CU_ASSERT_STRING_EQUAL(objective_name((objective)7), "?");
}

static void objective_value_should_be_the_period_the_energy_or_their_product(void) {
  CU_ASSERT_EQUAL(objective_value(OBJECTIVE_TIME, 2e-6, 3e-3), 2e-6);
  CU_ASSERT_EQUAL(objective_value(OBJECTIVE_ENERGY, 2e-6, 3e-3), 3e-3);
  CU_ASSERT_EQUAL(objective_value(OBJECTIVE_EDP, 2e-6, 3e-3), 2e-6 * 3e-3);
}

static CU_TestInfo tests[] = {
    {"objective_names_should_parse_and_print_back", objective_names_should_parse_and_print_back},
    {"objective_value_should_be_the_period_the_energy_or_their_product",
     objective_value_should_be_the_period_the_energy_or_their_product},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("objective", tests, argc, argv); }
