/* jsonio: strict reading and atomic writing of meshpipe's JSON files (graphs, chips, plans...).
 *
 * Every getter checks presence, type and range of one member and, on failure, fills the reader's err
 * with "FILE: WHERE.KEY: what is wrong" (status MP_INPUT), so each loader reports the exact place of a
 * problem; FILE and WHERE (the caller's path to the object: "ops[3]", "mesh") come from a
 * jsonio_reader.  Integers must be whole numbers no larger than 2^53 (the largest a JSON number
 * carries exactly).  Getters borrow obj and return borrowed pointers into it. */
#ifndef MESHPIPE_JSONIO_H
#define MESHPIPE_JSONIO_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define JSONIO_MAX_EXACT 9007199254740992.0 /* 2^53 */

/* Parses text (len bytes) as one JSON document; syntax errors name line and column, and memory
 * running out (in cJSON too) is MP_NOMEM.  On success *out is an owned tree (cJSON_Delete). */
mp_status jsonio_parse(const char *file, const char *text, size_t len, cJSON **out, mp_error *err);

/* Reads and parses a file; see jsonio_parse. */
mp_status jsonio_load(const char *path, cJSON **out, mp_error *err);

/* Prints root (formatted) and writes it atomically to path, ending with a newline.  Borrows root. */
mp_status jsonio_save(const char *path, const cJSON *root, mp_error *err);

/* Prints root to stdout, formatted, with a newline.  Returns MP_OUTPUT if stdout fails. */
mp_status jsonio_print(const cJSON *root, mp_error *err);

/* Where a reader is in a document, for its messages: the file, the path to the value at hand (WHERE,
 * NULL or "" at the top level) and the error to fill.  A loader makes one with its file and err and
 * points where at each object as it descends.  Every pointer is borrowed. */
typedef struct jsonio_reader {
  const char *file;
  const char *where;
  mp_error *err;
} jsonio_reader;

/* Flags of the member getters (or-ed together). */
enum {
  JSONIO_OPTIONAL = 0, /* an absent member is no error: *out keeps the caller's value, *present is 0 */
  JSONIO_REQUIRED = 1, /* an absent member is an error */
  JSONIO_LO_OPEN = 2   /* jsonio_get_num: lo itself is out of range (lo < x rather than lo <= x) */
};

/* Fails unless every member of obj (the object at r->where) is named in keys (a NULL-terminated list)
 * and none is given twice (cJSON keeps both, and a lookup would silently take the first). */
mp_status jsonio_known_keys(const jsonio_reader *r, const cJSON *obj, const char *const *keys);

/* Member getters: obj is the object at r->where, key the member.  When it is present, *present (if not
 * NULL) is set to 1 and its value checked into *out; see the flags for an absent one. */
mp_status jsonio_get_u64(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, uint64_t *out,
                         int *present);
/* A whole number with lo <= x <= hi. */
mp_status jsonio_get_int(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, long lo, long hi,
                         int *out, int *present);
/* A finite number with lo <= x (lo < x with JSONIO_LO_OPEN) and x <= hi. */
mp_status jsonio_get_num(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, double lo,
                         double hi, double *out, int *present);
/* A non-empty string. */
mp_status jsonio_get_str(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags, const char **out,
                         int *present);
mp_status jsonio_get_array(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags,
                           const cJSON **out, int *present);
mp_status jsonio_get_object(const jsonio_reader *r, const cJSON *obj, const char *key, unsigned flags,
                            const cJSON **out, int *present);

/* Checks a bare value (an array element) the way the getters check a member; r->where names the value
 * itself ("ops[3].inputs[0]"). */
mp_status jsonio_as_u64(const jsonio_reader *r, const cJSON *v, uint64_t *out);
mp_status jsonio_as_int(const jsonio_reader *r, const cJSON *v, long lo, long hi, int *out);

/* Adds a number member that is an exact integer (uint64 up to 2^53).  Returns the new item or NULL. */
cJSON *jsonio_add_u64(cJSON *obj, const char *key, uint64_t v);

#endif
