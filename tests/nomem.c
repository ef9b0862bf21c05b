/* nomem: see nomem.h.  The wrappers are the __wrap_ functions GNU ld sends the calls to; the real
 * allocator is reached through the __real_ names it resolves to the original ones. */
#include "nomem.h"

#include <errno.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t k, size_t n);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void __real_free(void *p);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t k, size_t n);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void __wrap_free(void *p);

/* The linker's marks around the executable's code (GNU ld defines them). */
extern const char __executable_start[], etext[];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- the live set: open addressing on the pointer, linear probing, deletion by backward shift ---- */

/* Keys are stored complemented, so the table holds no pointer LeakSanitizer could follow. */
typedef struct slot {
  uintptr_t key; /* ~pointer; 0 = empty */
  uint64_t seq;
} slot;

static slot *table;
static size_t table_cap, table_used;
static uint64_t next_seq;

static size_t home(uintptr_t key) { return (size_t)((key * UINT64_C(0x9e3779b97f4a7c15)) >> 17) & (table_cap - 1); }

static void put(uintptr_t key, uint64_t seq);

static int grow(void) {
  size_t old_cap = table_cap;
  slot *old = table;
  size_t cap = old_cap ? old_cap * 2 : 4096;
  slot *t = __real_calloc(cap, sizeof *t);
  if (!t) return 0;
  table = t;
  table_cap = cap;
  table_used = 0;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) put(old[i].key, old[i].seq);
  __real_free(old);
  return 1;
}

static void put(uintptr_t key, uint64_t seq) {
  size_t i = home(key);
  while (table[i].key && table[i].key != key) i = (i + 1) & (table_cap - 1);
  if (!table[i].key) table_used++;
  table[i].key = key;
  table[i].seq = seq;
}

/* Removes p; returns 1 and its number in *seq when it was in the set. */
static int take(const void *p, uint64_t *seq) {
  uintptr_t key = ~(uintptr_t)p;
  if (!table_cap) return 0;
  size_t i = home(key);
  while (table[i].key && table[i].key != key) i = (i + 1) & (table_cap - 1);
  if (!table[i].key) return 0;
  *seq = table[i].seq;
  table[i].key = 0;
  table_used--;
  for (size_t j = (i + 1) & (table_cap - 1); table[j].key; j = (j + 1) & (table_cap - 1)) {
    size_t h = home(table[j].key);
    /* j's entry may move into the hole at i unless its home lies cyclically in (i, j] */
    if ((j > i && (h <= i || h > j)) || (j < i && h <= i && h > j)) {
      table[i] = table[j];
      table[j].key = 0;
      i = j;
    }
  }
  return 1;
}

/* Adds p with number seq (a fresh one when seq is 0).  A pointer the set cannot hold (the table
 * could not grow) is simply not tracked. */
static void track(const void *p, uint64_t seq) {
  if ((table_used + 1) * 2 > table_cap && !grow()) return;
  put(~(uintptr_t)p, seq ? seq : ++next_seq);
}

/* ---- arming, and where refusals land ---- */

static int armed, once;
static long let_through, refused;

#define MAX_SITES 8192
static uintptr_t sites[MAX_SITES];
static long n_sites;

static int in_executable(const void *a) {
  return (const char *)a >= __executable_start && (const char *)a < etext;
}

/* Records the code that received the first refusal of an attempt: the caller of the wrapper, or, for
 * a call from a shared library (cJSON through its hooks), the first frame in the executable below it. */
static void record_site(void *caller) {
  void *where = caller;
  if (!in_executable(caller)) {
    void *frames[32];
    int n = backtrace(frames, 32), i = 0;
    while (i < n && frames[i] != caller) i++;
    while (i < n && !in_executable(frames[i])) i++;
    if (i == n) return;
    where = frames[i];
  }
  uintptr_t off = (uintptr_t)((const char *)where - __executable_start);
  pthread_mutex_lock(&lock);
  long k = 0;
  while (k < n_sites && sites[k] != off) k++;
  if (k == n_sites && n_sites < MAX_SITES) sites[n_sites++] = off;
  pthread_mutex_unlock(&lock);
}

/* 1 when this allocation is to fail (and counts it); also sets errno as a failing malloc does. */
static int refuse(void *caller) {
  pthread_mutex_lock(&lock);
  int no = armed && let_through-- <= 0 && !(once && refused > 0);
  int first = no && refused++ == 0;
  pthread_mutex_unlock(&lock);
  if (first) record_site(caller);
  if (no) errno = ENOMEM;
  return no;
}

static void *tracked(void *p) {
  if (p) {
    pthread_mutex_lock(&lock);
    track(p, 0);
    pthread_mutex_unlock(&lock);
  }
  return p;
}

void *__wrap_malloc(size_t n) {
  return refuse(__builtin_return_address(0)) ? NULL : tracked(__real_malloc(n));
}

void *__wrap_calloc(size_t k, size_t n) {
  return refuse(__builtin_return_address(0)) ? NULL : tracked(__real_calloc(k, n));
}

char *__wrap_strdup(const char *s) {
  return refuse(__builtin_return_address(0)) ? NULL : tracked(__real_strdup(s));
}

char *__wrap_strndup(const char *s, size_t n) {
  return refuse(__builtin_return_address(0)) ? NULL : tracked(__real_strndup(s, n));
}

int __wrap_posix_memalign(void **p, size_t align, size_t n) {
  if (refuse(__builtin_return_address(0))) return ENOMEM;
  int rc = __real_posix_memalign(p, align, n);
  if (rc == 0) tracked(*p);
  return rc;
}

/* A block keeps its number when it moves, so growing an old object is not a new allocation. */
void *__wrap_realloc(void *p, size_t n) {
  if (refuse(__builtin_return_address(0))) return NULL;
  pthread_mutex_lock(&lock);
  uint64_t seq = 0;
  int known = p && take(p, &seq);
  void *q = __real_realloc(p, n);
  if (q)
    track(q, seq);
  else if (known && n > 0)
    track(p, seq); /* the old block stays */
  pthread_mutex_unlock(&lock);
  return q;
}

void __wrap_free(void *p) {
  if (!p) return;
  uint64_t seq;
  pthread_mutex_lock(&lock);
  take(p, &seq);
  pthread_mutex_unlock(&lock);
  __real_free(p);
}

void nomem_init(void) {
  cJSON_Hooks hooks = {__wrap_malloc, __wrap_free};
  cJSON_InitHooks(&hooks);
  void *frames[2];
  backtrace(frames, 2); /* loads what backtrace needs now, not inside a refused allocation */
}

static void arm(long n, int only_one) {
  pthread_mutex_lock(&lock);
  armed = 1;
  once = only_one;
  let_through = n;
  refused = 0;
  pthread_mutex_unlock(&lock);
}

void nomem_arm(long n) { arm(n, 0); }

void nomem_arm_once(long n) { arm(n, 1); }

long nomem_disarm(void) {
  pthread_mutex_lock(&lock);
  armed = 0;
  long r = refused;
  pthread_mutex_unlock(&lock);
  return r;
}

uint64_t nomem_mark(void) {
  pthread_mutex_lock(&lock);
  uint64_t m = next_seq + 1;
  pthread_mutex_unlock(&lock);
  return m;
}

long nomem_live_since(uint64_t mark) {
  long n = 0;
  pthread_mutex_lock(&lock);
  for (size_t i = 0; i < table_cap; i++) n += table[i].key && table[i].seq >= mark;
  pthread_mutex_unlock(&lock);
  return n;
}

long nomem_save_sites(void) {
  const char *path = getenv("MESHPIPE_NOMEM_SITES");
  FILE *f = path && *path ? fopen(path, "a") : NULL;
  if (f) {
    for (long k = 0; k < n_sites; k++) fprintf(f, "0x%lx\n", (unsigned long)sites[k]);
    fclose(f);
  }
  return n_sites;
}

/* ---- the sweep ---- */

/* What went wrong in one attempt, as bits (an attempt in a child answers them as its exit status). */
enum {
  BAD_STATUS = 1,    /* another status than expected (or a failure where nothing was refused) */
  BAD_OUTPUT = 2,    /* the output was touched */
  BAD_MESSAGE = 4,   /* no message, or err->status differs */
  BAD_LEAK = 8,      /* an allocation of the call is still live */
  BAD_SETUP = 16,    /* setup failed */
  DONE = 32,         /* nothing was refused: the sweep is over */
  ABSORBED = 64      /* something was refused, and the call succeeded anyway */
};

/* "NAME with allocation N on refused" (N alone when t->once; "with nothing refused" when done). */
static void attempt_name(char *buf, size_t cap, const nomem_target *t, long n, int done) {
  if (done)
    snprintf(buf, cap, "%s with nothing refused", t->name);
  else
    snprintf(buf, cap, "%s with allocation %ld%s refused", t->name, n, t->once ? "" : " on");
}

static void describe(char *buf, size_t cap, const nomem_target *t, long n, int bits, mp_status st,
                     const mp_error *err, long live) {
  char name[256];
  attempt_name(name, sizeof name, t, n, bits & DONE);
  int used = snprintf(buf, cap, "%s:%s%s%s%s (status %s, message \"%.200s\")", name,
                      bits & BAD_STATUS ? " wrong status;" : "", bits & BAD_OUTPUT ? " output touched;" : "",
                      bits & BAD_MESSAGE ? " no message;" : "", bits & BAD_LEAK ? " allocations left live;" : "",
                      err_name(st), err->msg);
  if (used > 0 && (size_t)used < cap && (bits & BAD_LEAK))
    snprintf(buf + used, cap - (size_t)used, ", %ld allocation%s live", live, live == 1 ? "" : "s");
}

/* One attempt with the failure armed at n: the bits above, and why it broke a rule. */
static int attempt(const nomem_target *t, long n, char *why, size_t why_cap) {
  mp_error err = {MP_OK, ""};
  if (t->setup && t->setup(t->ctx, &err) != MP_OK) {
    snprintf(why, why_cap, "%s: setup failed: %s", t->name, err.msg);
    return BAD_SETUP;
  }
  err.status = MP_OK;
  err.msg[0] = '\0';
  uint64_t mark = nomem_mark();
  int untouched = 0;
  if (t->once)
    nomem_arm_once(n);
  else
    nomem_arm(n);
  mp_status st = t->call(t->ctx, &untouched, &err);
  long no = nomem_disarm();
  long live = nomem_live_since(mark);
  int bits = live ? BAD_LEAK : 0;
  if (no && st == MP_OK)
    bits |= ABSORBED;
  else if (st != MP_OK)
    bits |= (st != (no ? t->expected : t->final) ? BAD_STATUS : 0) | (!untouched ? BAD_OUTPUT : 0) |
            (!err.msg[0] || err.status != st ? BAD_MESSAGE : 0);
  if (!no) bits |= DONE | (st != t->final ? BAD_STATUS : 0);
  if (bits & (BAD_STATUS | BAD_OUTPUT | BAD_MESSAGE | BAD_LEAK)) describe(why, why_cap, t, n, bits, st, &err, live);
  return bits;
}

typedef struct child_attempt {
  const nomem_target *t;
  long n;
} child_attempt;

static int attempt_in_child(void *arg) {
  child_attempt *a = arg;
  char why[512] = "";
  int bits = attempt(a->t, a->n, why, sizeof why);
  if (why[0]) fprintf(stderr, "nomem: %s\n", why);
  nomem_save_sites();
  return bits;
}

#define MAX_ATTEMPTS 1000000L

static void violation(nomem_result *r, const char *why) {
  r->violations++;
  if (!r->first[0]) snprintf(r->first, sizeof r->first, "%s", why);
}

/* The sweep's step, from MESHPIPE_NOMEM_STRIDE (nomem.h); 1 when unset. */
static long sweep_stride(void) {
  const char *s = getenv("MESHPIPE_NOMEM_STRIDE");
  long k = s ? strtol(s, NULL, 10) : 1;
  return k >= 1 ? k : 1;
}

void nomem_sweep(const nomem_target *t, nomem_result *r) {
  memset(r, 0, sizeof *r);
  long n = 0, stride = sweep_stride();
  for (; n < MAX_ATTEMPTS; n += stride) {
    char why[512] = "";
    int bits;
    if (t->in_child) {
      child_attempt a = {t, n};
      bits = testutil_in_child(attempt_in_child, &a);
      char name[256];
      attempt_name(name, sizeof name, t, n, bits >= 0 && (bits & DONE));
      if (bits < 0 || bits > (DONE | ABSORBED | BAD_SETUP | BAD_LEAK | BAD_MESSAGE | BAD_OUTPUT | BAD_STATUS)) {
        snprintf(why, sizeof why, "%s: the child crashed (status %d)", name, bits);
        bits = BAD_STATUS;
      } else if (bits & ~(DONE | ABSORBED)) {
        snprintf(why, sizeof why, "%s: the child reported flags 0x%x (see its stderr)", name, (unsigned)bits);
      }
    } else {
      bits = attempt(t, n, why, sizeof why);
    }
    if (why[0]) violation(r, why);
    if (bits & BAD_SETUP) break;
    if (bits & DONE) { /* the first attempt that refused nothing let every allocation of the call through */
      r->allocations = n;
      break;
    }
    r->attempts++;
    if (bits & ABSORBED) r->absorbed++;
  }
  if (n == MAX_ATTEMPTS) {
    char why[300];
    snprintf(why, sizeof why, "%s: still refused allocations after %ld attempts", t->name, MAX_ATTEMPTS);
    violation(r, why);
  }
  char every[48] = "";
  if (stride > 1) snprintf(every, sizeof every, " (one in %ld)", stride);
  printf("    %s: %ld allocation%s refused in turn%s%s, %ld absorbed, %ld violation%s%s%s\n", t->name, r->attempts,
         r->attempts == 1 ? "" : "s", every, t->once ? " (one at a time)" : "", r->absorbed, r->violations,
         r->violations == 1 ? "" : "s", r->first[0] ? "; first: " : "", r->first);
  fflush(stdout);
}
