/* Fuzz target: the RL policy file image; a policy that loads scores a state and saves back to the
 * same bytes. */
#include <math.h>

#include "fuzz.h"
#include "rl_policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  rl_policy *p = NULL;
  size_t used = 0;
  mp_error err;
  mp_status st = rl_policy_from_bytes(data, size, "fuzz.pol", &p, &used, &err);
  fuzz_check_refusal(st, &err, "fuzz.pol");
  if (p && p->n_params <= 100000) {
    rl_policy_ws ws = {0};
    double *x = calloc((size_t)p->n_in, sizeof *x), *probs = calloc((size_t)p->n_out, sizeof *probs);
    unsigned char *mask = malloc((size_t)p->n_out);
    if (x && probs && mask) {
      for (int i = 0; i < p->n_in; i++) x[i] = (double)(i % 7) / 7.0;
      memset(mask, 1, (size_t)p->n_out);
      rl_policy_probs(p, &ws, x, 1, mask, probs);
    }
    free(x);
    free(probs);
    free(mask);
    rl_policy_ws_free(&ws);
    strbuf b = {0};
    int with_opt = (data[32] & 1) != 0; /* the flags: Adam's state follows */
    if (rl_policy_to_bytes(p, with_opt, &b, &err) == MP_OK && (b.len != used || memcmp(b.s, data, used) != 0)) {
      fprintf(stderr, "fuzz: a loaded policy does not save back to its bytes\n");
      abort();
    }
    strbuf_clear(&b);
  }
  rl_policy_free(p);
  return 0;
}
