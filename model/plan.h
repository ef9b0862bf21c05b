/* plan: contiguous layer ranges of a linearised graph on contiguous core groups (pipeline stages).
 *
 * The canonical form is the arranged_core list: one entry per core, the number of layers that core's
 * group takes, where a run of zeros joins the following core's group.  [0,3,5,0,0,2] on 6 cores is
 * three stages: cores 0-1 take layers 0-2, core 2 takes layers 3-7, cores 3-5 take layers 8-9.
 * Invariant after plan_new: n_cores entries, none negative, summing to n_layers, the last one > 0;
 * stages[] tile both the layers [0, n_layers) and the cores [0, n_cores) in order.  Immutable. */
#ifndef MESHPIPE_PLAN_H
#define MESHPIPE_PLAN_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "chip.h"
#include "err.h"
#include "graph.h"

#define PLAN_FORMAT "meshpipe-plan"
#define PLAN_VERSION 1

typedef struct plan_stage {
  int first_layer, n_layers;
  int first_core, n_cores;
} plan_stage;

typedef struct plan {
  int n_cores, n_layers, n_stages;
  int *arranged; /* arranged_core, n_cores entries */
  plan_stage *stages;
} plan;

/* Checks an arranged_core list against the core and layer counts; file labels messages. */
mp_status plan_validate(const int *arranged, int n_cores, int n_layers, const char *file, mp_error *err);

/* Builds a plan from an arranged_core list (copied, not kept). *out is owned by the caller. */
mp_status plan_new(const int *arranged, int n_cores, int n_layers, plan **out, mp_error *err);

/* Fills *view with the plan plan_new would build from arranged (valid for n_cores and n_layers:
 * plan_validate), without allocating: the view borrows arranged (it must outlive the view and not
 * change while it is used) and writes its stages into stages (room for n_cores).  Never plan_free a
 * view. */
void plan_view(const int *arranged, int n_cores, int n_layers, plan_stage *stages, plan *view);

/* The arranged_core list of per-stage layer and core counts (each >= 1) into arranged (room for the
 * cores' sum): a group's cores hold 0 but its last, which holds its layers.  Allocates nothing. */
void plan_arranged_of_stages(const int *stage_layers, const int *stage_cores, int n_stages, int *arranged);

/* Builds a plan from per-stage layer and core counts (copied); each count must be >= 1. */
mp_status plan_from_stages(const int *stage_layers, const int *stage_cores, int n_stages, plan **out, mp_error *err);

/* Reads a plan file and checks it against the graph and chip it will run on (both borrowed): one
 * arranged_core entry per core of c, summing to the layers of g, and, when the file has "stages",
 * stages that agree with arranged_core (and name g's ops).  A plan made for another graph or chip
 * fails with the counts and the names recorded in the file; a plan whose recorded graph hash differs
 * from g's (the same layers at another batch, dtype or version) fails naming both hashes.  The chip's
 * hash is not checked: one plan runs on chips of other figures.  g or c may be NULL: the counts are
 * then taken from the list itself.  The format is described in platforms/README.md. */
mp_status plan_load(const char *path, const graph *g, const chip *c, plan **out, mp_error *err);

/* plan_load of text already in memory (len bytes); path labels the messages. */
mp_status plan_parse(const char *path, const char *text, size_t len, const graph *g, const chip *c, plan **out,
                     mp_error *err);

/* Serialisation: arranged_core plus the stages it implies (with first/last op names when g is given
 * and has p->n_layers layers) and the name and hash of g and c.  g and c are borrowed and may be
 * NULL.  Owned by the caller; NULL if out of memory. */
cJSON *plan_to_json(const plan *p, const graph *g, const chip *c);

/* Writes plan_to_json atomically. */
mp_status plan_write(const plan *p, const graph *g, const chip *c, const char *path, mp_error *err);

/* Stage that holds a layer / a core; -1 when it is outside the plan. */
int plan_stage_of_layer(const plan *p, int layer);
int plan_stage_of_core(const plan *p, int core);

/* Hash of arranged_core, for caches; plans with equal lists hash equal. */
uint64_t plan_hash(const plan *p);
int plan_equal(const plan *a, const plan *b);

/* Frees p; plan_free(NULL) is a no-op. */
void plan_free(plan *p);

#endif
