/* fidelity: see fidelity.h.
 *
 * The term that makes most of a difference between the model's period P_m and the simulated one P_s
 * is read off optimal's plan: "none" when they agree to 0.1%; when the model is the slower, what sets
 * its period (a link or port it bounds by its load, or a stage); otherwise, at the stage that is
 * busiest in the simulator, the component the simulator took longest over the model on ("compute",
 * i.e. work and all-gathers, "dram" or "send": all of them slowed by traffic sharing their links), or
 * "waiting" when that stage is busy for less than the period (the period is set by queues, not by
 * one stage's work). */
#include "fidelity.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cost.h"
#include "fileio.h"
#include "jsonio.h"
#include "method.h"
#include "onnx_import.h"
#include "plan.h"
#include "sim.h"
#include "sweep.h"

static const char *const default_methods[] = {"optimal", "even", "balanced", "seed-split", "greedy"};
static const char *const meshes[] = {"platforms/mesh4x4.json", "platforms/mesh8x8.json", "platforms/mesh16x16.json",
                                     "platforms/mesh32x32.json"};
static const char *const srams[] = {"1Mi", "2Mi", "4Mi", "8Mi"};

void fidelity_free(fidelity_matrix *m) {
  if (!m) return;
  for (int i = 0; i < m->n_graphs; i++) graph_free(m->graphs[i]);
  for (int i = 0; i < m->n_chips; i++) chip_free(m->chips[i]);
  free(m->graphs);
  free(m->chips);
  free(m->chip_labels);
  free(m->rows);
  free(m);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The sorted names in dir ending with suffix, as "dir/name" (owned array of owned strings). */
static mp_status list_files(const char *dir, const char *suffix, char ***out, int *n, mp_error *err) {
  *out = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return err_at(err, MP_INPUT, dir, NULL, "cannot open the folder");
  char **names = NULL;
  int cap = 0;
  mp_status st = MP_OK;
  for (struct dirent *e; (e = readdir(d));) {
    if (!fileio_has_suffix(e->d_name, suffix)) continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 16;
      char **grown = realloc(names, (size_t)cap * sizeof *grown);
      if (!grown) {
        st = err_nomem(err);
        break;
      }
      names = grown;
    }
    size_t len = strlen(dir) + strlen(e->d_name) + 2;
    if (!(names[*n] = malloc(len))) {
      st = err_nomem(err);
      break;
    }
    snprintf(names[(*n)++], len, "%s/%s", dir, e->d_name);
  }
  closedir(d);
  if (st == MP_OK && *n > 1) qsort(names, (size_t)*n, sizeof *names, cmp_str);
  *out = names;
  return st;
}

static void free_list(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

/* Adds g to the matrix unless a graph of the same hash is there; takes ownership either way. */
static mp_status add_graph(fidelity_matrix *m, graph *g, mp_error *err) {
  for (int i = 0; i < m->n_graphs; i++)
    if (m->graphs[i]->hash == g->hash) {
      graph_free(g);
      return MP_OK;
    }
  graph **grown = realloc(m->graphs, (size_t)(m->n_graphs + 1) * sizeof *grown);
  if (!grown) {
    graph_free(g);
    return err_nomem(err);
  }
  m->graphs = grown;
  m->graphs[m->n_graphs++] = g;
  return MP_OK;
}

mp_status fidelity_new(const char *data_dir, int quick, const char *const *methods, int n_methods,
                       fidelity_matrix **out, mp_error *err) {
  *out = NULL;
  fidelity_matrix *m = calloc(1, sizeof *m);
  if (!m) return err_nomem(err);
  mp_status st = MP_OK;
  char path[4096];
  char **files = NULL;
  int n_files = 0;
  cJSON *base = NULL;
  m->methods[m->n_methods++] = "optimal";
  if (!methods) {
    methods = default_methods;
    n_methods = (int)(sizeof default_methods / sizeof *default_methods);
  }
  for (int i = 0; i < n_methods; i++) {
    const method_info *mi = method_find(methods[i]);
    if (!mi) {
      st = err_set(err, MP_USAGE, "fidelity: no method '%s'", methods[i]);
      goto cleanup;
    }
    int seen = 0;
    for (int k = 0; k < m->n_methods; k++) seen |= strcmp(m->methods[k], mi->name) == 0;
    if (seen) continue;
    if (m->n_methods == FIDELITY_MAX_METHODS) {
      st = err_set(err, MP_USAGE, "fidelity: at most %d methods", FIDELITY_MAX_METHODS);
      goto cleanup;
    }
    m->methods[m->n_methods++] = mi->name;
  }
  /* graphs: the real models, then the bundled traces that are not among them */
  static const char *const dirs[][2] = {{"tests/models", ".onnx"}, {"traces", ".json"}};
  for (int d = 0; d < 2 && st == MP_OK; d++) {
    snprintf(path, sizeof path, "%s/%s", data_dir, dirs[d][0]);
    st = list_files(path, dirs[d][1], &files, &n_files, err);
    for (int i = 0; i < n_files && st == MP_OK; i++) {
      graph *g = NULL;
      if (d == 0) {
        onnx_report rep;
        st = onnx_import(files[i], NULL, &g, &rep, err);
        onnx_report_free(&rep);
      } else {
        st = graph_load(files[i], &g, err);
      }
      if (st == MP_OK) st = add_graph(m, g, err);
    }
    free_list(files, n_files);
    files = NULL;
    n_files = 0;
  }
  if (st != MP_OK) goto cleanup;
  /* chips: each mesh with each SRAM size */
  int n_mesh = quick ? 2 : 4, n_sram = quick ? 2 : 4;
  m->chips = calloc((size_t)(n_mesh * n_sram), sizeof *m->chips);
  m->chip_labels = calloc((size_t)(n_mesh * n_sram), sizeof *m->chip_labels);
  if (!m->chips || !m->chip_labels) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int k = 0; k < n_mesh && st == MP_OK; k++) {
    snprintf(path, sizeof path, "%s/%s", data_dir, meshes[k]);
    st = jsonio_load(path, &base, err);
    for (int s = 0; s < n_sram && st == MP_OK; s++) {
      const char *key = "core.sram_bytes", *value = srams[quick ? 1 + 2 * s : s];
      st = sweep_chip_variant(base, path, &key, &value, 1, &m->chips[m->n_chips], err);
      if (st == MP_OK) {
        snprintf(m->chip_labels[m->n_chips], sizeof *m->chip_labels, "%.24s-%s", m->chips[m->n_chips]->name, value);
        m->n_chips++;
      }
    }
    cJSON_Delete(base);
    base = NULL;
  }
  if (st != MP_OK) goto cleanup;
  m->n_rows = m->n_graphs * m->n_chips;
  m->rows = calloc((size_t)m->n_rows, sizeof *m->rows);
  if (!m->rows) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int i = 0; i < m->n_rows; i++) {
    m->rows[i].graph = i / m->n_chips;
    m->rows[i].chip = i % m->n_chips;
  }
cleanup:
  free_list(files, n_files);
  cJSON_Delete(base);
  if (st != MP_OK) {
    fidelity_free(m);
    return st;
  }
  *out = m;
  return MP_OK;
}

/* The term of the difference (see the comment at the top). */
static void name_term(const cost_result *cr, const sim_result *sr, char *term, size_t n) {
  double ratio = cr->period_s / sr->period_s;
  if (fabs(ratio - 1) <= 1e-3) {
    snprintf(term, n, "none");
    return;
  }
  if (ratio > 1) {
    snprintf(term, n, "model-%s", cost_binding_name(cr->binding));
    return;
  }
  int b = sr->bottleneck_stage;
  const sim_stage_result *ss = &sr->stages[b];
  const cost_stage *cs = &cr->stages[b];
  double busy = ss->compute_s + ss->dram_s > ss->comm_s ? ss->compute_s + ss->dram_s : ss->comm_s;
  if (busy < sr->period_s * (1 - 1e-3)) {
    snprintf(term, n, "waiting");
    return;
  }
  double d[3] = {ss->compute_s - cs->compute_s, ss->dram_s - cs->dram_s, ss->comm_s - cs->send_s};
  static const char *const names[3] = {"compute", "dram", "send"};
  int k = 0;
  for (int i = 1; i < 3; i++)
    if (d[i] > d[k]) k = i;
  snprintf(term, n, "%s", names[k]);
}

mp_status fidelity_run_case(fidelity_matrix *m, int i, mp_error *err) {
  fidelity_row *row = &m->rows[i];
  const graph *g = m->graphs[row->graph];
  const chip *c = m->chips[row->chip];
  sim *s = NULL;
  plan *p = NULL;
  cost_result *cr = NULL;
  sim_result sr;
  memset(&sr, 0, sizeof sr);
  sim_options o;
  sim_options_init(&o);
  o.fast_streams = m->fast_streams;
  mp_status st = sim_new(c, &o, &s, err);
  for (int k = 0; k < m->n_methods && st == MP_OK; k++) {
    method_options mo;
    method_options_default(&mo);
    mo.sim = s;
    method_report rep;
    plan_free(p);
    p = NULL;
    sim_result_clear(&sr);
    st = method_run(m->methods[k], g, c, &mo, &p, &rep, err);
    if (st == MP_OK && m->plans_dir) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s.%s.%s.plan.json", m->plans_dir, g->name, m->chip_labels[row->chip],
               m->methods[k]);
      st = plan_write(p, g, c, path, err);
    }
    if (st == MP_OK) st = sim_evaluate(s, g, p, &sr, err);
    if (st != MP_OK) break;
    row->thr[k] = sr.samples_per_s;
    if (k > 0) continue;
    st = cost_evaluate(g, c, p, &cr, err);
    if (st != MP_OK) break;
    row->n_stages = p->n_stages;
    row->model_s = cr->period_s;
    row->sim_s = sr.period_s;
    row->microbatches = sr.microbatches;
    row->solve_s = rep.solve_s;
    snprintf(row->binding, sizeof row->binding, "%s", cost_binding_name(cr->binding));
    snprintf(row->kind, sizeof row->kind, "%s", sim_period_kind_name(sr.period_kind));
    name_term(cr, &sr, row->term, sizeof row->term);
  }
  if (st == MP_OK) row->done = 1;
  sim_result_clear(&sr);
  cost_result_free(cr);
  plan_free(p);
  sim_free(s);
  return st;
}

void fidelity_row_encode(const fidelity_row *r, int n_methods, strbuf *out) {
  strbuf_printf(out, "%d %.17g %.17g %s %s %d %s %.17g", r->n_stages, r->model_s, r->sim_s, r->binding, r->kind,
                r->microbatches, r->term, r->solve_s);
  for (int k = 0; k < n_methods; k++) strbuf_printf(out, " %.17g", r->thr[k]);
}

mp_status fidelity_row_decode(const char *line, int n_methods, fidelity_row *r, mp_error *err) {
  int used = 0;
  char term[24];
  if (sscanf(line, "%d %lg %lg %15s %15s %d %23s %lg%n", &r->n_stages, &r->model_s, &r->sim_s, r->binding, r->kind,
             &r->microbatches, term, &r->solve_s, &used) != 8)
    return err_set(err, MP_RUN, "fidelity: a worker's answer is unreadable: %.80s", line);
  snprintf(r->term, sizeof r->term, "%s", term);
  const char *p = line + used;
  for (int k = 0; k < n_methods; k++) {
    int n = 0;
    if (sscanf(p, " %lg%n", &r->thr[k], &n) != 1) return err_set(err, MP_RUN, "fidelity: a worker's answer is cut short");
    p += n;
  }
  r->done = 1;
  return MP_OK;
}

typedef struct pool_ctx {
  fidelity_matrix *m;
  fidelity_progress_fn progress;
  void *ctx;
  int done, total;
} pool_ctx;

static mp_status pool_job(void *ctx, int item, char *line, size_t cap, mp_error *err) {
  pool_ctx *x = ctx;
  mp_status st = fidelity_run_case(x->m, item, err);
  if (st != MP_OK) return st;
  strbuf b = {0};
  fidelity_row_encode(&x->m->rows[item], x->m->n_methods, &b);
  if (b.oom || b.len >= cap) st = err_set(err, MP_RUN, "fidelity: a case's answer is too long");
  else memcpy(line, b.s, b.len + 1);
  strbuf_clear(&b);
  return st;
}

static mp_status pool_done(void *ctx, int item, const char *line, const mp_error *failure, mp_error *err) {
  pool_ctx *x = ctx;
  fidelity_row *r = &x->m->rows[item];
  mp_error bad;
  err_clear(&bad);
  if (line && fidelity_row_decode(line, x->m->n_methods, r, &bad) == MP_OK) {
  } else {
    r->done = 0;
    snprintf(r->failure, sizeof r->failure, "%.255s", line ? bad.msg : failure->msg);
  }
  r->pending = 0;
  x->done++;
  if (x->progress) x->progress(x->ctx, x->done, x->total);
  return x->m->save_path ? fidelity_save(x->m, x->m->save_path, err) : MP_OK;
}

/* Makes m->plans_dir if missing and writes into it the chip of every pending case. */
static mp_status write_chips(const fidelity_matrix *m, mp_error *err) {
  struct stat sb;
  if (mkdir(m->plans_dir, 0777) != 0 && errno != EEXIST)
    return err_at(err, MP_OUTPUT, m->plans_dir, NULL, "cannot make the plans directory: %s", strerror(errno));
  if (stat(m->plans_dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
    return err_at(err, MP_OUTPUT, m->plans_dir, NULL, "the plans directory is not a directory");
  for (int k = 0; k < m->n_chips; k++) {
    int used = 0;
    for (int i = 0; i < m->n_rows; i++) used |= m->rows[i].pending && m->rows[i].chip == k;
    if (!used) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.chip.json", m->plans_dir, m->chip_labels[k]);
    cJSON *j = chip_to_json(m->chips[k]);
    mp_status st = j ? jsonio_save(path, j, err) : err_nomem(err);
    cJSON_Delete(j);
    if (st != MP_OK) return st;
  }
  return MP_OK;
}

mp_status fidelity_run(fidelity_matrix *m, int jobs, const char *filter, fidelity_progress_fn progress, void *ctx,
                       mp_error *err) {
  int *items = malloc(((size_t)m->n_rows + 1) * sizeof *items), n = 0, matched = 0;
  if (!items) return err_nomem(err);
  for (int i = 0; i < m->n_rows; i++) {
    char key[160];
    fidelity_row *r = &m->rows[i];
    snprintf(key, sizeof key, "%s|%s", m->graphs[r->graph]->name, m->chip_labels[r->chip]);
    int left_out = filter && !strstr(key, filter);
    matched += !left_out;
    r->skipped = left_out && !r->done; /* a resumed case stays in the results */
    if (!left_out && !r->done) {
      r->pending = 1;
      items[n++] = i;
    }
  }
  if (matched == 0) {
    free(items);
    return err_set(err, MP_USAGE, "--filter '%s' matches no case of the matrix", filter ? filter : "");
  }
  pool_ctx x = {m, progress, ctx, 0, n};
  mp_status st = n > 0 && m->plans_dir ? write_chips(m, err) : MP_OK;
  if (st == MP_OK && n > 0) st = sweep_pool_run(items, n, jobs, pool_job, pool_done, NULL, 0, &x, err);
  free(items);
  return st;
}

/* The best simulated throughput over the methods, and which. */
static double best_of(const fidelity_matrix *m, const fidelity_row *r, int *which) {
  double best = 0;
  *which = 0;
  for (int k = 0; k < m->n_methods; k++)
    if (r->thr[k] > best) {
      best = r->thr[k];
      *which = k;
    }
  return best;
}

void fidelity_summarize(const fidelity_matrix *m, fidelity_summary *s) {
  memset(s, 0, sizeof *s);
  s->worst_ratio = 1;
  s->worst_vs_best = 1;
  s->worst_row = s->worst_vs_best_row = -1;
  for (int i = 0; i < m->n_rows; i++) {
    const fidelity_row *r = &m->rows[i];
    if (!r->done) continue;
    s->cases++;
    double ratio = r->model_s / r->sim_s, off = fabs(ratio - 1);
    s->within_5 += off <= 0.05;
    s->within_10 += off <= 0.10;
    s->within_15 += off <= 0.15;
    if (off > fabs(s->worst_ratio - 1)) {
      s->worst_ratio = ratio;
      s->worst_row = i;
    }
    int which;
    double best = best_of(m, r, &which), vs = r->thr[0] / best;
    s->optimal_best += vs >= 1 / 1.03;
    if (vs < s->worst_vs_best) {
      s->worst_vs_best = vs;
      s->worst_vs_best_row = i;
    }
  }
}

void fidelity_table(const fidelity_matrix *m, strbuf *out) {
  strbuf_printf(out, "%-20s %-20s %7s %12s %12s %7s %-9s %-10s %-10s %17s %9s %-10s\n", "graph", "chip", "stages",
                "model", "simulated", "ratio", "binding", "simulator", "term", "optimal samples/s", "vs best", "best");
  for (int i = 0; i < m->n_rows; i++) {
    const fidelity_row *r = &m->rows[i];
    const char *g = m->graphs[r->graph]->name, *c = m->chip_labels[r->chip];
    if (r->skipped) continue;
    if (!r->done) {
      strbuf_printf(out, "%-20.20s %-20.20s FAILED: %s\n", g, c, r->failure);
      continue;
    }
    int which;
    double best = best_of(m, r, &which);
    strbuf_printf(out, "%-20.20s %-20.20s %7d %9.2f us %9.2f us %7.4f %-9s %-10s %-10s %17.6g %8.1f%% %-10s\n", g, c,
                  r->n_stages, r->model_s * 1e6, r->sim_s * 1e6, r->model_s / r->sim_s, r->binding, r->kind, r->term,
                  r->thr[0], 100 * r->thr[0] / best, m->methods[which]);
  }
  fidelity_summary s;
  fidelity_summarize(m, &s);
  double pc = s.cases ? 100.0 / s.cases : 0.0;
  strbuf_printf(out,
                "\n%d cases%s: model / simulated period within 5%% on %d (%.1f%%), within 10%% on %d (%.1f%%), "
                "within 15%% on %d (%.1f%%)",
                s.cases, m->fast_streams ? " (DRAM streams batched per port: --fast-streams)" : "", s.within_5,
                pc * s.within_5, s.within_10, pc * s.within_10, s.within_15, pc * s.within_15);
  if (s.worst_row >= 0)
    strbuf_printf(out, "; worst %.4f (%s on %s)", s.worst_ratio, m->graphs[m->rows[s.worst_row].graph]->name,
                  m->chip_labels[m->rows[s.worst_row].chip]);
  strbuf_printf(out, "\noptimal's plan within 3%% of the best simulated plan on %d of %d cases", s.optimal_best,
                s.cases);
  if (s.worst_vs_best_row >= 0)
    strbuf_printf(out, "; worst %.1f%% (%s on %s)\n", 100 * s.worst_vs_best,
                  m->graphs[m->rows[s.worst_vs_best_row].graph]->name, m->chip_labels[m->rows[s.worst_vs_best_row].chip]);
  else
    strbuf_printf(out, "\n");
}
