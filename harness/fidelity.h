/* fidelity: the analytical model against the simulator over a matrix of graphs x meshes x SRAM sizes.
 *
 * The matrix is every real model of tests/models (imported with the defaults) and every graph of
 * traces/ that is not one of them (by graph hash), on the bundled 4x4, 8x8, 16x16 and 32x32 meshes with
 * 1, 2, 4 and 8 MiB of SRAM per core.  A case partitions its graph with optimal, costs the plan in the
 * model and simulates it to steady state, and simulates the plans of the other methods asked for, so
 * that optimal's throughput is measured against the best plan any of them found.  Each case runs in a
 * process of its own (sweep_pool.h: SimGrid starts once per process).
 *
 * A fidelity_matrix owns its graphs, chips and rows (fidelity_free). */
#ifndef MESHPIPE_FIDELITY_H
#define MESHPIPE_FIDELITY_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "strbuf.h"

#define FIDELITY_MAX_METHODS 8

/* One case's figures. */
typedef struct fidelity_row {
  int graph, chip; /* indices into the matrix */
  int done;        /* the case ran (else failure says why, unless skipped) */
  int skipped;     /* left out by fidelity_run's filter (unless done: resumed results stay) */
  int pending;     /* queued by fidelity_run and not finished yet */
  char failure[256];
  int n_stages;                 /* of optimal's plan */
  double model_s, sim_s;        /* optimal's plan: the model's period and the simulated one */
  char binding[16];             /* what sets the model's period (cost_binding_name) */
  char kind[16];                /* how the simulator measured its period (sim_period_kind_name) */
  int microbatches;             /* the simulator's */
  char term[24];                /* the term that makes most of the difference (fidelity.c) */
  double thr[FIDELITY_MAX_METHODS]; /* simulated samples/s of every method's plan, optimal's first */
  double solve_s;               /* optimal's */
} fidelity_row;

typedef struct fidelity_matrix {
  int n_graphs;
  graph **graphs; /* owned */
  int n_chips;
  chip **chips; /* owned: the mesh x SRAM variants, mesh-major, each named as its bundled file */
  char (*chip_labels)[32]; /* owned: per chip, the name the matrix gives it, "NAME-SRAM" (mesh8x8-4Mi).
                              The chip itself keeps its file's name, and so the hash from which the
                              methods seed their searches, as a chip file of the same figures has */
  int n_methods;
  const char *methods[FIDELITY_MAX_METHODS]; /* "optimal" first, then the others (static names) */
  int n_rows;
  fidelity_row *rows; /* owned: graph-major, then chip */
  int fast_streams;   /* every simulation with sim_options.fast_streams (0 from fidelity_new) */
  const char *save_path; /* borrowed; NULL (from fidelity_new), or where fidelity_run writes the JSON
                            (fidelity_save) each time a case finishes, so an interrupted run keeps them */
  const char *plans_dir; /* borrowed; NULL (from fidelity_new), or a directory (made if missing) where
                            fidelity_run writes each chip a case runs on, LABEL.chip.json, and each case
                            every method's plan, GRAPH.LABEL.METHOD.plan.json: simulate and partition
                            on that chip file give the case's figures and plans */
} fidelity_matrix;

/* Builds the matrix from the data directory (borrowed; holds tests/models, traces and platforms):
 * quick keeps the 4x4 and 8x8 meshes and 2 and 8 MiB; methods (borrowed names, NULL for optimal,
 * even, balanced, seed-split and greedy; optimal is added first when missing) are simulated too.
 * *out is owned (fidelity_free). */
mp_status fidelity_new(const char *data_dir, int quick, const char *const *methods, int n_methods,
                       fidelity_matrix **out, mp_error *err);

void fidelity_free(fidelity_matrix *m);

/* Runs case i (in the calling process: it starts a SimGrid engine, so once per process) into its row. */
mp_status fidelity_run_case(fidelity_matrix *m, int i, mp_error *err);

/* Runs every case whose "graph|chip" contains filter (NULL: all; MP_USAGE when it matches none) and
 * that is not done yet (fidelity_resume) in worker processes, at most jobs at once; calls progress (may
 * be NULL) as each finishes, and writes m->save_path then when it is set.  The others are marked
 * skipped.  A failed case keeps its message in its row; only a failure of the pool itself or of writing
 * save_path is returned. */
typedef void (*fidelity_progress_fn)(void *ctx, int done, int total);
mp_status fidelity_run(fidelity_matrix *m, int jobs, const char *filter, fidelity_progress_fn progress, void *ctx,
                       mp_error *err);

/* A row as one line of text (for the pipe of a worker process) and back. */
void fidelity_row_encode(const fidelity_row *r, int n_methods, strbuf *out);
mp_status fidelity_row_decode(const char *line, int n_methods, fidelity_row *r, mp_error *err);

/* What the matrix says as a whole. */
typedef struct fidelity_summary {
  int cases;                         /* rows that ran */
  int within_5, within_10, within_15; /* model / simulated period within 5% / 10% / 15% */
  double worst_ratio;                /* the ratio furthest from 1 */
  int worst_row;
  int optimal_best;                  /* cases where no method's plan simulates more than 3% faster */
  double worst_vs_best;              /* the least optimal / best simulated throughput */
  int worst_vs_best_row;
} fidelity_summary;

void fidelity_summarize(const fidelity_matrix *m, fidelity_summary *s);

/* The matrix as a table (one line per case, then the summary) appended to out. */
void fidelity_table(const fidelity_matrix *m, strbuf *out);

/* The matrix as JSON (owned; NULL if out of memory): per case its graph and chip with their hashes,
 * done, pending (while queued) or the failure, and the figures of a done one; then the summary
 * (fidelity_json.c). */
cJSON *fidelity_to_json(const fidelity_matrix *m);

/* Writes fidelity_to_json atomically to path (borrowed). */
mp_status fidelity_save(const fidelity_matrix *m, const char *path, mp_error *err);

/* Takes the done cases of a JSON file that an earlier run of the same methods and streams wrote
 * (path borrowed): each whose graph and chip are in m under the same names and hashes fills its row,
 * which fidelity_run then leaves as it is; *taken counts them, *stale those whose graph or chip has
 * changed since (they run again, as do failed and pending ones).  MP_INPUT, naming the file and the
 * place, for a file of other methods or streams or a malformed case; m then holds the cases taken before
 * it, and is for fidelity_free only. */
mp_status fidelity_resume(fidelity_matrix *m, const char *path, int *taken, int *stale, mp_error *err);

#endif
