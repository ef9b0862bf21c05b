/* timeline: a simulated run as a Chrome trace-event file (the JSON format chrome://tracing and
 * Perfetto open), and a checker of that format's rules.
 *
 * A timeline collects events of one simulation on one chip — op executions on a core group (with
 * their all-gathers), NoC transfers between cores (Send/Recv of a tensor, weights streamed from a DRAM
 * port) and the bytes each core keeps resident — and writes them as trace events: process 1 "cores"
 * has one track per core with its ops and, as slices of their own, their all-gathers, and beside it a
 * "comm" track with its Sends, Recvs and DRAM reads (a Send and its Recv joined by a flow arrow);
 * process 2 "NoC links" one track per link that carried bytes, with the transfers on the link's XY
 * route and the all-gathers on the links of their group's chain.  Slices that overlap on one track are
 * spread over numbered lanes ("core 3", "core 3 #2"), so begin/end pairs always nest; every lane is one
 * track with one id, numbered core by core (ops, their lanes, comm, its lanes), then link by link,
 * and thread_sort_index keeps that order in the viewer.
 * SRAM occupancy is a counter per core ("SRAM core K", sram_bytes) over time: the resident bytes of
 * its latest TIMELINE_SRAM event plus the activations its group's micro-batches hold there — an op's
 * all-gathered outputs (EXEC bytes) on every core of the group from the op's end, a received tensor on
 * the receiving core from its arrival, a DRAM read on its core from its start — each until that
 * micro-batch is done on the group (its last op and last Send have ended).
 * Timestamps are microseconds of simulated time (the format's unit); every event's args name their
 * units (work_flop, size_bytes, gathered_bytes, sram_bytes).  The output is deterministic: events
 * sorted by time, ties by track and order of addition.
 *
 * A timeline borrows its chip (which must outlive it) and owns copies of every name added. */
#ifndef MESHPIPE_TIMELINE_H
#define MESHPIPE_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "chip.h"
#include "err.h"

typedef enum timeline_kind {
  TIMELINE_EXEC,     /* an op of a group on cores [first_core, first_core + n_cores), then its all-gather */
  TIMELINE_TRANSFER, /* bytes from src_core to dst_core (or between DRAM port dram_port and a core) */
  TIMELINE_SRAM      /* core first_core holds bytes of SRAM from start_s on */
} timeline_kind;

typedef struct timeline_event {
  timeline_kind kind;
  double start_s, end_s; /* simulated seconds; end_s >= start_s (SRAM: end_s is ignored) */
  const char *name;      /* op (EXEC) or tensor (TRANSFER) name, copied; NULL for none */
  int microbatch;        /* -1 when not tied to one */
  int first_core, n_cores;
  double flops;             /* EXEC: the work of the op on the group */
  double gather_s;          /* EXEC: when its all-gather began (start_s <= gather_s <= end_s), or 0 for none */
  int src_core, dst_core;   /* TRANSFER: ends of the XY route (with a DRAM port, only the core's end) */
  int dram_port;            /* TRANSFER: index into chip->dram when the bytes come from or go to DRAM, else -1 */
  int to_dram;              /* TRANSFER with a port: 1 when src_core writes to the port, 0 when dst_core reads */
  int src_group, dst_group; /* TRANSFER: stages of the ends (-1 for DRAM) */
  int is_send;              /* TRANSFER: 1 for a Send/Recv pair (drawn with a flow arrow) */
  uint64_t bytes;           /* EXEC: its outputs' bytes, all-gathered (held by every core of the group);
                               TRANSFER: bytes moved; SRAM: bytes resident from start_s on */
} timeline_event;

typedef struct timeline timeline;

/* An empty timeline for chip c (borrowed); title names the run in the file's metadata (copied, may
 * be NULL).  *out is owned by the caller (timeline_free). */
mp_status timeline_new(const chip *c, const char *title, timeline **out, mp_error *err);

/* Adds one event (copied).  MP_INPUT for an event that does not fit the chip (core or port out of
 * range, negative or NaN times, end before start, an all-gather outside its op); MP_NOMEM. */
mp_status timeline_add(timeline *t, const timeline_event *e, mp_error *err);

/* Events added so far. */
size_t timeline_count(const timeline *t);

/* Drops every event after the first n (a run that starts again); n above the count changes nothing. */
void timeline_truncate(timeline *t, size_t n);

/* Writes the trace-event JSON atomically to path (MP_OUTPUT if it cannot). */
mp_status timeline_write(const timeline *t, const char *path, mp_error *err);

/* The same JSON as an owned NUL-terminated string (free()); *len (may be NULL) excludes the NUL. */
mp_status timeline_to_string(const timeline *t, char **out, size_t *len, mp_error *err);

/* Frees t; timeline_free(NULL) is a no-op. */
void timeline_free(timeline *t);

/* Checks a trace-event document against the format's rules: valid JSON; a traceEvents array (or a
 * bare array of events); every event an object with ph (a known phase), ts, pid and tid; X events
 * with a non-negative dur; on each (pid, tid) track every E closes the latest open B, no earlier
 * than it began, and no B is left open; counters carry numeric args; every flow id has a start
 * ('s') and a finish ('f'), each once.  file labels the messages "FILE: traceEvents[i]: what".
 * MP_INPUT on the first violation.  *n_events (may be NULL) receives the number of events. */
mp_status timeline_validate(const char *file, const char *text, size_t len, size_t *n_events, mp_error *err);

/* timeline_validate on a file's contents. */
mp_status timeline_validate_file(const char *path, size_t *n_events, mp_error *err);

#endif
