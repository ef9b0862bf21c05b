/* strbuf: the one growable buffer of the library, for writers that build a whole file or message in
 * memory (timelines, traces, policy and checkpoint images, answers from child processes).
 *
 * Start from `strbuf b = {0};`, append text with strbuf_printf or bytes with strbuf_append, then take
 * b.s (owned by the caller, b.len bytes, always followed by a NUL so text can be used as a string) or
 * release it with strbuf_clear.  Binary-safe: strbuf_append may add NUL bytes.  A failed allocation
 * sets oom and every later append does nothing, so a writer checks b.oom once at the end instead of
 * after each append. */
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

/* Appends n bytes of data (borrowed; may be NULL when n is 0). */
void strbuf_append(strbuf *b, const void *data, size_t n);

/* Frees the text and resets b to empty. */
void strbuf_clear(strbuf *b);

#endif
