/* sim_timer: one actor that keeps the waits of a job whose length nothing can change (sim_int.h,
 * "Timer").  Pending waits sit in a binary heap ordered by (deadline, sequence number), so waits that
 * end together wake their actors in the order they were set.  The timer actor sleeps on its own
 * semaphore until the earliest deadline; a wait set earlier than that deadline, or set while it sleeps
 * without one, releases the semaphore once so that it looks again. */
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/semaphore.h>
#include <stdlib.h>

#include "sim_int.h"

static void timer_actor(int argc, char **argv);

/* A deadline this close to the clock has come: SimGrid ends sleeps shorter than its precision at once,
 * and a sleep of deadline - now may end an ulp before the deadline. */
#define SIM_TIMER_DUE 1e-15

int sim_timer_open(sim_timer *t, const sim *s, int cap) {
  if (s->opt.simgrid_waits || s->opt.paje_file) return 0;
  if (t->cap < cap) {
    sim_timer_free(t);
    t->at = malloc((size_t)cap * sizeof *t->at);
    t->seq = malloc((size_t)cap * sizeof *t->seq);
    t->sem = malloc((size_t)cap * sizeof *t->sem);
    if (!t->at || !t->seq || !t->sem) {
      sim_timer_free(t);
      return -1;
    }
    t->cap = cap;
  }
  t->n = 0;
  t->kicked = 0;
  t->target = -1;
  t->on = 1;
  t->wake = sg_sem_init(0);
  return 0;
}

void sim_timer_run(sim_timer *t, sg_host_t host, int live) {
  if (!t->on) return;
  t->live = live;
  t->actor = sg_actor_init("timer", host);
  sg_actor_set_data(t->actor, t);
  sg_actor_ref(t->actor);
  sg_actor_start(t->actor, timer_actor, 0, NULL);
}

void sim_timer_join(sim_timer *t) {
  if (!t->on) return;
  sg_actor_join(t->actor, -1);
  sg_actor_unref(t->actor);
  sg_sem_destroy(t->wake);
  t->actor = NULL;
}

void sim_timer_free(sim_timer *t) {
  free(t->at);
  free(t->seq);
  free(t->sem);
  *t = (sim_timer){0};
}

static int before(const sim_timer *t, int a, int b) {
  return t->at[a] < t->at[b] || (t->at[a] == t->at[b] && t->seq[a] < t->seq[b]);
}

static void swap(sim_timer *t, int a, int b) {
  double at = t->at[a];
  long seq = t->seq[a];
  sg_sem_t sem = t->sem[a];
  t->at[a] = t->at[b], t->seq[a] = t->seq[b], t->sem[a] = t->sem[b];
  t->at[b] = at, t->seq[b] = seq, t->sem[b] = sem;
}

static void push(sim_timer *t, double at, sg_sem_t sem) {
  int k = t->n++;
  t->at[k] = at;
  t->seq[k] = t->next_seq++;
  t->sem[k] = sem;
  while (k > 0 && before(t, k, (k - 1) / 2)) {
    swap(t, k, (k - 1) / 2);
    k = (k - 1) / 2;
  }
}

static sg_sem_t pop(sim_timer *t) {
  sg_sem_t top = t->sem[0];
  t->n--;
  if (t->n > 0) {
    t->at[0] = t->at[t->n], t->seq[0] = t->seq[t->n], t->sem[0] = t->sem[t->n];
    for (int k = 0;;) {
      int l = 2 * k + 1, r = l + 1, m = k;
      if (l < t->n && before(t, l, m)) m = l;
      if (r < t->n && before(t, r, m)) m = r;
      if (m == k) break;
      swap(t, k, m);
      k = m;
    }
  }
  return top;
}

static void kick(sim_timer *t) {
  if (t->kicked) return;
  t->kicked = 1;
  sg_sem_release(t->wake);
}

void sim_timer_sleep(sim_timer *t, sg_sem_t own, double seconds) {
  if (!t->on) {
    sg_actor_sleep_for(seconds);
    return;
  }
  double at = simgrid_get_clock() + seconds;
  push(t, at, own);
  if (t->target < 0 || at < t->target) kick(t);
  sg_sem_acquire(own);
}

void sim_timer_execute(sim_timer *t, sg_sem_t own, double flops, double speed) {
  if (t->on)
    sim_timer_sleep(t, own, flops / speed);
  else
    sg_actor_execute(flops);
}

void sim_timer_leave(sim_timer *t) {
  if (t->on && --t->live == 0) kick(t);
}

static void timer_actor(int argc, char **argv) {
  (void)argc;
  (void)argv;
  sim_timer *t = sg_actor_self_get_data();
  for (;;) {
    t->kicked = 0;
    double now = simgrid_get_clock();
    while (t->n > 0 && t->at[0] - now < SIM_TIMER_DUE) sg_sem_release(pop(t));
    if (t->n == 0) {
      if (t->live == 0) break;
      t->target = -1;
      sg_sem_acquire(t->wake);
    } else {
      t->target = t->at[0];
      sg_sem_acquire_timeout(t->wake, t->at[0] - now);
    }
  }
}
