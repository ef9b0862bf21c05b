/* Out of memory in the simulator: sim_new, sim_evaluate and the other evaluations (training's record and
 * replay among them) run with their
 * first, second, third ... allocation refused (tests/nomem.h) until they succeed; each refusal must
 * give MP_NOMEM with a message, leave the output as it was, and free everything the call allocated.
 * SimGrid's engine starts once per process, so every attempt runs in a child of its own (the sweep
 * forks it); the allocations of SimGrid itself are not seen, only those of meshpipe's code, in
 * either thread.
 * MESHPIPE_TEST_LABELS: simgrid */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "graph.h"
#include "jsonio.h"
#include "nomem.h"
#include "plan.h"
#include "sim.h"
#include "sim_train.h"
#include "testutil.h"
#include "timeline.h"
#include "trace.h"

#define GRAPH_FILE "traces/tiny_resnet.json" /* six layers with a skip connection */
#define CHIP_FILE "platforms/mesh4x4.json"   /* 16 cores, two DRAM ports */
static const int PLAN[16] = {1, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 3};

/* What the calls work on, loaded in the parent (the children inherit it); s is the child's engine. */
typedef struct sim_case {
  graph *g;
  chip *c;
  plan *p;
  trace *t; /* the plan's recorded trace, for sim_replay (a training one for sim_train_replay) */
  sim *s;
  train *tr; /* training runs: the graph prepared for training (setup's) */
  mp_status (*eval)(struct sim_case *sc, mp_error *err);
} sim_case;

/* The same mesh with too little SRAM for the plan's groups: their weights stream from DRAM. */
static const char *STREAMING_CHIP =
    "{\"format\":\"meshpipe-chip\",\"version\":1,\"name\":\"streaming\",\"mesh\":{\"width\":4,\"height\":4},"
    "\"core\":{\"flops\":1e12,\"sram_bytes\":20000},\"noc\":{\"bandwidth\":3.2e10,\"latency\":4e-9},"
    "\"dram\":{\"bandwidth\":1e11,\"ports\":[[0,1],[3,2]]}}";

/* Loads the graph, plan and trace, and the chip: CHIP_FILE, or chip_text (a document) when not NULL. */
static int sim_case_load(sim_case *sc, const char *chip_text) {
  memset(sc, 0, sizeof *sc);
  mp_error err;
  cJSON *doc = NULL;
  mp_status st = chip_text ? jsonio_parse("chip.json", chip_text, strlen(chip_text), &doc, &err) : MP_OK;
  if (st == MP_OK)
    st = chip_text ? chip_from_json(doc, "chip.json", &sc->c, &err) : chip_load(testutil_src(CHIP_FILE), &sc->c, &err);
  cJSON_Delete(doc);
  if (st != MP_OK || graph_load(testutil_src(GRAPH_FILE), &sc->g, &err) != MP_OK ||
      plan_new(PLAN, sc->c->n_cores, sc->g->n_ops, &sc->p, &err) != MP_OK ||
      trace_load(testutil_src("traces/tiny_resnet.mesh4x4.trace"), &sc->t, &err) != MP_OK) {
    printf("\n    fixture: %s", err.msg);
    return 0;
  }
  return 1;
}

static void sim_case_free(sim_case *sc) {
  trace_free(sc->t);
  plan_free(sc->p);
  chip_free(sc->c);
  graph_free(sc->g);
}

/* Refusals that leave a result must leave it empty (it owns nothing). */
static int empty(const sim_result *r) { return !r->stages && !r->cores && !r->links; }

static mp_status sim_new_call(void *ctx, int *untouched, mp_error *err) {
  sim_case *sc = ctx;
  sim *s = (sim *)sc; /* not NULL: a failed sim_new must set it to NULL */
  mp_status st = sim_new(sc->c, NULL, &s, err);
  *untouched = s == NULL;
  if (st == MP_OK) sim_free(s);
  return st;
}

static mp_status start_engine(void *ctx, mp_error *err) {
  sim_case *sc = ctx;
  return sim_new(sc->c, NULL, &sc->s, err);
}

/* One evaluation on setup's engine, which it then stops: what the evaluation allocated (its cache
 * entry, say) must go with the sim. */
static mp_status evaluation_call(void *ctx, int *untouched, mp_error *err) {
  sim_case *sc = ctx;
  mp_status st = sc->eval(sc, err);
  *untouched = 1;
  sim_free(sc->s);
  sc->s = NULL;
  return st;
}

/* The plan twice: computed, then from the cache (a copy of the cached result) — unless the first
 * could not keep a copy, which it may do without (then it is computed again, with the same figures). */
static mp_status eval_twice(sim_case *sc, mp_error *err) {
  sim_result r;
  mp_status st = sim_evaluate(sc->s, sc->g, sc->p, &r, err);
  if (st != MP_OK && !empty(&r)) return err_set(err, MP_RUN, "a failed sim_evaluate left a result");
  double period = r.period_s;
  sim_result_clear(&r);
  if (st == MP_OK) st = sim_evaluate(sc->s, sc->g, sc->p, &r, err);
  if (st != MP_OK && !empty(&r)) return err_set(err, MP_RUN, "a failed cached sim_evaluate left a result");
  if (st == MP_OK && r.period_s != period) st = err_set(err, MP_RUN, "the second evaluation has another period");
  sim_result_clear(&r);
  return st;
}

static mp_status eval_timeline(sim_case *sc, mp_error *err) {
  timeline *tl = NULL;
  sim_result r;
  memset(&r, 0, sizeof r);
  mp_status st = timeline_new(sc->c, "nomem", &tl, err);
  if (st == MP_OK) st = sim_evaluate_timeline(sc->s, sc->g, sc->p, 2, tl, &r, err);
  if (st != MP_OK && !empty(&r)) st = err_set(err, MP_RUN, "a failed sim_evaluate_timeline left a result");
  sim_result_clear(&r);
  timeline_free(tl);
  return st;
}

static mp_status eval_record(sim_case *sc, mp_error *err) {
  trace *t = (trace *)sc; /* not NULL: a failed sim_record must set it to NULL */
  mp_status st = sim_record(sc->s, sc->g, sc->p, 2, &t, err);
  if (st != MP_OK && t) return err_set(err, MP_RUN, "a failed sim_record left its output set");
  trace_free(t);
  return st;
}

/* setup for a replay on a chip of its own: the engine, and the trace of the plan recorded on it. */
static mp_status start_engine_and_record(void *ctx, mp_error *err) {
  sim_case *sc = ctx;
  mp_status st = start_engine(sc, err);
  trace_free(sc->t);
  sc->t = NULL;
  if (st == MP_OK) st = sim_record(sc->s, sc->g, sc->p, 2, &sc->t, err);
  return st;
}

static mp_status eval_replay(sim_case *sc, mp_error *err) {
  sim_result r;
  mp_status st = sim_replay(sc->s, sc->t, &r, err);
  if (st != MP_OK && !empty(&r)) st = err_set(err, MP_RUN, "a failed sim_replay left a result");
  sim_result_clear(&r);
  return st;
}

/* Training: setup starts the engine and prepares the graph for training (and records the plan's mini-batch,
 * for a replay); the call runs the evaluation and then frees what setup made. */
static mp_status start_engine_and_train(void *ctx, mp_error *err) {
  sim_case *sc = ctx;
  mp_status st = start_engine(sc, err);
  if (st == MP_OK) st = train_new(sc->g, NULL, &sc->tr, err);
  return st;
}

static mp_status start_engine_and_record_train(void *ctx, mp_error *err) {
  sim_case *sc = ctx;
  mp_status st = start_engine_and_train(sc, err);
  trace_free(sc->t);
  sc->t = NULL;
  if (st == MP_OK) st = sim_train_record(sc->s, sc->tr, sc->p, &sc->t, err);
  return st;
}

static mp_status train_call(void *ctx, int *untouched, mp_error *err) {
  sim_case *sc = ctx;
  mp_status st = evaluation_call(ctx, untouched, err);
  train_free(sc->tr);
  sc->tr = NULL;
  return st;
}

static mp_status eval_train_record(sim_case *sc, mp_error *err) {
  trace *t = (trace *)sc; /* not NULL: a failed sim_train_record must set it to NULL */
  mp_status st = sim_train_record(sc->s, sc->tr, sc->p, &t, err);
  if (st != MP_OK && t) return err_set(err, MP_RUN, "a failed sim_train_record left its output set");
  trace_free(t);
  return st;
}

static mp_status eval_train_timeline(sim_case *sc, mp_error *err) {
  timeline *tl = NULL;
  sim_train_result r;
  memset(&r, 0, sizeof r);
  mp_status st = timeline_new(sc->c, "nomem", &tl, err);
  if (st == MP_OK) st = sim_train_evaluate_timeline(sc->s, sc->tr, sc->p, tl, &r, err);
  if (st != MP_OK && (r.stages || r.completions))
    st = err_set(err, MP_RUN, "a failed sim_train_evaluate_timeline left a result");
  sim_train_result_clear(&r);
  timeline_free(tl);
  return st;
}

static mp_status eval_train_replay(sim_case *sc, mp_error *err) {
  sim_train_result r;
  mp_status st = sim_train_replay(sc->s, sc->t, &r, err);
  if (st != MP_OK && (r.stages || r.completions)) st = err_set(err, MP_RUN, "a failed sim_train_replay left a result");
  sim_train_result_clear(&r);
  return st;
}

/* Sweeps one target, each attempt in a child, first refusing each allocation and all after it, then
 * each one alone, and asserts the sweep found no violation.  Only the cache may do without memory
 * (up to may_absorb refusals: a result is then not kept); nothing else may succeed with an allocation
 * refused. */
static void every_allocation_in_a_child(const char *name, mp_status (*setup)(void *, mp_error *),
                                        mp_status (*call)(void *, int *, mp_error *), sim_case *sc,
                                        long may_absorb) {
  for (int once = 0; once <= 1; once++) {
    nomem_target t = {.name = name, .setup = setup, .call = call, .ctx = sc, .expected = MP_NOMEM, .in_child = 1,
                      .once = once};
    nomem_result r;
    nomem_sweep(&t, &r);
    CU_ASSERT(r.attempts > 0);
    CU_ASSERT_EQUAL(r.violations, 0);
    CU_ASSERT(r.absorbed <= may_absorb);
  }
}

static void sim_new_should_fail_cleanly_at_every_allocation(void) {
  sim_case sc;
  CU_ASSERT_FATAL(sim_case_load(&sc, NULL));
  every_allocation_in_a_child("sim_new", NULL, sim_new_call, &sc, 0);
  sim_case_free(&sc);
}

/* Each evaluation on an engine of its own (setup: start_engine, or one that also records a trace), in
 * a child per attempt, on CHIP_FILE or the chip of chip_text. */
static void evaluation_should_fail_cleanly_at_every_allocation(const char *name, const char *chip_text,
                                                               mp_status (*setup)(void *, mp_error *),
                                                               mp_status (*eval)(sim_case *, mp_error *),
                                                               long may_absorb) {
  sim_case sc;
  CU_ASSERT_FATAL(sim_case_load(&sc, chip_text));
  sc.eval = eval;
  every_allocation_in_a_child(name, setup, evaluation_call, &sc, may_absorb);
  sim_case_free(&sc);
}

/* The cache may go without its entry: the plan, and the copy of the result's stages and links. */
#define CACHE_ENTRY_ALLOCATIONS 3

static void sim_evaluate_should_fail_cleanly_at_every_allocation(void) {
  evaluation_should_fail_cleanly_at_every_allocation("sim_evaluate (computed, then cached)", NULL, start_engine,
                                                     eval_twice, CACHE_ENTRY_ALLOCATIONS);
}

static void sim_record_should_fail_cleanly_at_every_allocation(void) {
  evaluation_should_fail_cleanly_at_every_allocation("sim_record", NULL, start_engine, eval_record, 0);
}

static void sim_replay_should_fail_cleanly_at_every_allocation(void) {
  evaluation_should_fail_cleanly_at_every_allocation("sim_replay", NULL, start_engine, eval_replay, 0);
}

static void sim_evaluate_timeline_should_fail_cleanly_at_every_allocation(void) {
  evaluation_should_fail_cleanly_at_every_allocation("sim_evaluate_timeline", NULL, start_engine, eval_timeline, 0);
}

/* A training mini-batch recorded (on the 4x4 chip), simulated with a timeline and replayed (on the streaming
 * one: its groups stream what their cores cannot hold). */
static void training_record_timeline_and_replay_should_fail_cleanly_at_every_allocation(void) {
  sim_case sc;
  CU_ASSERT_FATAL(sim_case_load(&sc, NULL));
  sc.eval = eval_train_record;
  /* train_range_of's memo of planned ranges (test_nomem) and the training model's memo of gathering
   * segments (its keys and its counts) may go without growing: three refusals absorbed */
  every_allocation_in_a_child("sim_train_record", start_engine_and_train, train_call, &sc, 3);
  sim_case_free(&sc);
  CU_ASSERT_FATAL(sim_case_load(&sc, STREAMING_CHIP));
  sc.eval = eval_train_timeline;
  every_allocation_in_a_child("sim_train_evaluate_timeline (from DRAM)", start_engine_and_train, train_call, &sc, 3);
  sc.eval = eval_train_replay;
  every_allocation_in_a_child("sim_train_replay (from DRAM)", start_engine_and_record_train, train_call, &sc, 0);
  sim_case_free(&sc);
}

/* Groups whose weights do not fit their cores' SRAM stream them from DRAM: more of the program. */
static void evaluations_should_fail_cleanly_at_every_allocation_when_weights_stream_from_dram(void) {
  evaluation_should_fail_cleanly_at_every_allocation("sim_evaluate (weights from DRAM)", STREAMING_CHIP,
                                                     start_engine, eval_twice, CACHE_ENTRY_ALLOCATIONS);
  evaluation_should_fail_cleanly_at_every_allocation("sim_replay (weights from DRAM)", STREAMING_CHIP,
                                                     start_engine_and_record, eval_replay, 0);
}

int main(int argc, char **argv) {
  nomem_init();
  CU_TestInfo tests[] = {
      {"sim_new_should_fail_cleanly_at_every_allocation", sim_new_should_fail_cleanly_at_every_allocation},
      {"sim_evaluate_should_fail_cleanly_at_every_allocation", sim_evaluate_should_fail_cleanly_at_every_allocation},
      {"sim_record_should_fail_cleanly_at_every_allocation", sim_record_should_fail_cleanly_at_every_allocation},
      {"sim_replay_should_fail_cleanly_at_every_allocation", sim_replay_should_fail_cleanly_at_every_allocation},
      {"sim_evaluate_timeline_should_fail_cleanly_at_every_allocation",
       sim_evaluate_timeline_should_fail_cleanly_at_every_allocation},
      {"evaluations_should_fail_cleanly_at_every_allocation_when_weights_stream_from_dram",
       evaluations_should_fail_cleanly_at_every_allocation_when_weights_stream_from_dram},
      {"training_record_timeline_and_replay_should_fail_cleanly_at_every_allocation",
       training_record_timeline_and_replay_should_fail_cleanly_at_every_allocation},
      CU_TEST_INFO_NULL,
  };
  int rc = testutil_run("nomem_sim", tests, argc, argv);
  printf("%ld code addresses received a refused allocation in this process\n", nomem_save_sites());
  return rc;
}
