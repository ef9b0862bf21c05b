/* nomem: allocation-failure injection for the out-of-memory suites (tests/test_nomem*.c).
 *
 * A suite linked with these wrappers (tests/CMakeLists.txt passes GNU ld's --wrap for malloc, calloc,
 * realloc, strdup, strndup and free to every test_nomem* executable) sends every allocation of the
 * library's static code, of the tests and — through cJSON_InitHooks, set by nomem_init — of cJSON
 * through counting wrappers.  Allocations inside other shared libraries (SimGrid, OpenBLAS,
 * protobuf-c, libc itself) are not seen.  Once armed with n, the wrappers let n allocations through
 * and fail every later one, or only the next one (returning NULL with errno ENOMEM, as malloc does),
 * until disarmed.  Every
 * allocation made through them is numbered in order and kept in a set until it is freed, so a test
 * can ask whether allocations made since a mark are still live: a leak check that works where ASan's
 * leak detection is off (the set hides its pointers from LeakSanitizer, which still sees the leaks).
 *
 * nomem_sweep drives one call through every allocation it makes: n = 0, 1, 2, ... until the call
 * succeeds with nothing refused, checking each failed attempt; with MESHPIPE_NOMEM_STRIDE=k in the
 * environment, n = 0, k, 2k, ... only (scripts/test's sanitizer pass, where an attempt in a forked
 * child costs about three times more: AddressSanitizer writes its allocation-stack table at every
 * fork).  Thread-safe (SimGrid's engine thread allocates through the same wrappers). */
#ifndef MESHPIPE_NOMEM_H
#define MESHPIPE_NOMEM_H

#include <stdint.h>

#include "err.h"

/* Routes cJSON through the wrappers; call once, first thing in main. */
void nomem_init(void);

/* From now on, let n allocations through and fail every later one. */
void nomem_arm(long n);

/* From now on, let n allocations through, fail the next one, and let every later one through. */
void nomem_arm_once(long n);

/* Stops failing; returns how many allocations were refused since nomem_arm. */
long nomem_disarm(void);

/* The number the next allocation will get; nomem_live_since(mark) counts the allocations numbered
 * mark or later that are not freed yet. */
uint64_t nomem_mark(void);
long nomem_live_since(uint64_t mark);

/* The call a sweep makes.  setup (may be NULL) prepares what the call works on, before the failure is
 * armed; call runs the code under test, frees whatever the code made or worked on (a successful
 * call's result, the object setup made, so that what the code allocated into that object is checked
 * too), and returns the code's status, setting *untouched to 1 when a failed call left its output as
 * it was (a NULL pointer, an absent file). */
typedef struct nomem_target {
  const char *name;
  mp_status (*setup)(void *ctx, mp_error *err);
  mp_status (*call)(void *ctx, int *untouched, mp_error *err);
  void *ctx;
  mp_status expected; /* the status of a refused allocation: MP_NOMEM unless documented otherwise */
  mp_status final;    /* the status of the run that refuses nothing: MP_OK, or the error of a bad input
                         (whose message needs memory too); a failure must leave the output untouched */
  int in_child;       /* 1: every attempt runs in a forked child (SimGrid's engine starts once per process) */
  int once;           /* 0: refuse allocation n and every later one (nothing after a failure may succeed, so
                         an ignored failure shows only as a leak); 1: refuse allocation n alone, so a
                         failure the code ignores lets it succeed and counts as absorbed */
} nomem_target;

/* What a sweep saw. */
typedef struct nomem_result {
  long attempts;    /* attempts in which an allocation was refused: the call's allocations, at least */
  long absorbed;    /* of those, calls that succeeded anyway (the code did without the memory) */
  long violations;  /* attempts that broke a rule: another status than expected, no message, the output
                       touched, an allocation of the call still live, a crash (in a child) */
  long allocations; /* allocations of the run that succeeded (an upper bound with a stride above 1) */
  char first[512];  /* the first violation, "" when none */
} nomem_result;

/* Calls t->call with the failure armed at n = 0, 1, 2, ... until an attempt refuses nothing, and
 * checks every attempt: a failed call returns t->expected with the message set (err's status the
 * same), its output untouched, and no allocation it made live; a call that succeeds leaves nothing
 * live either; the final attempt returns t->final.  A setup that fails is a violation; the sweep
 * stops. */
void nomem_sweep(const nomem_target *t, nomem_result *r);

/* Writes "ADDRESS" lines, one per distinct code address in the test executable that got a refused
 * allocation (the first of each attempt; for cJSON's, the library call that led to it), relative to
 * the executable's start (as addr2line -e EXECUTABLE takes them), appended to the file named by the
 * environment variable MESHPIPE_NOMEM_SITES; no-op when it is unset.  Returns how many there are. */
long nomem_save_sites(void);

#endif
