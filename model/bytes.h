/* bytes: the little-endian codec of meshpipe's binary files (RL policies, checkpoints) and of the
 * records processes exchange.
 *
 * Writers append fixed-width fields to a strbuf (its oom flag says whether all of them made it).  A
 * reader walks a borrowed byte range: every get past the end returns 0 and sets `short_read`, so a
 * parser reads a whole header and checks the flag once.  Doubles travel as their IEEE-754 bits, so
 * a value reads back bit for bit. */
#ifndef MESHPIPE_BYTES_H
#define MESHPIPE_BYTES_H

#include <stddef.h>
#include <stdint.h>

#include "strbuf.h"

void bytes_put_u32(strbuf *b, uint32_t v);
void bytes_put_u64(strbuf *b, uint64_t v);
void bytes_put_f64(strbuf *b, double v);

typedef struct bytes_reader {
  const unsigned char *data; /* borrowed */
  size_t len, pos;
  int short_read; /* 1 once a get asked for bytes past the end */
} bytes_reader;

/* A reader over data[0 .. len) (borrowed: it must outlive the reader). */
bytes_reader bytes_reader_of(const void *data, size_t len);

uint32_t bytes_get_u32(bytes_reader *r);
uint64_t bytes_get_u64(bytes_reader *r);
double bytes_get_f64(bytes_reader *r);

/* Copies n bytes into out (zeros past the end, with short_read set). */
void bytes_get(bytes_reader *r, void *out, size_t n);

/* Bytes not read yet. */
size_t bytes_left(const bytes_reader *r);

#endif
