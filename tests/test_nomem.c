/* Out of memory everywhere: every constructor, loader and writer of the library that does not start
 * SimGrid, run with its first, second, third ... allocation refused (tests/nomem.h) until it
 * succeeds.  Each refusal must give MP_NOMEM with a message, leave the output as it was (a NULL
 * pointer, no file), and free everything the call had allocated; the run that refuses nothing must
 * succeed and leave nothing behind either.  sim_new and sim_evaluate are in test_nomem_sim.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "nomem.h"
#include "testutil.h"

/* ---- the injection itself ---------------------------------------------------------------------- */

/* The wrappers see the library's allocations and cJSON's, refuse exactly from the armed one on (or
 * that one alone), as malloc fails (NULL, errno ENOMEM), and the live set follows frees and reallocs. */
static void the_wrappers_should_count_refuse_and_track_every_allocation(void) {
  uint64_t mark = nomem_mark();
  char *a = malloc(8), *b = strdup("x");
  cJSON *j = cJSON_CreateObject();
  CU_ASSERT_EQUAL(nomem_live_since(mark), 3);
  a = realloc(a, 4096);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 3);
  free(b);
  cJSON_Delete(j);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 1);
  nomem_arm(1);
  errno = 0;
  char *c = malloc(1), *d = calloc(1, 1), *e = strdup("y");
  cJSON *k = cJSON_CreateArray();
  long refused = nomem_disarm();
  CU_ASSERT_EQUAL(errno, ENOMEM);
  CU_ASSERT_PTR_NOT_NULL(c);
  CU_ASSERT_PTR_NULL(d);
  CU_ASSERT_PTR_NULL(e);
  CU_ASSERT_PTR_NULL(k);
  CU_ASSERT_EQUAL(refused, 3);
  nomem_arm_once(1);
  char *f = malloc(1), *g = realloc(c, 64), *h = malloc(1);
  CU_ASSERT_EQUAL(nomem_disarm(), 1);
  CU_ASSERT_PTR_NOT_NULL(f);
  CU_ASSERT_PTR_NULL(g); /* c stays, and stays live */
  CU_ASSERT_PTR_NOT_NULL(h);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 4);
  free(h);
  free(f);
  if (g)
    free(g);
  else
    free(c);
  free(a);
  CU_ASSERT_EQUAL(nomem_live_since(mark), 0);
}

int main(int argc, char **argv) {
  nomem_init();
  CU_TestInfo tests[] = {
      {"the_wrappers_should_count_refuse_and_track_every_allocation",
       the_wrappers_should_count_refuse_and_track_every_allocation},
      CU_TEST_INFO_NULL,
  };
  int rc = testutil_run("nomem", tests, argc, argv);
  printf("%ld code addresses received a refused allocation\n", nomem_save_sites());
  return rc;
}
