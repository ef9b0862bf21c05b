/* meshpipe sweep: the cartesian product of chip variants x graphs x methods, each case partitioned and
 * simulated in a worker process of its own, one CSV row per case appended as it finishes; a re-run
 * skips the cases the file already holds.  Under mpirun (when built with Open MPI) the cases are dealt
 * over the ranks round-robin and rank 0 alone writes the file. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MESHPIPE_HAVE_MPI
#include <mpi.h>
#endif

#include "cli.h"
#include "jsonio.h"
#include "proc.h"
#include "progress.h"
#include "ranks.h"
#include "sweep.h"
#include "sweep_pool.h"

static const char usage_text[] =
    "usage: meshpipe sweep -g GRAPH[,GRAPH...] -o RESULTS.csv [-c BASE_CHIP] [--vary KEY=V1,V2,...]...\n"
    "                      [-m METHOD[,METHOD...]] [-j N] [-M M] [method and graph options] [-q]\n"
    "\n"
    "Runs every combination of chip variant, graph and method: partitions the graph for the variant\n"
    "with the method, simulates the plan, and appends one CSV row per case to RESULTS.csv as cases\n"
    "finish.  The chip variants are the product of the --vary axes: KEY is a dotted path into the chip\n"
    "JSON (noc.bandwidth, noc.latency, core.sram_bytes, core.flops, dram.bandwidth, ...) whose values\n"
    "are numbers, optionally with a suffix k M G T (x1000^n) or Ki Mi Gi Ti (x1024^n); KEY 'mesh'\n"
    "takes WxH (e.g. 4x4,8x8; DRAM ports keep their relative place).  Every variant is checked like\n"
    "a chip file before any case runs.\n"
    "\n"
    "Resuming: each row starts with its case key ('mesh=4x4;noc.bandwidth=3.2e10|resnet50|optimal').\n"
    "Re-running the same command skips the cases already in RESULTS.csv, so a killed sweep (even by\n"
    "kill -9) resumes without redoing or losing work; a last row cut off by the kill is dropped.  Rows\n"
    "are in the order cases finish: sort two files to compare them (all columns but solve_s, the\n"
    "method's wall-clock time, are deterministic).  A case that fails is reported and gets no row,\n"
    "so a re-run tries it again; the exit status is then 1.\n"
    "\n"
    "Columns: case, one per --vary key, graph, batch (samples per micro-batch), method, feasible (plan\n"
    "fits SRAM: 1/0), stages, model_period_s (analytical, per micro-batch), samples_per_s (simulated\n"
    "throughput, batch / period) and latency_s (of one micro-batch), busiest_link and its\n"
    "busiest_link_utilisation, total_sram_bytes, noc_bandwidth (bytes/s of one link), cores, options\n"
    "(what every case ran with: seed, objective, method and simulator options, mode), inputs (a hash of\n"
    "the case's chip variant, graph and op work), solve_s; with a base chip that has energy figures also\n"
    "energy_j_per_sample, power_w, samples_per_j and tops_per_w (simulated) before options.  A resume\n"
    "whose options or inputs differ from a row's is refused naming the line.\n"
    "scripts/plot_sweep.py draws it.\n"
    "\n"
    "  -g, --graph LIST      graph files (.json or .onnx), comma-separated; their names must differ\n"
    "  -c, --chip FILE       the base chip (default platforms/mesh8x8.json)\n"
    "      --vary KEY=VALS   one axis of chip variants; repeat for more axes\n"
    "  -m, --method LIST     partitioners, comma-separated (default optimal; 'meshpipe help' lists them)\n"
    "  -o, --output FILE     the CSV to create or resume (required)\n"
    "  -j, --jobs N          cases run at once, each in its own process (default: the number of CPUs;\n"
    "                        1 per rank under mpirun)\n"
    "  -M, --microbatches M  micro-batches per simulation (default: until steady state)\n"
    "      --seed S, --tau T, --max-step N, --episodes N, --policy FILE, --init METHOD, --objective O\n"
    "                        method options, the same for every case: as for 'meshpipe partition'\n"
    "      --dtype T, --batch N, --no-fuse\n"
    "                        ONNX graphs only: as for 'meshpipe import'\n"
    "      --op-times LIST   measured op times, one file per graph in -g's order (see 'meshpipe partition\n"
    "                        --help'), on one core of the base chip's typical type: they scale with\n"
    "                        core.flops like the rest of the graph\n"
    "  -q, --quiet           no progress bar\n"
    "  -h, --help            show this help\n"
    CLI_TRAIN_HELP
    "                          With --mode train each case trains its plan for one mini-batch of -M micro-\n"
    "                          batches (default 8): model_period_s is the training model's, samples_per_s\n"
    "                          and latency_s (the mini-batch's time) simulated, no busiest link, and two\n"
    "                          columns more before options: bubble and sram_peak_bytes (the largest\n"
    "                          per-core peak)\n"
    "\n"
    "Many machines: 'mpirun -np N meshpipe sweep ...' deals the cases over N ranks (each running its\n"
    "cases with --jobs workers) and rank 0 writes the same rows a single process would.\n";

enum { OPT_VARY = CLI_OPT_FIRST_FREE };
enum { TAG_ROW = 1, TAG_FAIL, TAG_DONE };

typedef struct run_ctx {
  sweep *s;
  const char *out_path;
  int fd;
  int rank, size;
  int todo, finished, failed, ranks_done;
  double t0;
  int show;         /* print progress (rank 0, not --quiet) */
  progress bar;
} run_ctx;

static void show_progress(run_ctx *r) {
  if (r->show) progress_update(&r->bar, r->finished, "cases, %d failed", r->failed);
}

/* A failed case: the row is not written, so a re-run tries it again. */
static void report_failure(run_ctx *r, const char *text) {
  if (r->show && r->bar.tty && r->bar.shown) fprintf(stderr, "\r%*s\r", r->bar.last_len, "");
  fprintf(stderr, "meshpipe: %s\n", text);
  r->failed++;
}

/* Rank 0: one finished case, from a local worker or another rank. */
static mp_status record(run_ctx *r, const char *line, const char *failure, mp_error *err) {
  r->finished++;
  if (line) {
    mp_status st = sweep_csv_append(r->fd, r->out_path, line, strlen(line), err);
    if (st != MP_OK) return st;
  } else {
    report_failure(r, failure);
  }
  show_progress(r);
  return MP_OK;
}

static mp_status job(void *ctx, int item, char *line, size_t cap, mp_error *err) {
  run_ctx *r = ctx;
  sweep_row row;
  mp_status st = sweep_run_case(r->s, item, &row, err);
  if (st != MP_OK) return st;
  if (sweep_csv_row(r->s, item, &row, line, cap) < 0)
    return err_set(err, MP_RUN, "case %s: the row is longer than %d bytes", r->s->cases[item].key, SWEEP_LINE_MAX);
  return MP_OK;
}

static mp_status done(void *ctx, int item, const char *line, const mp_error *failure, mp_error *err) {
  run_ctx *r = ctx;
  char text[SWEEP_LINE_MAX + MP_ERROR_MSG_MAX];
  if (!line) snprintf(text, sizeof text, "case %s: %s", r->s->cases[item].key, failure->msg);
#ifdef MESHPIPE_HAVE_MPI
  if (r->rank > 0) {
    const char *msg = line ? line : text;
    if (MPI_Send(msg, (int)strlen(msg) + 1, MPI_CHAR, 0, line ? TAG_ROW : TAG_FAIL, MPI_COMM_WORLD) != MPI_SUCCESS)
      return err_set(err, MP_RUN, "rank %d: cannot send a row to rank 0", r->rank);
    return MP_OK;
  }
#endif
  return record(r, line, line ? NULL : text, err);
}

#ifdef MESHPIPE_HAVE_MPI
/* Rank 0: takes one message from another rank (blocking when wait is set).  *got says whether one came. */
static mp_status receive(run_ctx *r, int wait, int *got, mp_error *err) {
  MPI_Status status;
  int flag = 1;
  *got = 0;
  if (wait)
    MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
  else
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
  if (!flag) return MP_OK;
  int n = 0;
  MPI_Get_count(&status, MPI_CHAR, &n);
  char *msg = malloc((size_t)n + 1);
  if (!msg) return err_nomem(err);
  MPI_Recv(msg, n, MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  msg[n] = '\0';
  *got = 1;
  mp_status st = MP_OK;
  if (status.MPI_TAG == TAG_DONE)
    r->ranks_done++;
  else
    st = record(r, status.MPI_TAG == TAG_ROW ? msg : NULL, msg, err);
  free(msg);
  return st;
}

static mp_status drain(void *ctx, mp_error *err) {
  int got = 1;
  mp_status st = MP_OK;
  while (st == MP_OK && got) st = receive(ctx, 0, &got, err);
  return st;
}
#endif

/* Splits a comma-separated list into dst (pointers into the modified text); returns the count, or -1. */
static int split_list(char *text, char **dst, int max) {
  int n = 0;
  for (char *p = text;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (!*p || n == max) return -1;
    dst[n++] = p;
    if (!comma) return n;
    p = comma + 1;
  }
}

#define MAX_LIST 64

/* Everything up to the sweep: options, chip, axes, graphs.  Returns an exit status (0: *out built). */
typedef struct sweep_args {
  char *graphs, *methods, *times;
  const char *chip, *out;
  const char *vary[SWEEP_MAX_AXES + 1];
  int n_vary;
  long jobs, micro;
  method_options mo;
  cli_graph_opts go;
  cli_train_opts to;
  int quiet, help;
} sweep_args;

static int parse_args(int argc, char **argv, sweep_args *a) {
  static const struct option options[] = {
      {"graph", required_argument, NULL, 'g'},   {"chip", required_argument, NULL, 'c'},
      {"vary", required_argument, NULL, OPT_VARY}, {"method", required_argument, NULL, 'm'},
      {"output", required_argument, NULL, 'o'},  {"jobs", required_argument, NULL, 'j'},
      {"microbatches", required_argument, NULL, 'M'}, CLI_METHOD_OPTIONS, CLI_GRAPH_OPTIONS, CLI_OP_TIMES_OPTION,
      CLI_TRAIN_OPTIONS,                         {"quiet", no_argument, NULL, 'q'},         {"help", no_argument, NULL, 'h'},
      {0}};
  memset(a, 0, sizeof *a);
  a->chip = CLI_DEFAULT_CHIP;
  a->micro = 0; /* steady state */
  method_options_default(&a->mo);
  cli_train_opts_init(&a->to);
  a->go = (cli_graph_opts)CLI_GRAPH_OPTS_DEFAULT;
  optind = 0;
  opterr = 0;
  int opt;
  while ((opt = getopt_long(argc, argv, "g:c:m:o:j:M:qh", options, NULL)) != -1) {
    switch (opt) {
    case 'g': a->graphs = optarg; break;
    case 'c': a->chip = optarg; break;
    case 'm': a->methods = optarg; break;
    case 'o': a->out = optarg; break;
    case 'q': a->quiet = 1; break;
    case 'h': a->help = 1; return 0;
    case 'j':
      if (cli_parse_int("sweep", "--jobs", optarg, 1, 1024, &a->jobs)) return 2;
      break;
    case 'M':
      if (cli_parse_int("sweep", "--microbatches", optarg, 1, 100000, &a->micro)) return 2;
      break;
    CLI_METHOD_OPTION_CASES:
      if (cli_method_option("sweep", opt, optarg, &a->mo)) return 2;
      break;
    CLI_GRAPH_OPTION_CASES:
      if (cli_graph_option("sweep", opt, optarg, &a->go)) return 2;
      break;
    case CLI_OPT_OP_TIMES: a->times = optarg; break;
    CLI_TRAIN_OPTION_CASES:
      if (cli_train_option("sweep", opt, optarg, &a->to)) return 2;
      break;
    case OPT_VARY:
      if (a->n_vary == SWEEP_MAX_AXES) return cli_usage("sweep", "more than %d --vary axes", SWEEP_MAX_AXES);
      a->vary[a->n_vary++] = optarg;
      break;
    case ':': return cli_usage("sweep", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("sweep", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (optind < argc) return cli_usage("sweep", "unexpected argument '%s'", argv[optind]);
  if (!a->graphs) return cli_usage("sweep", "needs -g GRAPH[,GRAPH...]");
  if (!a->out) return cli_usage("sweep", "needs -o RESULTS.csv");
  if (cli_train_check("sweep", &a->to, (int)a->micro)) return 2;
  if (a->to.train) { /* -M is the mini-batch's micro-batches, not the inference simulation's */
    a->micro = 0;
    a->mo.train = &a->to.o;
  }
  return 0;
}

/* Builds the sweep the arguments describe; returns an exit status (0: *out built).  Prints errors
 * when loud is set. */
static int build_sweep(sweep_args *a, int loud, sweep **out) {
  char *graph_paths[MAX_LIST], *method_names[MAX_LIST], *time_paths[MAX_LIST];
  char default_method[] = "optimal";
  int n_graphs = split_list(a->graphs, graph_paths, MAX_LIST);
  int n_times = a->times ? split_list(a->times, time_paths, MAX_LIST) : 0;
  int n_methods = a->methods ? split_list(a->methods, method_names, MAX_LIST) : 1;
  if (!a->methods) method_names[0] = default_method;
  if (n_graphs < 0) return loud ? cli_usage("sweep", "-g expects 1 to %d comma-separated graph files", MAX_LIST) : 2;
  if (n_methods < 0) return loud ? cli_usage("sweep", "-m expects 1 to %d comma-separated methods", MAX_LIST) : 2;
  if (a->times && n_times != n_graphs)
    return loud ? cli_usage("sweep", "--op-times expects one times file per graph (%d), comma-separated, got %d",
                            n_graphs, n_times)
                : 2;

  mp_error err;
  err_clear(&err);
  sweep_axis axes[SWEEP_MAX_AXES];
  graph *graphs[MAX_LIST];
  cJSON *base = NULL;
  int n_axes = 0, n_loaded = 0;
  mp_status st = jsonio_load(a->chip, &base, &err);
  for (int i = 0; i < a->n_vary && st == MP_OK; i++)
    if ((st = sweep_axis_parse(a->vary[i], &axes[i], &err)) == MP_OK) n_axes++;
  chip *c = NULL; /* the base chip: measured times are on its typical core */
  if (st == MP_OK && a->times) st = chip_from_json(base, a->chip, &c, &err);
  for (int i = 0; i < n_graphs && st == MP_OK; i++)
    if ((st = cli_load_graph(graph_paths[i], &a->go, &graphs[i], &err)) == MP_OK) {
      n_loaded++;
      graph *timed = NULL;
      optimes *ot = NULL;
      if (a->times && (st = cli_op_times(time_paths[i], graphs[i], c, &timed, &ot, &err)) == MP_OK) {
        graph_free(graphs[i]);
        graphs[i] = timed;
      }
      optimes_free(ot);
    }
  chip_free(c);
  if (st == MP_OK) {
    sim_options so;
    sim_options_init(&so);
    so.microbatches = (int)a->micro;
    st = sweep_new(base, a->chip, axes, n_axes, graphs, n_graphs, (const char *const *)method_names, n_methods,
                   &a->mo, &so, out, &err);
  } else {
    for (int i = 0; i < n_axes; i++) sweep_axis_clear(&axes[i]);
    for (int i = 0; i < n_loaded; i++) graph_free(graphs[i]);
  }
  cJSON_Delete(base);
  if (st == MP_OK) return 0;
  return loud ? cli_fail(&err) : err_exit_code(st);
}

static int run(int argc, char **argv) {
  int rank, ranks, code = ranks_start("sweep", 1, &rank, &ranks); /* its -j is its own worker pool */
  if (code != 0) return code;
  sweep_args a;
  sweep *s = NULL;
  unsigned char *done_mask = NULL;
  int *todo = NULL, *mine = NULL;
  run_ctx r;
  memset(&r, 0, sizeof r);
  r.fd = -1;
  mp_error err;
  err_clear(&err);

  /* Every rank meets the same usage and input errors: rank 0 alone says so. */
  int saved_stderr = rank > 0 ? ranks_mute() : -1;
  code = parse_args(argc, argv, &a);
  if (code == 0 && !a.help) code = build_sweep(&a, rank == 0, &s);
  ranks_unmute(saved_stderr);
  if (code == 0 && a.help) {
    if (rank == 0) {
      cli_help(usage_text);
      ranks_print_build();
    }
    goto cleanup;
  }
  int n_done = 0;
  if (code == 0 && rank == 0) {
    if (!(done_mask = malloc((size_t)s->n_cases)))
      code = cli_fail(&(mp_error){MP_NOMEM, "out of memory"});
    else if (sweep_csv_open(s, a.out, &r.fd, done_mask, &n_done, &err) != MP_OK)
      code = cli_fail(&err);
  }
#ifdef MESHPIPE_HAVE_MPI
  /* Every rank parsed the same arguments and files; rank 0 alone read the results file. */
  if (ranks > 1) {
    code = ranks_max(code);
    if (code == 0) {
      if (rank > 0 && !(done_mask = malloc((size_t)s->n_cases))) MPI_Abort(MPI_COMM_WORLD, 1);
      MPI_Bcast(done_mask, s->n_cases, MPI_UNSIGNED_CHAR, 0, MPI_COMM_WORLD);
    }
  }
#endif
  if (code != 0) goto cleanup;

  int n_todo = 0, n_mine = 0;
  todo = malloc((size_t)s->n_cases * sizeof *todo);
  mine = malloc((size_t)s->n_cases * sizeof *mine);
  if (!todo || !mine) {
    code = cli_fail(&(mp_error){MP_NOMEM, "out of memory"});
    goto cleanup;
  }
  for (int i = 0; i < s->n_cases; i++)
    if (!done_mask[i]) todo[n_todo++] = i;
  for (int j = rank; j < n_todo; j += ranks) mine[n_mine++] = todo[j];

  long jobs = a.jobs;
  if (jobs == 0) jobs = ranks > 1 ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
  if (jobs < 1) jobs = 1;
  r.s = s;
  r.out_path = a.out;
  r.rank = rank;
  r.size = ranks;
  r.todo = n_todo;
  r.t0 = proc_now_s();
  r.show = !a.quiet && rank == 0;
  progress_init(&r.bar, stderr, "sweep", n_todo, 10.0, -1);
  if (rank == 0 && !a.quiet)
  {
    char n1[48], n2[48], n3[48], n4[48];
    fprintf(stderr, "sweep: %s (%s x %s x %s), %d already in %s, %d to run on %d process%s x %ld job%s\n",
            cli_count(s->n_cases, "case", "cases", n1, sizeof n1),
            cli_count(s->n_variants, "chip variant", "chip variants", n2, sizeof n2),
            cli_count(s->n_graphs, "graph", "graphs", n3, sizeof n3),
            cli_count(s->n_methods, "method", "methods", n4, sizeof n4), n_done, a.out, n_todo, ranks,
            ranks == 1 ? "" : "es", jobs, jobs == 1 ? "" : "s");
  }

  sweep_pool_idle_fn idle = NULL;
#ifdef MESHPIPE_HAVE_MPI
  if (ranks > 1 && rank == 0) idle = drain;
#endif
  mp_status st = sweep_pool_run(mine, n_mine, (int)jobs, job, done, idle, 50, &r, &err);
#ifdef MESHPIPE_HAVE_MPI
  if (ranks > 1) {
    if (st != MP_OK) {
      cli_fail(&err);
      MPI_Abort(MPI_COMM_WORLD, err_exit_code(st));
    }
    if (rank > 0) {
      char none[] = "";
      MPI_Send(none, 1, MPI_CHAR, 0, TAG_DONE, MPI_COMM_WORLD);
    } else {
      int got;
      while (st == MP_OK && r.ranks_done < ranks - 1) st = receive(&r, 1, &got, &err);
      if (st != MP_OK) {
        cli_fail(&err);
        MPI_Abort(MPI_COMM_WORLD, err_exit_code(st));
      }
    }
  }
#endif
  if (r.show && n_todo > 0) progress_finish(&r.bar, r.finished, "cases, %d failed", r.failed);
  if (st != MP_OK) {
    code = cli_fail(&err);
    goto cleanup;
  }
  if (rank == 0 && !a.quiet)
    fprintf(stderr, "sweep: %d of %d cases run in %.1f s, %d failed; %s holds %d of %d rows\n", r.finished - r.failed,
            n_todo, proc_now_s() - r.t0, r.failed, a.out, n_done + r.finished - r.failed, s->n_cases);
  if (rank == 0 && r.failed > 0) code = 1;

cleanup:
  if (r.fd >= 0) close(r.fd);
  free(todo);
  free(mine);
  free(done_mask);
  sweep_free(s);
  return ranks_finish(code); /* every rank ends with rank 0's verdict */
}

const cli_command cmd_sweep = {"sweep", "partition and simulate every chip variant x graph x method into a CSV", run};
