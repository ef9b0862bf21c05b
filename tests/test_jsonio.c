/* Tests of jsonio.c: every getter accepts what it should and rejects the rest with the exact message
 * "FILE: WHERE.KEY: what" the loaders pass on; unknown and duplicate keys are refused; whole numbers
 * stop at 2^53; parse errors name line and column; a save either writes the whole document or leaves
 * nothing behind. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fileio.h"
#include "jsonio.h"
#include "testutil.h"

/* Parses text that the test knows is valid. */
static cJSON *doc(const char *text) {
  cJSON *root = NULL;
  mp_error err;
  err_clear(&err);
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("t.json", text, strlen(text), &root, &err), MP_OK);
  return root;
}

static void parse_should_name_the_line_and_column_of_a_syntax_error(void) {
  cJSON *root = NULL;
  mp_error err;
  const char *bad = "{\n  \"a\": 1,\n  \"b\": ]\n}";
  CU_ASSERT_EQUAL(jsonio_parse("t.json", bad, strlen(bad), &root, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: line 3, column 8: not valid JSON");
  CU_ASSERT_PTR_NULL(root);
  const char *trailing = "{\"a\": 1}\n  x";
  CU_ASSERT_EQUAL(jsonio_parse("t.json", trailing, strlen(trailing), &root, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: line 2, column 3: unexpected content after the JSON document");
  CU_ASSERT_EQUAL(jsonio_parse("t.json", " \n\t", 3, &root, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: empty file, expected a JSON object");
  CU_ASSERT_EQUAL(jsonio_parse("t.json", "", 0, &root, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: empty file, expected a JSON object");
  CU_ASSERT_EQUAL(jsonio_parse("t.json", "{}\0{}", 5, &root, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: not a JSON file (contains a NUL byte)");
  const char *ok = "  {\"a\": [1, 2]}\n\n";
  CU_ASSERT_EQUAL_FATAL(jsonio_parse("t.json", ok, strlen(ok), &root, &err), MP_OK);
  CU_ASSERT_EQUAL(cJSON_GetArraySize(cJSON_GetObjectItem(root, "a")), 2);
  cJSON_Delete(root);
}

/* Text of len bytes need not end with a NUL: blank text in a buffer of exactly its size is refused
 * without a read past it (the fuzzer found strspn reading on; the ASan build of this suite sees it). */
static void parse_should_read_no_byte_past_len(void) {
  static const char *const texts[] = {"", " ", " \n\t", "{", " x", "{}  "};
  const char *want[] = {"empty file", "empty file", "empty file", "not valid JSON", "not valid JSON", NULL};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    size_t len = strlen(texts[i]);
    char *exact = malloc(len ? len : 1);
    memcpy(exact, texts[i], len);
    cJSON *root = NULL;
    mp_error err;
    mp_status st = jsonio_parse("t.json", exact, len, &root, &err);
    CU_ASSERT_EQUAL(st, want[i] ? MP_INPUT : MP_OK);
    if (want[i]) CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, want[i]));
    cJSON_Delete(root);
    free(exact);
  }
}

static void load_should_pass_on_a_missing_file(void) {
  cJSON *root = NULL;
  mp_error err;
  const char *path = testutil_temp_path("no-such.json");
  CU_ASSERT_EQUAL(jsonio_load(path, &root, &err), MP_INPUT);
  char want[4200];
  snprintf(want, sizeof want, "%s: cannot open: No such file or directory", path);
  CU_ASSERT_STRING_EQUAL(err.msg, want);
  CU_ASSERT_PTR_NULL(root);
  path = testutil_write_temp("one.json", "{\"x\": 1}");
  CU_ASSERT_EQUAL_FATAL(jsonio_load(path, &root, &err), MP_OK);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(root, "x")->valueint, 1);
  cJSON_Delete(root);
}

static void get_u64_should_take_whole_numbers_up_to_2_pow_53(void) {
  cJSON *o = doc("{\"zero\": 0, \"max\": 9007199254740992, \"over\": 9007199254740994, \"neg\": -1, "
                 "\"half\": 1.5, \"text\": \"7\"}");
  mp_error err;
  jsonio_reader in = {"t.json", "ops[3]", &err};
  uint64_t v = 99;
  int present = -1;
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "zero", JSONIO_REQUIRED, &v, &present), MP_OK);
  CU_ASSERT_EQUAL(v, 0u);
  CU_ASSERT_EQUAL(present, 1);
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "max", JSONIO_REQUIRED, &v, NULL), MP_OK);
  CU_ASSERT_EQUAL(v, UINT64_C(9007199254740992));
  v = 5;
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "over", JSONIO_REQUIRED, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: ops[3].over: too large (9.0072e+15 > 2^53)");
  CU_ASSERT_EQUAL(v, 5u); /* untouched on failure */
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "neg", JSONIO_REQUIRED, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: ops[3].neg: must not be negative (got -1)");
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "half", JSONIO_REQUIRED, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: ops[3].half: expected a whole number (got 1.5)");
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "text", JSONIO_REQUIRED, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: ops[3].text: expected a whole number");
  CU_ASSERT_PTR_NOT_NULL(cJSON_AddNumberToObject(o, "inf", INFINITY));
  CU_ASSERT_EQUAL(jsonio_get_u64(&in, o, "inf", JSONIO_REQUIRED, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: ops[3].inf: number is not finite");
  cJSON_Delete(o);
}

static void getters_should_tell_a_missing_required_member_from_an_optional_one(void) {
  cJSON *o = doc("{\"a\": 1}");
  mp_error err;
  err_clear(&err);
  jsonio_reader top = {"t.json", NULL, &err}, empty = {"t.json", "", &err}, in = {"t.json", "mesh", &err};
  uint64_t u = 42;
  int i = 43, present = -1;
  double d = 44;
  const char *s = "kept";
  const cJSON *c = NULL;
  CU_ASSERT_EQUAL(jsonio_get_u64(&top, o, "b", JSONIO_OPTIONAL, &u, &present), MP_OK);
  CU_ASSERT_EQUAL(u, 42u);
  CU_ASSERT_EQUAL(present, 0);
  CU_ASSERT_EQUAL(err.status, MP_OK);
  present = -1;
  CU_ASSERT_EQUAL(jsonio_get_int(&top, o, "b", JSONIO_OPTIONAL, 0, 9, &i, &present), MP_OK);
  CU_ASSERT_EQUAL(i, 43);
  CU_ASSERT_EQUAL(present, 0);
  CU_ASSERT_EQUAL(jsonio_get_num(&top, o, "b", JSONIO_LO_OPEN, 0, 9, &d, NULL), MP_OK);
  CU_ASSERT_EQUAL(d, 44);
  CU_ASSERT_EQUAL(jsonio_get_str(&top, o, "b", JSONIO_OPTIONAL, &s, NULL), MP_OK);
  CU_ASSERT_STRING_EQUAL(s, "kept");
  CU_ASSERT_EQUAL(jsonio_get_array(&top, o, "b", JSONIO_OPTIONAL, &c, NULL), MP_OK);
  CU_ASSERT_EQUAL(jsonio_get_object(&top, o, "b", JSONIO_OPTIONAL, &c, NULL), MP_OK);
  CU_ASSERT_PTR_NULL(c);

  /* at the top level (where NULL or "") the path is the key alone */
  CU_ASSERT_EQUAL(jsonio_get_u64(&top, o, "b", JSONIO_REQUIRED, &u, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: b: missing (required)");
  CU_ASSERT_EQUAL(jsonio_get_int(&empty, o, "b", JSONIO_REQUIRED, 0, 9, &i, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: b: missing (required)");
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "b", JSONIO_REQUIRED | JSONIO_LO_OPEN, 0, 9, &d, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: mesh.b: missing (required)");
  CU_ASSERT_EQUAL(jsonio_get_str(&in, o, "b", JSONIO_REQUIRED, &s, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: mesh.b: missing (required)");
  CU_ASSERT_EQUAL(jsonio_get_array(&in, o, "b", JSONIO_REQUIRED, &c, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: mesh.b: missing (required)");
  CU_ASSERT_EQUAL(jsonio_get_object(&in, o, "b", JSONIO_REQUIRED, &c, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "t.json: mesh.b: missing (required)");
  CU_ASSERT_EQUAL(err.status, MP_INPUT);
  cJSON_Delete(o);
}

static void get_int_should_keep_to_its_range(void) {
  cJSON *o = doc("{\"lo\": 1, \"hi\": 4, \"over\": 5, \"neg\": -3, \"half\": 2.5, \"t\": true}");
  mp_error err;
  jsonio_reader in = {"c.json", "mesh", &err};
  int v = 0;
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "lo", JSONIO_REQUIRED, 1, 4, &v, NULL), MP_OK);
  CU_ASSERT_EQUAL(v, 1);
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "hi", JSONIO_REQUIRED, 1, 4, &v, NULL), MP_OK);
  CU_ASSERT_EQUAL(v, 4);
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "over", JSONIO_REQUIRED, 1, 4, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.over: must be between 1 and 4 (got 5)");
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "neg", JSONIO_REQUIRED, -2, 4, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.neg: must be between -2 and 4 (got -3)");
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "neg", JSONIO_REQUIRED, -3, 4, &v, NULL), MP_OK);
  CU_ASSERT_EQUAL(v, -3);
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "half", JSONIO_REQUIRED, 0, 4, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.half: expected a whole number (got 2.5)");
  CU_ASSERT_EQUAL(jsonio_get_int(&in, o, "t", JSONIO_REQUIRED, 0, 4, &v, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.t: expected a whole number");
  cJSON_Delete(o);
}

static void get_num_should_tell_an_open_lower_bound_from_a_closed_one(void) {
  cJSON *o = doc("{\"zero\": 0, \"neg\": -1, \"big\": 11, \"x\": 2.5, \"s\": \"2\"}");
  mp_error err;
  jsonio_reader in = {"c.json", "noc", &err};
  double d = -7;
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "zero", JSONIO_REQUIRED, 0, 10, &d, NULL), MP_OK);
  CU_ASSERT_EQUAL(d, 0);
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "zero", JSONIO_REQUIRED | JSONIO_LO_OPEN, 0, 10, &d, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: noc.zero: must be > 0 (got 0)");
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "neg", JSONIO_REQUIRED, 0, 10, &d, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: noc.neg: must be >= 0 (got -1)");
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "big", JSONIO_REQUIRED, 0, 10, &d, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: noc.big: must be <= 10 (got 11)");
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "x", JSONIO_REQUIRED | JSONIO_LO_OPEN, 2.5 - 1e-9, 2.5, &d, NULL), MP_OK);
  CU_ASSERT_EQUAL(d, 2.5);
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "s", JSONIO_REQUIRED, 0, 10, &d, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: noc.s: expected a number");
  CU_ASSERT_PTR_NOT_NULL(cJSON_AddNumberToObject(o, "nan", NAN));
  CU_ASSERT_EQUAL(jsonio_get_num(&in, o, "nan", JSONIO_REQUIRED, -INFINITY, INFINITY, &d, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: noc.nan: number is not finite");
  cJSON_Delete(o);
}

static void get_str_array_and_object_should_check_the_type(void) {
  cJSON *o = doc("{\"s\": \"text\", \"e\": \"\", \"n\": 1, \"a\": [1], \"o\": {\"k\": 2}}");
  mp_error err;
  jsonio_reader in = {"g.json", "ops[0]", &err};
  const char *s = NULL;
  const cJSON *c = NULL;
  CU_ASSERT_EQUAL(jsonio_get_str(&in, o, "s", JSONIO_REQUIRED, &s, NULL), MP_OK);
  CU_ASSERT_STRING_EQUAL(s, "text");
  CU_ASSERT_EQUAL(jsonio_get_str(&in, o, "e", JSONIO_REQUIRED, &s, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "g.json: ops[0].e: must not be empty");
  CU_ASSERT_EQUAL(jsonio_get_str(&in, o, "n", JSONIO_REQUIRED, &s, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "g.json: ops[0].n: expected a string");
  CU_ASSERT_EQUAL(jsonio_get_array(&in, o, "a", JSONIO_REQUIRED, &c, NULL), MP_OK);
  CU_ASSERT_PTR_EQUAL(c, cJSON_GetObjectItem(o, "a"));
  CU_ASSERT_EQUAL(jsonio_get_array(&in, o, "o", JSONIO_REQUIRED, &c, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "g.json: ops[0].o: expected an array");
  CU_ASSERT_EQUAL(jsonio_get_object(&in, o, "o", JSONIO_REQUIRED, &c, NULL), MP_OK);
  CU_ASSERT_PTR_EQUAL(c, cJSON_GetObjectItem(o, "o"));
  CU_ASSERT_EQUAL(jsonio_get_object(&in, o, "a", JSONIO_REQUIRED, &c, NULL), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "g.json: ops[0].a: expected an object");
  cJSON_Delete(o);
}

static void as_getters_should_name_the_value_itself(void) {
  cJSON *a = doc("[3, -1, 18014398509481984, 0.25, \"x\"]");
  mp_error err;
  jsonio_reader at = {"p.json", "arranged_core[1]", &err};
  uint64_t u = 0;
  int i = 0;
  CU_ASSERT_EQUAL(jsonio_as_u64(&at, cJSON_GetArrayItem(a, 0), &u), MP_OK);
  CU_ASSERT_EQUAL(u, 3u);
  CU_ASSERT_EQUAL(jsonio_as_u64(&at, cJSON_GetArrayItem(a, 1), &u), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "p.json: arranged_core[1]: must not be negative (got -1)");
  CU_ASSERT_EQUAL(jsonio_as_u64(&at, cJSON_GetArrayItem(a, 2), &u), MP_INPUT); /* 2^54 */
  CU_ASSERT_STRING_EQUAL(err.msg, "p.json: arranged_core[1]: too large (1.80144e+16 > 2^53)");
  CU_ASSERT_EQUAL(jsonio_as_int(&at, cJSON_GetArrayItem(a, 1), -1, 1, &i), MP_OK);
  CU_ASSERT_EQUAL(i, -1);
  CU_ASSERT_EQUAL(jsonio_as_int(&at, cJSON_GetArrayItem(a, 0), -1, 1, &i), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "p.json: arranged_core[1]: must be between -1 and 1 (got 3)");
  CU_ASSERT_EQUAL(jsonio_as_int(&at, cJSON_GetArrayItem(a, 3), -1, 1, &i), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "p.json: arranged_core[1]: expected a whole number (got 0.25)");
  CU_ASSERT_EQUAL(jsonio_as_int(&at, cJSON_GetArrayItem(a, 4), -1, 1, &i), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "p.json: arranged_core[1]: expected a whole number");
  at.where = NULL;
  CU_ASSERT_EQUAL(jsonio_as_u64(&at, cJSON_GetArrayItem(a, 4), &u), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "p.json: expected a whole number");
  cJSON_Delete(a);
}

static void known_keys_should_refuse_unknown_and_repeated_members(void) {
  static const char *const keys[] = {"width", "height", NULL};
  mp_error err;
  err_clear(&err);
  jsonio_reader in = {"c.json", "mesh", &err}, top = {"c.json", NULL, &err};
  cJSON *ok = doc("{\"height\": 2, \"width\": 3}"), *none = doc("{}");
  CU_ASSERT_EQUAL(jsonio_known_keys(&in, ok, keys), MP_OK);
  CU_ASSERT_EQUAL(jsonio_known_keys(&in, none, keys), MP_OK);
  CU_ASSERT_EQUAL(err.status, MP_OK);
  cJSON *extra = doc("{\"width\": 3, \"depth\": 1}");
  CU_ASSERT_EQUAL(jsonio_known_keys(&in, extra, keys), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.depth: unknown key (expected one of: width, height)");
  CU_ASSERT_EQUAL(jsonio_known_keys(&top, extra, keys), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: depth: unknown key (expected one of: width, height)");
  cJSON *twice = doc("{\"width\": 3, \"height\": 2, \"width\": 4}");
  CU_ASSERT_EQUAL(jsonio_known_keys(&in, twice, keys), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.width: given twice");
  /* an unknown key is reported before a repeated one, whatever the order */
  cJSON *both = doc("{\"width\": 3, \"width\": 4, \"colour\": 1}");
  CU_ASSERT_EQUAL(jsonio_known_keys(&in, both, keys), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "c.json: mesh.colour: unknown key (expected one of: width, height)");
  cJSON_Delete(ok);
  cJSON_Delete(none);
  cJSON_Delete(extra);
  cJSON_Delete(twice);
  cJSON_Delete(both);
}

static void add_u64_should_write_whole_numbers_without_an_exponent(void) {
  cJSON *o = cJSON_CreateObject();
  CU_ASSERT_PTR_NOT_NULL_FATAL(jsonio_add_u64(o, "n", UINT64_C(123456789012345)));
  CU_ASSERT_PTR_NOT_NULL_FATAL(jsonio_add_u64(o, "z", 0));
  char *text = cJSON_PrintUnformatted(o);
  CU_ASSERT_STRING_EQUAL(text, "{\"n\":123456789012345,\"z\":0}");
  free(text);
  mp_error err;
  uint64_t back = 0;
  CU_ASSERT_EQUAL(jsonio_get_u64(&(jsonio_reader){"x", NULL, &err}, o, "n", JSONIO_REQUIRED, &back, NULL), MP_OK);
  CU_ASSERT_EQUAL(back, UINT64_C(123456789012345));
  cJSON_Delete(o);
}

/* Entries of dir other than . and .. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  closedir(d);
  return n;
}

static void save_should_write_the_whole_document_or_nothing(void) {
  mp_error err;
  cJSON *o = doc("{\"a\": [1, 2], \"b\": \"x\"}");
  const char *dir = testutil_temp_path("jsonio-save");
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
  char path[4200];
  snprintf(path, sizeof path, "%s/out.json", dir);
  CU_ASSERT_EQUAL_FATAL(jsonio_save(path, o, &err), MP_OK);
  char *text = NULL, *want = cJSON_Print(o);
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(fileio_read_all(path, &text, &len, &err), MP_OK);
  CU_ASSERT_EQUAL(len, strlen(want) + 1);
  CU_ASSERT_EQUAL(strncmp(text, want, strlen(want)), 0);
  CU_ASSERT_EQUAL(text[len - 1], '\n');
  free(text);
  free(want);
  CU_ASSERT_EQUAL(entries(dir), 1);

  /* into a directory that does not exist: nothing is created */
  char missing[4300];
  snprintf(missing, sizeof missing, "%s/none/out.json", dir);
  CU_ASSERT_EQUAL(jsonio_save(missing, o, &err), MP_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": cannot create: No such file or directory"));
  CU_ASSERT_EQUAL(entries(dir), 1);

  /* over a directory: the rename fails after the write, and the temporary goes away */
  char sub[4300];
  snprintf(sub, sizeof sub, "%s/taken", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(sub, 0755), 0);
  CU_ASSERT_EQUAL(jsonio_save(sub, o, &err), MP_OUTPUT);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, ": cannot rename into place: "));
  CU_ASSERT_EQUAL(entries(dir), 2); /* out.json and taken/ only */
  CU_ASSERT_EQUAL(entries(sub), 0);
  cJSON_Delete(o);
}

static CU_TestInfo tests[] = {
    {"parse_should_name_the_line_and_column_of_a_syntax_error", parse_should_name_the_line_and_column_of_a_syntax_error},
    {"parse_should_read_no_byte_past_len", parse_should_read_no_byte_past_len},
    {"load_should_pass_on_a_missing_file", load_should_pass_on_a_missing_file},
    {"get_u64_should_take_whole_numbers_up_to_2_pow_53", get_u64_should_take_whole_numbers_up_to_2_pow_53},
    {"getters_should_tell_a_missing_required_member_from_an_optional_one",
     getters_should_tell_a_missing_required_member_from_an_optional_one},
    {"get_int_should_keep_to_its_range", get_int_should_keep_to_its_range},
    {"get_num_should_tell_an_open_lower_bound_from_a_closed_one",
     get_num_should_tell_an_open_lower_bound_from_a_closed_one},
    {"get_str_array_and_object_should_check_the_type", get_str_array_and_object_should_check_the_type},
    {"as_getters_should_name_the_value_itself", as_getters_should_name_the_value_itself},
    {"known_keys_should_refuse_unknown_and_repeated_members", known_keys_should_refuse_unknown_and_repeated_members},
    {"add_u64_should_write_whole_numbers_without_an_exponent",
     add_u64_should_write_whole_numbers_without_an_exponent},
    {"save_should_write_the_whole_document_or_nothing", save_should_write_the_whole_document_or_nothing},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("jsonio", tests, argc, argv); }
