/* ranks: see ranks.h. */
#include "ranks.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"

#ifdef MESHPIPE_HAVE_MPI
#include <mpi.h>
#endif

static int started; /* 1 once MPI_Init ran */

/* Forked ranks (-j): this process's rank and the team's size; the parent (rank 0) holds per child its
 * pid and the two ends it uses, a child the two ends to its parent (index 0). */
#define MAX_JOBS 256
static struct team {
  int rank, size;
  pid_t pid[MAX_JOBS];
  int to[MAX_JOBS], from[MAX_JOBS];
} team = {0, 1, {0}, {0}, {0}};

/* Forks jobs - 1 children; 0, or -1 (after ending any already forked) when a pipe or fork fails. */
static int team_fork(int jobs) {
  fflush(stdout);
  fflush(stderr);
  for (int r = 1; r < jobs; r++) {
    int down[2], up[2];
    if (pipe(down) != 0) return -1;
    if (pipe(up) != 0) {
      close(down[0]);
      close(down[1]);
      return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
      close(down[0]);
      close(down[1]);
      close(up[0]);
      close(up[1]);
      for (int k = 1; k < r; k++) kill(team.pid[k], SIGTERM);
      return -1;
    }
    if (pid == 0) { /* child r: keep only its own pair */
      for (int k = 1; k < r; k++) {
        close(team.to[k]);
        close(team.from[k]);
      }
      close(down[1]);
      close(up[0]);
      team.rank = r;
      team.size = jobs;
      team.from[0] = down[0];
      team.to[0] = up[1];
      return 0;
    }
    close(down[0]);
    close(up[1]);
    team.pid[r] = pid;
    team.to[r] = down[1];
    team.from[r] = up[0];
  }
  team.rank = 0;
  team.size = jobs;
  return 0;
}

/* Sends len bytes with their length over fd; 0 or -1. */
static int put(int fd, const void *data, uint64_t len) {
  return proc_write_all(fd, &len, sizeof len) == 0 && (len == 0 || proc_write_all(fd, data, (size_t)len) == 0) ? 0 : -1;
}

/* Receives what put sent into a malloc'd buffer; 0, -1 (the other end is gone) or -2 (no memory). */
static int get(int fd, unsigned char **data, uint64_t *len) {
  *data = NULL;
  if (proc_read_all(fd, len, sizeof *len) != 0 || *len > SIZE_MAX - 1) return -1;
  *data = malloc((size_t)*len + 1);
  if (!*data) return -2;
  if (*len && proc_read_all(fd, *data, (size_t)*len) != 0) {
    free(*data);
    *data = NULL;
    return -1;
  }
  return 0;
}

/* Every rank's bytes in rank order, relayed by the parent. */
static mp_status team_gather(const void *mine, size_t len, void **all, size_t *all_len, mp_error *err) {
  if (team.rank > 0) {
    unsigned char *b = NULL;
    uint64_t n = 0;
    int rc = put(team.to[0], mine, len) == 0 ? get(team.from[0], &b, &n) : -1;
    if (rc == -2) return err_nomem(err);
    if (rc != 0) return err_set(err, MP_RUN, "rank %d of %d: rank 0 ended", team.rank, team.size);
    *all = b;
    *all_len = (size_t)n;
    return MP_OK;
  }
  unsigned char *parts[MAX_JOBS] = {0}, *b = NULL;
  uint64_t lens[MAX_JOBS] = {0}, total = len;
  mp_status st = MP_OK;
  for (int r = 1; r < team.size && st == MP_OK; r++) {
    int rc = get(team.from[r], &parts[r], &lens[r]);
    if (rc == -2) st = err_nomem(err);
    else if (rc != 0) st = err_set(err, MP_RUN, "rank %d of %d ended before it sent its share", r, team.size);
    else total += lens[r];
  }
  if (st == MP_OK && !(b = malloc((size_t)total + 1))) st = err_nomem(err);
  if (st == MP_OK) {
    size_t at = len;
    if (len) memcpy(b, mine, len);
    for (int r = 1; r < team.size; r++) {
      if (lens[r]) memcpy(b + at, parts[r], (size_t)lens[r]);
      at += (size_t)lens[r];
    }
    for (int r = 1; r < team.size && st == MP_OK; r++)
      if (put(team.to[r], b, total) != 0) st = err_set(err, MP_RUN, "rank %d of %d ended", r, team.size);
  }
  for (int r = 1; r < team.size; r++) free(parts[r]);
  if (st != MP_OK) {
    free(b);
    return st;
  }
  *all = b;
  *all_len = (size_t)total;
  return MP_OK;
}

int ranks_jobs_option(const char *command, int argc, char **argv) {
  const char *v = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--") == 0) break;
    if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc) v = argv[++i];
    else if (strncmp(argv[i], "--jobs=", 7) == 0) v = argv[i] + 7;
  }
  if (!v) return 1;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || end == v || *end || n < 1 || n > MAX_JOBS) {
    fprintf(stderr, "meshpipe %s: --jobs '%s' is not a number of processes in 1..%d (see 'meshpipe %s --help')\n",
            command, v, MAX_JOBS, command);
    return 0;
  }
  return (int)n;
}

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

int ranks_start(const char *command, int jobs, int *rank, int *size) {
  *rank = 0;
  *size = 1;
  int n = launched_ranks();
  if (jobs > 1 && n > 0) {
    fprintf(stderr, "meshpipe %s: -j %d under mpirun: give the processes to mpirun -np, not both\n", command, jobs);
    return 2;
  }
  if (jobs > 1) {
    if (team_fork(jobs) != 0) {
      fprintf(stderr, "meshpipe %s: cannot start %d processes: %s\n", command, jobs, strerror(errno));
      return 1;
    }
    *rank = team.rank;
    *size = team.size;
    return 0;
  }
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
  if (team.size > 1) { /* rank 0's code to every child, then wait for them */
    int32_t c = code;
    if (team.rank > 0) {
      unsigned char *b = NULL;
      uint64_t n = 0;
      if (get(team.from[0], &b, &n) == 0 && n == sizeof c) memcpy(&c, b, sizeof c);
      free(b);
      return c;
    }
    for (int r = 1; r < team.size; r++) {
      put(team.to[r], &c, sizeof c);
      close(team.to[r]);
      close(team.from[r]);
      waitpid(team.pid[r], NULL, 0);
    }
    team.size = 1;
    return code;
  }
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
  if (team.size > 1) {
    if (team.rank > 0) _exit(code); /* rank 0 sees the pipe close at its next gather */
    for (int r = 1; r < team.size; r++) {
      kill(team.pid[r], SIGTERM);
      waitpid(team.pid[r], NULL, 0);
    }
    team.size = 1;
    return;
  }
#ifdef MESHPIPE_HAVE_MPI
  if (started) MPI_Abort(MPI_COMM_WORLD, code);
#endif
  (void)code;
}

int ranks_max(int value) {
  if (team.size > 1) {
    int32_t v = value, *all = NULL;
    size_t n = 0;
    mp_error err;
    if (team_gather(&v, sizeof v, (void **)&all, &n, &err) != MP_OK) return value > 1 ? value : 1;
    for (size_t i = 0; i < n / sizeof v; i++)
      if (all[i] > value) value = all[i];
    free(all);
    return value;
  }
#ifdef MESHPIPE_HAVE_MPI
  if (started) MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
#endif
  return value;
}

mp_status ranks_gather(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err) {
  (void)ctx;
  *all = NULL;
  *all_len = 0;
  if (team.size > 1) return team_gather(mine, len, all, all_len, err);
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

void ranks_silence(void) {
  fflush(stdout);
  fflush(stderr);
  int null_fd = open("/dev/null", O_WRONLY);
  if (null_fd < 0) return;
  dup2(null_fd, 1);
  dup2(null_fd, 2);
  close(null_fd);
}

void ranks_unmute(int saved) {
  if (saved < 0) return;
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
}
