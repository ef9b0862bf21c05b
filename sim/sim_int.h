/* sim_int: what the simulator's files share — the platform generated from a chip and the naming and
 * numbering of its hosts and links (sim_platform.c), the compiled program of an evaluation
 * (sim_program.c), the engine that runs it (sim_engine.c) and the sim object itself (sim.c).
 *
 * Platform.
 * Hosts: per core "cID", per DRAM port "dramI".  The links are the chip's (chip.h: one NoC link per
 * direction, and per port a down link into the core at its position and an up link out of it, each of
 * the port's bandwidth), named as chip_link_name names them.  Routes are the XY routes (x-moves, then
 * y-moves), from a port through its down link first, to a port through its up link last.  Three
 * platforms give exactly those routes, and bit for bit the same figures (tests/test_sim.c):
 *
 * Full (sim_options.routing SIM_ROUTING_FULL, AUTO on chips of up to SIM_FULL_ROUTING_MAX_CORES cores,
 * MANY on chips of up to SIM_FULL_ROUTING_MANY_CORES): one "Full" zone listing every route (core to core, port to core, core to port) as its links.
 * A lookup is a table read, and a transfer's SimGrid variable touches only the links that carry it:
 * ~1.35x the evaluations per CPU-second of the DijkstraCache platform on 8x8, ~1.5x on 16x16
 * (bench/sim_speed), with bit-identical figures (tests/test_sim.c compares both).  The turn/out links
 * below never bind (their capacity is ~10^7 times a NoC link's, so SimGrid's bottleneck solver never
 * takes its minimum there nor saturates them, and computes each variable from its binding constraints
 * only), so leaving them out changes nothing but the work.  The file grows as cores^2 times the mean
 * route length (1 MB for 8x8; 16x16 takes ~0.6 s to load instead of 0.01 s), hence the limit.
 *
 * Torus (SIM_ROUTING_TORUS, AUTO and MANY beyond their Full limits when the cores have one speed and
 * no Paje trace is asked for): SimGrid's torus cluster computes a route from the two ends' coordinates,
 * dimension after dimension (x first), taking the shorter way round each ring; on a torus of 2W x 2H
 * hosts a route between two of the first W x H never wraps (it is shorter than half a ring), so the
 * cores live there and the rest are never used.  Host of core (x, y): "c<x + 2W y>"; its NoC links
 * are the cluster's (each ring link split into an _UP link from the lower id and a _DOWN link back,
 * named by the cluster, sim_platform_torus_link); each port is a zone of its own host whose routes to
 * and from the mesh go through its down and up links and the port's core (the gateways).  No table to
 * load and no search per source: ResNet-50 on 32x32 runs 1.23x the evaluations per CPU-second of the
 * DijkstraCache platform (bench/sim_speed, 40 plans), and `simulate -M 8` of a 493-stage plan there
 * takes 0.18 s instead of 0.61 s, where one Dijkstra per core a transfer starts from was 63 % of the
 * time.  Full still reads a route faster (16x16, 300 plans: 318.5 evaluations per CPU-second against
 * 299.2, after a 0.63 s start instead of 0.012 s), hence MANY's choice up to 256 cores.  A Paje trace would
 * show the cluster's names and its unused hosts, so AUTO gives traced runs Dijkstra instead.
 *
 * DijkstraCache (SIM_ROUTING_DIJKSTRA, or AUTO on bigger chips whose cores differ in speed, or
 * traced): per core a host "cID", which is also the core's x-router, and a y-router
 * "Yx_y".  Edges (one link each): cID -> the x-neighbours' hosts (a NoC link), cID -> Yx_y
 * ("turnID"), Yx_y -> Yx_y±1 (a NoC link), Yx_y -> cID ("outID"), dramI -> the port's core (its down
 * link) and the port's core -> dramI (its up link); turn and out links have no latency and practically
 * infinite bandwidth (per core: one link shared by every route would couple all transfers in SimGrid's
 * solver).  SimGrid's Dijkstra counts links, so a shortest route takes the fewest x-moves and
 * y-moves: the XY route (x-moves, turn, y-moves, out) and the YX-like routes (turn, y-moves, out,
 * x-moves) tie.  The tie is settled by SimGrid's queue, which pops equal costs lowest node number
 * first: the platform mentions every Y router before any host, so at the destination the XY route's Y
 * router wins over the neighbouring host, and every other node on the way has a unique best
 * predecessor.  Hence routes are exactly the XY routes (tests/test_sim.c checks every pair on three
 * meshes, and that both platforms route alike on two more), a route along a row is its NoC links
 * alone, and a route to a port is the XY route to its core and the up link.  Every node is reachable
 * from every other (SimGrid's Dijkstra overflows its costs on unreachable nodes). */
#ifndef MESHPIPE_SIM_INT_H
#define MESHPIPE_SIM_INT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <simgrid/forward.h>

#include "chip.h"
#include "cost.h"
#include "err.h"
#include "sim.h"

/* Chips of up to this many cores get a "Full" zone listing every route (faster lookups, bigger file). */
#define SIM_FULL_ROUTING_MAX_CORES 64
/* Links of an all-gather's chain per ptask, and the scratch of one (its hosts' byte matrix, their flops). */
#define SIM_GATHER_BLOCK 16
#define SIM_GATHER_SCRATCH ((SIM_GATHER_BLOCK + 1) * (SIM_GATHER_BLOCK + 2))
#define SIM_FULL_ROUTING_MANY_CORES 256 /* SIM_ROUTING_MANY */

/* All-gathers.  A group of c >= 2 cores all-gathers A bytes over its snake chain: link k->k+1 carries
 * (k+1)/c of A and k+1->k the rest, as ptasks of at most SIM_GATHER_BLOCK links started at once (a ptask's
 * cost grows with the square of its hosts), so without contention it lasts the busiest link's time, as
 * in the model.  Most of those links carry nothing else, and such a link never sets the pace: in SimGrid's
 * bottleneck solver (fair_bottleneck.cpp) a link that only ptask P uses, with load w_k, offers P at most
 * bw/w_k - V once P holds rate V, while a link of P with load w_b >= w_k offers at most bw/w_b - V, so the
 * minimum P takes is never the first's alone, and it saturates only when the second does (NoC links all
 * have one bandwidth and one latency, so P's latency and its TCP bound, set by its busiest pair, do not
 * move either).  A ptask therefore keeps only the links another transfer of the job may cross (a Send's
 * or a DRAM stream's XY route: sim_gather_plan's `busy`) and the links of its block's greatest load; of
 * the blocks no other transfer crosses, only one of greatest load runs (the group waits for the last
 * block, and nothing else sees the others).  Rates are the same, bit for bit; what may move is the last
 * bit of a figure, because the dropped blocks' ends were events at which every other activity's
 * remaining work was updated (tests/test_sim.c compares with sim_options.full_gather).  With
 * sim_options.fast_gather one ptask over the chain's two busiest links, (c-2)->(c-1) and 1->0, whatever
 * crosses the group. */
typedef struct sim_gather {
  int first_core, n_cores; /* the chain: cores first_core .. first_core + n_cores - 1 */
  unsigned char *keep;     /* per directed chain link (2k: k->k+1, 2k+1: k+1->k): in a ptask */
  double *matrix;          /* scratch: per block SIM_GATHER_SCRATCH doubles (its byte matrix, its flops) */
  sg_host_t *hosts;        /* scratch: per block SIM_GATHER_BLOCK + 1 hosts */
  sg_exec_t *execs;        /* scratch: per block its ptask in flight */
} sim_gather;

/* DRAM streams.  Every core of a group whose share does not fit streams its excess from its nearest
 * port (sim_program.c, "DRAM"), all of the group's at once.  A batch is one parallel task between a
 * port's host and the hosts of the cores it serves: by default one per core (a core has its own DMA
 * engine), with sim_options.fast_streams one per port the group uses.  A port's batch alone lasts its
 * busiest link's load over its bandwidth plus its longest route's latency, as the model's stream term
 * (cost.h), and counts once on each link it crosses, where a core's transfer counts once per core: a
 * contended link gives the group one share instead of one per core.  On 32x32 with 1 MiB hundreds of
 * per-core streams run at once and the ptask solver shares the links again among all of them at every
 * event; batched, ResNet-50 evaluates 5.6x faster, but the fidelity matrix (bench/fidelity, every case batched) puts 141, 151 and
 * 159 of 160 cases within 5, 10 and 15 % instead of 146, 157 and 160, the worst 0.820 instead of 0.875. */
typedef struct sim_streams {
  int n_cores, n_batches;
  int *member;          /* the cores (0 .. n_cores - 1), batch after batch, each in core order */
  int *first;           /* per batch: where its cores start in member (n_batches + 1) */
  sg_host_t *port_host; /* per batch: its port's host */
  sg_host_t *core_host; /* per core: its host */
  sg_host_t *hosts;     /* scratch: per batch, its port's host then its moving cores' (n_cores + n_batches) */
  double *matrix;       /* scratch: per batch with m hosts, its m x m byte matrix then m zero flops */
  sg_exec_t *execs;     /* scratch: the tasks in flight (n_batches) */
} sim_streams;

/* The three platforms (above). */
enum { SIM_PLATFORM_FULL, SIM_PLATFORM_DIJKSTRA, SIM_PLATFORM_TORUS };

/* The platform c gets with routing (SIM_ROUTING_*, sim.h); traced: a Paje trace will name its links,
 * which the Torus platform names its own way, so AUTO and MANY do not choose it then. */
int sim_platform_kind(const chip *c, int routing, int traced);

/* 1 when c can have the Torus platform (its cores have one speed). */
int sim_platform_torus_ok(const chip *c);

/* The name of core's host on a platform of that kind, into buf. */
void sim_platform_host_name(const chip *c, int kind, int core, char *buf, size_t n);

/* The chip link (chip.h's index) of a NoC link of the Torus platform named `name`, or -1 when the
 * name is not one of the mesh's. */
int sim_platform_torus_link(const chip *c, const char *name);

/* Writes the platform XML of c to path, with SIM_ROUTING_AUTO's kind for an untraced sim.  MP_OUTPUT
 * on a write failure. */
mp_status sim_platform_write(const chip *c, const char *path, mp_error *err);

/* The same with a platform of that kind (SIM_PLATFORM_*). */
mp_status sim_platform_write_routed(const chip *c, int kind, const char *path, mp_error *err);

/* ---- the compiled program of one evaluation (sim_program.c) --------------------------------------
 *
 * A job is what the engine runs: per core group its segments (runs of layers that wait for the same
 * received tensors), its sends and its DRAM streams, plus the stage's analytical figures that a result
 * reports beside what the run measured.  It is compiled from a plan (through its Send/Recv split and
 * the cost model) or from a recorded trace, in one shape, so both give results the same way. */

/* Private transfers.  A server of a job is a group's actor (its executions, all-gathers and DRAM streams,
 * one after the other) or its sender (its Sends, one at a time).  A transfer is private when no other
 * server's transfer crosses any of its links: its group's all-gathers when no other server's route
 * meets its snake chain, a Send when no other server's route or chain meets its route, a group's DRAM
 * streams when no other server's route or chain meets theirs (the streams of one micro-batch share
 * links among themselves, always alike).  Nothing can then change how long it takes: every core's CPU
 * runs its own group's executions only (a ptask's transfers carry no flops), and the ptask model gives a
 * transfer alone on its links the same rate every time.  So a private transfer runs once as its ptasks
 * and its time is kept (solo_s); from then on the group's actor runs a segment as one execution of its
 * flops plus the gather's time at the core's speed, and a private Send or DRAM batch is a sleep of its
 * time: one activity instead of two to n + 1.  The figures are those of running every transfer up to
 * the rounding of the engine's updates: over 1 500 random plans of four graphs on 4x4..16x16 (sim_speed
 * dumps) the same micro-batches, periods within 2.4e-9 relative, latencies within 4.3e-11 (tests/
 * test_sim.c compares with sim_options.rerun_private).  A run that never settles is the exception: its
 * course depends on those last bits, and the mean it reports moved by -0.8 % to +3.6 % on the six such
 * runs of the README's figures that moved.  Not with a Paje trace, which should show every transfer on
 * its links. */

typedef struct seg {
  double flops;            /* on the group's first core: F * speed(first) / speed(group) */
  double raw_flops;        /* F: the layers' work on the whole group (as recorded in traces) */
  const char *name;        /* its first op (borrowed from the graph or trace) */
  double gather;           /* A: output bytes of its layers, all-gathered */
  double macs, ops;        /* its layers' MACs and flops (the arithmetic done: energy.h) */
  double traffic;          /* the bytes its layers move through SRAM (opcost_op_traffic) */
  int n_needs, *needs;     /* recvs of the group it waits for */
  int n_deps, *deps;       /* earlier segments of the group whose outputs it reads */
  int first_post, n_posts; /* sends of the group it posts when done (a contiguous range) */
  double solo_s;           /* its all-gather's time once run, when the gather is private (below); else -1 */
} seg;

typedef struct jsend {
  double bytes;     /* gamma * tensor bytes */
  double raw_bytes; /* the tensor's bytes */
  const char *name; /* the tensor (borrowed) */
  int dst_group, dst_recv, dst_core;
  int private;   /* nothing but this group's sender crosses its links (below) */
  double solo_s; /* its time once run, when private; else -1 */
} jsend;

typedef struct jrecv {
  const char *name; /* the tensor (borrowed) */
  int src_group;
} jrecv;

typedef struct qitem {
  int send, mb;
} qitem;

typedef struct jgroup {
  int first_core, n_cores, last_core;
  cost_stage model; /* the stage's analytical figures with their plan terms (cost.h) */
  int n_segs;
  seg *segs;
  int n_sends;
  jsend *sends;
  int n_recvs;
  jrecv *recvs;
  /* DRAM streams (cost_core_dram), NULL when the group fits: per core its reads and writes per
   * micro-batch and its nearest port.  Before the micro-batch's first segment the cores that read
   * stream from their ports, after the last the cores that write stream to them, in the batches of
   * sim_streams (above); the group waits for all of them. */
  double *dram_in, *dram_out;
  int *dram_port;
  sim_streams streams;
  int private_gather, private_dram; /* nothing but the group's actor crosses its chain / its streams' links */
  double dram_solo_s[2];            /* its reads' (0) and writes' (1) time once run, when private; else -1 */
  /* run state */
  sim_gather gather;     /* its all-gathers' links and scratch (with 2 cores or more) */
  unsigned char *done;   /* per (micro-batch, segment): ran */
  int *left;             /* per micro-batch: segments still to run */
  int *sends_left;       /* per micro-batch: sends still to finish */
  int *arrived;          /* per recv: micro-batches arrived */
  double *mb_compute, *mb_dram, *mb_comm; /* per micro-batch: seconds of segments, DRAM streams, sends */
  /* steady runs: per micro-batch its events here (absolute times, -1 before), n_ev = sim_group_events
   * each: per segment when the actor took it, when its DRAM reads, its execution and its all-gather
   * ended (then its Sends are posted), when the actor was done with the micro-batch (its spill
   * written), per send when it started and ended, and when the group was done with it (sim_int.h,
   * "Steady state") */
  double *ev_t;
  int n_ev;
  sg_sem_t ev, q;
  sg_sem_t tm[2]; /* the actor's (0) and the sender's (1) waits on the job's timer */
  int waiting;    /* blocked on ev */
  int window_bound; /* a segment receives nothing: only the window holds it back (group_done) */
  /* steady runs, per server (0: the group's actor, 1: its sender): when its current wait began (-1: not
   * waiting) and when its last wait longer than SIM_STEADY_TOLERANCE of an interval ended */
  double wait_from[2], busy_since[2];
  qitem *queue;
  int q_head, q_tail;
  /* measured: per micro-batch means over the micro-batches a result counts (job_run) */
  double compute_s, dram_s, comm_s;
  long acts;
} jgroup;

/* Steady state (a run of sim_options.microbatches == 0).  The host keeps at most `window` micro-batches
 * in flight (micro-batch m starts once m - window is complete).  Without contention a window limits the
 * pipeline only when every group and sender (its servers) waits now and then: once one of them has work
 * without a pause, micro-batches queue before it, a micro-batch starts as one ends, and a wider window
 * only lengthens that queue.  So the window starts at what the model says the servers hold, Little's law
 * at the model's period (the sum of the groups' and senders' times over the period) plus two, and is
 * doubled, up to 2p + 2 for p stages (p groups and p - 1 senders each hold at most one at a time in
 * steady state), whenever no server has been busy without a pause (a wait longer than
 * SIM_STEADY_TOLERANCE of an interval) over the last max(in flight, SIM_STEADY_MIN_INTERVALS)
 * completions; the warm-up then starts again.  A narrow window settles in a few micro-batches where
 * 2p + 2 let the first stages run far ahead and their traffic keep the completions aperiodic for dozens.
 * A run that started narrow and has no periodic stretch SIM_STEADY_APERIODIC spans after its warm-up,
 * or at its cap, is run again at 2p + 2 from the start (sim_job_restart), so that what an aperiodic
 * pipeline reports does not depend on how its window grew.  Where DRAM streams contend, a pipeline may
 * have more than one periodic schedule, and which one a run settles into can depend on the window.
 * Against 2p + 2 from the start, 1 116 random plans of four graphs on 4x4..32x32 (sim_speed dumps) gave
 * the same period to 1e-6 on 1 032 and within -4.1 % .. +4.2 % on the other 84, all of them plans that
 * stream from DRAM: 70 had not settled at 2p + 2, 12 had settled into a cycle of several micro-batches;
 * the micro-batches per evaluation fell from 36.2 to 15.1 on 8x8.  The pipeline is full once the first
 * micro-batch completes; the warm-up ends with the first micro-batch that starts after that (W).  From
 * then on, at each completion L, with the least cycle q <= SIM_STEADY_MAX_CYCLE of the completions (the
 * last q intervals c[m] - c[m-1] equal the ones q earlier within SIM_STEADY_TOLERANCE, relative) and
 * P = c[L] - c[L-q]:
 *  - the run is steady when the pipeline's state repeats: the engine is deterministic, so a state met
 *    again P later is met every P from then on.  Every group records per micro-batch when its actor
 *    took each segment and when the segment's DRAM reads, execution and all-gather ended, when it wrote
 *    its spill, when its sender started and ended each Send and when it was done (jgroup.ev_t).  With t0 the earliest start of an activity in
 *    flight now, the state now is the state at now - P when every event of the micro-batches in flight
 *    and of those that ended since t0 - P happened, if at or after t0, exactly P after its counterpart
 *    q micro-batches before (to SIM_STEADY_STATE_TOLERANCE of P: the clock's last bits, not a state
 *    that is nearly the same, which a pipeline at the edge of chaos leaves again); if before t0, like
 *    its counterpart before t0 - P (only that it happened
 *    can still matter: ptask sharing depends on which activities run, not on their past); if not yet,
 *    its counterpart not before now - P.  (The cores' streams of one DRAM batch end unrecorded, at times
 *    that the same sharing sets.)  A window that still binds could grow (below), so this applies
 *    once it is at 2p + 2 or closed, or some server has worked without a pause over the last cycle
 *    (in a state that repeats, it then does forever).  It settles a deep pipeline a few micro-batches
 *    after its warm-up (ResNet-50 cut into 41 stages on 16x16 in 48 micro-batches instead of 83), and
 *    since the state decides, one cycle of periodic intervals, wherever they lie, suffices to propose
 *    it, from W's completion on (the stage means average W .. L).  Before, it took 2q intervals after
 *    the warm-up, a server busy over the last six completions, and the means left W out: random
 *    ResNet-50 plans of 1-16 stages now settle in 10.2, 9.1 and 8.0 micro-batches on 4x4, 8x8 and 16x16
 *    instead of 12.8, 11.7 and 10.6 (13-16 % fewer activities), with the same periods to 1.2e-11 on
 *    900 plans, and 15 plans on 32x32 in 6.1 instead of 9.0 (4 961 activities instead of 7 009),
 *    periods within 3.9e-10 (the state check's tolerance is 1e-9 of a period); on 8x8 the stage means
 *    differ from a fixed run of 100 micro-batches by 0.12 % on average instead of 0.10 % (compute),
 *    0.19 % instead of 0.17 % (Sends), 1.3 % instead of 1.1 % (DRAM waits);
 *  - otherwise the completions must be periodic (every interval over the last 2q equal to the one q
 *    earlier, after the warm-up) over a span of at least the number of micro-batches
 *    in flight at L, and SIM_STEADY_MIN_INTERVALS, so that every micro-batch whose progress makes the
 *    pipeline's state then started within the periodic stretch (a shorter stretch says little: groups streaming from one DRAM port
 *    complete mostly one stream apart, with a longer interval now and then), and the last q
 *    micro-batches must have started as far apart as the last q completed: as many enter the pipeline
 *    as leave it.  When they complete periodically but enter faster, the first stages, faster than the
 *    bottleneck, are still filling the window, and their extra traffic may still slow it (DRAM ports,
 *    shared links): the window is then closed to the micro-batches in flight, which the bottleneck's
 *    queue keeps busy, so that from now on a micro-batch starts as one ends, and the run goes on to
 *    the next periodic stretch.
 * The steady period is the mean interval of the last cycle, (c[L] - c[L-q]) / q.  A run that has not
 * settled when its M micro-batches (the cap) are complete reports the mean interval of the second half
 * after the warm-up and the window's closing, and says so.  Closing changes the regime (the first
 * stages now keep the bottleneck's pace, and their streams meet its transfers at other times), so a
 * run whose window closes at L goes on to at least L + 1 + ceil(cap / 2) before it gives up: a cap
 * met just after the closing would measure the new regime over an interval or two.  (GoogLeNet cut
 * into 21 stages on 8x8 with 1 MiB closed at 115 of 116: it reported one interval, 102.6 us, against
 * a period of 144 us over 400 micro-batches and a slowest stage of 129.1 us of compute.)  A link carries
 * its bytes of every micro-batch, so no period is below the busiest link's bytes / bandwidth (the link
 * floor): a mean under it measured a transient, and under the automatic cap the run starts again, at
 * 2p + 2, with its cap doubled, at most SIM_STEADY_DOUBLINGS times.  (VGG-16 cut into 9 stages by rl
 * on 8x8 with 4 MiB, streaming weights through the links next to a DRAM port: at its cap of 68 a mean
 * of 857.7 us where its busiest link needs 1.126 ms per micro-batch; at 136 1.197 ms, steady at
 * 1.255 ms after 219 micro-batches; rl had taken the transient for a plan 31 % faster than optimal's.) */
#define SIM_STEADY_TOLERANCE 1e-6
#define SIM_STEADY_STATE_TOLERANCE 1e-9
#define SIM_STEADY_MIN_INTERVALS 6
#define SIM_STEADY_APERIODIC 4 /* spans without a periodic stretch before a narrow run starts again wide */
#define SIM_STEADY_DOUBLINGS 2 /* the automatic cap grows to 4x at most */
#define SIM_STEADY_MAX_CYCLE 32 /* cycles of 17 completions occur (ResNet-50 cut evenly over 32x32) */

/* Timer.  A SimGrid engine step costs time in proportion to the activities it holds (its ptask
 * solver and its update walk every running action, sleeps included), and in a deep pipeline most of
 * them are waits that nothing can lengthen: an execution (a core runs one at a time, and a
 * computation shares nothing in the ptask model), and the sleeps that replay a private transfer.
 * With sim_timer on (a job without SimGrid's Paje trace), an actor hands such a wait to the job's
 * timer actor, which alone sleeps, until the earliest deadline, and wakes the actors whose deadlines
 * have come, earliest first and equal ones in the order they were set.  Each wait ends when it did (an
 * execution of F flops on a core of speed s, F / s later), but events at one instant are handled in
 * another order than SimGrid's: the same figures on 1 200 random plans (tests/test_sim.c compares
 * both), while a pipeline whose contended DRAM streams allow more than one schedule may fall into
 * another one (ResNet-50 evenly on 8x8 with 1 MiB: 366.5 us a micro-batch then, 397.9 us now). */
typedef struct sim_timer {
  double *at;     /* heap of pending waits: deadline, */
  long *seq;      /* sequence number (ties), */
  sg_sem_t *sem;  /* and the semaphore of the actor waiting */
  int n, cap;
  long next_seq;
  sg_sem_t wake;  /* the timer actor's */
  int kicked;     /* wake released since the timer actor last looked */
  double target;  /* the deadline the timer actor sleeps until, or -1 */
  int live;       /* the job's other actors still running */
  int on;         /* 0: every wait is SimGrid's own (an execution, a sleep) */
  sg_actor_t actor;
} sim_timer;

/* What a run measured (absolute seconds of the engine's clock turned into durations). */
typedef struct job_run {
  int microbatches; /* completions counted: L + 1 */
  int warmup;       /* steady runs: W; fixed runs: 0 */
  int cycle;        /* q of a settled run, else 0 */
  int settled;      /* 1: a steady run found its period; 0: fixed, or the cap was hit */
  double period_s;  /* see sim_result */
  double fill_s;    /* c[0] - t0 */
  double makespan_s; /* c[L] - t0 */
} job_run;

typedef struct job {
  double *link_bytes;    /* per link (chip.h): bytes per micro-batch of the groups' gathers, sends, streams */
  double model_period_s; /* the analytical model's period of this work, with contention (cost_contended) */
  int M;      /* micro-batches the arrays hold: a fixed run's count, or a steady run's cap, the half cap
                 it may add (cap_now) and its window (so that the last micro-batches it counts are not
                 in a draining pipeline) */
  int cap;    /* micro-batches counted at most: M in a fixed run; a steady run's before its window closes */
  int fixed;  /* 1: run exactly M micro-batches; 0: until steady (above) */
  int window; /* micro-batches in flight at most */
  int retry;  /* a steady run that started narrow: if it does not settle, it runs again at 2p + 2 */
  int doublings; /* a steady run under the automatic cap: how many more times the cap may double when the
                    run ends below its link floor ("Steady state") */
  int n_groups;
  jgroup *groups;
  uint64_t graph_hash, plan_hash;
  timeline *tl;  /* NULL, or where the run's events go (borrowed) */
  int tl_failed; /* an event could not be added (out of memory) */
  mp_status failed; /* set by the engine thread when the evaluation could not run: MP_NOMEM, or MP_RUN when
                       the isolated run's child could not start or answer (see sim_engine_run) */
  double t0, t_end;
  /* run state (engine thread) */
  int limit;        /* micro-batches the groups run: M, lowered to L + 1 when the run has ended at L */
  int *groups_done; /* per micro-batch: groups that finished it */
  double *c;        /* per micro-batch: completion (absolute) */
  double *start_t;  /* per micro-batch: its first activity (absolute), -1 before */
  int n_complete;   /* micro-batches 0 .. n_complete - 1 are complete */
  int warmup, cycle;
  int closed_at; /* the completion at which the window was closed, or 0 */
  int cap_now;   /* micro-batches counted at most in this run: cap, raised when the window closes at L
                    to L + 1 + ceil(cap / 2) ("Steady state") */
  sim_timer timer;
  job_run run;   /* filled when the run ends */
} job;

/* The events a steady run records per micro-batch of group gr (jgroup.ev_t). */
static inline int sim_group_events(const jgroup *gr) { return 4 * gr->n_segs + 2 * gr->n_sends + 2; }

/* The widest window of job j: 2p + 2 for p stages (sim_int.h, "Steady state"). */
static inline int sim_job_wmax(const job *j) { return 2 * j->n_groups + 2; }

/* Resets the run state of job j, which ran narrow without settling, for a run at 2p + 2 from the start
 * (the activities it ran stay counted). */
void sim_job_restart(job *j);

/* Doubles the cap of job j (a steady run with doublings left) and restarts it as sim_job_restart: the
 * arrays are resized.  0, or -1 when out of memory (the job is then for sim_job_free only). */
int sim_job_double_cap(job *j);

/* The job of plan p of graph g (both borrowed) on the sim's chip: M > 0 micro-batches, or M == 0 for
 * a steady-state run (its cap from the sim's options).  *out is owned (sim_job_free). */
mp_status sim_job_from_plan(const sim *s, const graph *g, const plan *p, int M, job **out, mp_error *err);

/* The job of a trace whose core ids are the sim chip's (borrowed; see sim_replay): its micro-batches,
 * with steady-state detection within them when steady is 1.  *out is owned. */
mp_status sim_job_from_trace(const sim *s, const trace *t, int steady, job **out, mp_error *err);

/* Frees j; sim_job_free(NULL) is a no-op. */
void sim_job_free(job *j);

/* ---- results (sim.c) ---------------------------------------------------------------------------- */

/* The result of job j once the engine has run it: its figures, the stages' analytical figures, the
 * cores' memory and the busiest links.  res is caller-owned (sim_result_clear). */
mp_status sim_job_result(sim *s, const job *j, sim_result *res, mp_error *err);

/* MP_INPUT when the sim's measured op times were loaded for another graph than g. */
mp_status sim_check_op_times(const sim *s, const graph *g, mp_error *err);

/* ---- steady state (sim_steady.c) ---------------------------------------------------------------- */

/* After completion n_complete - 1 = L of steady-state run j, at engine time now (see "Steady state"
 * above): grows the window when no server has been busy throughout the last span; ends a run that
 * started narrow once it has gone SIM_STEADY_APERIODIC spans without a periodic stretch (run_eval runs
 * it again at 2p + 2); stops the run (j->limit, j->cycle) once its state repeats a cycle later, or once
 * its completions are periodic over a span that covers the micro-batches in flight and as many
 * micro-batches start as end; when they are periodic while the first stages still start them faster,
 * closes the window to the micro-batches in flight so that from then on one starts as one ends. */
void sim_steady_check(job *j, double now);

/* ---- the engine (sim_engine.c) ------------------------------------------------------------------ */

typedef struct sim_request sim_request;

/* What sim_new, sim_evaluate and the engine thread share.  Everything but the request handshake
 * (mu, cv, state, req) belongs to the caller's thread, or to the engine thread while it runs a job. */
struct sim {
  const chip *chip;
  sim_options opt;
  pthread_t thread;
  int thread_started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int state;        /* SIM_ST_* (sim_engine.c) */
  sim_request *req; /* the request being served */
  char xml_path[256];
  char paje_part[560];   /* where SimGrid writes the Paje trace until sim_free renames it */
  sg_host_t *hosts;      /* per core */
  sg_host_t *dram_hosts; /* per port */
  int platform;          /* SIM_PLATFORM_* */
  sim_stats stats;
  struct sim_cache_entry *cache;
  long cache_stamp;
  struct sim_train_cache_entry *train_cache; /* sim_train.c: allocated at the first training result */
  double *link_bytes; /* scratch: per link index */
  int *link_order;    /* scratch */
};

/* Claims the process's one engine, writes the platform and starts the engine thread; MP_RUN if an
 * engine was already claimed.  On failure nothing is left running. */
mp_status sim_engine_start(sim *s, mp_error *err);

/* Runs job j (an evaluation, in a fork of the idle engine when the sim isolates and j has no
 * timeline) and waits for it.  MP_RUN if the engine has stopped or the job could not run. */
mp_status sim_engine_run(sim *s, job *j, mp_error *err);

/* Runs fn(s, ctx) as an actor's code on the engine thread and waits for it: an evaluation of another
 * kind than a job (the training schedules, sim_train.c), which starts and joins its own actors.  MP_RUN
 * if the engine has stopped. */
mp_status sim_engine_call(sim *s, void (*fn)(sim *, void *), void *ctx, mp_error *err);

/* Names of the NoC/DRAM links SimGrid routes from core a to core b (see sim_route_links). */
int sim_engine_route(sim *s, int a, int b, char (*names)[48], int max);

/* Reads the idle engine's clock into *now after sleeping until `until` when that is later (until < 0:
 * just reads).  MP_RUN if the engine has stopped. */
mp_status sim_engine_clock(sim *s, double until, double *now, mp_error *err);

/* Stops the engine thread (if it was started) and waits for it. */
void sim_engine_stop(sim *s);

/* The activities every job's actors run (engine thread; sim_engine.c), so that inference and training
 * jobs time a transfer, an all-gather and a DRAM stream alike. */

/* One transfer of bytes from one host to another (a 2-host ptask), waited for. */
void sim_ptask2(sg_host_t from, sg_host_t to, double bytes);

/* The activities of an all-gather (sim_gather, above).  Allocates g's arrays for a chain of n_cores >= 2
 * cores from first_core, every link kept.  0, or -1 out of memory (then sim_gather_free frees what was
 * allocated). */
int sim_gather_init(sim_gather *g, int first_core, int n_cores);

/* Frees g's arrays (not g); g zeroed or initialised. */
void sim_gather_free(sim_gather *g);

/* Marks in busy (chip_n_links(c) bytes) the links of chip_route's route from `from` to `to`. */
void sim_mark_route(const chip *c, int from, int to, unsigned char *busy);

/* Sets g's kept links (above) for a job whose other transfers cross the links marked in busy; busy NULL:
 * every link. */
void sim_gather_plan(const chip *c, sim_gather *g, const unsigned char *busy);

/* An all-gather of `bytes` over g's chain (above), waited for. */
void sim_all_gather(sim *s, sim_gather *g, double bytes);

/* The DRAM streams of a group (sim_streams, above) for cores first_core .. first_core + n_cores - 1 of
 * s's chip, each from its nearest port, batched as s's options say.  0, or -1 out of memory (then
 * sim_streams_free frees what was allocated). */
int sim_streams_init(sim_streams *st, const sim *s, int first_core, int n_cores);

/* Frees st's arrays (not st); st zeroed or initialised. */
void sim_streams_free(sim_streams *st);

/* The group's DRAM reads (write 0) or writes (1) of one micro-batch, bytes[k] for its core k (n_cores
 * entries), every batch started at once, then the wait for the last; a core that moves nothing is left
 * out, and so is a batch none of whose cores moves anything.  Returns the number of tasks run. */
int sim_dram_streams(sim_streams *st, const double *bytes, int write);

/* Adds to tl, per core of stage cs, the bytes it keeps resident: its share of the stage's weight bytes
 * (training: its static bytes) less what it streams from DRAM (cost_core_dram). */
mp_status sim_timeline_resident(const chip *c, const cost_stage *cs, timeline *tl, mp_error *err);

/* ---- the timer (sim_timer.c; engine thread) ------------------------------------------------------ */

/* Before a job's run (each run of it): turns t on, unless s's options ask for SimGrid's own waits
 * (then t->on stays 0), for at most cap waits at once, nothing pending.  0, or -1 out of memory (t
 * freed). */
int sim_timer_open(sim_timer *t, const sim *s, int cap);

/* Starts an open t's timer actor on host (nothing when t is off) once the job's actors are started,
 * `live` of which wait on it and call sim_timer_leave at their end. */
void sim_timer_run(sim_timer *t, sg_host_t host, int live);

/* Once the job's actors are joined: joins the timer actor (nothing when t is off). */
void sim_timer_join(sim_timer *t);

/* Frees t's arrays (not t); t zeroed or freed before. */
void sim_timer_free(sim_timer *t);

/* The calling actor waits `seconds` that nothing can change: on t's timer, blocked on own (a semaphore
 * of its own, at 0), or as SimGrid's sleep when t is off. */
void sim_timer_sleep(sim_timer *t, sg_sem_t own, double seconds);

/* The calling actor executes `flops` on its host, of speed `speed`: on t's timer (flops / speed), or as
 * SimGrid's execution when t is off. */
void sim_timer_execute(sim_timer *t, sg_sem_t own, double flops, double speed);

/* The calling actor, one of the `live`, ends: once none is left the timer actor returns. */
void sim_timer_leave(sim_timer *t);

/* x to 12 significant digits: figures that do not move with the last bits of the engine's clock. */
double sim_round12(double x);

/* Empties (and with release frees) the cache of training results (sim_train.c); sim.c calls it where it
 * empties its own (sim_checkpoint, sim_restore) and in sim_free. */
void sim_train_cache_clear(sim *s, int release);

#endif
