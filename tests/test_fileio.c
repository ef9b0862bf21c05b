/* Tests of fileio.c: whole-file reads of missing, unreadable, empty and large files; atomic writes that
 * leave the old file untouched and no temporary behind when they fail; FNV-1a 64 against its published
 * values; suffixes compared without case. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "testutil.h"

/* A fresh directory under the suite's temporary one; returns its path (static, rotated). */
static const char *fresh_dir(const char *name) {
  const char *dir = testutil_temp_path(name);
  CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
  return dir;
}

/* Names in dir other than . and .., joined by spaces in readdir order; the count is returned. */
static int listing(const char *dir, char *names, size_t cap) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  size_t used = 0;
  names[0] = '\0';
  for (struct dirent *e; (e = readdir(d));) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    int k = snprintf(names + used, cap - used, "%s%s", n ? " " : "", e->d_name);
    if (k > 0 && (size_t)k < cap - used) used += (size_t)k;
    n++;
  }
  closedir(d);
  return n;
}

static char *slurp(const char *path, size_t *len) {
  char *text = NULL;
  mp_error err;
  if (fileio_read_all(path, &text, len, &err) != MP_OK) return NULL;
  return text;
}

static void read_all_should_report_a_missing_or_unreadable_file(void) {
  char *text = (char *)"not touched";
  size_t len = 7;
  mp_error err;
  const char *missing = testutil_temp_path("missing.bin");
  CU_ASSERT_EQUAL(fileio_read_all(missing, &text, &len, &err), MP_INPUT);
  char want[4200];
  snprintf(want, sizeof want, "%s: cannot open: No such file or directory", missing);
  CU_ASSERT_STRING_EQUAL(err.msg, want);
  CU_ASSERT_PTR_NULL(text);
  CU_ASSERT_EQUAL(len, 0u);

  /* a directory opens but cannot be read */
  const char *dir = fresh_dir("read-a-dir");
  CU_ASSERT_EQUAL(fileio_read_all(dir, &text, &len, &err), MP_INPUT);
  snprintf(want, sizeof want, "%s: cannot read: Is a directory", dir);
  CU_ASSERT_STRING_EQUAL(err.msg, want);
  CU_ASSERT_PTR_NULL(text);

  /* a file without read permission (root reads it anyway, so only checked for others) */
  const char *locked = testutil_write_temp("locked.txt", "secret");
  CU_ASSERT_EQUAL_FATAL(chmod(locked, 0), 0);
  if (geteuid() != 0) {
    CU_ASSERT_EQUAL(fileio_read_all(locked, &text, &len, &err), MP_INPUT);
    snprintf(want, sizeof want, "%s: cannot open: Permission denied", locked);
    CU_ASSERT_STRING_EQUAL(err.msg, want);
  }
}

static void read_all_should_return_every_byte_of_an_empty_or_a_large_file(void) {
  const char *empty = testutil_write_temp("empty.txt", "");
  size_t len = 99;
  char *text = slurp(empty, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_EQUAL(len, 0u);
  CU_ASSERT_EQUAL(text[0], '\0');
  free(text);

  /* 1 MiB + 3 of binary data with NUL bytes: several times the first buffer */
  size_t n = (1u << 20) + 3;
  unsigned char *data = malloc(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(data);
  for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 2654435761u >> 13);
  const char *big = testutil_temp_path("big.bin");
  FILE *f = fopen(big, "wb");
  CU_ASSERT_PTR_NOT_NULL_FATAL(f);
  CU_ASSERT_EQUAL(fwrite(data, 1, n, f), n);
  fclose(f);
  text = slurp(big, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_EQUAL(len, n);
  CU_ASSERT_EQUAL(memcmp(text, data, n), 0);
  CU_ASSERT_EQUAL(text[n], '\0'); /* always terminated */
  free(text);
  /* len may be NULL */
  mp_error err;
  CU_ASSERT_EQUAL(fileio_read_all(big, &text, NULL, &err), MP_OK);
  CU_ASSERT_EQUAL(memcmp(text, data, n), 0);
  free(text);
  free(data);
}

static void read_should_refuse_a_file_or_a_stream_past_the_limit_naming_it(void) {
  char *text = (char *)"unchanged";
  size_t len = 99;
  mp_error err;
  /* a regular file over the limit: refused from its size, before any byte is read */
  const char *path = testutil_write_temp("eleven.txt", "01234567890");
  CU_ASSERT_EQUAL(fileio_read_max(path, 10, &text, &len, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(text);
  CU_ASSERT_EQUAL(len, 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, path));
  CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "11 bytes, more than the 10 bytes meshpipe reads"));
  /* exactly at the limit is fine */
  CU_ASSERT_EQUAL_FATAL(fileio_read_max(path, 11, &text, &len, &err), MP_OK);
  CU_ASSERT_EQUAL(len, 11);
  free(text);
  /* an endless stream: refused once the limit has arrived, naming the file */
  CU_ASSERT_EQUAL(fileio_read_max("/dev/zero", 100000, &text, &len, &err), MP_INPUT);
  CU_ASSERT_PTR_NULL(text);
  CU_ASSERT_STRING_EQUAL(err.msg, "/dev/zero: more than the 100000 bytes meshpipe reads");
  CU_ASSERT_EQUAL(fileio_read_all("/dev/zero", &text, &len, &err), MP_INPUT);
  CU_ASSERT_STRING_EQUAL(err.msg, "/dev/zero: more than the 256 MiB meshpipe reads");
}

static void write_atomic_should_replace_the_whole_file(void) {
  const char *dir = fresh_dir("atomic-ok");
  char path[4200], names[512];
  snprintf(path, sizeof path, "%s/out.txt", dir);
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, "first version\n", 14, &err), MP_OK);
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, "a\0b", 3, &err), MP_OK);
  size_t len = 0;
  char *text = slurp(path, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_EQUAL(len, 3u);
  CU_ASSERT_EQUAL(memcmp(text, "a\0b", 3), 0);
  free(text);
  CU_ASSERT_EQUAL(listing(dir, names, sizeof names), 1);
  CU_ASSERT_STRING_EQUAL(names, "out.txt");
}

/* In a child: the directory is made read-only (and, for root, the child becomes 'nobody' first, since
 * root writes anywhere); the write must fail and change nothing.  Returns the number of failed checks. */
static int write_into_a_read_only_directory(void *arg) {
  const char *dir = arg;
  char path[4200], names[512], want[4300];
  snprintf(path, sizeof path, "%s/keep.txt", dir);
  if (chmod(dir, 0555) != 0) return 100;
  if (geteuid() == 0 && (chmod(testutil_temp_path(""), 0711) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
    return 101;
  mp_error err;
  int bad = 0;
  bad += fileio_write_atomic(path, "new", 3, &err) != MP_OUTPUT;
  snprintf(want, sizeof want, "%s: cannot create: Permission denied", path);
  bad += strcmp(err.msg, want) != 0;
  size_t len = 0;
  char *text = slurp(path, &len);
  bad += !text || len != 4 || memcmp(text, "old\n", 4) != 0;
  free(text);
  bad += listing(dir, names, sizeof names) != 1 || strcmp(names, "keep.txt") != 0;
  return bad;
}

static void write_atomic_should_leave_the_old_file_and_no_temporary_when_it_fails(void) {
  const char *dir = fresh_dir("atomic-ro");
  char path[4200], names[512];
  snprintf(path, sizeof path, "%s/keep.txt", dir);
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(fileio_write_atomic(path, "old\n", 4, &err), MP_OK);
  CU_ASSERT_EQUAL(testutil_in_child(write_into_a_read_only_directory, (void *)dir), 0);
  CU_ASSERT_EQUAL(chmod(dir, 0755), 0);

  /* the temporary is written, then the rename fails (the target is a directory): it is removed */
  char target[4300];
  snprintf(target, sizeof target, "%s/sub", dir);
  CU_ASSERT_EQUAL_FATAL(mkdir(target, 0755), 0);
  CU_ASSERT_EQUAL(fileio_write_atomic(target, "x", 1, &err), MP_OUTPUT);
  char want[4400];
  snprintf(want, sizeof want, "%s: cannot rename into place: Is a directory", target);
  CU_ASSERT_STRING_EQUAL(err.msg, want);
  CU_ASSERT_EQUAL(listing(dir, names, sizeof names), 2);
  CU_ASSERT(strcmp(names, "keep.txt sub") == 0 || strcmp(names, "sub keep.txt") == 0);
  CU_ASSERT_EQUAL(listing(target, names, sizeof names), 0);

  /* no directory at all */
  snprintf(target, sizeof target, "%s/none/x.txt", dir);
  CU_ASSERT_EQUAL(fileio_write_atomic(target, "x", 1, &err), MP_OUTPUT);
  snprintf(want, sizeof want, "%s: cannot create: No such file or directory", target);
  CU_ASSERT_STRING_EQUAL(err.msg, want);
  size_t len = 0;
  char *text = slurp(path, &len);
  CU_ASSERT_PTR_NOT_NULL_FATAL(text);
  CU_ASSERT_EQUAL(len, 4u);
  CU_ASSERT_EQUAL(memcmp(text, "old\n", 4), 0);
  free(text);
}

static void hash_should_match_the_published_fnv1a_64_values(void) {
  CU_ASSERT_EQUAL(FILEIO_HASH_INIT, UINT64_C(0xcbf29ce484222325));
  CU_ASSERT_EQUAL(fileio_hash(FILEIO_HASH_INIT, "", 0), UINT64_C(0xcbf29ce484222325));
  CU_ASSERT_EQUAL(fileio_hash(FILEIO_HASH_INIT, "a", 1), UINT64_C(0xaf63dc4c8601ec8c));
  CU_ASSERT_EQUAL(fileio_hash(FILEIO_HASH_INIT, "foobar", 6), UINT64_C(0x85944171f73967e8));
  /* continuing from a hash is hashing the concatenation */
  CU_ASSERT_EQUAL(fileio_hash(fileio_hash(FILEIO_HASH_INIT, "foo", 3), "bar", 3), UINT64_C(0x85944171f73967e8));
  unsigned char all[256];
  for (int i = 0; i < 256; i++) all[i] = (unsigned char)i;
  CU_ASSERT_EQUAL(fileio_hash(FILEIO_HASH_INIT, all, sizeof all), UINT64_C(0x4242dc5249c33625));
  char hex[17];
  CU_ASSERT_STRING_EQUAL(fileio_hash_hex(UINT64_C(0xaf63dc4c8601ec8c), hex), "af63dc4c8601ec8c");
  CU_ASSERT_PTR_EQUAL(fileio_hash_hex(1, hex), hex);
  CU_ASSERT_STRING_EQUAL(hex, "0000000000000001");
}

static void has_suffix_should_compare_the_end_without_case(void) {
  CU_ASSERT_TRUE(fileio_has_suffix("model.onnx", ".onnx"));
  CU_ASSERT_TRUE(fileio_has_suffix("MODEL.ONNX", ".onnx"));
  CU_ASSERT_TRUE(fileio_has_suffix("a/b.Json", ".JSON"));
  CU_ASSERT_TRUE(fileio_has_suffix(".onnx", ".onnx"));
  CU_ASSERT_TRUE(fileio_has_suffix("x", ""));
  CU_ASSERT_FALSE(fileio_has_suffix("model.onnx.json", ".onnx"));
  CU_ASSERT_FALSE(fileio_has_suffix("onnx", ".onnx"));
  CU_ASSERT_FALSE(fileio_has_suffix("", ".onnx"));
}

static CU_TestInfo tests[] = {
    {"read_all_should_report_a_missing_or_unreadable_file", read_all_should_report_a_missing_or_unreadable_file},
    {"read_all_should_return_every_byte_of_an_empty_or_a_large_file",
     read_all_should_return_every_byte_of_an_empty_or_a_large_file},
    {"read_should_refuse_a_file_or_a_stream_past_the_limit_naming_it",
     read_should_refuse_a_file_or_a_stream_past_the_limit_naming_it},
    {"write_atomic_should_replace_the_whole_file", write_atomic_should_replace_the_whole_file},
    {"write_atomic_should_leave_the_old_file_and_no_temporary_when_it_fails",
     write_atomic_should_leave_the_old_file_and_no_temporary_when_it_fails},
    {"hash_should_match_the_published_fnv1a_64_values", hash_should_match_the_published_fnv1a_64_values},
    {"has_suffix_should_compare_the_end_without_case", has_suffix_should_compare_the_end_without_case},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("fileio", tests, argc, argv); }
