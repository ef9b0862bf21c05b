/* fileio: see fileio.h. */
#include "fileio.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* "256 MiB"-style size for messages. */
static void size_text(size_t n, char *buf, size_t cap) {
  if (n >= ((size_t)1 << 30) && n % ((size_t)1 << 30) == 0)
    snprintf(buf, cap, "%zu GiB", n >> 30);
  else if (n >= ((size_t)1 << 20) && n % ((size_t)1 << 20) == 0)
    snprintf(buf, cap, "%zu MiB", n >> 20);
  else
    snprintf(buf, cap, "%zu bytes", n);
}

mp_status fileio_read_all(const char *path, char **out, size_t *len, mp_error *err) {
  return fileio_read_max(path, FILEIO_MAX_READ, out, len, err);
}

mp_status fileio_read_max(const char *path, size_t max, char **out, size_t *len, mp_error *err) {
  *out = NULL;
  if (len) *len = 0;
  char limit[32];
  size_text(max, limit, sizeof limit);
  FILE *f = fopen(path, "rb");
  if (!f) return err_at(err, MP_INPUT, path, NULL, "cannot open: %s", strerror(errno));
  size_t cap = 1 << 16, n = 0;
  char *buf = NULL;
  mp_status st = MP_OK;
  struct stat sb;
  if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && (uintmax_t)sb.st_size > (uintmax_t)max) {
    st = err_at(err, MP_INPUT, path, NULL, "%jd bytes, more than the %s meshpipe reads", (intmax_t)sb.st_size, limit);
    goto cleanup;
  }
  if (cap > max + 2) cap = max + 2;
  if (!(buf = malloc(cap))) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (;;) {
    if (n + 1 >= cap) {
      if (n > max) { /* a stream (a pipe, a device) that goes on past the limit */
        st = err_at(err, MP_INPUT, path, NULL, "more than the %s meshpipe reads", limit);
        goto cleanup;
      }
      size_t bigger_cap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
      char *bigger = realloc(buf, bigger_cap);
      if (!bigger) {
        st = err_nomem(err);
        goto cleanup;
      }
      buf = bigger;
      cap = bigger_cap;
    }
    size_t got = fread(buf + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0) break;
  }
  if (ferror(f)) {
    st = err_at(err, MP_INPUT, path, NULL, "cannot read: %s", strerror(errno));
    goto cleanup;
  }
  if (n > max) {
    st = err_at(err, MP_INPUT, path, NULL, "more than the %s meshpipe reads", limit);
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
