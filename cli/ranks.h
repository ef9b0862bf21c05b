/* ranks: this process's place among the processes that share a command's work: those that
 * `mpirun -np N meshpipe ...` started, or those `--jobs N` forks on one machine.
 *
 * A launch by mpirun (Open MPI, or another PMI launcher) is seen in the environment.  When meshpipe
 * is built with Open MPI, ranks_start initialises MPI and every other function here works over
 * MPI_COMM_WORLD; built without it, a launch of more than one process is refused (each would run
 * the whole job).  Without a launch and with jobs > 1, ranks_start forks jobs - 1 children before
 * anything else starts (SimGrid in particular: each child starts its own engine): rank 0 is the
 * parent, and the functions here work over a pipe pair per child, the parent relaying.  Without
 * either, this process is rank 0 of 1 and nothing here touches MPI or forks.  Only commands that
 * split their work over ranks (sweep, train) call ranks_start. */
#ifndef MESHPIPE_RANKS_H
#define MESHPIPE_RANKS_H

#include <stddef.h>

#include "err.h"

/* Fills *rank and *size (0 of 1 without a launch and with jobs 1); with jobs > 1 (and no launch)
 * forks the other jobs - 1 ranks.  Returns 0, or prints why not and returns 2 (or 1 when fork fails). */
int ranks_start(const char *command, int jobs, int *rank, int *size);

/* The value of --jobs among argv's options (1 when absent), for commands that must start their ranks
 * before they parse their options; 0 (after printing why) when it is not a count in 1..256. */
int ranks_jobs_option(const char *command, int argc, char **argv);

/* Ends a command started with ranks_start: every rank gets rank 0's exit code (returned) and MPI is
 * finalised.  Every rank must call it, unless one aborts. */
int ranks_finish(int code);

/* Ends every rank at once with this exit code (after a rank's own error, once printed). */
void ranks_abort(int code);

/* The largest of every rank's value (every rank must call it). */
int ranks_max(int value);

/* An rl_gather_fn (rl_train.h) over all ranks: *all is a malloc'd concatenation of every rank's
 * bytes in rank order.  ctx is unused. */
mp_status ranks_gather(void *ctx, const void *mine, size_t len, void **all, size_t *all_len, mp_error *err);

/* Sends this process's stderr to /dev/null (for ranks other than 0 while they meet the same usage
 * and input errors as rank 0, which alone reports them); returns what ranks_unmute needs, or -1. */
int ranks_mute(void);
void ranks_unmute(int saved);

/* Sends this process's stdout and stderr to /dev/null for good (a rank other than 0 of a command whose
 * first rank alone reports). */
void ranks_silence(void);

/* Prints to stdout whether this meshpipe is built with Open MPI (the last line of a --help). */
void ranks_print_build(void);

#endif
