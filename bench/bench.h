/* bench: what the benchmark programs share, their usage line and strict whole-number arguments.
 * Header only: CMakeLists.txt builds every .c file of bench/ as a program of its own.  A benchmark
 * asked for -h or --help prints its usage and exits 0; a count that is not a whole number in range is
 * refused with the argument's name, never read as 0 (atoi's silent default). */
#ifndef MESHPIPE_BENCH_H
#define MESHPIPE_BENCH_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 when the first argument asks for help: usage (borrowed) is then printed on stdout. */
static inline int bench_help(int argc, char **argv, const char *usage) {
  if (argc < 2 || (strcmp(argv[1], "-h") != 0 && strcmp(argv[1], "--help") != 0)) return 0;
  printf("%s\n", usage);
  return 1;
}

/* Reads text as a whole number in [min, max] into *out: 1 when it is one, else 0 after printing
 * "PROG: NAME: 'TEXT' is not a whole number from MIN to MAX" and the usage on stderr. */
static inline int bench_int(const char *prog, const char *usage, const char *name, const char *text, long min,
                            long max, int *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min || v > max || v > INT_MAX || v < INT_MIN) {
    fprintf(stderr, "%s: %s: '%s' is not a whole number from %ld to %ld\n%s\n", prog, name, text, min, max, usage);
    return 0;
  }
  *out = (int)v;
  return 1;
}

#endif
