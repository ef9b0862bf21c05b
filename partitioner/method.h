/* method: the partitioners, chosen by name from one table.
 *
 * A method maps a graph and a chip (both borrowed) and options to a plan in canonical arranged_core
 * form (owned by the caller) covering every layer and every core, plus a small report.  Every method
 * is deterministic for given inputs and options (seed included).  When no plan fits memory a method
 * still returns a plan (method_run marks the report infeasible); it is an error only when it cannot
 * produce any plan at all.  The table is in method.c; adding a method is one more entry. */
#ifndef MESHPIPE_METHOD_H
#define MESHPIPE_METHOD_H

#include <stddef.h>
#include <stdint.h>

#include "chip.h"
#include "err.h"
#include "graph.h"
#include "objective.h"
#include "plan.h"

struct sim;
struct sim_options;

/* Options every method receives; each reads the fields it needs.  Strings and sim are borrowed. */
typedef struct method_options {
  uint64_t seed;       /* for any random choice */
  double tau;          /* seed-split: std-dev threshold (seconds) of split_compare */
  int max_step;        /* seed-split: finetune_maximum iterations */
  int episodes;        /* learning methods: episodes to run (-1 = the method's default) */
  const char *policy;  /* learning methods: policy file to start from, or NULL */
  const char *init;    /* learning methods: name of the method whose plan starts the search, or NULL */
  struct sim *sim;     /* simulating methods (rl): a sim of the same chip to run on in this process, or NULL:
                          an engine of their own in a forked child (SimGrid starts one engine per process) */
  const struct sim_options *sim_options; /* the options of that engine of their own (NULL: the defaults),
                                            so that a caller without a sim still has its -M, streams... */
  /* learning methods: this process is rank `rank` of `ranks` that run the same method with the same
   * options and deal its episodes (rl_train.h, rl_trainer_distribute); gather (with gather_ctx) joins
   * every rank's bytes in rank order.  0 of 1 and NULL by default. */
  int rank, ranks;
  mp_status (*gather)(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err);
  void *gather_ctx;
  /* NULL (default): the plan is for inference; else for training with these options (borrowed): optimal
   * minimises the training model's period (train.h), rl a mini-batch's time (rl_reward.h); the other methods
   * split as for inference */
  const struct train_options *train;
  /* what optimal and rl minimise (objective.h; default OBJECTIVE_TIME): energy and edp need a chip with
   * energy figures and inference; the other methods split by their own rule whatever it is */
  objective objective;
  /* long methods (rl): called after each step of their search with what is done of how much (total <= 0
   * when unknown), the phase (a name that starts with its unit, "episodes on the model"; one pointer
   * per phase) and the best micro-batches/s so far; NULL: nothing.  The caller prints. */
  void (*progress)(void *ctx, const char *phase, long done, long total, double best_microbatches_per_s);
  void *progress_ctx;
} method_options;

/* Fills the documented defaults: seed 1, tau 1e-6 s, max_step 100, episodes -1, NULL strings and sim,
 * rank 0 of 1. */
void method_options_default(method_options *o);

#define METHOD_NOTES_MAX 1024

/* What a method says about its run. */
typedef struct method_report {
  double solve_s;                /* wall-clock seconds of the method (filled by method_run) */
  int feasible;                  /* 1 when the returned plan fits every core's SRAM */
  char notes[METHOD_NOTES_MAX];  /* one or two sentences: how the plan was derived, caveats */
} method_report;

/* A method: g, c, o borrowed; on success *out is an owned plan for g on c and rep->notes says how it
 * was made (method_run fills solve_s and feasible). */
typedef mp_status (*method_fn)(const graph *g, const chip *c, const method_options *o, plan **out,
                               method_report *rep, mp_error *err);

typedef struct method_info {
  const char *name;    /* the --method value */
  const char *summary; /* one line for --help */
  method_fn run;
  int learning;        /* 1: trains a policy (seconds to minutes); left out of compare's default list */
  int objectives;      /* 1: minimises o->objective; 0: splits by its own rule (time-like) whatever it is */
} method_info;

/* The table: method_count() entries in listing order; method_at(i) for 0 <= i < count. */
int method_count(void);
const method_info *method_at(int i);

/* The entry with that name, or NULL. */
const method_info *method_find(const char *name);

/* Runs the named method (an unknown name is MP_USAGE listing the known ones), times it into
 * rep->solve_s and adds a note "plan does not fit memory" if the plan is infeasible and the
 * method did not say so; with o->train the verdict is the training model's.  An objective other than
 * time on a chip without energy figures or with o->train is MP_USAGE; a method that does not minimise
 * objectives says in a note that it split by its own rule.  o may be NULL (the
 * defaults).  All arguments borrowed except *out, which is owned on success. */
mp_status method_run(const char *name, const graph *g, const chip *c, const method_options *o, plan **out,
                     method_report *rep, mp_error *err);

/* Appends a printf-formatted sentence to rep->notes (separated by a space; cut, never overflowed). */
void method_note(method_report *rep, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
