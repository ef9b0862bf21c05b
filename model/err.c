/* err: the status table and message formatting.  See err.h. */
#include "err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  int exit_code;
  const char *text;
} status_info[] = {
#define MP_STATUS_INFO(name, exit_code, text) {#name, exit_code, text},
    MP_STATUS_TABLE(MP_STATUS_INFO)
#undef MP_STATUS_INFO
};


void err_clear(mp_error *err) {
  if (!err) return;
  err->status = MP_OK;
  err->msg[0] = '\0';
}

/* Rewrites the control characters of msg (names from a file may hold a newline, a tab, an escape
 * sequence) as \n, \r, \t or \xHH, so that a message is always one line of plain text; what no
 * longer fits is cut. */
static void escape_controls(char *msg, size_t cap) {
  size_t n = strcspn(msg, "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13"
                          "\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f");
  if (!msg[n]) return;
  char copy[MP_ERROR_MSG_MAX];
  snprintf(copy, sizeof copy, "%s", msg + n);
  size_t used = n;
  for (const unsigned char *p = (const unsigned char *)copy; *p && used + 1 < cap; p++) {
    char esc[5];
    if (*p >= 0x20 && *p != 0x7f) {
      msg[used++] = (char)*p;
      continue;
    }
    if (*p == '\n' || *p == '\r' || *p == '\t')
      snprintf(esc, sizeof esc, "\\%c", *p == '\n' ? 'n' : *p == '\r' ? 'r' : 't');
    else
      snprintf(esc, sizeof esc, "\\x%02x", *p);
    size_t k = strlen(esc);
    if (used + k + 1 > cap) break;
    memcpy(msg + used, esc, k);
    used += k;
  }
  msg[used] = '\0';
}

static mp_status set_v(mp_error *err, mp_status status, const char *prefix, const char *fmt, va_list ap) {
  if (!err) return status;
  err->status = status;
  size_t used = 0;
  if (prefix) {
    int n = snprintf(err->msg, sizeof err->msg, "%s", prefix);
    used = n < 0 ? 0 : (size_t)n < sizeof err->msg ? (size_t)n : sizeof err->msg - 1;
  }
  vsnprintf(err->msg + used, sizeof err->msg - used, fmt, ap);
  escape_controls(err->msg, sizeof err->msg);
  return status;
}

mp_status err_set(mp_error *err, mp_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  set_v(err, status, NULL, fmt, ap);
  va_end(ap);
  return status;
}

mp_status err_at(mp_error *err, mp_status status, const char *file, const char *where, const char *fmt, ...) {
  char prefix[MP_ERROR_MSG_MAX / 2];
  if (where && *where)
    snprintf(prefix, sizeof prefix, "%s: %s: ", file ? file : "(input)", where);
  else
    snprintf(prefix, sizeof prefix, "%s: ", file ? file : "(input)");
  va_list ap;
  va_start(ap, fmt);
  set_v(err, status, prefix, fmt, ap);
  va_end(ap);
  return status;
}

mp_status err_nomem(mp_error *err) { return err_set(err, MP_NOMEM, "out of memory"); }

const char *err_name(mp_status status) {
  return (int)status >= 0 && (int)status < MP_STATUS_COUNT ? status_info[status].name : "UNKNOWN";
}

const char *err_text(mp_status status) {
  return (int)status >= 0 && (int)status < MP_STATUS_COUNT ? status_info[status].text : "unknown status";
}

int err_exit_code(mp_status status) {
  return (int)status >= 0 && (int)status < MP_STATUS_COUNT ? status_info[status].exit_code : 1;
}
