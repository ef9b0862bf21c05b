/* sweep_csv: a sweep's results file (sweep.h) - its header, one row per case, appends that survive a
 * kill, and the resume that reads back which cases a file already holds.
 *
 * Every row also records what made it: the options every case ran with (method and simulator options,
 * as text) and a hash of the case's inputs (its chip variant, its graph and each op's work, which
 * measured op times change), so that a resume with other options or inputs refuses the file instead of
 * mixing rows of two experiments. */
#include "sweep.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fileio.h"
#include "objective.h"
#include "train.h"

#define ROW_COLUMNS                                                                                           \
  "graph,batch,method,feasible,stages,model_period_s,samples_per_s,latency_s,busiest_link,"                  \
  "busiest_link_utilisation,total_sram_bytes,noc_bandwidth,cores,"
#define ENERGY_COLUMNS "energy_j_per_sample,power_w,samples_per_j,tops_per_w,"
#define TRAIN_COLUMNS "bubble,sram_peak_bytes," /* training sweeps (method_options.train) */

/* Energy columns when the sweep's chip has energy figures (every variant has them or none: variants
 * only replace values of the base chip). */
static int has_energy(const sweep *s) { return s->n_variants > 0 && s->variants[0].chip->has_energy; }

/* Appends printf output to buf at *used; 0 when it does not fit. */
static int put(char *buf, size_t cap, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int put(char *buf, size_t cap, size_t *used, const char *fmt, ...) {
  if (*used >= cap) return 0;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *used, cap - *used, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= cap - *used) return 0;
  *used += (size_t)n;
  return 1;
}

/* A string option as part of the options column: bytes other than letters, digits and ._/+- as %XX, so
 * that it holds no ',' (a column), ';' or '=' (the column's own separators). */
static int put_text(char *buf, size_t cap, size_t *used, const char *v) {
  for (const unsigned char *p = (const unsigned char *)(v ? v : ""); *p; p++)
    if (!(isalnum(*p) || strchr("._/+-", *p) ? put(buf, cap, used, "%c", *p) : put(buf, cap, used, "%%%02X", *p)))
      return 0;
  return 1;
}

int sweep_csv_options(const sweep *s, char *buf, size_t cap) {
  const method_options *m = &s->method_opts;
  const sim_options *o = &s->sim_opts;
  size_t used = 0;
  int ok = put(buf, cap, &used, "seed=%llu;objective=%s;tau=%.12g;max_step=%d;episodes=%d;init=",
               (unsigned long long)m->seed, objective_name(m->objective), m->tau, m->max_step, m->episodes) &&
           put_text(buf, cap, &used, m->init) && put(buf, cap, &used, ";policy=") &&
           put_text(buf, cap, &used, m->policy) &&
           put(buf, cap, &used, ";M=%d;max_M=%d;fast_gather=%d", o->microbatches, o->max_microbatches, o->fast_gather);
  if (ok && m->train)
    ok = put(buf, cap, &used, ";mode=train;schedule=%s;optimizer=%s;train_M=%d;recompute=%d",
             train_schedule_name(m->train->schedule), train_optimizer_name(m->train->optimizer),
             m->train->microbatches, m->train->recompute);
  else if (ok)
    ok = put(buf, cap, &used, ";mode=infer");
  return ok ? (int)used : -1;
}

uint64_t sweep_case_inputs(const sweep *s, int i) {
  const sweep_case *c = &s->cases[i];
  const graph *g = s->graphs[c->graph];
  uint64_t v[2] = {s->variants[c->variant].chip->hash, g->hash};
  uint64_t h = fileio_hash(FILEIO_HASH_INIT, v, sizeof v);
  for (int l = 0; l < g->n_ops; l++) h = fileio_hash(h, &g->ops[l].flops, sizeof g->ops[l].flops);
  return h;
}

int sweep_csv_header(const sweep *s, char *buf, size_t cap) {
  size_t used = 0;
  if (!put(buf, cap, &used, "case,")) return -1;
  for (int a = 0; a < s->n_axes; a++)
    if (!put(buf, cap, &used, "%s,", s->axes[a].key)) return -1;
  if (!put(buf, cap, &used, "%s%s%soptions,inputs,solve_s\n", ROW_COLUMNS, has_energy(s) ? ENERGY_COLUMNS : "",
           s->method_opts.train ? TRAIN_COLUMNS : ""))
    return -1;
  return (int)used;
}

int sweep_csv_row(const sweep *s, int i, const sweep_row *r, char *buf, size_t cap) {
  const sweep_case *c = &s->cases[i];
  size_t used = 0;
  if (!put(buf, cap, &used, "%s,", c->key)) return -1;
  for (int a = 0; a < s->n_axes; a++)
    if (!put(buf, cap, &used, "%s,", s->axes[a].values[s->variants[c->variant].value[a]])) return -1;
  if (!put(buf, cap, &used, "%s,%d,%s,%d,%d,%.12g,%.12g,%.12g,%s,%.12g,%llu,%.12g,%d,", s->graphs[c->graph]->name,
           r->batch, s->methods[c->method], r->feasible, r->n_stages, r->model_period_s, r->samples_per_s, r->latency_s,
           r->link, r->link_utilisation, (unsigned long long)r->total_sram_bytes, r->noc_bandwidth, r->cores))
    return -1;
  if (has_energy(s) && !put(buf, cap, &used, "%.12g,%.12g,%.12g,%.12g,", r->energy_j_per_sample, r->power_w,
                            r->samples_per_j, r->tops_per_w))
    return -1;
  if (s->method_opts.train &&
      !put(buf, cap, &used, "%.12g,%llu,", r->bubble, (unsigned long long)r->sram_peak_bytes))
    return -1;
  char hex[17];
  int n = sweep_csv_options(s, buf + used, cap - used);
  if (n < 0) return -1;
  used += (size_t)n;
  if (!put(buf, cap, &used, ",%s,%.6g\n", fileio_hash_hex(sweep_case_inputs(s, i), hex), r->solve_s)) return -1;
  return (int)used;
}

mp_status sweep_csv_append(int fd, const char *path, const char *line, size_t len, mp_error *err) {
  ssize_t n;
  do {
    n = write(fd, line, len);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return err_at(err, MP_OUTPUT, path, NULL, "cannot append a row: %s", strerror(errno));
  if ((size_t)n != len) return err_at(err, MP_OUTPUT, path, NULL, "cannot append a row: short write (disk full?)");
  return MP_OK;
}

/* Checks a row of case i (NUL-terminated, without its newline; cut in place at the commas) column by
 * column: the case's axis values, graph and method, the figures in the form sweep_csv_row writes them,
 * and this sweep's options (sweep_csv_options, computed once by the caller) and the case's inputs.  A row
 * with the right key and garbage after it, or one made under another seed, objective, chip or op times,
 * would otherwise count as done. */
static mp_status check_row(const sweep *s, const char *options, int i, char *row, int line, const char *path,
                           mp_error *err) {
  /* The columns after the axes, as sweep_csv_row writes them (ROW_COLUMNS, then ENERGY_COLUMNS with
   * energy figures, TRAIN_COLUMNS when training, then options, inputs and solve_s): G the case's graph, M
   * its method, O this sweep's options, H the case's inputs, 'i' a whole number >= 0, 'r' a finite number
   * >= 0, '-' any text (the busiest link). */
  char kinds[32];
  snprintf(kinds, sizeof kinds, "GiMiirrr-riri%s%sOHr", has_energy(s) ? "rrrr" : "", s->method_opts.train ? "ri" : "");
  enum { MOST = 20 };
  const int FIXED = (int)strlen(kinds);
  const sweep_case *c = &s->cases[i];
  char *col[SWEEP_MAX_AXES + MOST + 1], where[32];
  int n = 0, max = 1 + s->n_axes + FIXED; /* col[0] is the key; the last column keeps any extra commas */
  for (char *p = row;;) {
    col[n++] = p;
    char *comma = n < max ? strchr(p, ',') : NULL;
    if (!comma) break;
    *comma = '\0';
    p = comma + 1;
  }
  snprintf(where, sizeof where, "line %d", line);
  if (n != max)
    return err_at(err, MP_INPUT, path, where, "case '%.200s': %d columns, the header has %d (fix or delete the row)",
                  c->key, n, max);
  char inputs[17];
  fileio_hash_hex(sweep_case_inputs(s, i), inputs);
  for (int k = 0; k < s->n_axes + FIXED; k++) {
    const char *v = col[1 + k], *want = NULL;
    char kind = k < s->n_axes ? 'A' : kinds[k - s->n_axes];
    if (kind == 'A') want = s->axes[k].values[s->variants[c->variant].value[k]];
    if (kind == 'G') want = s->graphs[c->graph]->name;
    if (kind == 'M') want = s->methods[c->method];
    if (want && strcmp(v, want) != 0)
      return err_at(err, MP_INPUT, path, where, "case '%.200s': column %d is '%.80s', the case's is '%.80s' (fix or "
                    "delete the row)", c->key, 2 + k, v, want);
    if (kind == 'O' && strcmp(v, options) != 0)
      return err_at(err, MP_INPUT, path, where,
                    "case '%.200s' was run with the options '%.300s', this sweep's are '%.300s': resume with those "
                    "options, or write to another -o",
                    c->key, v, options);
    if (kind == 'H' && strcmp(v, inputs) != 0)
      return err_at(err, MP_INPUT, path, where,
                    "case '%.200s' was run on other inputs (hash %.40s, now %s: the base chip, the graph or its op "
                    "times changed): write to another -o",
                    c->key, v, inputs);
    if (kind != 'i' && kind != 'r') continue;
    char *end = NULL;
    errno = 0;
    double x = kind == 'i' ? (double)strtoull(v, &end, 10) : strtod(v, &end);
    if (!*v || *end || errno || !isfinite(x) || x < 0 || (kind == 'i' && !isdigit((unsigned char)*v)))
      return err_at(err, MP_INPUT, path, where, "case '%.200s': column %d is '%.80s', not a %s (fix or delete the row)",
                    c->key, 2 + k, v, kind == 'i' ? "whole number" : "number >= 0");
  }
  return MP_OK;
}

mp_status sweep_csv_open(const sweep *s, const char *path, int *fd_out, unsigned char *done, int *n_done,
                         mp_error *err) {
  *fd_out = -1;
  *n_done = 0;
  memset(done, 0, (size_t)s->n_cases);
  char header[SWEEP_LINE_MAX], options[SWEEP_LINE_MAX];
  int hlen = sweep_csv_header(s, header, sizeof header);
  if (hlen < 0) return err_set(err, MP_USAGE, "the CSV header is longer than %d bytes", SWEEP_LINE_MAX);
  if (sweep_csv_options(s, options, sizeof options) < 0)
    return err_set(err, MP_USAGE, "the options column is longer than %d bytes", SWEEP_LINE_MAX);
  int fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return err_at(err, MP_OUTPUT, path, NULL, "cannot open: %s", strerror(errno));
  mp_status st = MP_OK;
  char *text = NULL;
  /* One writer at a time: a second sweep on the same file would interleave its own rows. */
  struct flock lk;
  memset(&lk, 0, sizeof lk);
  lk.l_type = F_WRLCK;
  lk.l_whence = SEEK_SET;
  if (fcntl(fd, F_SETLK, &lk) != 0) {
    st = err_at(err, MP_OUTPUT, path, NULL, "another process is writing this file (%s)", strerror(errno));
    goto cleanup;
  }
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    st = err_at(err, MP_OUTPUT, path, NULL, "not a regular file");
    goto cleanup;
  }
  if ((uintmax_t)sb.st_size > (uintmax_t)SWEEP_MAX_CSV) {
    st = err_at(err, MP_INPUT, path, NULL, "%jd bytes, more than a sweep CSV of %d cases can hold",
                (intmax_t)sb.st_size, SWEEP_MAX_CASES);
    goto cleanup;
  }
  size_t size = (size_t)sb.st_size, got = 0;
  if (!(text = malloc(size + 1))) {
    st = err_nomem(err);
    goto cleanup;
  }
  while (got < size) {
    ssize_t n = pread(fd, text + got, size - got, (off_t)got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      st = err_at(err, MP_INPUT, path, NULL, "cannot read: %s", n < 0 ? strerror(errno) : "file shrank");
      goto cleanup;
    }
    got += (size_t)n;
  }
  text[size] = '\0';
  if (memchr(text, '\0', size)) {
    st = err_at(err, MP_INPUT, path, NULL, "holds a NUL byte: not a sweep CSV");
    goto cleanup;
  }
  char *first_nl = memchr(text, '\n', size);
  /* Only the header line, cut before its newline, or nothing: start afresh.  Anything else without a
   * newline is not ours to truncate. */
  size_t keep;
  if (!first_nl) {
    if (size > (size_t)hlen || strncmp(text, header, size) != 0) {
      st = err_at(err, MP_INPUT, path, "line 1", "is not this sweep's header (the columns differ); use another -o");
      goto cleanup;
    }
    keep = 0;
  } else {
    if ((size_t)(first_nl - text + 1) != (size_t)hlen || strncmp(text, header, (size_t)hlen) != 0) {
      st = err_at(err, MP_INPUT, path, "line 1",
                  "is not this sweep's header (the columns, i.e. the --vary keys, differ); use another -o");
      goto cleanup;
    }
    keep = size;
    while (keep > 0 && text[keep - 1] != '\n') keep--; /* drop a row cut by a kill */
  }
  if (keep < size && ftruncate(fd, (off_t)keep) != 0) {
    st = err_at(err, MP_OUTPUT, path, NULL, "cannot truncate a cut-off last row: %s", strerror(errno));
    goto cleanup;
  }
  if (keep == 0) {
    if ((st = sweep_csv_append(fd, path, header, (size_t)hlen, err)) != MP_OK) goto cleanup;
  } else {
    text[keep] = '\0';
    int lineno = 1;
    for (char *line = first_nl + 1; *line && st == MP_OK;) {
      char *nl = strchr(line, '\n');
      char *comma = memchr(line, ',', (size_t)(nl - line));
      lineno++;
      if (comma) {
        *comma = '\0';
        *nl = '\0';
        int i = sweep_find_case(s, line);
        if (i >= 0) {
          *comma = ',';
          st = check_row(s, options, i, line, lineno, path, err);
        }
        if (i >= 0 && st == MP_OK && !done[i]) {
          done[i] = 1;
          (*n_done)++;
        }
      }
      line = nl + 1;
    }
    if (st != MP_OK) goto cleanup;
  }
cleanup:
  free(text);
  if (st != MP_OK) {
    close(fd);
    return st;
  }
  *fd_out = fd;
  return MP_OK;
}
