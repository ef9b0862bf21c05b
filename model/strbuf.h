/* strbuf: a growable text buffer for writers that build a whole file in memory (timelines, traces).
 *
 * Start from `strbuf b = {0};`, append with strbuf_printf, then take b.s (owned by the caller, NUL
 * terminated, b.len bytes) or release it with strbuf_clear.  A failed allocation sets oom and every
 * later append does nothing, so a writer checks b.oom once at the end instead of after each append. */
#ifndef MESHPIPE_STRBUF_H
#define MESHPIPE_STRBUF_H

#include <stddef.h>

typedef struct strbuf {
  char *s;
  size_t len, cap;
  int oom;
} strbuf;

/* Appends printf-formatted text. */
void strbuf_printf(strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Frees the text and resets b to empty. */
void strbuf_clear(strbuf *b);

#endif
