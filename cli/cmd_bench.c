/* meshpipe bench: runs the fixed regression suite (bench.h), writes BENCH.json and, with a baseline,
 * prints what changed and fails on a regression.  Each case runs in a worker process of its own
 * (one SimGrid engine per process), through the sweep's worker pool. */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "cli.h"
#include "fidelity.h"
#include "jsonio.h"
#include "method.h"
#include "progress.h"
#include "sweep.h"
#include "train.h"

static const char usage_text[] =
    "usage: meshpipe bench [--quick] [-o BENCH.json] [--baseline OLD.json] [--filter TEXT] [-j N] [-q]\n"
    "       meshpipe bench --fidelity [--quick] [--fast-streams] [--json FILE [--resume]] [--filter TEXT]\n"
    "                      [--methods a,b,...] [--plans DIR] [-j N] [-q]\n"
    "\n"
    "Runs the regression suite: every bundled model (traces/resnet50, vgg16, mobilenet_v2,\n"
    "transformer_encoder) on the bundled 4x4, 8x8 and 16x16 meshes with every method.  Per case it\n"
    "records the simulated throughput (samples_per_s), the analytical model's period and its gap to the\n"
    "optimal method's, the method's solve time and the simulator's uncached evaluations per second, with\n"
    "the machine and the meshpipe version, in BENCH.json.  Then the same models and meshes trained\n"
    "(--mode train, adam, 8 micro-batches a mini-batch): optimal, even and balanced under 1F1B and optimal\n"
    "under GPipe, keyed 'graph|chip|train-1f1b|method' ('train-gpipe'), with the samples/s of one simulated\n"
    "mini-batch and the training model's period, judged like the rest.\n"
    "\n"
    "With --baseline it prints a table of changes and exits 1 on a regression: a plan's throughput\n"
    "drops by more than 0.5% or it no longer fits memory (plans are deterministic, so this compares\n"
    "exactly, case by case, on any machine); a baseline case is missing (when both runs are of the\n"
    "same suite and filter); or a speed of the whole suite drops by more than 25%: the geometric\n"
    "mean over the cases of the change in 1 / solve time (cases where either run took >= 0.02 s) or\n"
    "in sim evaluations/s.  Speed is compared only when the baseline ran on the same CPU model and\n"
    "count; per-case speed changes are shown but judged only through the suite's mean, since one\n"
    "case's timing on a shared machine moves a lot.  --no-speed compares quality only.\n"
    "\n"
    "  --quick             the CI suite: every model on the 4x4 and 8x8 meshes, every method, with\n"
    "                      learning methods (rl) at 0 episodes (their greedy policy and polishing)\n"
    "                      and a shorter measurement of sim evaluations/s (0.1 s instead of 0.5 s)\n"
    "  -o, --output FILE   where to write the results (default BENCH.json)\n"
    "  --baseline FILE     compare with an earlier BENCH.json\n"
    "  --filter TEXT       run only the cases whose key 'graph|chip|[mode|]method' contains TEXT\n"
    "  --no-speed          do not judge speed figures (they are still recorded and shown)\n"
    "  -j, --jobs N        cases run at once (default 1: speed figures are cleaner alone)\n"
    "  -q, --quiet         no progress and no result table (the diff table is still printed)\n"
    "  -h, --help          show this help\n"
    "\n"
    "With --fidelity it runs the fidelity matrix instead: every model of tests/models and every other\n"
    "graph of traces/ on 4x4, 8x8, 16x16 and 32x32 meshes with 1, 2, 4 and 8 MiB of SRAM per core\n"
    "(--quick: 4x4 and 8x8, 2 and 8 MiB).  Per case: optimal's plan, the model's period, the simulated\n"
    "steady period and their ratio, what sets the model's period, how the simulator measured its own,\n"
    "the term that makes most of the difference, and optimal's simulated throughput against the best\n"
    "plan of the other methods (--methods; default even, balanced, seed-split, greedy); then the\n"
    "summary.  --json FILE also writes every figure, rewritten as each case finishes (the ones still to\n"
    "run marked pending), so a run that is stopped keeps what it did; --resume takes the finished cases\n"
    "FILE already holds (same --methods and streams, the same graph and chip hashes) and runs the rest.\n"
    "--fast-streams simulates with the DRAM streams of a port batched (as simulate --fast-streams).\n"
    "--plans DIR (made if missing) keeps what was simulated: each chip a case ran on as\n"
    "DIR/CHIP.chip.json and every method's plan as DIR/GRAPH.CHIP.METHOD.plan.json, to replay with\n"
    "'meshpipe simulate -g GRAPH -c DIR/CHIP.chip.json -p PLAN' (GRAPH: tests/models/GRAPH.onnx or\n"
    "traces/GRAPH.json); 'partition' on that chip file makes the case's plans again.  Exits 1 when a\n"
    "case fails.  The full matrix takes about 9 minutes with -j 2 on 2 cores (the 32x32 cases\n"
    "dominate); --quick a few seconds; with --methods ...,rl hours.\n";

enum {
  OPT_QUICK = 256,
  OPT_BASELINE,
  OPT_FILTER,
  OPT_NO_SPEED,
  OPT_FIDELITY,
  OPT_JSON,
  OPT_METHODS,
  OPT_FAST_STREAMS,
  OPT_RESUME,
  OPT_PLANS
};

typedef struct bench_case {
  int graph, chip;
  const char *method;
  const char *mode; /* NULL: inference; else the training mode (bench_item) */
  char key[160];
  int finished;
  bench_entry entry;
} bench_case;

typedef struct bench_ctx {
  graph **graphs;
  chip **chips;
  bench_case *cases;
  double speed_s;
  long episodes; /* learning methods' episodes (-1: their default) */
  int done, failed, show;
  progress bar;
} bench_ctx;

static mp_status job(void *ctx, int item, char *line, size_t cap, mp_error *err) {
  bench_ctx *b = ctx;
  const bench_case *c = &b->cases[item];
  sweep_row row;
  method_options mo;
  method_options_default(&mo);
  mo.episodes = b->episodes;
  train_options to;
  if (c->mode) { /* "train-1f1b", "train-gpipe": adam, the default micro-batches */
    train_options_default(&to);
    to.schedule = (train_schedule)train_schedule_parse(c->mode + strlen("train-"));
    mo.train = &to;
  }
  mp_status st = sweep_run_one(b->graphs[c->graph], b->chips[c->chip], c->method, &mo, NULL, b->speed_s, &row, err);
  if (st != MP_OK) return st;
  snprintf(line, cap, "%d %d %.17g %.17g %.17g %.17g %.17g %016llx\n", row.feasible, row.n_stages,
           row.samples_per_s, row.model_period_s, row.latency_s, row.solve_s, row.evals_per_s,
           (unsigned long long)row.plan_hash);
  return MP_OK;
}

static mp_status done(void *ctx, int item, const char *line, const mp_error *failure, mp_error *err) {
  bench_ctx *b = ctx;
  bench_case *c = &b->cases[item];
  bench_entry *e = &c->entry;
  unsigned long long hash = 0;
  b->done++;
  if (line && sscanf(line, "%d %d %lg %lg %lg %lg %lg %llx", &e->feasible, &e->stages, &e->samples_per_s,
                     &e->model_period_s, &e->latency_s, &e->solve_s, &e->evals_per_s, &hash) == 8) {
    e->plan_hash = hash;
    c->finished = 1;
  } else {
    if (b->show && b->bar.tty && b->bar.shown) fprintf(stderr, "\r%*s\r", b->bar.last_len, "");
    fprintf(stderr, "meshpipe: bench case %s: %s\n", c->key, line ? "unreadable result" : failure->msg);
    b->failed++;
  }
  if (b->show) progress_update(&b->bar, b->done, "cases");
  (void)err;
  return MP_OK;
}

static const char *pct(double v, char *buf, size_t n) {
  if (isnan(v))
    snprintf(buf, n, "-");
  else
    snprintf(buf, n, "%+.2f%%", 100 * v);
  return buf;
}

static void print_results(const bench_report *r) {
  char gap[32];
  printf("%-44s %-8s %14s %9s %10s %12s\n", "case", "feasible", "samples/s", "gap", "solve s", "sim evals/s");
  for (int i = 0; i < r->n; i++) {
    const bench_entry *e = &r->entries[i];
    printf("%-44s %-8s %14.6g %9s %10.3g %12.4g\n", e->key, e->feasible ? "yes" : "no", e->samples_per_s,
           pct(e->gap, gap, sizeof gap), e->solve_s, e->evals_per_s);
  }
}

static void print_diff(const bench_diff *d, const char *baseline, int no_speed) {
  static const char *const verdict[] = {"same", "better", "worse", "new", "missing"};
  char q[32], s[32], v[32];
  printf("\nagainst %s (speed %s):\n", baseline,
         no_speed              ? "shown, not judged: --no-speed"
         : d->speed_compared ? "compared: same CPU model and count"
                             : "not compared: another kind of machine");
  printf("%-44s %14s %14s %9s %11s %11s  %s\n", "case", "old samples/s", "new samples/s", "change", "solve speed",
         "sim evals/s", "verdict");
  for (int i = 0; i < d->n; i++) {
    const bench_diff_row *row = &d->rows[i];
    const bench_entry *any = row->now ? row->now : row->old;
    char old_thr[32] = "-", new_thr[32] = "-";
    if (row->old) snprintf(old_thr, sizeof old_thr, "%.6g", row->old->samples_per_s);
    if (row->now) snprintf(new_thr, sizeof new_thr, "%.6g", row->now->samples_per_s);
    printf("%-44s %14s %14s %9s %11s %11s  %s%s%s%s\n", any->key, old_thr, new_thr, pct(row->quality, q, sizeof q),
           pct(row->solve, s, sizeof s), pct(row->evals, v, sizeof v), row->fails ? "REGRESSION" : verdict[row->verdict],
           row->why[0] ? " (" : "", row->why, row->why[0] ? ")" : "");
  }
  if (d->speed_compared)
    printf("suite speed: solve %s over %d cases (those taking >= 0.02 s), sim evaluations/s %s over %d cases%s%s\n",
           pct(d->solve, s, sizeof s), d->n_solve, pct(d->evals, v, sizeof v), d->n_evals,
           d->speed_why[0] ? ": REGRESSION, " : "", d->speed_why);
  printf("%d regression%s\n", d->failures, d->failures == 1 ? "" : "s");
}

/* Index of path in list (adding it when new), or -1 when the list is full. */
static int intern(const char **list, int *n, int max, const char *path) {
  for (int i = 0; i < *n; i++)
    if (strcmp(list[i], path) == 0) return i;
  if (*n == max) return -1;
  list[*n] = path;
  return (*n)++;
}

#define MAX_FILES 16

/* ---- bench --fidelity ---------------------------------------------------------------------------- */

typedef struct fidelity_bar {
  progress bar;
  int show, done, total;
} fidelity_bar;

static void fidelity_progress(void *ctx, int done, int total) {
  fidelity_bar *f = ctx;
  f->done = done;
  f->total = total;
  if (f->show) progress_update(&f->bar, done, "of %d cases", total);
}

/* fidelity_resume from path, saying on stderr what it took; a missing file is a run from the start. */
static mp_status resume_fidelity(fidelity_matrix *m, const char *path, int quiet, mp_error *err) {
  if (access(path, F_OK) != 0) {
    if (!quiet) fprintf(stderr, "meshpipe: %s does not exist yet: every case runs\n", path);
    return MP_OK;
  }
  int taken, stale;
  mp_status st = fidelity_resume(m, path, &taken, &stale, err);
  if (st == MP_OK && !quiet) {
    fprintf(stderr, "meshpipe: %d finished cases taken from %s", taken, path);
    if (stale) fprintf(stderr, "; %d whose graph or chip has changed since run again", stale);
    fputc('\n', stderr);
  }
  return st;
}

static int run_fidelity(int argc, char **argv) {
  static const struct option options[] = {
      {"fidelity", no_argument, NULL, OPT_FIDELITY}, {"quick", no_argument, NULL, OPT_QUICK},
      {"fast-streams", no_argument, NULL, OPT_FAST_STREAMS},
      {"json", required_argument, NULL, OPT_JSON},   {"filter", required_argument, NULL, OPT_FILTER},
      {"methods", required_argument, NULL, OPT_METHODS}, {"jobs", required_argument, NULL, 'j'},
      {"quiet", no_argument, NULL, 'q'},             {"help", no_argument, NULL, 'h'},
      {"resume", no_argument, NULL, OPT_RESUME},     {"plans", required_argument, NULL, OPT_PLANS},
      {0}};
  int quick = 0, quiet = 0, fast_streams = 0, resume = 0, opt, n_methods = 0;
  long jobs = 1;
  const char *json = NULL, *filter = NULL, *plans = NULL, *methods[FIDELITY_MAX_METHODS];
  char list[256] = "";
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "j:qh", options, NULL)) != -1) {
    switch (opt) {
    case OPT_FIDELITY: break;
    case OPT_QUICK: quick = 1; break;
    case OPT_FAST_STREAMS: fast_streams = 1; break;
    case OPT_RESUME: resume = 1; break;
    case OPT_JSON: json = optarg; break;
    case OPT_FILTER: filter = optarg; break;
    case OPT_PLANS: plans = optarg; break;
    case 'q': quiet = 1; break;
    case 'h': return cli_help(usage_text);
    case 'j':
      if (cli_parse_int("bench", "--jobs", optarg, 1, 1024, &jobs)) return 2;
      break;
    case OPT_METHODS:
      if (strlen(optarg) >= sizeof list) return cli_usage("bench", "--methods is too long");
      snprintf(list, sizeof list, "%s", optarg);
      for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
        if (!method_find(t)) return cli_usage("bench", "--methods: unknown method '%s'", t);
        if (n_methods == FIDELITY_MAX_METHODS - 1)
          return cli_usage("bench", "--methods: at most %d methods beside optimal", FIDELITY_MAX_METHODS - 1);
        methods[n_methods++] = t;
      }
      break;
    case ':': return cli_usage("bench", "option '%s' needs a value", argv[optind - 1]);
    default:
      return cli_usage("bench", "option '%s' does not apply to --fidelity", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage("bench", "unexpected argument '%s'", argv[optind]);
  if (resume && !json) return cli_usage("bench", "--resume needs --json FILE, the run to resume");
  mp_error err;
  err_clear(&err);
  fidelity_matrix *m = NULL;
  fidelity_bar f = {.show = !quiet};
  int code = 0;
  mp_status st = fidelity_new(MESHPIPE_DATA_DIR, quick, n_methods ? methods : NULL, n_methods, &m, &err);
  if (st == MP_OK) {
    m->fast_streams = fast_streams;
    m->save_path = json;
    m->plans_dir = plans;
    if (resume) st = resume_fidelity(m, json, quiet, &err);
  }
  if (st == MP_OK) {
    progress_init(&f.bar, stderr, "fidelity", -1, 10.0, -1);
    st = fidelity_run(m, (int)jobs, filter, fidelity_progress, &f, &err);
    if (f.show && f.total > 0) progress_finish(&f.bar, f.done, "of %d cases", f.total);
  }
  if (st != MP_OK) {
    fidelity_free(m);
    return cli_fail(&err);
  }
  int failed = 0;
  for (int i = 0; i < m->n_rows; i++)
    if (!m->rows[i].done && !m->rows[i].skipped) {
      fprintf(stderr, "meshpipe: fidelity case %s|%s: %s\n", m->graphs[m->rows[i].graph]->name,
              m->chip_labels[m->rows[i].chip], m->rows[i].failure);
      failed++;
    }
  strbuf table = {0};
  fidelity_table(m, &table);
  if (!quiet || !json) fputs(table.s ? table.s : "", stdout);
  strbuf_clear(&table);
  if (json && fidelity_save(m, json, &err) != MP_OK) code = cli_fail(&err);
  if (code == 0 && failed) code = cli_fail(&(mp_error){MP_RUN, "fidelity cases failed (see above)"});
  if (code == 0 && fflush(stdout) != 0) code = cli_fail(&(mp_error){MP_OUTPUT, "cannot write to standard output"});
  fidelity_free(m);
  return code;
}

static int run(int argc, char **argv) {
  static const struct option options[] = {
      {"quick", no_argument, NULL, OPT_QUICK},          {"output", required_argument, NULL, 'o'},
      {"baseline", required_argument, NULL, OPT_BASELINE}, {"filter", required_argument, NULL, OPT_FILTER},
      {"jobs", required_argument, NULL, 'j'},           {"quiet", no_argument, NULL, 'q'},
      {"no-speed", no_argument, NULL, OPT_NO_SPEED},
      {"help", no_argument, NULL, 'h'},                 {0}};
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--fidelity") == 0) return run_fidelity(argc, argv);
  int quick = 0, quiet = 0, no_speed = 0, opt;
  long jobs = 1;
  const char *out = "BENCH.json", *baseline = NULL, *filter = "";
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "o:j:qh", options, NULL)) != -1) {
    switch (opt) {
    case OPT_QUICK: quick = 1; break;
    case 'o': out = optarg; break;
    case OPT_BASELINE: baseline = optarg; break;
    case OPT_FILTER: filter = optarg; break;
    case 'q': quiet = 1; break;
    case OPT_NO_SPEED: no_speed = 1; break;
    case 'h': return cli_help(usage_text);
    case 'j':
      if (cli_parse_int("bench", "--jobs", optarg, 1, 1024, &jobs)) return 2;
      break;
    case ':': return cli_usage("bench", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("bench", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage("bench", "unexpected argument '%s'", argv[optind]);
  if (strlen(filter) >= sizeof ((bench_report *)0)->filter) return cli_usage("bench", "--filter is too long");

  mp_error err;
  err_clear(&err);
  bench_item *items = NULL;
  int n_items = 0, n_graphs = 0, n_chips = 0, n_cases = 0, code = 0;
  const char *graph_files[MAX_FILES], *chip_files[MAX_FILES];
  graph *graphs[MAX_FILES] = {0};
  chip *chips[MAX_FILES] = {0};
  bench_case *cases = NULL;
  int *order = NULL;
  bench_report report, old;
  bench_diff diff;
  memset(&report, 0, sizeof report);
  memset(&old, 0, sizeof old);
  memset(&diff, 0, sizeof diff);
  mp_status st = bench_suite(quick, &items, &n_items, &err);
  /* The baseline is read first, so that a bad one fails before the long run. */
  if (st == MP_OK && baseline) st = bench_load(baseline, &old, &err);
  if (st == MP_OK && (!(cases = calloc((size_t)n_items, sizeof *cases)) || !(order = calloc((size_t)n_items, sizeof *order))))
    st = err_nomem(&err);
  for (int i = 0; i < n_items && st == MP_OK; i++) {
    int g = intern(graph_files, &n_graphs, MAX_FILES, items[i].graph_file);
    int c = intern(chip_files, &n_chips, MAX_FILES, items[i].chip_file);
    char path[1024];
    if (g < 0 || c < 0) {
      st = err_set(&err, MP_RUN, "the bench suite names more than %d files", MAX_FILES);
      break;
    }
    if (!graphs[g]) {
      snprintf(path, sizeof path, "%s/%s", MESHPIPE_DATA_DIR, graph_files[g]);
      if ((st = cli_load_graph(path, NULL, &graphs[g], &err)) != MP_OK) break;
    }
    if (!chips[c]) {
      snprintf(path, sizeof path, "%s/%s", MESHPIPE_DATA_DIR, chip_files[c]);
      if ((st = chip_load(path, &chips[c], &err)) != MP_OK) break;
    }
    bench_case *bc = &cases[n_cases];
    bc->graph = g;
    bc->chip = c;
    bc->method = items[i].method;
    bc->mode = items[i].mode;
    snprintf(bc->key, sizeof bc->key, "%s|%s|%s%s%s", graphs[g]->name, chips[c]->name, bc->mode ? bc->mode : "",
             bc->mode ? "|" : "", bc->method);
    if (!strstr(bc->key, filter)) continue;
    bench_entry *e = &bc->entry;
    snprintf(e->key, sizeof e->key, "%s", bc->key);
    snprintf(e->graph, sizeof e->graph, "%s", graphs[g]->name);
    snprintf(e->chip, sizeof e->chip, "%s", chips[c]->name);
    snprintf(e->method, sizeof e->method, "%s", bc->method);
    snprintf(e->mode, sizeof e->mode, "%s", bc->mode ? bc->mode : "");
    order[n_cases] = n_cases;
    n_cases++;
  }
  if (st == MP_OK && n_cases == 0) st = err_set(&err, MP_USAGE, "--filter '%s' matches no case of the suite", filter);
  if (st != MP_OK) {
    code = cli_fail(&err);
    goto cleanup;
  }

  bench_ctx ctx = {graphs, chips, cases, quick ? 0.1 : 0.5, quick ? 0 : -1, 0, 0, !quiet, {0}};
  progress_init(&ctx.bar, stderr, "bench", n_cases, 10.0, -1);
  st = sweep_pool_run(order, n_cases, (int)jobs, job, done, NULL, 0, &ctx, &err);
  if (ctx.show) progress_finish(&ctx.bar, ctx.done, "cases");
  if (st == MP_OK && ctx.failed)
    st = err_set(&err, MP_RUN, "%d of %d bench cases failed (see above)", ctx.failed, n_cases);

  snprintf(report.version, sizeof report.version, "%s", MESHPIPE_VERSION);
  time_t now = time(NULL);
  struct tm utc;
  gmtime_r(&now, &utc);
  strftime(report.date, sizeof report.date, "%Y-%m-%dT%H:%M:%SZ", &utc);
  report.quick = quick;
  snprintf(report.filter, sizeof report.filter, "%s", filter);
  bench_machine_probe(&report.machine);
  for (int i = 0; i < n_cases && st == MP_OK; i++)
    if (cases[i].finished) st = bench_add(&report, &cases[i].entry, &err);
  if (st != MP_OK) {
    code = cli_fail(&err);
    goto cleanup;
  }
  bench_fill_gaps(&report);
  if ((st = bench_save(&report, out, &err)) != MP_OK) {
    code = cli_fail(&err);
    goto cleanup;
  }
  if (!quiet) {
    print_results(&report);
    printf("wrote %s: %d cases on %s (%d CPUs)\n", out, report.n, report.machine.cpu, report.machine.cpus);
  }
  if (baseline) {
    bench_limits lim;
    bench_limits_default(&lim);
    if (no_speed) lim.speed_drop = INFINITY;
    if ((st = bench_diff_new(&old, &report, &lim, &diff, &err)) != MP_OK) {
      code = cli_fail(&err);
      goto cleanup;
    }
    print_diff(&diff, baseline, no_speed);
    if (diff.failures > 0) code = 1;
  }
  if (fflush(stdout) != 0) code = cli_fail(&(mp_error){MP_OUTPUT, "cannot write to standard output"});

cleanup:
  bench_diff_clear(&diff);
  bench_report_clear(&report);
  bench_report_clear(&old);
  for (int i = 0; i < MAX_FILES; i++) {
    graph_free(graphs[i]);
    chip_free(chips[i]);
  }
  free(cases);
  free(order);
  free(items);
  return code;
}

const cli_command cmd_bench = {"bench", "run the regression suite; compare with a baseline BENCH.json", run};
