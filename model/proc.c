/* proc: see proc.h.
 *
 * A child's message on its pipe: u32 status, u32 length of the error message, the message, then the
 * answer's bytes up to the end of the pipe (bytes.h's little-endian codec). */
#include "proc.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bytes.h"

double proc_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int proc_write_all(int fd, const void *data, size_t n) {
  const char *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

int proc_read_all(int fd, void *data, size_t n) {
  char *p = data;
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

/* The child's side: run fn, send status, message and answer, and end. */
static void child_main(int fd, proc_fn fn, void *ctx) {
  mp_error e;
  err_clear(&e);
  strbuf answer = {0}, msg = {0};
  mp_status st = fn(ctx, &answer, &e);
  if (st == MP_OK && answer.oom) st = err_nomem(&e);
  size_t mlen = strlen(e.msg);
  bytes_put_u32(&msg, (uint32_t)st);
  bytes_put_u32(&msg, (uint32_t)mlen);
  strbuf_append(&msg, e.msg, mlen);
  int ok = !msg.oom && proc_write_all(fd, msg.s, msg.len) == 0 &&
           (st != MP_OK || answer.len == 0 || proc_write_all(fd, answer.s, answer.len) == 0);
  close(fd);
  _exit(ok ? 0 : 1);
}

mp_status proc_child_start(proc_child *c, proc_fn fn, void *ctx, mp_error *err) {
  memset(c, 0, sizeof *c);
  c->fd = -1;
  int fds[2];
  if (pipe(fds) != 0) return err_set(err, MP_RUN, "cannot create a pipe for a child process: %s", strerror(errno));
  fflush(NULL); /* nothing buffered is written twice */
  pid_t pid = fork();
  if (pid < 0) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    return err_set(err, MP_RUN, "cannot start a child process: %s", strerror(e));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(fds[1], fn, ctx);
  }
  close(fds[1]);
  c->pid = pid;
  c->fd = fds[0];
  return MP_OK;
}

int proc_child_read(proc_child *c) {
  char buf[4096]; /* small: the simulator reads its isolated runs on an actor's 64 KiB stack */
  ssize_t r;
  do
    r = read(c->fd, buf, sizeof buf);
  while (r < 0 && errno == EINTR);
  if (r < 0) return -1;
  if (r == 0) return 1;
  strbuf_append(&c->raw, buf, (size_t)r);
  return 0;
}

static int reap(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

mp_status proc_child_finish(proc_child *c, strbuf *answer, mp_error *err) {
  int status = reap(c->pid);
  close(c->fd);
  mp_status st;
  bytes_reader r = bytes_reader_of(c->raw.s, c->raw.len);
  uint32_t code = bytes_get_u32(&r), mlen = bytes_get_u32(&r);
  if (c->raw.oom)
    st = err_nomem(err);
  else if (WIFSIGNALED(status))
    st = err_set(err, MP_RUN, "a child process died of signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || r.short_read || mlen > bytes_left(&r) ||
           code >= (uint32_t)MP_STATUS_COUNT)
    st = err_set(err, MP_RUN, "a child process ended (exit status %d) without a complete answer",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  else if (code != MP_OK)
    st = err_set(err, (mp_status)code, "%.*s", (int)mlen, (const char *)r.data + r.pos);
  else {
    st = MP_OK;
    r.pos += mlen;
    if (answer) {
      strbuf_clear(answer);
      strbuf_append(answer, r.data + r.pos, bytes_left(&r));
      if (answer->oom) st = err_nomem(err);
    }
  }
  strbuf_clear(&c->raw);
  c->pid = 0;
  c->fd = -1;
  return st;
}

void proc_child_kill(proc_child *c) {
  if (c->pid <= 0) return;
  kill(c->pid, SIGKILL);
  reap(c->pid);
  close(c->fd);
  strbuf_clear(&c->raw);
  c->pid = 0;
  c->fd = -1;
}

mp_status proc_run_child(proc_fn fn, void *ctx, strbuf *answer, mp_error *err) {
  proc_child c;
  mp_status st = proc_child_start(&c, fn, ctx, err);
  if (st != MP_OK) return st;
  while (proc_child_read(&c) == 0) {
  }
  return proc_child_finish(&c, answer, err);
}
