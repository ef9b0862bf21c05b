/* Tests of strbuf.c: appends across many reallocations keep every byte, and clear resets. */
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "testutil.h"

static void strbuf_printf_should_keep_every_append_across_growth(void) {
  strbuf b = {0};
  char want[64 * 1024];
  size_t used = 0;
  for (int i = 0; i < 5000; i++) {
    strbuf_printf(&b, "%d,", i);
    used += (size_t)snprintf(want + used, sizeof want - used, "%d,", i);
  }
  strbuf_printf(&b, "%s", ""); /* an empty append changes nothing */
  CU_ASSERT_FALSE(b.oom);
  CU_ASSERT_EQUAL(b.len, used);
  CU_ASSERT_EQUAL(strlen(b.s), used);
  CU_ASSERT_STRING_EQUAL(b.s, want);
  strbuf_clear(&b);
  CU_ASSERT_PTR_NULL(b.s);
  CU_ASSERT_EQUAL(b.len, 0);
  strbuf_printf(&b, "%s-%03d", "x", 7);
  CU_ASSERT_STRING_EQUAL(b.s, "x-007");
  strbuf_clear(&b);
}

static CU_TestInfo tests[] = {
    {"strbuf_printf_should_keep_every_append_across_growth", strbuf_printf_should_keep_every_append_across_growth},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("strbuf", tests, argc, argv); }
