/* Tests of proc.c: a child's answer, status and message reach the parent intact; a child that dies or
 * exits without answering is MP_RUN naming why; whole reads and writes move every byte; several
 * children can be watched at once. */
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "proc.h"
#include "testutil.h"

/* Answers the u64 values 0 .. n-1 (n from ctx): 8n bytes, so a big n spans many pipe reads. */
static mp_status count_up(void *ctx, strbuf *answer, mp_error *err) {
  (void)err;
  long n = *(const long *)ctx;
  for (long i = 0; i < n; i++) bytes_put_u64(answer, (uint64_t)i);
  return MP_OK;
}

static mp_status refuse(void *ctx, strbuf *answer, mp_error *err) {
  (void)ctx;
  strbuf_printf(answer, "never seen");
  return err_at(err, MP_INPUT, "x.json", "ops[2]", "a bad %s", "op");
}

static mp_status die(void *ctx, strbuf *answer, mp_error *err) {
  (void)ctx;
  (void)answer;
  (void)err;
  raise(SIGKILL);
  return MP_OK;
}

static mp_status leave(void *ctx, strbuf *answer, mp_error *err) {
  (void)ctx;
  (void)answer;
  (void)err;
  _exit(3);
}

static void a_child_answer_should_reach_the_parent_whole(void) {
  long n = 100000; /* 800 KB: more than a pipe holds */
  strbuf answer = {0};
  mp_error err;
  err_clear(&err);
  CU_ASSERT_EQUAL_FATAL(proc_run_child(count_up, &n, &answer, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(answer.len, (size_t)n * 8);
  bytes_reader r = bytes_reader_of(answer.s, answer.len);
  int ok = 1;
  for (long i = 0; i < n; i++) ok &= bytes_get_u64(&r) == (uint64_t)i;
  CU_ASSERT_TRUE(ok);
  strbuf_clear(&answer);
  n = 0; /* an empty answer is an answer */
  CU_ASSERT_EQUAL(proc_run_child(count_up, &n, &answer, &err), MP_OK);
  CU_ASSERT_EQUAL(answer.len, 0u);
  strbuf_clear(&answer);
}

static void a_child_failure_should_come_back_with_its_status_and_message(void) {
  strbuf answer = {0};
  mp_error err;
  err_clear(&err);
  CU_ASSERT_EQUAL(proc_run_child(refuse, NULL, &answer, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "x.json: ops[2]: a bad op");
  CU_ASSERT_EQUAL(answer.len, 0u);
  strbuf_clear(&answer);
}

static void a_child_that_dies_or_leaves_should_be_a_run_failure(void) {
  mp_error err;
  err_clear(&err);
  CU_ASSERT_EQUAL(proc_run_child(die, NULL, NULL, &err), MP_RUN);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "signal 9"));
  err_clear(&err);
  CU_ASSERT_EQUAL(proc_run_child(leave, NULL, NULL, &err), MP_RUN);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "exit status 3"));
}

static void several_children_should_be_watched_at_once(void) {
  proc_child c[3];
  long n[3] = {10, 50000, 3};
  mp_error err;
  err_clear(&err);
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL_FATAL(proc_child_start(&c[i], count_up, &n[i], &err), MP_OK);
  int left = 3, done[3] = {0, 0, 0};
  while (left > 0) {
    struct pollfd p[3];
    int who[3], k = 0;
    for (int i = 0; i < 3; i++)
      if (!done[i]) {
        p[k] = (struct pollfd){.fd = c[i].fd, .events = POLLIN};
        who[k++] = i;
      }
    CU_ASSERT_FATAL(poll(p, (nfds_t)k, 10000) > 0);
    for (int j = 0; j < k; j++) {
      if (!p[j].revents) continue;
      int i = who[j];
      if (proc_child_read(&c[i]) == 0) continue;
      strbuf answer = {0};
      CU_ASSERT_EQUAL(proc_child_finish(&c[i], &answer, &err), MP_OK);
      CU_ASSERT_EQUAL(answer.len, (size_t)n[i] * 8);
      CU_ASSERT_EQUAL(c[i].pid, 0);
      strbuf_clear(&answer);
      done[i] = 1;
      left--;
    }
  }
  proc_child idle;
  long forever = 0;
  CU_ASSERT_EQUAL_FATAL(proc_child_start(&idle, count_up, &forever, &err), MP_OK);
  proc_child_kill(&idle); /* whether or not it has answered yet, nothing is left behind */
  CU_ASSERT_EQUAL(idle.pid, 0);
  proc_child_kill(&idle); /* a no-op now */
}

static void whole_reads_and_writes_should_move_every_byte_or_fail(void) {
  int fds[2];
  CU_ASSERT_EQUAL_FATAL(pipe(fds), 0);
  char out[5000], in[5000];
  for (int i = 0; i < 5000; i++) out[i] = (char)(i * 13);
  CU_ASSERT_EQUAL(proc_write_all(fds[1], out, sizeof out), 0);
  close(fds[1]);
  CU_ASSERT_EQUAL(proc_read_all(fds[0], in, sizeof in), 0);
  CU_ASSERT_EQUAL(memcmp(in, out, sizeof in), 0);
  CU_ASSERT_EQUAL(proc_read_all(fds[0], in, 1), -1); /* end of file before the byte */
  close(fds[0]);
  CU_ASSERT_EQUAL(proc_write_all(-1, out, 1), -1);
  double t0 = proc_now_s(), t1 = proc_now_s();
  CU_ASSERT(t0 > 0 && t1 >= t0);
}

static CU_TestInfo tests[] = {
    {"a_child_answer_should_reach_the_parent_whole", a_child_answer_should_reach_the_parent_whole},
    {"a_child_failure_should_come_back_with_its_status_and_message",
     a_child_failure_should_come_back_with_its_status_and_message},
    {"a_child_that_dies_or_leaves_should_be_a_run_failure", a_child_that_dies_or_leaves_should_be_a_run_failure},
    {"several_children_should_be_watched_at_once", several_children_should_be_watched_at_once},
    {"whole_reads_and_writes_should_move_every_byte_or_fail", whole_reads_and_writes_should_move_every_byte_or_fail},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("proc", tests, argc, argv); }
