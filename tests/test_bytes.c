/* Tests of bytes.c: every field reads back bit for bit in little-endian order, and a reader past the
 * end returns zeros and says so. */
#include <math.h>
#include <string.h>

#include "bytes.h"
#include "testutil.h"

static void fields_should_read_back_bit_for_bit_in_little_endian_order(void) {
  strbuf b = {0};
  bytes_put_u32(&b, 0x01020304u);
  bytes_put_u64(&b, UINT64_C(0x1122334455667788));
  bytes_put_f64(&b, -0.0);
  bytes_put_f64(&b, 0.1);
  bytes_put_f64(&b, NAN);
  CU_ASSERT_FALSE_FATAL(b.oom);
  CU_ASSERT_EQUAL_FATAL(b.len, 4u + 8 + 3 * 8);
  const unsigned char *u = (const unsigned char *)b.s;
  CU_ASSERT(u[0] == 4 && u[1] == 3 && u[2] == 2 && u[3] == 1);
  CU_ASSERT(u[4] == 0x88 && u[11] == 0x11);
  CU_ASSERT_EQUAL(u[19], 0x80); /* -0.0: only the sign bit, in the last byte */
  bytes_reader r = bytes_reader_of(b.s, b.len);
  CU_ASSERT_EQUAL(bytes_get_u32(&r), 0x01020304u);
  CU_ASSERT_EQUAL(bytes_get_u64(&r), UINT64_C(0x1122334455667788));
  double z = bytes_get_f64(&r), tenth = bytes_get_f64(&r), nan = bytes_get_f64(&r);
  CU_ASSERT(z == 0 && signbit(z));
  CU_ASSERT_EQUAL(tenth, 0.1);
  CU_ASSERT(isnan(nan));
  CU_ASSERT_EQUAL(bytes_left(&r), 0u);
  CU_ASSERT_FALSE(r.short_read);
  strbuf_clear(&b);
}

static void a_read_past_the_end_should_give_zeros_and_set_short_read(void) {
  unsigned char three[3] = {1, 2, 3}, out[4] = {9, 9, 9, 9};
  bytes_reader r = bytes_reader_of(three, sizeof three);
  CU_ASSERT_EQUAL(bytes_get_u32(&r), 0u);
  CU_ASSERT_TRUE(r.short_read);
  CU_ASSERT_EQUAL(bytes_left(&r), 0u);
  r = bytes_reader_of(three, sizeof three);
  bytes_get(&r, out, 2);
  CU_ASSERT(out[0] == 1 && out[1] == 2 && !r.short_read);
  bytes_get(&r, out, 2);
  CU_ASSERT(out[0] == 0 && out[1] == 0 && r.short_read);
  CU_ASSERT_EQUAL(bytes_get_u64(&r), 0u);
  CU_ASSERT_EQUAL(bytes_get_f64(&r), 0.0);
}

static CU_TestInfo tests[] = {
    {"fields_should_read_back_bit_for_bit_in_little_endian_order",
     fields_should_read_back_bit_for_bit_in_little_endian_order},
    {"a_read_past_the_end_should_give_zeros_and_set_short_read", a_read_past_the_end_should_give_zeros_and_set_short_read},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("bytes", tests, argc, argv); }
