/* strbuf: see strbuf.h. */
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Makes room for n more bytes and the NUL after them; 0 (and oom set) when it cannot. */
static int reserve(strbuf *b, size_t n) {
  if (b->oom) return 0;
  if (b->s && n < b->cap - b->len) return 1;
  if (n > ((size_t)-1 - b->cap) / 2 - 1) {
    b->oom = 1;
    return 0;
  }
  size_t cap = b->cap * 2 + n + 1;
  char *s = realloc(b->s, cap);
  if (!s) {
    b->oom = 1;
    return 0;
  }
  b->s = s;
  b->cap = cap;
  return 1;
}

void strbuf_printf(strbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->oom = 1;
    return;
  }
  if (b->s && (size_t)n < b->cap - b->len) {
    b->len += (size_t)n;
    return;
  }
  if (!reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void strbuf_append(strbuf *b, const void *data, size_t n) {
  if (!reserve(b, n)) return;
  if (n > 0) memcpy(b->s + b->len, data, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void strbuf_clear(strbuf *b) {
  free(b->s);
  b->s = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}
