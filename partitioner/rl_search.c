/* rl_search: steepest ascent, pair moves, kicks and regrouping around a trainer's best plans.  See
 * rl_search.h.  Every plan is scored through the trainer, which keeps the best (rl_trainer_evaluate
 * at once, a round's candidates at the round's end: rl_round_*), so a search only decides which plans
 * to try, each round or kick from the best plan so far. */
#include "rl_search.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rl_train_int.h"

mp_status rl_search_polish(rl_trainer *t, int i, int max_rounds, mp_error *err) {
  rl_inst_state *s = &t->inst[i];
  int *from = malloc((size_t)t->n_cores * sizeof *from);
  unsigned char *allowed = malloc((size_t)t->n_out);
  rl_eval *evs = malloc((size_t)t->n_out * sizeof *evs);
  mp_status st = MP_OK;
  if (!from || !allowed || !evs) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int round = 0; round < max_rounds; round++) {
    memcpy(from, s->best, (size_t)t->n_cores * sizeof *from);
    rl_eval before = s->best_eval;
    st = rl_trainer_evaluate_actions(t, i, from, allowed, evs, err);
    if (st != MP_OK || !rl_trainer_better(t, &s->best_eval, &before)) break;
  }
cleanup:
  free(from);
  free(allowed);
  free(evs);
  return st;
}

mp_status rl_search_polish_pairs(rl_trainer *t, int i, int max_rounds, mp_error *err) {
  rl_inst_state *s = &t->inst[i];
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  int *from = malloc(bytes), *mid = malloc(bytes), *cand = malloc(bytes);
  mp_status st = MP_OK;
  if (!from || !mid || !cand) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int round = 0; round < max_rounds && st == MP_OK; round++) {
    memcpy(from, s->best, bytes);
    rl_eval before = s->best_eval;
    rl_round r;
    if ((st = rl_round_begin(t, &r, err)) != MP_OK) break;
    /* the candidates in order: per first move a (a rank's share), mid, then mid and each second move b */
    for (int a = 0; a < t->n_out && st == MP_OK; a++) {
      if (!rl_round_owns(t, (uint64_t)a) || !rl_env_apply(s->in.env, from, a, mid)) continue;
      uint64_t order = (uint64_t)a * (uint64_t)(t->n_out + 1);
      st = rl_round_score(t, i, &r, order, mid, err);
      /* the second move: every allowed action from mid, except the one that undoes the first, and
       * except an earlier action b on other cores: b then a is the same plan, tried when b came first */
      for (int b = 0; b < t->n_out && st == MP_OK; b++) {
        if (b < a && abs(b / RL_PAIR_ACTIONS - a / RL_PAIR_ACTIONS) >= 2) continue;
        if (!rl_env_can_apply(s->in.env, mid, b)) continue;
        rl_env_apply(s->in.env, mid, b, cand);
        if (memcmp(cand, from, bytes) != 0) st = rl_round_score(t, i, &r, order + 1 + (uint64_t)b, cand, err);
      }
    }
    if (st == MP_OK) st = rl_round_end(t, i, &r, err);
    else rl_round_drop(&r);
    if (st != MP_OK || !rl_trainer_better(t, &s->best_eval, &before)) break;
  }
cleanup:
  free(from);
  free(mid);
  free(cand);
  return st;
}

mp_status rl_search_kick(rl_trainer *t, int i, int kicks, int kick_moves, mp_error *err) {
  rl_inst_state *s = &t->inst[i];
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  int *cur = malloc(bytes);
  unsigned char *mask = malloc((size_t)t->n_out);
  rl_eval *evs = malloc((size_t)t->n_out * sizeof *evs);
  mp_status st = MP_OK;
  if (!cur || !mask || !evs) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int k = 0; k < kicks && st == MP_OK; k++) {
    memcpy(cur, s->best, bytes);
    int moves = 1 + (int)rng_below(&t->rng, (uint64_t)(kick_moves > 1 ? kick_moves : 1));
    for (int m = 0; m < moves; m++) { /* the kick: 1..kick_moves random allowed moves */
      int n = rl_env_mask(s->in.env, cur, mask);
      if (n == 0) break;
      int r = (int)rng_below(&t->rng, (uint64_t)n);
      for (int a = 0; a < t->n_out; a++)
        if (mask[a] && r-- == 0) {
          rl_env_apply(s->in.env, cur, a, cur);
          break;
        }
    }
    rl_eval cur_ev;
    st = rl_trainer_evaluate(t, i, cur, &cur_ev, err);
    for (int improved = 1; improved && st == MP_OK;) { /* steepest ascent from the kicked plan */
      improved = 0;
      st = rl_trainer_evaluate_actions(t, i, cur, mask, evs, err);
      int pick = -1;
      for (int a = 0; a < t->n_out && st == MP_OK; a++)
        if (mask[a] && rl_trainer_better(t, &evs[a], pick < 0 ? &cur_ev : &evs[pick])) pick = a;
      if (pick >= 0) {
        cur_ev = evs[pick];
        rl_env_apply(s->in.env, cur, pick, cur);
        improved = 1;
      }
    }
  }
cleanup:
  free(cur);
  free(mask);
  free(evs);
  return st;
}

/* The candidates of regroup_span for cores a..b with n_layers: the span as one group, then every
 * split into two. */
static uint64_t span_candidates(int a, int b, int n_layers) { return 1 + (uint64_t)(b - a) * (uint64_t)(n_layers - 1); }

/* Scores every way of laying the cores a..b and their layers (n_layers, ending at core b) out as one
 * group or two (every split of cores and layers), on a copy of from, as the round's candidates from
 * `order` on (span_candidates of them). */
static mp_status regroup_span(rl_trainer *t, int i, rl_round *r, uint64_t order, const int *from, int a, int b,
                              int n_layers, int *cand, mp_error *err) {
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  memcpy(cand, from, bytes);
  for (int k = a; k <= b; k++) cand[k] = 0;
  cand[b] = n_layers;
  mp_status st = rl_round_score(t, i, r, order++, cand, err);
  for (int c = a; c < b && st == MP_OK; c++) /* the first group ends at core c with l layers */
    for (int l = 1; l < n_layers && st == MP_OK; l++) {
      cand[c] = l;
      cand[b] = n_layers - l;
      st = rl_round_score(t, i, r, order++, cand, err);
      cand[c] = 0;
    }
  return st;
}

mp_status rl_search_regroup(rl_trainer *t, int i, int max_rounds, mp_error *err) {
  rl_inst_state *s = &t->inst[i];
  size_t bytes = (size_t)t->n_cores * sizeof(int);
  int *from = malloc(bytes), *cand = malloc(bytes), *ends = malloc(bytes);
  mp_status st = MP_OK;
  if (!from || !cand || !ends) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int round = 0; round < max_rounds && st == MP_OK; round++) {
    memcpy(from, s->best, bytes);
    rl_eval before = s->best_eval;
    rl_round r;
    if ((st = rl_round_begin(t, &r, err)) != MP_OK) break;
    int n_groups = 0;
    for (int c = 0; c < t->n_cores; c++)
      if (from[c] > 0) ends[n_groups++] = c;
    uint64_t order = 0;
    for (int g = 0; g < n_groups && st == MP_OK; g++) { /* group g is a rank's share */
      int a = g > 0 ? ends[g - 1] + 1 : 0, mine = rl_round_owns(t, (uint64_t)g);
      /* the group alone (split in two), then the group with the next one (merged or re-split) */
      if (mine) st = regroup_span(t, i, &r, order, from, a, ends[g], from[ends[g]], cand, err);
      order += span_candidates(a, ends[g], from[ends[g]]);
      if (g + 1 < n_groups) {
        int n = from[ends[g]] + from[ends[g + 1]];
        if (mine && st == MP_OK) st = regroup_span(t, i, &r, order, from, a, ends[g + 1], n, cand, err);
        order += span_candidates(a, ends[g + 1], n);
      }
    }
    if (st == MP_OK) st = rl_round_end(t, i, &r, err);
    else rl_round_drop(&r);
    if (st != MP_OK || !rl_trainer_better(t, &s->best_eval, &before)) break;
  }
cleanup:
  free(from);
  free(cand);
  free(ends);
  return st;
}
