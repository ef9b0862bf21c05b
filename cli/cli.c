/* cli: helpers shared by the subcommands.  See cli.h. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "onnx_import.h"

int cli_fail(const mp_error *err) {
  fprintf(stderr, "meshpipe: %s\n", err->msg[0] ? err->msg : err_text(err->status));
  return err_exit_code(err->status);
}

int cli_usage(const char *cmd, const char *fmt, ...) {
  char what[MP_ERROR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  mp_error line; /* err_set writes the control characters of an argument as escapes: one line */
  err_set(&line, MP_USAGE, "%s", what);
  fprintf(stderr, "meshpipe %s: %s (see 'meshpipe %s --help')\n", cmd, line.msg, cmd);
  return 2;
}

int cli_help(const char *text) {
  fputs(text, stdout);
  return 0;
}

mp_status cli_load_graph(const char *path, const cli_graph_opts *o, graph **out, mp_error *err) {
  if (fileio_has_suffix(path, ".onnx")) {
    onnx_options oo = {o ? o->dtype : NULL, o ? o->batch : 0, o ? o->no_fuse : 0};
    onnx_report rep;
    mp_status st = onnx_import(path, &oo, out, &rep, err);
    char warning[1024];
    if (st == MP_OK && onnx_report_warning(&rep, warning, sizeof warning))
      fprintf(stderr, "meshpipe: warning: %s: %s\n", path, warning);
    onnx_report_free(&rep);
    return st;
  }
  return graph_load(path, out, err);
}

mp_status cli_op_times(const char *path, const graph *g, const chip *c, graph **timed, optimes **ot, mp_error *err) {
  *timed = NULL;
  *ot = NULL;
  if (!path) return MP_OK;
  mp_status st = optimes_load(path, g, ot, err);
  if (st == MP_OK) st = optimes_apply(*ot, g, chip_typical_core(c).flops, timed, err);
  if (st != MP_OK) {
    optimes_free(*ot);
    *ot = NULL;
  }
  return st;
}

char *cli_count(long n, const char *one, const char *many, char *buf, size_t len) {
  snprintf(buf, len, "%ld %s", n, n == 1 ? one : many);
  return buf;
}

int cli_parse_int(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out) {
  char *end = NULL;
  errno = 0;
  long v = strtol(text, &end, 10);
  if (errno || end == text || *end)
    return cli_usage(cmd, "%s expects a whole number, got '%s'", opt, text);
  if (v < lo || v > hi) return cli_usage(cmd, "%s must be between %ld and %ld, got %ld", opt, lo, hi, v);
  *out = v;
  return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double *out) {
  char *end = NULL;
  errno = 0;
  double v = strtod(text, &end);
  if (errno || end == text || *end || !isfinite(v))
    return cli_usage(cmd, "%s expects a number, got '%s'", opt, text);
  if (v < lo) return cli_usage(cmd, "%s must be at least %g, got %g", opt, lo, v);
  *out = v;
  return 0;
}

char *cli_fmt_si(double v, char *buf, size_t n) {
  static const char *const unit[] = {"", " k", " M", " G", " T", " P", " E"};
  int u = 0;
  while (v >= 1000.0 && u < 6) {
    v /= 1000.0;
    u++;
  }
  snprintf(buf, n, u ? "%.3g%s" : "%.4g%s", v, unit[u]);
  return buf;
}

char *cli_fmt_bytes(double bytes, char *buf, size_t n) {
  static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (bytes >= 1024.0 && u < 5) {
    bytes /= 1024.0;
    u++;
  }
  snprintf(buf, n, u ? "%.3g %s" : "%.0f %s", bytes, unit[u]);
  return buf;
}

int cli_graph_option(const char *cmd, int opt, const char *arg, cli_graph_opts *go) {
  long v;
  switch (opt) {
  case CLI_OPT_DTYPE: go->dtype = arg; return 0;
  case CLI_OPT_BATCH:
    if (cli_parse_int(cmd, "--batch", arg, 1, 1 << 20, &v)) return 2;
    go->batch = (int)v;
    return 0;
  case CLI_OPT_NO_FUSE: go->no_fuse = 1; return 0;
  default: return cli_usage(cmd, "internal: option %d is not a graph option", opt);
  }
}

int cli_method_option(const char *cmd, int opt, const char *arg, method_options *mo) {
  long v;
  switch (opt) {
  case CLI_OPT_SEED:
    if (cli_parse_int(cmd, "--seed", arg, 0, 9007199254740991L, &v)) return 2;
    mo->seed = (uint64_t)v;
    return 0;
  case CLI_OPT_TAU: return cli_parse_double(cmd, "--tau", arg, 0, &mo->tau) ? 2 : 0;
  case CLI_OPT_MAX_STEP:
    if (cli_parse_int(cmd, "--max-step", arg, 0, 1000000000L, &v)) return 2;
    mo->max_step = (int)v;
    return 0;
  case CLI_OPT_EPISODES:
    if (cli_parse_int(cmd, "--episodes", arg, 0, 1000000000L, &v)) return 2;
    mo->episodes = (int)v;
    return 0;
  case CLI_OPT_POLICY: mo->policy = arg; return 0;
  case CLI_OPT_INIT: mo->init = arg; return 0;
  case CLI_OPT_OBJECTIVE:
    if (!objective_parse(arg, &mo->objective))
      return cli_usage(cmd, "--objective must be time, energy or edp, not '%s'", arg);
    return 0;
  default: return cli_usage(cmd, "internal: option %d is not a method option", opt);
  }
}

int cli_sim_option(const char *cmd, int opt, const char *arg, sim_options *so) {
  long v;
  switch (opt) {
  case 'M':
    if (cli_parse_int(cmd, "--microbatches", arg, 1, 1000000L, &v)) return 2;
    so->microbatches = (int)v;
    return 0;
  case CLI_OPT_MAX_MICRO:
    if (cli_parse_int(cmd, "--max-microbatches", arg, 4, 1000000L, &v)) return 2;
    so->max_microbatches = (int)v;
    return 0;
  case 'l':
    if (cli_parse_int(cmd, "--links", arg, 0, 100000L, &v)) return 2;
    so->top_links = (int)v;
    return 0;
  case 'f': so->fast_gather = 1; return 0;
  case CLI_OPT_FAST_STREAMS: so->fast_streams = 1; return 0;
  case 'v': so->verbose = 1; return 0;
  default: return cli_usage(cmd, "internal: option %d is not a simulator option", opt);
  }
}

void cli_train_opts_init(cli_train_opts *t) {
  memset(t, 0, sizeof *t);
  train_options_default(&t->o);
}

int cli_train_option(const char *cmd, int opt, const char *arg, cli_train_opts *t) {
  int v;
  switch (opt) {
  case CLI_OPT_MODE:
    if (strcmp(arg, "train") != 0 && strcmp(arg, "infer") != 0)
      return cli_usage(cmd, "--mode is infer or train, got '%s'", arg);
    t->train = strcmp(arg, "train") == 0;
    return 0;
  case CLI_OPT_OPTIMIZER:
    if ((v = train_optimizer_parse(arg)) < 0) return cli_usage(cmd, "--optimizer is sgd, momentum or adam, got '%s'", arg);
    t->o.optimizer = (train_optimizer)v;
    break;
  case CLI_OPT_SCHEDULE:
    if ((v = train_schedule_parse(arg)) < 0) return cli_usage(cmd, "--schedule is gpipe, 1f1b or zb, got '%s'", arg);
    t->o.schedule = (train_schedule)v;
    break;
  case CLI_OPT_RECOMPUTE: t->o.recompute = 1; break;
  default: return cli_usage(cmd, "internal: option %d is not a training option", opt);
  }
  t->given = 1;
  return 0;
}

int cli_train_check(const char *cmd, cli_train_opts *t, int microbatches) {
  if (t->given && !t->train) return cli_usage(cmd, "--optimizer, --schedule and --recompute need --mode train");
  if (t->train && microbatches > 0) t->o.microbatches = microbatches;
  return 0;
}
