/* jsonio: strict reading and atomic writing of meshpipe's JSON files (graphs, chips, plans...).
 *
 * Every getter checks presence, type and range of one member and, on failure, fills err with
 * "FILE: WHERE.KEY: what is wrong" (status MP_INPUT), so each loader reports the exact place of a
 * problem.  WHERE is the caller's path to the object ("ops[3]", "mesh").  Integers must be whole
 * numbers no larger than 2^53 (the largest a JSON number carries exactly).  Getters borrow obj and
 * return borrowed pointers into it. */
#ifndef MESHPIPE_JSONIO_H
#define MESHPIPE_JSONIO_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "err.h"

#define JSONIO_MAX_EXACT 9007199254740992.0 /* 2^53 */

/* Parses text (len bytes) as one JSON document; syntax errors name line and column.  On success
 * *out is an owned tree (cJSON_Delete). */
mp_status jsonio_parse(const char *file, const char *text, size_t len, cJSON **out, mp_error *err);

/* Reads and parses a file; see jsonio_parse. */
mp_status jsonio_load(const char *path, cJSON **out, mp_error *err);

/* Prints root (formatted) and writes it atomically to path, ending with a newline.  Borrows root. */
mp_status jsonio_save(const char *path, const cJSON *root, mp_error *err);

/* Prints root to stdout, formatted, with a newline.  Returns MP_OUTPUT if stdout fails. */
mp_status jsonio_print(const cJSON *root, mp_error *err);

/* Fails unless every member of obj is named in keys (a NULL-terminated list) and none is given twice
 * (cJSON keeps both, and a lookup would silently take the first). */
mp_status jsonio_known_keys(const cJSON *obj, const char *const *keys, const char *file, const char *where,
                            mp_error *err);

/* Member getters.  When the member is absent: if required, an error; otherwise *out is left as the
 * caller initialised it and *present (if not NULL) is set to 0. */
mp_status jsonio_get_u64(const cJSON *obj, const char *key, int required, uint64_t *out, int *present,
                         const char *file, const char *where, mp_error *err);
mp_status jsonio_get_int(const cJSON *obj, const char *key, int required, long lo, long hi, int *out, int *present,
                         const char *file, const char *where, mp_error *err);
/* A finite number with lo < x (lo_open) or lo <= x, and x <= hi. */
mp_status jsonio_get_num(const cJSON *obj, const char *key, int required, double lo, int lo_open, double hi,
                         double *out, int *present, const char *file, const char *where, mp_error *err);
/* A non-empty string. */
mp_status jsonio_get_str(const cJSON *obj, const char *key, int required, const char **out, int *present,
                         const char *file, const char *where, mp_error *err);
mp_status jsonio_get_array(const cJSON *obj, const char *key, int required, const cJSON **out, int *present,
                           const char *file, const char *where, mp_error *err);
mp_status jsonio_get_object(const cJSON *obj, const char *key, int required, const cJSON **out, int *present,
                            const char *file, const char *where, mp_error *err);

/* Checks a bare value (an array element) the way the getters check a member; what names it. */
mp_status jsonio_as_u64(const cJSON *v, uint64_t *out, const char *file, const char *what, mp_error *err);
mp_status jsonio_as_int(const cJSON *v, long lo, long hi, int *out, const char *file, const char *what, mp_error *err);

/* Adds a number member that is an exact integer (uint64 up to 2^53).  Returns the new item or NULL. */
cJSON *jsonio_add_u64(cJSON *obj, const char *key, uint64_t v);

#endif
