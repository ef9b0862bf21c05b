/* cli: the meshpipe front end.  One file per subcommand (cmd_<name>.c) exporting a cli_command;
 * main.c holds the table.  Commands parse options with getopt_long, call the library, and are the
 * only code that prints for the user or picks an exit status: 0 success, 1 a failed run, 2 bad
 * usage or bad input.  Error lines read "meshpipe: FILE: where: what". */
#ifndef MESHPIPE_CLI_H
#define MESHPIPE_CLI_H

#include <stddef.h>

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "method.h"
#include "optimes.h"
#include "sim.h"
#include "train.h"

typedef struct cli_command {
  const char *name;
  const char *summary;               /* one line for 'meshpipe help' */
  int (*run)(int argc, char **argv); /* argv[0] is the command name; returns the exit status */
} cli_command;

/* Bundled defaults, relative to the data directory the build compiled in. */
#define CLI_DEFAULT_CHIP MESHPIPE_DATA_DIR "/platforms/mesh8x8.json"

/* Prints "meshpipe: <message>" to stderr; returns the exit status of err->status. */
int cli_fail(const mp_error *err);

/* Prints "meshpipe CMD: <message>" and a pointer to --help; returns 2. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints text to stdout (a command's --help); returns 0. */
int cli_help(const char *text);

/* How a command turns a graph argument into a graph (see cli_load_graph). */
typedef struct cli_graph_opts {
  const char *dtype; /* ONNX import: bytes per element the chip stores (fp32|fp16|bf16|int8) */
  int batch;         /* ONNX import: batch size, 0 = the model's own */
  int no_fuse;       /* ONNX import: keep every node as a layer */
} cli_graph_opts;

#define CLI_GRAPH_OPTS_DEFAULT {"fp16", 0, 0}

/* Long options several commands share, with codes no short option uses.  A command lists
 * CLI_GRAPH_OPTIONS / CLI_METHOD_OPTIONS in its getopt_long table and hands those codes
 * (CLI_GRAPH_OPTION_CASES / CLI_METHOD_OPTION_CASES in its switch) to cli_graph_option /
 * cli_method_option, so every command spells, checks and documents them alike. */
enum {
  CLI_OPT_DTYPE = 1000, CLI_OPT_BATCH, CLI_OPT_NO_FUSE,
  CLI_OPT_SEED, CLI_OPT_TAU, CLI_OPT_MAX_STEP, CLI_OPT_EPISODES, CLI_OPT_POLICY, CLI_OPT_INIT, CLI_OPT_OBJECTIVE,
  CLI_OPT_MAX_MICRO, CLI_OPT_OP_TIMES, CLI_OPT_FAST_STREAMS,
  CLI_OPT_MODE, CLI_OPT_OPTIMIZER, CLI_OPT_SCHEDULE, CLI_OPT_RECOMPUTE,
  CLI_OPT_FIRST_FREE /* a command's own long-only options start here */
};
#define CLI_GRAPH_OPTIONS                                                                                  \
  {"dtype", required_argument, NULL, CLI_OPT_DTYPE}, {"batch", required_argument, NULL, CLI_OPT_BATCH},  \
      {"no-fuse", no_argument, NULL, CLI_OPT_NO_FUSE}
#define CLI_METHOD_OPTIONS                                                                                 \
  {"seed", required_argument, NULL, CLI_OPT_SEED}, {"tau", required_argument, NULL, CLI_OPT_TAU},         \
      {"max-step", required_argument, NULL, CLI_OPT_MAX_STEP},                                            \
      {"episodes", required_argument, NULL, CLI_OPT_EPISODES},                                            \
      {"policy", required_argument, NULL, CLI_OPT_POLICY}, {"init", required_argument, NULL, CLI_OPT_INIT}, \
      {"objective", required_argument, NULL, CLI_OPT_OBJECTIVE}
#define CLI_GRAPH_OPTION_CASES \
  case CLI_OPT_DTYPE:          \
  case CLI_OPT_BATCH:          \
  case CLI_OPT_NO_FUSE
#define CLI_METHOD_OPTION_CASES \
  case CLI_OPT_SEED:            \
  case CLI_OPT_TAU:             \
  case CLI_OPT_MAX_STEP:        \
  case CLI_OPT_EPISODES:        \
  case CLI_OPT_POLICY:          \
  case CLI_OPT_INIT:            \
  case CLI_OPT_OBJECTIVE

/* Options of the commands that run the simulator: -M/--microbatches, --max-microbatches, -l/--links,
 * -f/--fast-gather, --fast-streams, -v/--verbose (short letters in CLI_SIM_SHORT for the getopt
 * string). */
#define CLI_SIM_SHORT "M:l:fv"
#define CLI_SIM_OPTIONS                                                                                    \
  {"microbatches", required_argument, NULL, 'M'}, {"max-microbatches", required_argument, NULL, CLI_OPT_MAX_MICRO}, \
      {"links", required_argument, NULL, 'l'}, {"fast-gather", no_argument, NULL, 'f'},                    \
      {"fast-streams", no_argument, NULL, CLI_OPT_FAST_STREAMS}, {"verbose", no_argument, NULL, 'v'}
#define CLI_SIM_OPTION_CASES \
  case 'M':                  \
  case CLI_OPT_MAX_MICRO:    \
  case 'l':                  \
  case 'f':                  \
  case CLI_OPT_FAST_STREAMS: \
  case 'v'
#define CLI_SIM_HELP                                                                                       \
  "  -M, --microbatches M    stream exactly M micro-batches through the plan; by default the simulator\n"   \
  "                          runs until the pipeline is in steady state (its completions periodic)\n"     \
  "      --max-microbatches N  give up looking for the steady state after N micro-batches (default 4p + 32\n" \
  "                          for p stages, doubled twice at most while that mean is below what the\n"   \
  "                          busiest link allows; N/2 more after the window of micro-batches in flight\n" \
  "                          closes) and report the mean interval of the second half\n"                  \
  "  -l, --links N           busiest NoC links to list (default 8)\n"                                     \
  "  -f, --fast-gather       all-gathers load only their chain's two busiest links: the same times\n"     \
  "                          without contention, less contention detail, up to 1.27x faster evaluations\n" \
  "      --fast-streams      a group's cores that stream DRAM through one port do it as one transfer:\n" \
  "                          the model's stream time when alone, one share of a contended link instead\n" \
  "                          of one per core; 5.6x faster on 32x32 with 1 MiB, farther from the default\n" \
  "  -v, --verbose           let SimGrid log to stderr\n"

/* Apply one shared option (opt is its code, arg its value, borrowed and kept) to *go / *mo; return 0,
 * or 2 after printing a usage error naming cmd and the option. */
int cli_graph_option(const char *cmd, int opt, const char *arg, cli_graph_opts *go);
int cli_method_option(const char *cmd, int opt, const char *arg, method_options *mo);
int cli_sim_option(const char *cmd, int opt, const char *arg, sim_options *so);

/* Loads a meshpipe graph (.json) or imports an ONNX model (.onnx).  o may be NULL for defaults. */
mp_status cli_load_graph(const char *path, const cli_graph_opts *o, graph **out, mp_error *err);

/* --mode infer|train and the training options of every command that takes a graph: --mode train trains
 * the graph instead of streaming inference through it (train.h), with --optimizer, --schedule,
 * --recompute, and -M/--microbatches as the micro-batches per mini-batch (default 8). */
typedef struct cli_train_opts {
  int train;       /* --mode train */
  int given;       /* a training option was given: an error without --mode train */
  train_options o;
} cli_train_opts;

void cli_train_opts_init(cli_train_opts *t);

#define CLI_TRAIN_OPTIONS                                                                                  \
  {"mode", required_argument, NULL, CLI_OPT_MODE}, {"optimizer", required_argument, NULL, CLI_OPT_OPTIMIZER}, \
      {"schedule", required_argument, NULL, CLI_OPT_SCHEDULE}, {"recompute", no_argument, NULL, CLI_OPT_RECOMPUTE}
#define CLI_TRAIN_OPTION_CASES \
  case CLI_OPT_MODE:           \
  case CLI_OPT_OPTIMIZER:      \
  case CLI_OPT_SCHEDULE:       \
  case CLI_OPT_RECOMPUTE
#define CLI_TRAIN_HELP                                                                                     \
  "      --mode MODE         infer (default): micro-batches stream through the pipeline; train: each\n"     \
  "                          layer also runs its backward, a stage keeps the activations of the micro-\n"   \
  "                          batches in flight, and a weight update ends every mini-batch (traces/README.md)\n" \
  "      --optimizer O       training: sgd, momentum or adam (default): 0, 1 or 2 fp32 states per weight,\n"  \
  "                          beside the weight, its gradient and an fp32 master copy for 16-bit dtypes\n"    \
  "      --schedule S        training: gpipe (every forward, then every backward), 1f1b (default: one\n"   \
  "                          forward, one backward) or zb (1f1b with each backward's weight gradients\n"   \
  "                          run later, filling the bubble; stage i keeps i more micro-batches' inputs\n"  \
  "                          and gradients for them)\n"                                                  \
  "      --recompute         training: keep only each stage's inputs and run its forward again in the\n"    \
  "                          backward (its flops charged)\n"

/* One training option (opt its code, arg its value) into *t; 0, or 2 after a usage error. */
int cli_train_option(const char *cmd, int opt, const char *arg, cli_train_opts *t);

/* After parsing: training options without --mode train are a usage error; microbatches (-M, 0 when not
 * given) becomes the micro-batches per mini-batch.  0, or 2 after a usage error. */
int cli_train_check(const char *cmd, cli_train_opts *t, int microbatches);

/* --op-times FILE (CLI_OPT_OP_TIMES; simulate and record also spell it -t): measured op times. */
#define CLI_OP_TIMES_OPTION {"op-times", required_argument, NULL, CLI_OPT_OP_TIMES}
#define CLI_OP_TIMES_HELP                                                                                   \
  "      --op-times FILE     measured op times (CSV 'op,seconds' lines under an optional header 'op,UNIT',\n" \
  "                          UNIT seconds, ms, us or ns; or JSON {\"op\": seconds}), on one core of the\n"    \
  "                          chip's typical type: those ops take them in the model, the partitioners and\n"  \
  "                          the simulator alike\n"

/* Measured op times for graph g on chip c (all borrowed): with path NULL, *timed and *ot are NULL;
 * else *ot is the table read from path and *timed the copy of g whose measured ops do seconds x the
 * chip's typical core flop rate of work (optimes_apply), which every computation then uses, while plans
 * are written and checked against g itself.  Both owned by the caller. */
mp_status cli_op_times(const char *path, const graph *g, const chip *c, graph **timed, optimes **ot, mp_error *err);

/* "1 micro-batch", "8 micro-batches": n and the noun's singular or plural into buf; returns buf. */
char *cli_count(long n, const char *one, const char *many, char *buf, size_t len);

/* Parses a whole decimal number / a finite real from an option value; on failure prints a usage
 * error naming the option and returns 2 (else 0). */
int cli_parse_int(const char *cmd, const char *opt, const char *text, long lo, long hi, long *out);
int cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double *out);

/* Human-readable figures for report lines: "4.09 G" (SI, for counts such as MACs and flops) and
 * "48.9 MiB" (binary, for bytes).  Each returns buf. */
char *cli_fmt_si(double v, char *buf, size_t n);
char *cli_fmt_bytes(double bytes, char *buf, size_t n);

#endif
