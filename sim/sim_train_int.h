/* sim_train_int: what sim_train.c (a plan's mini-batch: compiled, run, its result) and sim_train_record.c
 * (the mini-batch as a training trace, and the replay of one) share: the compiled job of one mini-batch,
 * its groups' programs, and the steps of building and running it.  A job compiled from a plan and one
 * compiled from that plan's recorded trace are the same job.  Engine-thread state (semaphores, queue,
 * measured times) is only touched by the actors of sim_train.c. */
#ifndef MESHPIPE_SIM_TRAIN_INT_H
#define MESHPIPE_SIM_TRAIN_INT_H

#include <simgrid/forward.h>

#include "sim_int.h"
#include "sim_schedule.h"
#include "sim_train.h"
#include "timeline.h"

typedef struct tseg {
  double f_flops, b_flops;   /* on the group's first core (its share of the group's work) */
  double f_raw, b_raw;       /* the group's work, as traces record it */
  double w_raw;              /* of b_raw, the weight-gradient part that zb's W runs apart (0 from a trace,
                                which records a zb backward without it); b_flops is the rest's share */
  double f_gather, b_gather; /* output bytes / input-gradient bytes, all-gathered */
  const char *name;          /* its first op (borrowed from the graph or trace) */
  int n_needs, *needs;       /* forward: Recvs it waits for */
  int first_post, n_posts;   /* forward: its Sends */
  int n_bneeds, *bneeds;     /* backward: Sends whose gradients it waits for (from a plan: its own) */
  int n_gposts, *gposts;     /* backward: Recvs whose gradient it sends back (their lowest reader) */
} tseg;

typedef struct txfer {
  double bytes;            /* gamma x the tensor's bytes */
  double raw;              /* the tensor's bytes */
  const char *name;        /* the tensor (borrowed) */
  int from, to;            /* cores */
  int group, slot;         /* the receiving group and its Recv (forward) or Send (backward) index */
} txfer;

typedef struct titem {
  int backward, idx, mb; /* idx -1: the sender is done */
} titem;

typedef struct tgroup {
  int first_core, n_cores, last_core;
  const train_stage *model;
  int n_segs;
  tseg *segs;
  int n_fsends, n_recvs;
  txfer *fsends, *bsends; /* bsends[r]: the gradient of Recv r */
  int *farrived, *barrived; /* per Recv / per Send: micro-batches whose tensor / gradient arrived */
  int n_order;
  sim_schedule_step *order;
  int split_w;             /* zb: the order has W passes (a backward is its input-gradient part) */
  double w_flops, w_raw;   /* zb: the W pass's work (the segments' w_raw, or as a trace records it) */
  double w_bytes;          /* zb, from a trace: its wgrad's bytes (train_range.wstash_bytes) */
  double update_flops, update_raw;
  int streams;             /* it does not fit: DRAM around every pass and the update */
  double *pass_x, *upd_x;  /* per core its bytes read, then per core its bytes written (2 n) */
  sim_streams dram;        /* its streams' parallel tasks (sim_int.h, "DRAM streams") */
  sim_gather gather;       /* its all-gathers' links and scratch (with 2 cores or more) */
  sg_sem_t ev, q;
  sg_sem_t tm; /* the actor's waits on the job's timer */
  titem *queue;
  int q_head, q_tail;
  /* measured */
  double fwd_s, bwd_s, upd_s, dram_s, comm_s, last_b, end; /* bwd_s: B and W */
  double *b_end; /* per micro-batch: the end of its last pass here (W under zb, else B) */
  long acts;
} tgroup;

typedef struct tjob {
  sim *s;
  int M, n_groups;
  tgroup *groups;
  train_result *model; /* owned: the training model's figures of the stages */
  timeline *tl;         /* NULL, or where the run's events go (borrowed) */
  int tl_failed;        /* an event could not be added (out of memory) */
  double t0;
  int failed;
  sim_timer timer; /* executions wait on it (sim_int.h, "Timer") */
} tjob;

typedef struct targ {
  tjob *j;
  int g;
} targ;

/* Frees what j owns (not j itself). */
void sim_train_job_free(tjob *j);

/* Appends v to *list (n entries) unless it is there; 0, or -1 out of memory. */
int sim_train_push(int **list, int *n, int v);

/* The arrays of a group of n_segs segments, n_fsends Sends and n_recvs Recvs over M micro-batches, zeroed;
 * 0, or -1 out of memory. */
int sim_train_alloc_group(tgroup *gr, int M, int n_segs, int n_fsends, int n_recvs);

/* Once gr's program and gr->model are set: the work on its first core, the all-gathers' scratch and its
 * DRAM streams when it does not fit (from its model stage on the sim's chip).  0, or -1 out of memory. */
int sim_train_finish_group(const sim *s, tgroup *gr);

/* The job of plan p (borrowed) under t's options into j (zeroed by the caller but for j->s). */
mp_status sim_train_compile_plan(sim *s, train *t, const plan *p, tjob *j, mp_error *err);

/* Runs compiled job j on the engine and fills res, trained under o with `batch` samples per micro-batch,
 * of the graph and plan of those hashes; counted as sim_evaluate counts (sim_get_stats).  res is emptied
 * on failure. */
mp_status sim_train_run(sim *s, tjob *j, const train_options *o, int batch, uint64_t graph_hash, uint64_t plan_hash,
                        sim_train_result *res, mp_error *err);

#endif
