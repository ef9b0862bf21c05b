/* memplan: the storage planner.  See memplan.h.
 *
 * Blocks are kept in one array with their size and their count of live tenants; a block with none is
 * free.  The free blocks are scanned linearly at every placement (a stage has a few hundred tensors at
 * most and far fewer blocks), ties broken by the lower block index, so a plan depends on its input
 * only. */
#include "memplan.h"

#include <stdlib.h>
#include <string.h>

/* Tensors bucketed by step: the ones of step s are idx[first[s] .. first[s + 1]), in index order. */
static int bucket(const memplan_tensor *t, int n, int n_steps, int by_death, int *first, int *idx) {
  memset(first, 0, ((size_t)n_steps + 1) * sizeof *first);
  for (int i = 0; i < n; i++) first[(by_death ? t[i].death : t[i].birth) + 1]++;
  for (int s = 0; s < n_steps; s++) first[s + 1] += first[s];
  int *fill = malloc(((size_t)n_steps + 1) * sizeof *fill);
  if (!fill) return -1;
  memcpy(fill, first, ((size_t)n_steps + 1) * sizeof *fill);
  for (int i = 0; i < n; i++) idx[fill[by_death ? t[i].death : t[i].birth]++] = i;
  free(fill);
  return 0;
}

/* The block for a tensor of `need` bytes among the free ones (live == 0): the smallest within
 * [need, need * MATCH], else the largest within [need / MATCH, need), else -1. */
static int pick_free(const uint64_t *size, const int *live, int n_blocks, uint64_t need) {
  int best = -1, grow = -1;
  for (int b = 0; b < n_blocks; b++) {
    if (live[b] != 0) continue;
    if (size[b] >= need) {
      if (size[b] / MEMPLAN_MATCH <= need && (best < 0 || size[b] < size[best])) best = b;
    } else if (size[b] * MEMPLAN_MATCH >= need && (grow < 0 || size[b] > size[grow])) {
      grow = b;
    }
  }
  return best >= 0 ? best : grow;
}

mp_status memplan_run(const memplan_tensor *t, int n, int n_steps, uint64_t *offset, memplan_result *out,
                      mp_error *err) {
  memset(out, 0, sizeof *out);
  if (n < 0 || n_steps < 0 || (n > 0 && n_steps < 1))
    return err_set(err, MP_INPUT, "memplan: %d tensors over %d steps", n, n_steps);
  for (int i = 0; i < n; i++) {
    const memplan_tensor *x = &t[i];
    if (x->birth < 0 || x->death < x->birth || x->death >= n_steps)
      return err_set(err, MP_INPUT, "memplan: tensor %d lives from step %d to step %d, outside 0 .. %d", i, x->birth,
                     x->death, n_steps - 1);
    if (x->inplace >= 0 && (x->inplace >= n || x->inplace == i || t[x->inplace].death != x->birth))
      return err_set(err, MP_INPUT, "memplan: tensor %d names tensor %d as its in-place source, which does not die "
                     "at step %d where it is born", i, x->inplace, x->birth);
  }
  mp_status st = MP_OK;
  int *born_first = malloc(((size_t)n_steps + 1) * sizeof *born_first);
  int *dies_first = malloc(((size_t)n_steps + 1) * sizeof *dies_first);
  int *born = malloc(((size_t)n + 1) * sizeof *born), *dies = malloc(((size_t)n + 1) * sizeof *dies);
  int *block = malloc(((size_t)n + 1) * sizeof *block), *live = malloc(((size_t)n + 1) * sizeof *live);
  uint64_t *size = malloc(((size_t)n + 1) * sizeof *size), *base = malloc(((size_t)n + 1) * sizeof *base);
  unsigned char *taken = calloc((size_t)n + 1, 1); /* its storage went to an in-place successor */
  int64_t *delta = calloc((size_t)n_steps + 1, sizeof *delta);
  if (!born_first || !dies_first || !born || !dies || !block || !live || !size || !base || !taken || !delta ||
      bucket(t, n, n_steps, 0, born_first, born) != 0 || bucket(t, n, n_steps, 1, dies_first, dies) != 0) {
    st = err_nomem(err);
    goto cleanup;
  }
  for (int i = 0; i < n; i++) block[i] = -1;
  int n_blocks = 0;
  for (int s = 0; s < n_steps; s++) {
    for (int k = born_first[s]; k < born_first[s + 1]; k++) {
      int i = born[k], src = t[i].inplace, b = -1;
      out->naive += t[i].bytes;
      if (t[i].bytes == 0) continue;
      /* in place only over a source alone in its block: one that is itself in place over a tensor dying at
       * this step must not pass that tensor's bytes on */
      if (src >= 0 && block[src] >= 0 && !taken[src] && live[block[src]] == 1) {
        b = block[src];
        taken[src] = 1;
        out->inplace++;
      } else if ((b = pick_free(size, live, n_blocks, t[i].bytes)) < 0) {
        b = n_blocks++;
        size[b] = 0;
        live[b] = 0;
      }
      if (size[b] < t[i].bytes) size[b] = t[i].bytes;
      live[b]++;
      block[i] = b;
    }
    for (int k = dies_first[s]; k < dies_first[s + 1]; k++) {
      int i = dies[k];
      if (block[i] >= 0) live[block[i]]--;
    }
  }
  for (int i = 0; i < n; i++) { /* a source written over in place at its last step counts until the one before */
    delta[t[i].birth] += (int64_t)t[i].bytes;
    delta[t[i].death + 1 - taken[i]] -= (int64_t)t[i].bytes;
  }
  int64_t now = 0;
  for (int s = 0; s < n_steps; s++) {
    now += delta[s];
    if ((uint64_t)now > out->live) out->live = (uint64_t)now;
  }
  for (int b = 0; b < n_blocks; b++) {
    base[b] = out->planned;
    out->planned += size[b];
  }
  out->blocks = n_blocks;
  for (int i = 0; offset && i < n; i++) offset[i] = block[i] >= 0 ? base[block[i]] : 0;
cleanup:
  free(born_first);
  free(dies_first);
  free(born);
  free(dies);
  free(block);
  free(live);
  free(size);
  free(base);
  free(taken);
  free(delta);
  return st;
}
