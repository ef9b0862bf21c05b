/* fileio: see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

mp_status fileio_read_all(const char *path, char **out, size_t *len, mp_error *err) {
  *out = NULL;
  if (len) *len = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return err_at(err, MP_INPUT, path, NULL, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  mp_status st = MP_OK;
  if (!buf) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (;;) {
    if (n + 1 >= cap) {
      char *bigger = realloc(buf, cap * 2);
      if (!bigger) {
        st = err_nomem(err);
        goto cleanup;
      }
      buf = bigger;
      cap *= 2;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    st = err_at(err, MP_INPUT, path, NULL, "cannot read: %s", strerror(errno));
    goto cleanup;
  }
  buf[n] = '\0';
  *out = buf;
  buf = NULL;
  if (len) *len = n;
cleanup:
  free(buf);
  fclose(f);
  return st;
}

mp_status fileio_write_atomic(const char *path, const void *data, size_t len, mp_error *err) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 32);
  if (!tmp) return err_nomem(err);
  snprintf(tmp, plen + 32, "%s.%ld.tmp", path, (long)getpid());
  mp_status st = MP_OK;
  FILE *f = fopen(tmp, "wb");
  if (!f) {
    st = err_at(err, MP_OUTPUT, path, NULL, "cannot create: %s", strerror(errno));
    goto cleanup;
  }
  int bad = fwrite(data, 1, len, f) != len;
  bad |= fflush(f) != 0;
  bad |= fsync(fileno(f)) != 0 && errno != EINVAL;
  int saved = errno;
  bad |= fclose(f) != 0;
  if (bad) {
    st = err_at(err, MP_OUTPUT, path, NULL, "cannot write: %s", strerror(saved ? saved : errno));
    remove(tmp);
    goto cleanup;
  }
  if (rename(tmp, path) != 0) {
    st = err_at(err, MP_OUTPUT, path, NULL, "cannot rename into place: %s", strerror(errno));
    remove(tmp);
  }
cleanup:
  free(tmp);
  return st;
}

uint64_t fileio_hash(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) {
    h ^= p[i];
    h *= UINT64_C(0x100000001b3);
  }
  return h;
}

char *fileio_hash_hex(uint64_t h, char *buf) {
  snprintf(buf, 17, "%016llx", (unsigned long long)h);
  return buf;
}

int fileio_has_suffix(const char *path, const char *suffix) {
  size_t n = strlen(path), m = strlen(suffix);
  return n >= m && strcasecmp(path + n - m, suffix) == 0;
}
