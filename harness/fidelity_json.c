/* fidelity_json: the matrix as JSON, written as it fills (fidelity_matrix.save_path) and read back to
 * resume a run (fidelity.h).  A case names its graph and chip with their hashes, so that a resumed run
 * takes a figure only for the inputs that made it. */
#include <stdio.h>
#include <string.h>

#include "fidelity.h"
#include "fileio.h"
#include "jsonio.h"

/* One case as an object (owned), or NULL if out of memory. */
static cJSON *case_json(const fidelity_matrix *m, const fidelity_row *r) {
  char hex[17];
  cJSON *x = cJSON_CreateObject(), *thr = NULL;
  int ok = x && cJSON_AddStringToObject(x, "graph", m->graphs[r->graph]->name) &&
           cJSON_AddStringToObject(x, "graph_hash", fileio_hash_hex(m->graphs[r->graph]->hash, hex)) &&
           cJSON_AddStringToObject(x, "chip", m->chip_labels[r->chip]) &&
           cJSON_AddStringToObject(x, "chip_hash", fileio_hash_hex(m->chips[r->chip]->hash, hex)) &&
           cJSON_AddBoolToObject(x, "done", r->done);
  if (ok && r->pending) ok = cJSON_AddBoolToObject(x, "pending", 1) != NULL;
  else if (ok && !r->done) ok = cJSON_AddStringToObject(x, "failure", r->failure) != NULL;
  if (ok && r->done) {
    ok = cJSON_AddNumberToObject(x, "stages", r->n_stages) && cJSON_AddNumberToObject(x, "model_period_s", r->model_s) &&
         cJSON_AddNumberToObject(x, "simulated_period_s", r->sim_s) &&
         cJSON_AddNumberToObject(x, "ratio", r->model_s / r->sim_s) &&
         cJSON_AddStringToObject(x, "binding", r->binding) && cJSON_AddStringToObject(x, "period_kind", r->kind) &&
         cJSON_AddNumberToObject(x, "microbatches", r->microbatches) && cJSON_AddStringToObject(x, "term", r->term) &&
         cJSON_AddNumberToObject(x, "solve_s", r->solve_s) && (thr = cJSON_AddObjectToObject(x, "samples_per_s"));
    for (int k = 0; ok && k < m->n_methods; k++) ok = cJSON_AddNumberToObject(thr, m->methods[k], r->thr[k]) != NULL;
  }
  if (!ok) {
    cJSON_Delete(x);
    return NULL;
  }
  return x;
}

cJSON *fidelity_to_json(const fidelity_matrix *m) {
  cJSON *root = cJSON_CreateObject(), *cases = NULL, *methods = NULL;
  fidelity_summary s;
  fidelity_summarize(m, &s);
  int pending = 0;
  int ok = root && (methods = cJSON_AddArrayToObject(root, "methods")) &&
           cJSON_AddBoolToObject(root, "fast_streams", m->fast_streams) &&
           (cases = cJSON_AddArrayToObject(root, "cases"));
  for (int k = 0; ok && k < m->n_methods; k++) ok = cJSON_AddItemToArray(methods, cJSON_CreateString(m->methods[k]));
  for (int i = 0; ok && i < m->n_rows; i++) {
    if (m->rows[i].skipped) continue;
    pending += m->rows[i].pending;
    cJSON *x = case_json(m, &m->rows[i]);
    ok = x && cJSON_AddItemToArray(cases, x);
    if (!ok) cJSON_Delete(x);
  }
  ok = ok && cJSON_AddNumberToObject(root, "cases_run", s.cases) &&
       cJSON_AddNumberToObject(root, "cases_pending", pending) &&
       cJSON_AddNumberToObject(root, "within_5_cases", s.within_5) &&
       cJSON_AddNumberToObject(root, "within_10_cases", s.within_10) &&
       cJSON_AddNumberToObject(root, "within_15_cases", s.within_15) &&
       cJSON_AddNumberToObject(root, "worst_ratio", s.worst_ratio) &&
       cJSON_AddNumberToObject(root, "optimal_within_3_pct_of_best_cases", s.optimal_best) &&
       cJSON_AddNumberToObject(root, "worst_optimal_vs_best", s.worst_vs_best);
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

mp_status fidelity_save(const fidelity_matrix *m, const char *path, mp_error *err) {
  cJSON *root = fidelity_to_json(m);
  mp_status st = root ? jsonio_save(path, root, err) : err_nomem(err);
  cJSON_Delete(root);
  return st;
}

/* The row of m whose graph and chip carry these names, or -1. */
static int row_named(const fidelity_matrix *m, const char *graph_name, const char *chip_name) {
  for (int i = 0; i < m->n_rows; i++)
    if (strcmp(m->graphs[m->rows[i].graph]->name, graph_name) == 0 &&
        strcmp(m->chip_labels[m->rows[i].chip], chip_name) == 0)
      return i;
  return -1;
}

/* Reads one finished case (the object at r->where) into row, or fails naming what is wrong. */
static mp_status read_case(const fidelity_matrix *m, const jsonio_reader *r, const cJSON *x, fidelity_row *row) {
  const char *binding, *kind, *term;
  const cJSON *thr;
  fidelity_row t = *row;
  mp_status st;
  if ((st = jsonio_get_int(r, x, "stages", JSONIO_REQUIRED, 1, 1L << 30, &t.n_stages, NULL)) != MP_OK ||
      (st = jsonio_get_num(r, x, "model_period_s", JSONIO_REQUIRED | JSONIO_LO_OPEN, 0, 1e30, &t.model_s, NULL)) !=
          MP_OK ||
      (st = jsonio_get_num(r, x, "simulated_period_s", JSONIO_REQUIRED | JSONIO_LO_OPEN, 0, 1e30, &t.sim_s, NULL)) !=
          MP_OK ||
      (st = jsonio_get_str(r, x, "binding", JSONIO_REQUIRED, &binding, NULL)) != MP_OK ||
      (st = jsonio_get_str(r, x, "period_kind", JSONIO_REQUIRED, &kind, NULL)) != MP_OK ||
      (st = jsonio_get_int(r, x, "microbatches", JSONIO_REQUIRED, 1, 1L << 30, &t.microbatches, NULL)) != MP_OK ||
      (st = jsonio_get_str(r, x, "term", JSONIO_REQUIRED, &term, NULL)) != MP_OK ||
      (st = jsonio_get_num(r, x, "solve_s", JSONIO_REQUIRED, 0, 1e30, &t.solve_s, NULL)) != MP_OK ||
      (st = jsonio_get_object(r, x, "samples_per_s", JSONIO_REQUIRED, &thr, NULL)) != MP_OK)
    return st;
  const char *too_long = strlen(binding) >= sizeof t.binding ? "binding"
                         : strlen(kind) >= sizeof t.kind     ? "period_kind"
                         : strlen(term) >= sizeof t.term     ? "term"
                                                             : NULL;
  if (too_long) return err_at(r->err, MP_INPUT, r->file, r->where, "'%s' is longer than any the bench writes", too_long);
  snprintf(t.binding, sizeof t.binding, "%s", binding);
  snprintf(t.kind, sizeof t.kind, "%s", kind);
  snprintf(t.term, sizeof t.term, "%s", term);
  char where[96];
  snprintf(where, sizeof where, "%s.samples_per_s", r->where);
  jsonio_reader rt = {r->file, where, r->err};
  for (int k = 0; k < m->n_methods; k++)
    if ((st = jsonio_get_num(&rt, thr, m->methods[k], JSONIO_REQUIRED, 0, 1e30, &t.thr[k], NULL)) != MP_OK) return st;
  t.done = 1;
  t.failure[0] = '\0';
  *row = t;
  return MP_OK;
}

mp_status fidelity_resume(fidelity_matrix *m, const char *path, int *taken, int *stale, mp_error *err) {
  *taken = *stale = 0;
  cJSON *root = NULL;
  mp_status st = jsonio_load(path, &root, err);
  if (st != MP_OK) return st;
  jsonio_reader r = {path, NULL, err};
  const cJSON *methods = NULL, *cases = NULL, *fast = cJSON_GetObjectItemCaseSensitive(root, "fast_streams");
  if ((st = jsonio_get_array(&r, root, "methods", JSONIO_REQUIRED, &methods, NULL)) != MP_OK ||
      (st = jsonio_get_array(&r, root, "cases", JSONIO_REQUIRED, &cases, NULL)) != MP_OK)
    goto done;
  int same = cJSON_GetArraySize(methods) == m->n_methods;
  for (int k = 0; same && k < m->n_methods; k++) {
    const char *name = cJSON_GetStringValue(cJSON_GetArrayItem(methods, k));
    same = name && strcmp(name, m->methods[k]) == 0;
  }
  if (!same) {
    st = err_at(err, MP_INPUT, path, "methods", "the run there simulated other methods; resume with the same --methods");
    goto done;
  }
  if (!cJSON_IsBool(fast)) {
    st = err_at(err, MP_INPUT, path, "fast_streams", "must be true or false");
    goto done;
  }
  if (cJSON_IsTrue(fast) != (m->fast_streams != 0)) {
    st = err_at(err, MP_INPUT, path, "fast_streams", "the run there %s --fast-streams; resume it the same way",
                cJSON_IsTrue(fast) ? "had" : "had no");
    goto done;
  }
  int i = 0;
  char where[32], hex[17];
  for (const cJSON *x = cases->child; x; x = x->next, i++) {
    snprintf(where, sizeof where, "cases[%d]", i);
    r.where = where;
    const char *graph_name, *chip_name, *graph_hash, *chip_hash;
    const cJSON *finished = cJSON_GetObjectItemCaseSensitive(x, "done");
    if (!cJSON_IsObject(x)) {
      st = err_at(err, MP_INPUT, path, where, "a case must be an object");
      goto done;
    }
    if ((st = jsonio_get_str(&r, x, "graph", JSONIO_REQUIRED, &graph_name, NULL)) != MP_OK ||
        (st = jsonio_get_str(&r, x, "graph_hash", JSONIO_REQUIRED, &graph_hash, NULL)) != MP_OK ||
        (st = jsonio_get_str(&r, x, "chip", JSONIO_REQUIRED, &chip_name, NULL)) != MP_OK ||
        (st = jsonio_get_str(&r, x, "chip_hash", JSONIO_REQUIRED, &chip_hash, NULL)) != MP_OK)
      goto done;
    if (!cJSON_IsBool(finished)) {
      st = err_at(err, MP_INPUT, path, where, "'done' must be true or false");
      goto done;
    }
    int row = row_named(m, graph_name, chip_name);
    if (row < 0 || !cJSON_IsTrue(finished)) continue; /* not in this matrix, or to run again */
    if (strcmp(graph_hash, fileio_hash_hex(m->graphs[m->rows[row].graph]->hash, hex)) != 0 ||
        strcmp(chip_hash, fileio_hash_hex(m->chips[m->rows[row].chip]->hash, hex)) != 0) {
      (*stale)++;
      continue;
    }
    if ((st = read_case(m, &r, x, &m->rows[row])) != MP_OK) goto done;
    (*taken)++;
  }
done:
  cJSON_Delete(root);
  return st;
}
