/* err: status codes of the meshpipe library and the one-line message that explains a failure.
 *
 * Every library function that can fail returns an mp_status and, on failure, fills a caller-owned
 * mp_error.  Messages about input read "FILE: where: what" (main prints them after "meshpipe: ").
 * Invariant: err->status == MP_OK exactly when err->msg is the empty string.  A message is one line:
 * control characters (a newline in a name read from a file, say) are written as \n, \r, \t or \xHH.
 * The table below is the single source of the codes, their names and their exit statuses. */
#ifndef MESHPIPE_ERR_H
#define MESHPIPE_ERR_H

/*        code      exit  meaning */
#define MP_STATUS_TABLE(X)                                              \
  X(OK,      0, "success")                                              \
  X(USAGE,   2, "bad usage")                                            \
  X(INPUT,   2, "bad input")                                            \
  X(OUTPUT,  1, "cannot write output")                                  \
  X(NOMEM,   1, "out of memory")                                        \
  X(RUN,     1, "run failed")

typedef enum {
#define MP_STATUS_ENUM(name, exit_code, text) MP_##name,
  MP_STATUS_TABLE(MP_STATUS_ENUM)
#undef MP_STATUS_ENUM
} mp_status;

/* How many codes the table has (codes are 0 .. MP_STATUS_COUNT - 1). */
#define MP_STATUS_ONE(name, exit_code, text) +1
enum { MP_STATUS_COUNT = 0 MP_STATUS_TABLE(MP_STATUS_ONE) };
#undef MP_STATUS_ONE

#define MP_ERROR_MSG_MAX 1024

typedef struct mp_error {
  mp_status status;
  char msg[MP_ERROR_MSG_MAX];
} mp_error;

/* Resets *err to MP_OK with an empty message.  err may be NULL. */
void err_clear(mp_error *err);

/* Sets status and a printf-formatted message; returns status.  err may be NULL (status is still
 * returned).  A message longer than MP_ERROR_MSG_MAX is cut, never overflowed. */
mp_status err_set(mp_error *err, mp_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Like err_set for a problem in an input: the message becomes "file: where: what".  where may be
 * NULL or "" (then "file: what"). */
mp_status err_at(mp_error *err, mp_status status, const char *file, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Sets MP_NOMEM with a fixed message; returns MP_NOMEM. */
mp_status err_nomem(mp_error *err);

/* Static name ("INPUT"), description ("bad input") and process exit status of a status code. */
const char *err_name(mp_status status);
const char *err_text(mp_status status);
int err_exit_code(mp_status status);

#endif
