/* rl_search: local searches around a trainer's best plan that do not learn — steepest ascent over
 * single actions or pairs of actions, random kicks followed by ascent, and regrouping (splits and
 * merges of core groups).  Each works on instance i of a trainer (rl_train.h; borrowed, changed):
 * every plan it tries is scored by the instance's reward and counted like an episode's, and kept as
 * the best when it is better (rl_trainer_best), so a search never loses the best plan.  The polish and
 * the kicks' ascents score all the moves from a plan at once (rl_trainer_evaluate_actions), and a round
 * of the pair polish or the regrouping scores its candidates and keeps the best at its end, which a
 * distributed trainer spreads over its ranks (the first moves of the pairs, the groups of the
 * regrouping), with the plans, counts and rng of one process: every rank must run the same search.
 * The policy is untouched; only the kicks draw from the trainer's rng.  Errors: MP_NOMEM or the reward
 * callback's. */
#ifndef MESHPIPE_RL_SEARCH_H
#define MESHPIPE_RL_SEARCH_H

#include "err.h"
#include "rl_train.h"

/* Steepest-ascent polish of instance i's best plan: evaluates every allowed action from it, moves to
 * the best improvement, and repeats up to max_rounds times or until none improves. */
mp_status rl_search_polish(rl_trainer *t, int i, int max_rounds, mp_error *err);

/* The same over pairs of consecutive actions: each round evaluates every allowed action from the
 * best plan and every allowed action after it (two moves on core pairs with no core in common once,
 * not in both orders; meant for a cheap reward such as the analytical model: about A^2 / 2 plans for
 * A allowed actions), moves to the best plan seen, and repeats up to max_rounds times or until no pair
 * improves.  A pair reaches plans a single-move polish cannot: e.g. a core moved to the neighbouring
 * group together with a layer, where either move alone makes the bottleneck worse. */
mp_status rl_search_polish_pairs(rl_trainer *t, int i, int max_rounds, mp_error *err);

/* Kick and polish from instance i's best plan, `kicks` times: 1..kick_moves (uniform) random allowed
 * actions (from the trainer's rng), then steepest ascent to a local optimum; every plan evaluated is a
 * candidate for the best, so each kick restarts from the best so far.  Reaches plans that are many
 * coordinated moves away.  Deterministic for a seed; meant for a cheap reward. */
mp_status rl_search_kick(rl_trainer *t, int i, int kicks, int kick_moves, mp_error *err);

/* Regrouping polish of instance i's best plan: each round evaluates, for every group, every split of
 * it into two groups (of its cores and layers), and for every two neighbouring groups, their merge
 * and every other split of their cores and layers into two; moves to the best plan seen and repeats
 * up to max_rounds times or until nothing improves.  Each such plan is a sequence of the decision
 * process's actions whose intermediate plans are far worse (splitting a group one layer at a time
 * starts with one core holding all but one layer), which single, paired or random moves do not
 * cross.  About (cores · layers) evaluations per group: meant for a cheap reward. */
mp_status rl_search_regroup(rl_trainer *t, int i, int max_rounds, mp_error *err);

#endif
