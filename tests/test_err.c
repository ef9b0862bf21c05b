/* Tests of err.c: the status table gives each code its name, text and exit status; err_at reads
 * "FILE: where: what" (or "FILE: what"); a message longer than the buffer is cut, never overflowed;
 * err_clear restores the invariant status == MP_OK exactly when the message is empty. */
#include <string.h>

#include "err.h"
#include "testutil.h"

static void status_table_should_give_each_code_its_name_text_and_exit_status(void) {
  static const struct {
    mp_status status;
    const char *name, *text;
    int exit_code;
  } want[] = {
      {MP_OK, "OK", "success", 0},
      {MP_USAGE, "USAGE", "bad usage", 2},
      {MP_INPUT, "INPUT", "bad input", 2},
      {MP_OUTPUT, "OUTPUT", "cannot write output", 1},
      {MP_NOMEM, "NOMEM", "out of memory", 1},
      {MP_RUN, "RUN", "run failed", 1},
  };
  CU_ASSERT_EQUAL(MP_STATUS_COUNT, (int)(sizeof want / sizeof want[0]));
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    CU_ASSERT_EQUAL((int)want[i].status, (int)i); /* codes are 0 .. MP_STATUS_COUNT - 1 */
    CU_ASSERT_STRING_EQUAL(err_name(want[i].status), want[i].name);
    CU_ASSERT_STRING_EQUAL(err_text(want[i].status), want[i].text);
    CU_ASSERT_EQUAL(err_exit_code(want[i].status), want[i].exit_code);
  }
  /* a code outside the table is named, described and exits as a failure */
  mp_status outside[] = {(mp_status)MP_STATUS_COUNT, (mp_status)-1, (mp_status)1000};
  for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
    CU_ASSERT_STRING_EQUAL(err_name(outside[i]), "UNKNOWN");
    CU_ASSERT_STRING_EQUAL(err_text(outside[i]), "unknown status");
    CU_ASSERT_EQUAL(err_exit_code(outside[i]), 1);
  }
}

static void err_set_should_format_the_message_and_return_the_status(void) {
  mp_error err;
  err_clear(&err);
  CU_ASSERT_EQUAL(err_set(&err, MP_RUN, "%d of %s", 3, "four"), MP_RUN);
  CU_ASSERT_EQUAL(err.status, MP_RUN);
  CU_ASSERT_STRING_EQUAL(err.msg, "3 of four");
  CU_ASSERT_EQUAL(err_set(NULL, MP_OUTPUT, "nowhere to put %s", "this"), MP_OUTPUT); /* no error to fill */
  CU_ASSERT_EQUAL(err_nomem(&err), MP_NOMEM);
  CU_ASSERT_EQUAL(err.status, MP_NOMEM);
  CU_ASSERT_STRING_EQUAL(err.msg, "out of memory");
  CU_ASSERT_EQUAL(err_nomem(NULL), MP_NOMEM);
}

static void err_at_should_name_the_file_and_the_place_when_there_is_one(void) {
  mp_error err;
  CU_ASSERT_EQUAL(err_at(&err, MP_INPUT, "g.json", "ops[2].macs", "expected %s", "a number"), MP_INPUT);
  CU_ASSERT_EQUAL(err.status, MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "g.json: ops[2].macs: expected a number");
  CU_ASSERT_EQUAL(err_at(&err, MP_OUTPUT, "out.csv", NULL, "cannot write"), MP_OUTPUT);
  CU_ASSERT_EQUAL(err.status, MP_OUTPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "out.csv: cannot write");
  err_at(&err, MP_INPUT, "c.json", "", "empty where");
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: empty where");
  err_at(&err, MP_INPUT, NULL, "mesh", "no file");
  CU_ASSERT_STRING_EQUAL(err.msg, "(input): mesh: no file");
  err_at(&err, MP_INPUT, NULL, NULL, "%s", "neither");
  CU_ASSERT_STRING_EQUAL(err.msg, "(input): neither");
  CU_ASSERT_EQUAL(err_at(NULL, MP_USAGE, "x", "y", "z"), MP_USAGE);
}

static void a_message_should_be_one_line_whatever_the_names_in_it_hold(void) {
  mp_error err;
  err_at(&err, MP_INPUT, "g\nh.json", "ops[1]", "duplicate op name '%s'", "x\ny\tz\r\x1b[2J\x7f");
  CU_ASSERT_STRING_EQUAL(err.msg, "g\\nh.json: ops[1]: duplicate op name 'x\\ny\\tz\\r\\x1b[2J\\x7f'");
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  /* escapes that no longer fit are cut whole, never overflowing */
  char many[2 * MP_ERROR_MSG_MAX];
  memset(many, '\n', sizeof many - 1);
  many[sizeof many - 1] = '\0';
  err_set(&err, MP_INPUT, "%s", many);
  CU_ASSERT_EQUAL(strlen(err.msg), (size_t)MP_ERROR_MSG_MAX - 1 - (MP_ERROR_MSG_MAX - 1) % 2);
  CU_ASSERT_PTR_NULL(strchr(err.msg, '\n'));
  CU_ASSERT_EQUAL(strncmp(err.msg, "\\n\\n", 4), 0);
}

/* An mp_error with guard bytes on both sides: a write past msg would change them. */
typedef struct guarded {
  char before[64];
  mp_error err;
  char after[64];
} guarded;

static int intact(const guarded *g) {
  for (size_t i = 0; i < sizeof g->before; i++)
    if (g->before[i] != 'B' || g->after[i] != 'A') return 0;
  return 1;
}

static void an_overlong_message_should_be_cut_without_overflow(void) {
  guarded g;
  memset(g.before, 'B', sizeof g.before);
  memset(g.after, 'A', sizeof g.after);
  err_clear(&g.err);
  char big[3 * MP_ERROR_MSG_MAX];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';

  err_set(&g.err, MP_INPUT, "%s", big);
  CU_ASSERT_TRUE(intact(&g));
  CU_ASSERT_EQUAL(strlen(g.err.msg), (size_t)MP_ERROR_MSG_MAX - 1);
  CU_ASSERT_EQUAL(g.err.msg[0], 'x');
  CU_ASSERT_EQUAL(g.err.status, MP_INPUT);

  /* a long what after a short prefix: the prefix stays whole, the what is cut */
  err_at(&g.err, MP_INPUT, "f.json", "w", "%s", big);
  CU_ASSERT_TRUE(intact(&g));
  CU_ASSERT_EQUAL(strlen(g.err.msg), (size_t)MP_ERROR_MSG_MAX - 1);
  CU_ASSERT_EQUAL(strncmp(g.err.msg, "f.json: w: xxx", 14), 0);

  /* a file name longer than the whole buffer: the prefix is cut to half of it, then the what follows */
  err_at(&g.err, MP_RUN, big, big, "TAIL");
  CU_ASSERT_TRUE(intact(&g));
  CU_ASSERT_EQUAL(strlen(g.err.msg), (size_t)MP_ERROR_MSG_MAX / 2 - 1 + 4);
  CU_ASSERT_STRING_EQUAL(g.err.msg + MP_ERROR_MSG_MAX / 2 - 1, "TAIL");
  CU_ASSERT_EQUAL(g.err.status, MP_RUN);
}

static void err_clear_should_restore_ok_with_an_empty_message(void) {
  mp_error err;
  memset(&err, 'z', sizeof err); /* whatever was there before */
  err_clear(&err);
  CU_ASSERT_EQUAL(err.status, MP_OK);
  CU_ASSERT_STRING_EQUAL(err.msg, "");
  err_set(&err, MP_RUN, "failed");
  CU_ASSERT_NOT_EQUAL(err.status, MP_OK);
  CU_ASSERT_NOT_EQUAL(err.msg[0], '\0');
  err_clear(&err);
  CU_ASSERT_EQUAL(err.status, MP_OK);
  CU_ASSERT_STRING_EQUAL(err.msg, "");
  err_clear(NULL); /* a no-op */
}

static CU_TestInfo tests[] = {
    {"status_table_should_give_each_code_its_name_text_and_exit_status",
     status_table_should_give_each_code_its_name_text_and_exit_status},
    {"err_set_should_format_the_message_and_return_the_status",
     err_set_should_format_the_message_and_return_the_status},
    {"err_at_should_name_the_file_and_the_place_when_there_is_one",
     err_at_should_name_the_file_and_the_place_when_there_is_one},
    {"a_message_should_be_one_line_whatever_the_names_in_it_hold",
     a_message_should_be_one_line_whatever_the_names_in_it_hold},
    {"an_overlong_message_should_be_cut_without_overflow", an_overlong_message_should_be_cut_without_overflow},
    {"err_clear_should_restore_ok_with_an_empty_message", err_clear_should_restore_ok_with_an_empty_message},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("err", tests, argc, argv); }
