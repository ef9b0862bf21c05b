/* bytes: see bytes.h. */
#include "bytes.h"

#include <string.h>

static void put_le(strbuf *b, uint64_t v, int n) {
  unsigned char x[8];
  for (int i = 0; i < n; i++) x[i] = (unsigned char)(v >> (8 * i));
  strbuf_append(b, x, (size_t)n);
}

void bytes_put_u32(strbuf *b, uint32_t v) { put_le(b, v, 4); }

void bytes_put_u64(strbuf *b, uint64_t v) { put_le(b, v, 8); }

void bytes_put_f64(strbuf *b, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  put_le(b, bits, 8);
}

bytes_reader bytes_reader_of(const void *data, size_t len) {
  return (bytes_reader){.data = data, .len = len, .pos = 0, .short_read = 0};
}

size_t bytes_left(const bytes_reader *r) { return r->len - r->pos; }

static uint64_t get_le(bytes_reader *r, int n) {
  if (bytes_left(r) < (size_t)n) {
    r->pos = r->len;
    r->short_read = 1;
    return 0;
  }
  uint64_t v = 0;
  for (int i = 0; i < n; i++) v |= (uint64_t)r->data[r->pos + (size_t)i] << (8 * i);
  r->pos += (size_t)n;
  return v;
}

uint32_t bytes_get_u32(bytes_reader *r) { return (uint32_t)get_le(r, 4); }

uint64_t bytes_get_u64(bytes_reader *r) { return get_le(r, 8); }

double bytes_get_f64(bytes_reader *r) {
  uint64_t bits = get_le(r, 8);
  double v;
  memcpy(&v, &bits, sizeof v);
  return v;
}

void bytes_get(bytes_reader *r, void *out, size_t n) {
  if (bytes_left(r) < n) {
    memset(out, 0, n);
    r->pos = r->len;
    r->short_read = 1;
    return;
  }
  memcpy(out, r->data + r->pos, n);
  r->pos += n;
}
