/* report: the simulate report.  See report.h. */
#include "report.h"

#include <math.h>
#include <stdio.h>

#include "binds.h"
#include "cli.h"

/* s in the largest unit that keeps it at least 1 (s, ms, us, ns), with `digits` significant digits. */
static char *fmt_s_digits(double s, int digits, char *buf, size_t n) {
  if (s >= 1 || s == 0)
    snprintf(buf, n, "%.*g s", digits, s);
  else if (s >= 1e-3)
    snprintf(buf, n, "%.*g ms", digits, s * 1e3);
  else if (s >= 1e-6)
    snprintf(buf, n, "%.*g us", digits, s * 1e6);
  else
    snprintf(buf, n, "%.*g ns", digits, s * 1e9);
  return buf;
}

static char *fmt_s(double s, char *buf, size_t n) { return fmt_s_digits(s, 6, buf, n); }

int report_add_mesh_json(cJSON *o, const chip *c) {
  cJSON *m = cJSON_AddObjectToObject(o, "mesh"), *ports = NULL;
  int ok = m && cJSON_AddNumberToObject(m, "width", c->width) && cJSON_AddNumberToObject(m, "height", c->height) &&
           (ports = cJSON_AddArrayToObject(m, "dram_ports"));
  for (int i = 0; ok && i < c->n_dram; i++) {
    int xy[2] = {c->dram[i].x, c->dram[i].y};
    cJSON *p = cJSON_CreateIntArray(xy, 2);
    ok = p && cJSON_AddItemToArray(ports, p);
    if (!ok) cJSON_Delete(p);
  }
  return ok;
}

char *report_fmt_s(double s, char *buf, size_t n) { return fmt_s_digits(s, 4, buf, n); }

char *report_binds(const cost_result *r, const chip *c, char *buf, size_t n) {
  binds_verdict v;
  binds_run(r, &v);
  char a[32], b[32], d[32], e[32], link[48];
  if (v.link >= 0) {
    chip_link_name(c, v.link, link, sizeof link);
    snprintf(buf, n, "%s %s: %s per micro-batch, %s", v.kind == BINDS_DRAM ? "DRAM port link" : "NoC link", link,
             cli_fmt_bytes(r->link_bytes[v.link], a, sizeof a), report_fmt_s(r->link_bound_s, b, sizeof b));
    return buf;
  }
  const cost_stage *s = &r->stages[v.stage];
  binds_parts p;
  binds_stage_parts(s, &p);
  int len = snprintf(buf, n, "stage %d's %s: work %s, all-gathers %s, DRAM waits %s, Sends %s", v.stage,
                     binds_name(v.kind), report_fmt_s(p.work_s, a, sizeof a), report_fmt_s(p.gather_s, b, sizeof b),
                     report_fmt_s(p.dram_s, d, sizeof d), report_fmt_s(p.send_s, e, sizeof e));
  if (!s->fits && len > 0 && (size_t)len < n)
    snprintf(buf + len, n - (size_t)len, " (its cores need %s of %s SRAM)", cli_fmt_bytes(s->mem_bytes, a, sizeof a),
             cli_fmt_bytes(s->sram_bytes, b, sizeof b));
  return buf;
}

char *report_stages_binding(const cost_result *r, char *buf, size_t n) {
  int counts[BINDS_KINDS];
  binds_count(r, counts);
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < BINDS_KINDS; k++)
    if (counts[k] > 0 && used < n) {
      int w = snprintf(buf + used, n - used, "%s%d %s", used ? ", " : "", counts[k], binds_name(k));
      if (w > 0) used += (size_t)w;
    }
  return buf;
}

char *report_samples(double microbatches_per_s, int batch, char *buf, size_t n) {
  if (batch > 1)
    snprintf(buf, n, "%.4g samples/s = %.4g micro-batches/s x %d", microbatches_per_s * batch, microbatches_per_s,
             batch);
  else
    snprintf(buf, n, "%.4g samples/s", microbatches_per_s);
  return buf;
}

char *report_fmt_j(double j, char *buf, size_t n) {
  static const char *const unit[] = {"J", "mJ", "uJ", "nJ", "pJ"};
  int i = 0;
  while (i < 4 && j != 0 && fabs(j) < 1) {
    j *= 1000;
    i++;
  }
  snprintf(buf, n, "%.4g %s", j, unit[i]);
  return buf;
}

/* The energy lines of a result (a chip with energy figures). */
static void print_energy(const energy_summary *e) {
  char a[32], b[32], c[32], d[32], f[32], g[32];
  printf("energy       %s per sample, %.4g W average, %.4g samples/J, %.4g TOPS/W effective\n",
         report_fmt_j(e->j_per_sample, a, sizeof a), e->power_w, e->samples_per_j, e->tops_per_w);
  printf("             compute %s, SRAM %s, NoC %s, DRAM %s, static %s per sample\n",
         report_fmt_j(e->per_sample.compute, b, sizeof b), report_fmt_j(e->per_sample.sram, c, sizeof c),
         report_fmt_j(e->per_sample.noc, d, sizeof d), report_fmt_j(e->per_sample.dram, f, sizeof f),
         report_fmt_j(e->per_sample.leak, g, sizeof g));
}

void report_print(const char *graph_name, const chip *c, const sim_result *r, const optimes *ot) {
  char a[32], b[32], d[32], e[32], f[32], per[64] = "";
  if (r->batch > 1) snprintf(per, sizeof per, " of %d samples", r->batch);
  printf("%s on %s: %d stage%s, %d micro-batch%s%s simulated\n", graph_name, c->name, r->n_stages,
         r->n_stages == 1 ? "" : "s", r->microbatches, r->microbatches == 1 ? "" : "es", per);
  if (r->batch > 1)
    printf("throughput   %.6g samples/s = %.6g micro-batches/s x %d samples (period %s between micro-batch "
           "completions)\n",
           r->samples_per_s, r->microbatches_per_s, r->batch, fmt_s(r->period_s, a, sizeof a));
  else
    printf("throughput   %.6g samples/s (period %s between micro-batch completions)\n", r->samples_per_s,
           fmt_s(r->period_s, a, sizeof a));
  switch (r->period_kind) {
  case SIM_PERIOD_STEADY:
    printf("steady state reached after a warm-up of %d micro-batch%s (completions repeat every %d)\n",
           r->warmup_microbatches, r->warmup_microbatches == 1 ? "" : "es", r->cycle);
    break;
  case SIM_PERIOD_UNSETTLED:
    printf("NOT SETTLED   the completions were not periodic within %s: the period is the mean of the\n"
           "             second half after the warm-up (raise --max-microbatches to look further)\n",
           cli_count(r->microbatches, "micro-batch", "micro-batches", b, sizeof b));
    break;
  case SIM_PERIOD_FIXED:
    printf("fixed run    %d micro-batch%s (-M): the period includes the pipeline's start-up\n", r->microbatches,
           r->microbatches == 1 ? "" : "es");
    break;
  }
  if (r->batch > 1)
    printf("latency      %s per micro-batch of %d samples through the empty pipeline\n", fmt_s(r->latency_s, a, sizeof a),
           r->batch);
  else
    printf("latency      %s per sample through the empty pipeline\n", fmt_s(r->latency_s, a, sizeof a));
  printf("makespan     %s for the %d micro-batch%s\n", fmt_s(r->makespan_s, a, sizeof a), r->microbatches,
         r->microbatches == 1 ? "" : "es");
  printf("model        period %s (%.6g samples/s), set by %s; model / simulated %.4f\n",
         fmt_s(r->model_period_s, a, sizeof a), r->model_period_s > 0 ? r->batch / r->model_period_s : 0.0,
         r->model_binding,
         r->period_s > 0 ? r->model_period_s / r->period_s : 0.0);
  if (c->has_energy) print_energy(&r->energy);
  printf("\n%5s %-11s %-11s %12s %12s %12s %12s %12s %21s%s\n", "stage", "layers", "cores", "compute", "comm", "dram",
         "idle", "model t_i", "SRAM/core", c->has_energy ? "   energy/sample" : "");
  for (int i = 0; i < r->n_stages; i++) {
    const sim_stage_result *s = &r->stages[i];
    char layers[32], cores[32], mem[64];
    snprintf(layers, sizeof layers, "%d-%d", s->first_layer, s->first_layer + s->n_layers - 1);
    snprintf(cores, sizeof cores, "%d-%d", s->first_core, s->first_core + s->n_cores - 1);
    snprintf(mem, sizeof mem, "%s%s", cli_fmt_bytes((double)s->sram_bytes, b, sizeof b), s->fits ? "" : " (spills)");
    char joules[48] = "";
    if (c->has_energy) snprintf(joules, sizeof joules, " %15s", report_fmt_j(s->energy_j, a, sizeof a));
    printf("%5d %-11s %-11s %12s %12s %12s %12s %12s %21s%s%s\n", i, layers, cores, fmt_s(s->compute_s, a, sizeof a),
           fmt_s(s->comm_s, d, sizeof d), fmt_s(s->dram_s, e, sizeof e), fmt_s(s->idle_s, f, sizeof f),
           fmt_s(s->analytical_t_s, b, sizeof b), mem, joules, i == r->bottleneck_stage ? "  <- bottleneck" : "");
  }
  printf("(stage times are per micro-batch%s; idle = period - compute - dram)\n",
         r->period_kind == SIM_PERIOD_FIXED ? ", averaged over the run" : ", averaged after the warm-up");
  int over = 0;
  for (int k = 0; k < r->n_cores; k++) over += !r->cores[k].fits;
  if (r->feasible)
    printf("\nmemory       every core's SRAM holds its share\n");
  else
    printf("\nmemory       DOES NOT FIT on %d core%s: %s streamed from DRAM per micro-batch\n", over, over == 1 ? "" : "s",
           cli_fmt_bytes((double)r->dram_bytes, a, sizeof a));
  if (r->n_links > 0) {
    printf("\nbusiest links (bytes per micro-batch, utilisation of the period):\n");
    for (int k = 0; k < r->n_links; k++)
      printf("  %-22s %12s  %5.1f%%\n", r->links[k].name, cli_fmt_bytes((double)r->links[k].bytes, a, sizeof a),
             100 * r->links[k].utilisation);
  }
  if (ot)
    printf("\nop times     %d of %d ops take the measured times of %s; the others keep the flop model\n",
           ot->n_overridden, ot->n_layers, ot->file);
  printf("\nsimulated with %ld SimGrid activities\n", r->activities);
}
