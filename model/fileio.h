/* fileio: whole-file reads, atomic writes and content hashes.
 *
 * A file written with fileio_write_atomic is either absent/unchanged or complete: the bytes go to a
 * temporary file beside the target, are flushed, and the temporary is renamed over the target.  No
 * partial output is ever left behind, whatever fails. */
#ifndef MESHPIPE_FILEIO_H
#define MESHPIPE_FILEIO_H

#include <stddef.h>
#include <stdint.h>

#include "err.h"

/* The largest file fileio_read_all reads: every meshpipe input but an ONNX model is text or a small
 * binary far below it, so anything larger (or an endless stream such as /dev/zero) is not one. */
#define FILEIO_MAX_READ ((size_t)1 << 28) /* 256 MiB */

/* Reads all of path into a NUL-terminated buffer the caller owns (free()).  *len excludes the NUL.
 * A missing or unreadable file is MP_INPUT, with the system's reason in the message; so is a file of
 * more than FILEIO_MAX_READ bytes (a regular file is refused before anything is read, a stream once
 * that much has arrived). */
mp_status fileio_read_all(const char *path, char **out, size_t *len, mp_error *err);

/* fileio_read_all with another limit, max bytes (>= 1). */
mp_status fileio_read_max(const char *path, size_t max, char **out, size_t *len, mp_error *err);

/* Writes len bytes to path atomically (see above).  Failure is MP_OUTPUT; the target is untouched. */
mp_status fileio_write_atomic(const char *path, const void *data, size_t len, mp_error *err);

/* 64-bit FNV-1a of a byte range, continuing from h (start with FILEIO_HASH_INIT). */
#define FILEIO_HASH_INIT UINT64_C(0xcbf29ce484222325)
uint64_t fileio_hash(uint64_t h, const void *data, size_t len);

/* Formats a hash as 16 lowercase hex digits into buf (at least 17 bytes); returns buf. */
char *fileio_hash_hex(uint64_t h, char *buf);

/* True (1) when path ends with suffix, compared without case. */
int fileio_has_suffix(const char *path, const char *suffix);

#endif
