/* ranks: see ranks.h. */
#include "ranks.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MESHPIPE_HAVE_MPI
#include <mpi.h>
#endif

static int started; /* 1 once MPI_Init ran */

/* How many ranks the launcher started, from its environment; 0 without a launch. */
static int launched_ranks(void) {
  const char *names[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
  for (int i = 0; i < 3; i++) {
    const char *v = getenv(names[i]);
    if (v && atoi(v) > 0) return atoi(v);
  }
  return 0;
}

void ranks_print_build(void) {
#ifdef MESHPIPE_HAVE_MPI
  printf("This meshpipe is built with Open MPI.\n");
#else
  printf("This meshpipe is built without Open MPI (install libopenmpi-dev and rebuild).\n");
#endif
}

int ranks_start(const char *command, int *rank, int *size) {
  *rank = 0;
  *size = 1;
  int n = launched_ranks();
#ifdef MESHPIPE_HAVE_MPI
  if (n > 0) {
    MPI_Init(NULL, NULL);
    started = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
  }
#else
  if (n > 1) {
    fprintf(stderr, "meshpipe %s: started as one of %d MPI ranks, but this meshpipe is built without MPI: "
                    "every rank would run the whole job (install libopenmpi-dev and rebuild)\n", command, n);
    return 2;
  }
#endif
  (void)command;
  return 0;
}

int ranks_finish(int code) {
#ifdef MESHPIPE_HAVE_MPI
  if (started) {
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    started = 0;
  }
#endif
  return code;
}

void ranks_abort(int code) {
#ifdef MESHPIPE_HAVE_MPI
  if (started) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  (void)code;
}

int ranks_max(int value) {
#ifdef MESHPIPE_HAVE_MPI
  if (started) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  return value;
}

mp_status ranks_gather(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err) {
  (void)ctx;
  *all = NULL;
  *all_len = 0;
#ifdef MESHPIPE_HAVE_MPI
  if (started) {
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (len > INT32_MAX) return err_set(err, MP_RUN, "this rank's %zu bytes are too many for one MPI message", len);
    int n = (int)len, *counts = malloc((size_t)size * sizeof *counts), *displs = malloc((size_t)size * sizeof *displs);
    if (!counts || !displs) {
      free(counts);
      free(displs);
      return err_nomem(err);
    }
    MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int r = 0; r < size; r++) {
      displs[r] = (int)total;
      total += (size_t)counts[r];
    }
    unsigned char *b = total <= INT32_MAX ? malloc(total ? total : 1) : NULL;
    if (!b) {
      free(counts);
      free(displs);
      return total <= INT32_MAX ? err_nomem(err) : err_set(err, MP_RUN, "the ranks' %zu bytes are too many", total);
    }
    int rc = MPI_Allgatherv(mine, n, MPI_BYTE, b, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    free(counts);
    free(displs);
    if (rc != MPI_SUCCESS) {
      free(b);
      return err_set(err, MP_RUN, "MPI_Allgatherv failed (error %d)", rc);
    }
    *all = b;
    *all_len = total;
    return MP_OK;
  }
#endif
  /* One process: its own bytes are all of them. */
  unsigned char *b = malloc(len ? len : 1);
  if (!b) return err_nomem(err);
  if (len) memcpy(b, mine, len);
  *all = b;
  *all_len = len;
  return MP_OK;
}

int ranks_mute(void) {
  fflush(stderr);
  int saved = dup(2), null_fd = open("/dev/null", O_WRONLY);
  if (null_fd >= 0) {
    dup2(null_fd, 2);
    close(null_fd);
  }
  return saved;
}

void ranks_unmute(int saved) {
  if (saved < 0) return;
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
}
