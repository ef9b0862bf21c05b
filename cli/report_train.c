/* report_train: reports of trained plans.  See report_train.h. */
#include "report_train.h"

#include <stdio.h>

#include "cli.h"
#include "report.h"

#define fmt_s report_fmt_s

char *report_train_setup(const train *t, char *buf, size_t n) {
  static const char *const dtype[5] = {"?", "int8", "fp16", "?", "fp32"};
  int states = t->opt.optimizer == TRAIN_SGD ? 0 : t->opt.optimizer == TRAIN_MOMENTUM ? 1 : 2;
  char st[32] = "";
  if (states) snprintf(st, sizeof st, ", %d fp32 state%s", states, states == 1 ? "" : "s");
  snprintf(buf, n, "%s, %d micro-batch%s per mini-batch, %s: %llu B per parameter (%s weight and gradient%s%s), %s",
           train_schedule_name(t->opt.schedule), t->opt.microbatches, t->opt.microbatches == 1 ? "" : "es",
           train_optimizer_name(t->opt.optimizer), (unsigned long long)t->bytes_per_param,
           dtype[t->elem_bytes <= 4 ? t->elem_bytes : 0], t->master ? ", fp32 master copy" : "", st,
           t->opt.recompute ? "recompute (stage inputs kept, forward run again)" : "no recompute");
  return buf;
}

void report_train_sim(const char *graph_name, const chip *c, const sim_train_result *r) {
  char a[32], b[32], d[32], e[32], f[32], g[32], h[32], k[32];
  printf("%s on %s: %d stage%s trained, %s schedule, %d micro-batch%s per mini-batch, %s%s\n", graph_name, c->name,
         r->n_stages, r->n_stages == 1 ? "" : "s", train_schedule_name(r->schedule), r->microbatches,
         r->microbatches == 1 ? "" : "es", train_optimizer_name(r->optimizer), r->recompute ? ", recompute" : "");
  printf("throughput   %.6g samples/s (a mini-batch of %d x %d samples in %s; the last backward ends at %s)\n",
         r->samples_per_s, r->microbatches, r->batch, fmt_s(r->minibatch_s, a, sizeof a), fmt_s(r->fb_s, b, sizeof b));
  printf("bubble       %.1f%% of the stages' time until the last backward is idle (model %.1f%%)\n", 100 * r->bubble,
         100 * r->model_bubble);
  printf("period       %s between micro-batch completions (model: %s per micro-batch at the slowest stage; "
         "mini-batch %s)\n",
         fmt_s(r->period_s, a, sizeof a), fmt_s(r->model_period_s, b, sizeof b), fmt_s(r->model_minibatch_s, d, sizeof d));
  int over = 0;
  for (int i = 0; i < r->n_stages; i++) over += !r->stages[i].fits;
  if (r->feasible)
    printf("memory       fits: SRAM peak %s per core over the schedule\n", cli_fmt_bytes((double)r->sram_peak_bytes, a, sizeof a));
  else
    printf("memory       DOES NOT FIT on %d stage%s: SRAM peak %s per core; %s streamed from DRAM per mini-batch\n", over,
           over == 1 ? "" : "s", cli_fmt_bytes((double)r->sram_peak_bytes, a, sizeof a),
           cli_fmt_bytes((double)r->dram_bytes, b, sizeof b));
  printf("\n%5s %-11s %-11s %11s %11s %10s %11s %5s %10s %10s %23s\n", "stage", "layers", "cores", "forward", "backward",
         "update", "idle", "held", "stash", "static", "SRAM peak (naive)/core");
  for (int i = 0; i < r->n_stages; i++) {
    const sim_train_stage *s = &r->stages[i];
    char layers[32], cores[32], mem[64], held[24];
    snprintf(layers, sizeof layers, "%d-%d", s->first_layer, s->first_layer + s->n_layers - 1);
    snprintf(cores, sizeof cores, "%d-%d", s->first_core, s->first_core + s->n_cores - 1);
    if (r->schedule == TRAIN_ZB)
      snprintf(held, sizeof held, "%d+%d", s->held, s->w_held);
    else
      snprintf(held, sizeof held, "%d", s->held);
    snprintf(mem, sizeof mem, "%s (%s)%s", cli_fmt_bytes((double)s->sram_peak_bytes, g, sizeof g),
             cli_fmt_bytes((double)s->sram_naive_bytes, h, sizeof h), s->fits ? "" : " !");
    printf("%5d %-11s %-11s %11s %11s %10s %11s %5s %10s %10s %23s\n", i, layers, cores, fmt_s(s->fwd_s, a, sizeof a),
           fmt_s(s->bwd_s, b, sizeof b), fmt_s(s->update_s, d, sizeof d), fmt_s(s->idle_s, e, sizeof e), held,
           cli_fmt_bytes((double)s->stash_bytes, f, sizeof f), cli_fmt_bytes((double)s->static_bytes, k, sizeof k), mem);
  }
  printf("(times are totals over the mini-batch; held: the micro-batches whose activations the stage kept at\n"
         " its memory peak; SRAM peak = static + (held - 1) x stash + one micro-batch's planned activations, naive:\n"
         " every tensor in storage of its own; ! does not fit)\n");
  if (r->schedule == TRAIN_ZB)
    printf("(zb: held S+W, S stashes and W micro-batches waiting between their input- and weight-gradient passes,\n"
           " each keeping the inputs of the layers with weights and their output gradients: the SRAM peak adds W of\n"
           " those; traces/README.md)\n");
}

void report_train_model(const graph *g, const chip *c, const train *t, const train_result *r) {
  char a[32], b[32], d[32], e[32], f[32], h[32], k[32], setup[256];
  printf("training   %s\n", report_train_setup(t, setup, sizeof setup));
  printf("\n%5s %-11s %-36s %-9s %10s %10s %10s %10s %10s %4s %9s %9s %20s\n", "stage", "layers", "ops", "cores",
         "forward", "backward", "dram", "send", "t_i", "held", "stash", "peak", "need (naive) / SRAM");
  for (int i = 0; i < r->n_stages; i++) {
    const train_stage *s = &r->stages[i];
    const cost_stage *cs = &s->cs;
    char layers[32], cores[32], ops[96], mem[64];
    snprintf(layers, sizeof layers, "%d-%d", cs->first_layer, cs->first_layer + cs->n_layers - 1);
    snprintf(cores, sizeof cores, "%d-%d", cs->first_core, cs->first_core + cs->n_cores - 1);
    snprintf(ops, sizeof ops, "%.16s .. %.16s", g->ops[cs->first_layer].name, g->ops[cs->first_layer + cs->n_layers - 1].name);
    snprintf(mem, sizeof mem, "%s (%s) / %s%s", cli_fmt_bytes(cs->mem_bytes, a, sizeof a),
             cli_fmt_bytes(s->mem_naive_bytes, b, sizeof b), cli_fmt_bytes(cs->sram_bytes, d, sizeof d), cs->fits ? "" : " !");
    printf("%5d %-11s %-36s %-9s %10s %10s %10s %10s %10s %4d %9s %9s %20s%s\n", i, layers, ops, cores,
           fmt_s(s->fwd_s, a, sizeof a), fmt_s(s->bwd_s, b, sizeof b), fmt_s(cs->dram_s, d, sizeof d),
           fmt_s(cs->send_s, e, sizeof e), fmt_s(cs->time_s, f, sizeof f), s->in_flight,
           cli_fmt_bytes((double)s->r.stash_bytes, h, sizeof h), cli_fmt_bytes((double)s->r.peak_bytes, k, sizeof k), mem,
           i == r->bottleneck_stage ? "  <- slowest" : "");
  }
  printf("\nmodel period           %s per micro-batch (%s)\n", fmt_s(r->period_s, a, sizeof a),
         r->link_bound_s >= r->period_s && r->busiest_link >= 0 ? "a NoC link's load" : "the slowest stage");
  printf("mini-batch             %s for %d micro-batches: %.5g samples/s, bubble %.1f%%\n",
         fmt_s(r->minibatch_s, a, sizeof a), r->microbatches, r->samples_per_s, 100 * r->bubble);
  double in = 0, out = 0;
  for (int i = 0; i < r->n_stages; i++) {
    in += r->stages[i].cs.dram_in_bytes;
    out += r->stages[i].cs.dram_out_bytes;
  }
  if (r->feasible)
    printf("memory                 fits (largest per-core need %.0f%% of SRAM)\n", 100 * r->mem_ratio);
  else
    printf("memory                 DOES NOT FIT: largest per-core need %.3g x SRAM (stages marked !); per pass %s read "
           "from DRAM, %s written back\n",
           r->mem_ratio, cli_fmt_bytes(in, a, sizeof a), cli_fmt_bytes(out, b, sizeof b));
  (void)c;
}
