/* driver: a standalone stand-in for libFuzzer, linked with a fuzz target when clang's -fsanitize=fuzzer
 * is not available (and in the ordinary build, where ctest replays the seeds with it).
 *
 *     fuzz_TARGET [-max_total_time=S] [-seed=N] [-timeout=S] FILE|DIR...
 *
 * Runs LLVMFuzzerTestOneInput once on every file given (a directory's files, one level), then, for S
 * seconds, on mutations of them: bit flips, bytes set to values parsers care about, insertions,
 * deletions, duplicated ranges, splices of two inputs and numbers replaced by extreme ones.  No coverage
 * guides it (libFuzzer's does); it only finds what random edits of good files reach.  An input that
 * crashes (a signal, a sanitizer report) or runs past the timeout is written to crash-N / timeout-N in
 * the current directory before the process ends.  Prints the number of executions. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
__attribute__((weak)) void __sanitizer_set_death_callback(void (*callback)(void));

typedef struct input {
  uint8_t *data;
  size_t size;
} input;

static input *corpus;
static size_t n_corpus, cap_corpus;
static const uint8_t *current; /* the input being run, saved when the process dies */
static size_t current_size;
static unsigned long long execs;

static void save_current(const char *kind) {
  char name[64];
  snprintf(name, sizeof name, "%s-%llu", kind, execs);
  int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    ssize_t w = write(fd, current, current_size);
    (void)w;
    close(fd);
  }
  const char msg[] = "driver: the input is saved in the current directory\n";
  ssize_t w = write(2, msg, sizeof msg - 1);
  (void)w;
}

static void on_death(void) { save_current("crash"); }

static void on_signal(int sig) {
  save_current(sig == SIGALRM ? "timeout" : "crash");
  signal(sig, SIG_DFL);
  raise(sig == SIGALRM ? SIGABRT : sig);
}

static void add(const uint8_t *data, size_t size) {
  if (n_corpus == cap_corpus) {
    cap_corpus = cap_corpus ? 2 * cap_corpus : 64;
    corpus = realloc(corpus, cap_corpus * sizeof *corpus);
    if (!corpus) abort();
  }
  uint8_t *copy = malloc(size + 1);
  if (!copy) abort();
  memcpy(copy, data, size);
  corpus[n_corpus++] = (input){copy, size};
}

static void add_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return;
  uint8_t *buf = NULL;
  size_t size = 0, cap = 0;
  for (;;) {
    if (size == cap) {
      cap = cap ? 2 * cap : 4096;
      uint8_t *b = realloc(buf, cap);
      if (!b) abort();
      buf = b;
    }
    size_t got = fread(buf + size, 1, cap - size, f);
    if (!got) break;
    size += got;
  }
  fclose(f);
  add(buf, size);
  free(buf);
}

static void add_path(const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) return;
  if (!S_ISDIR(sb.st_mode)) {
    add_file(path);
    return;
  }
  DIR *d = opendir(path);
  if (!d) return;
  char **names = NULL;
  size_t n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    names = realloc(names, (n + 1) * sizeof *names);
    if (!names || asprintf(&names[n], "%s/%s", path, e->d_name) < 0) abort();
    n++;
  }
  closedir(d);
  qsort(names, n, sizeof *names, (int (*)(const void *, const void *))strcmp); /* the same order every run */
  for (size_t i = 0; i < n; i++) {
    if (stat(names[i], &sb) == 0 && S_ISREG(sb.st_mode)) add_file(names[i]);
    free(names[i]);
  }
  free(names);
}

static uint64_t rng_state;

static uint64_t next(void) { /* splitmix64 */
  uint64_t z = (rng_state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static size_t below(size_t n) { return n ? (size_t)(next() % n) : 0; }

/* Replaces [at, at + len) of *buf (size *n, capacity cap) with the bytes of s. */
static void splice_in(uint8_t *buf, size_t *n, size_t cap, size_t at, size_t len, const void *s, size_t slen) {
  if (*n - len + slen > cap) return;
  memmove(buf + at + slen, buf + at + len, *n - at - len);
  memcpy(buf + at, s, slen);
  *n = *n - len + slen;
}

static size_t mutate(uint8_t *buf, size_t n, size_t cap) {
  static const char *const numbers[] = {"0", "-1", "1e308", "5e-324", "-0", "nan", "1e999", "2147483647",
                                        "2147483648", "4294967295", "9223372036854775807", "18446744073709551616",
                                        "9007199254740993", "0.5", "65536", "4096"};
  static const uint8_t bytes[] = {0, 0xff, 0x7f, 0x80, '\n', ',', '"', '{', '}', '[', ']', ':', '%', '-', '0', '9'};
  for (int k = 1 + (int)below(6); k > 0; k--) {
    switch (below(7)) {
    case 0:
      if (n) buf[below(n)] ^= (uint8_t)(1u << below(8));
      break;
    case 1:
      if (n) buf[below(n)] = bytes[below(sizeof bytes)];
      break;
    case 2: {
      uint8_t b = bytes[below(sizeof bytes)];
      splice_in(buf, &n, cap, below(n + 1), 0, &b, 1);
      break;
    }
    case 3:
      if (n) {
        size_t at = below(n), len = 1 + below(n - at < 64 ? n - at : 64);
        splice_in(buf, &n, cap, at, len, "", 0);
      }
      break;
    case 4:
      if (n) {
        size_t at = below(n), len = 1 + below(n - at < 256 ? n - at : 256);
        uint8_t tmp[256];
        memcpy(tmp, buf + at, len);
        splice_in(buf, &n, cap, below(n + 1), 0, tmp, len);
      }
      break;
    case 5: { /* a number (a run of digits) replaced by an extreme one */
      size_t at = below(n + 1);
      while (at < n && !(buf[at] >= '0' && buf[at] <= '9')) at++;
      size_t end = at;
      while (end < n && ((buf[end] >= '0' && buf[end] <= '9') || buf[end] == '.' || buf[end] == 'e')) end++;
      const char *s = numbers[below(sizeof numbers / sizeof *numbers)];
      splice_in(buf, &n, cap, at, end - at, s, strlen(s));
      break;
    }
    default: { /* the tail of another input */
      const input *o = &corpus[below(n_corpus)];
      if (!o->size) break;
      size_t from = below(o->size), at = below(n + 1), len = o->size - from;
      if (at + len > cap) len = cap - at;
      memcpy(buf + at, o->data + from, len);
      n = at + len;
      break;
    }
    }
  }
  return n;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Runs one input from a buffer of exactly its size, as libFuzzer does, so that the sanitizers see a
 * read past its end. */
static void run(const uint8_t *data, size_t size, unsigned timeout) {
  uint8_t *exact = malloc(size ? size : 1);
  if (!exact) abort();
  memcpy(exact, data, size);
  current = exact;
  current_size = size;
  alarm(timeout);
  LLVMFuzzerTestOneInput(exact, size);
  alarm(0);
  free(exact);
  execs++;
}

int main(int argc, char **argv) {
  double seconds = 0;
  unsigned timeout = 20;
  rng_state = 1;
  if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "-max_total_time=", 16) == 0)
      seconds = atof(argv[i] + 16);
    else if (strncmp(argv[i], "-seed=", 6) == 0)
      rng_state = strtoull(argv[i] + 6, NULL, 10);
    else if (strncmp(argv[i], "-timeout=", 9) == 0)
      timeout = (unsigned)atoi(argv[i] + 9);
    else if (argv[i][0] != '-')
      add_path(argv[i]);
  }
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(on_death);
  int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM};
  for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) signal(sigs[i], on_signal);
  if (n_corpus == 0) add((const uint8_t *)"", 0);
  for (size_t i = 0; i < n_corpus; i++) run(corpus[i].data, corpus[i].size, timeout);
  unsigned long long replayed = execs;
  double start = now_s();
  size_t cap = 1 << 20;
  uint8_t *buf = malloc(cap);
  if (!buf) abort();
  while (seconds > 0 && now_s() - start < seconds) {
    const input *in = &corpus[below(n_corpus)];
    size_t n = in->size < cap ? in->size : cap;
    memcpy(buf, in->data, n);
    n = mutate(buf, n, cap);
    run(buf, n, timeout);
  }
  double took = now_s() - start;
  fprintf(stderr, "driver: %llu inputs replayed, %llu mutations run in %.1f s (%.0f/s)\n", replayed, execs - replayed,
          took, took > 0 ? (double)(execs - replayed) / took : 0.0);
  free(buf);
  for (size_t i = 0; i < n_corpus; i++) free(corpus[i].data);
  free(corpus);
  return 0;
}
