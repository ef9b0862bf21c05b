/* Tests of strbuf.c: text and binary appends across many reallocations keep every byte, an out-of-memory
 * buffer ignores appends, and clear resets. */
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

static void strbuf_append_should_keep_binary_bytes_and_a_trailing_nul(void) {
  strbuf b = {0};
  strbuf_append(&b, NULL, 0);
  CU_ASSERT_FALSE(b.oom);
  CU_ASSERT_EQUAL(b.len, 0u);
  CU_ASSERT_PTR_NOT_NULL_FATAL(b.s);
  CU_ASSERT_EQUAL(b.s[0], '\0');
  unsigned char bin[300];
  for (int i = 0; i < 300; i++) bin[i] = (unsigned char)(i * 7);
  for (int i = 0; i < 100; i++) strbuf_append(&b, bin, sizeof bin);
  strbuf_printf(&b, "end");
  CU_ASSERT_FALSE_FATAL(b.oom);
  CU_ASSERT_EQUAL_FATAL(b.len, 100u * 300 + 3);
  for (int i = 0; i < 100; i++) CU_ASSERT_EQUAL(memcmp(b.s + (size_t)i * 300, bin, sizeof bin), 0);
  CU_ASSERT_STRING_EQUAL(b.s + 30000, "end");
  strbuf_clear(&b);
}

static void strbuf_should_stop_appending_once_memory_ran_out(void) {
  strbuf b = {0};
  strbuf_printf(&b, "kept");
  b.oom = 1; /* as after a failed realloc */
  strbuf_append(&b, "more", 4);
  strbuf_printf(&b, "%s", "more");
  CU_ASSERT_EQUAL(b.len, 4u);
  CU_ASSERT_STRING_EQUAL(b.s, "kept");
  strbuf_clear(&b);
  CU_ASSERT_FALSE(b.oom);
}

static CU_TestInfo tests[] = {
    {"strbuf_printf_should_keep_every_append_across_growth", strbuf_printf_should_keep_every_append_across_growth},
    {"strbuf_append_should_keep_binary_bytes_and_a_trailing_nul", strbuf_append_should_keep_binary_bytes_and_a_trailing_nul},
    {"strbuf_should_stop_appending_once_memory_ran_out", strbuf_should_stop_appending_once_memory_ran_out},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("strbuf", tests, argc, argv); }
