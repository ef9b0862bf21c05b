/* Tests of timeline: a hand-built run written as Chrome trace events and checked by the validator
 * (tracks per core and per link on the XY route, lanes for overlapping slices, flow arrows, counters,
 * microsecond timestamps), rejected events, and every rule of the validator provoked by a bad file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chip.h"
#include "jsonio.h"
#include "testutil.h"
#include "timeline.h"

/* A 4 x 4 chip with one DRAM port at (3, 0). */
static chip *chip4(void) {
  const char *text =
      "{\"format\": \"meshpipe-chip\", \"version\": 1, \"name\": \"t16\", \"mesh\": {\"width\": 4, \"height\": 4}, "
      "\"core\": {\"flops\": 1e12, \"sram_bytes\": 1048576}, \"noc\": {\"bandwidth\": 6.4e10, \"latency\": 5e-9}, "
      "\"dram\": {\"bandwidth\": 1e11, \"ports\": [[3, 0]]}}";
  cJSON *root = NULL;
  chip *c = NULL;
  mp_error err;
  if (jsonio_parse("chip.json", text, strlen(text), &root, &err) != MP_OK ||
      chip_from_json(root, "chip.json", &c, &err) != MP_OK)
    fprintf(stderr, "\nchip4: %s\n", err.msg);
  cJSON_Delete(root);
  return c;
}

static timeline_event exec_ev(const char *name, int m, int first, int n, double t0, double t1) {
  return (timeline_event){.kind = TIMELINE_EXEC,
                          .start_s = t0,
                          .end_s = t1,
                          .name = name,
                          .microbatch = m,
                          .first_core = first,
                          .n_cores = n,
                          .flops = 1e6,
                          .dram_port = -1};
}

static timeline_event send_ev(const char *name, int m, int src, int dst, double t0, double t1) {
  return (timeline_event){.kind = TIMELINE_TRANSFER,
                          .start_s = t0,
                          .end_s = t1,
                          .name = name,
                          .microbatch = m,
                          .src_core = src,
                          .dst_core = dst,
                          .dram_port = -1,
                          .src_group = 0,
                          .dst_group = 1,
                          .is_send = 1,
                          .bytes = 4096};
}

/* The slices ('B') of the written file whose thread is named track. */
static int count_on_track(const cJSON *events, const char *track, const char *name) {
  double tid = -1, pid = -1;
  const cJSON *ev;
  cJSON_ArrayForEach(ev, events) {
    const cJSON *args = cJSON_GetObjectItem(ev, "args");
    if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "M") == 0 &&
        strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, "thread_name") == 0 &&
        strcmp(cJSON_GetObjectItem(args, "name")->valuestring, track) == 0) {
      tid = cJSON_GetObjectItem(ev, "tid")->valuedouble;
      pid = cJSON_GetObjectItem(ev, "pid")->valuedouble;
    }
  }
  int n = 0;
  cJSON_ArrayForEach(ev, events) {
    if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "B") == 0 &&
        cJSON_GetObjectItem(ev, "tid")->valuedouble == tid && cJSON_GetObjectItem(ev, "pid")->valuedouble == pid &&
        (!name || strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, name) == 0))
      n++;
  }
  return n;
}

static void a_run_should_become_valid_trace_events_on_the_right_tracks(void) {
  chip *c = chip4();
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  timeline *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(timeline_new(c, "unit \"test\"", &t, &err), MP_OK);
  /* Group 0 = cores 0-1 runs a then b, twice; b of micro-batch 0 overlaps a of micro-batch 1 (lanes). */
  timeline_event evs[] = {
      exec_ev("a", 0, 0, 2, 0, 1e-6),
      exec_ev("b", 0, 0, 2, 1e-6, 2e-6),
      exec_ev("a", 1, 0, 2, 1.5e-6, 2.5e-6),
      exec_ev("zero", 1, 0, 2, 2.5e-6, 2.5e-6),
      /* core 1 (1,0) sends to core 5 (2,1): XY route x1y0>x2y0, x2y0>x2y1. */
      send_ev("t_b", 0, 1, 5, 2e-6, 3e-6),
      send_ev("t_b", 1, 1, 5, 3e-6, 4e-6),
      {.kind = TIMELINE_TRANSFER,
       .start_s = 0,
       .end_s = 5e-7,
       .name = "weights",
       .microbatch = 0,
       .dst_core = 0,
       .dram_port = 0,
       .src_group = -1,
       .dst_group = 0,
       .bytes = 1000},
      {.kind = TIMELINE_SRAM, .start_s = 0, .first_core = 0, .bytes = 123456, .dram_port = -1},
      {.kind = TIMELINE_SRAM, .start_s = 2e-6, .first_core = 5, .bytes = 99, .dram_port = -1},
  };
  for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++) CU_ASSERT_EQUAL(timeline_add(t, &evs[i], &err), MP_OK);
  CU_ASSERT_EQUAL(timeline_count(t), sizeof evs / sizeof evs[0]);
  const char *path = testutil_temp_path("run.json");
  CU_ASSERT_EQUAL_FATAL(timeline_write(t, path, &err), MP_OK);
  size_t n = 0;
  CU_ASSERT_EQUAL(timeline_validate_file(path, &n, &err), MP_OK);
  CU_ASSERT(n > 20);

  cJSON *root = NULL;
  CU_ASSERT_EQUAL_FATAL(jsonio_load(path, &root, &err), MP_OK);
  const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetObjectItem(root, "otherData"), "title")->valuestring,
                         "unit \"test\"");
  /* Every core of the group shows the ops; the overlapping one goes to a second lane. */
  CU_ASSERT_EQUAL(count_on_track(events, "core 0", NULL), 3);
  CU_ASSERT_EQUAL(count_on_track(events, "core 1", "b"), 1);
  CU_ASSERT_EQUAL(count_on_track(events, "core 1 #2", "a"), 1);
  CU_ASSERT_EQUAL(count_on_track(events, "core 2", NULL), 0);
  /* The transfers run on their XY route and the DRAM port's link, nowhere else. */
  CU_ASSERT_EQUAL(count_on_track(events, "x1y0>x2y0", "t_b"), 2);
  CU_ASSERT_EQUAL(count_on_track(events, "x2y0>x2y1", "t_b"), 2);
  CU_ASSERT_EQUAL(count_on_track(events, "x1y0>x1y1", NULL), 0);
  CU_ASSERT_EQUAL(count_on_track(events, "dram0>x3y0", "weights"), 1);
  CU_ASSERT_EQUAL(count_on_track(events, "x3y0>x2y0", "weights"), 1);
  CU_ASSERT_EQUAL(count_on_track(events, "core 1 comm", "Send t_b"), 2);
  CU_ASSERT_EQUAL(count_on_track(events, "core 5 comm", "Recv t_b"), 2);
  CU_ASSERT_EQUAL(count_on_track(events, "core 0 comm", "DRAM read weights"), 1);
  /* Timestamps are microseconds; args name units; two flows, two counters. */
  int flows_s = 0, flows_f = 0, counters = 0, found_b = 0;
  const cJSON *ev;
  cJSON_ArrayForEach(ev, events) {
    const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
    flows_s += strcmp(ph, "s") == 0;
    flows_f += strcmp(ph, "f") == 0;
    if (strcmp(ph, "C") == 0) {
      counters++;
      double ts = cJSON_GetObjectItem(ev, "ts")->valuedouble,
             v = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "sram_bytes")->valuedouble;
      const char *name = cJSON_GetObjectItem(ev, "name")->valuestring;
      if (strcmp(name, "SRAM core 5") == 0) CU_ASSERT(ts == 2.0 && v == 99);
      /* core 0: its baseline and the DRAM read of micro-batch 0 until its group is done with it (the
       * Send of t_b ends at 3 us) */
      if (strcmp(name, "SRAM core 0") == 0) CU_ASSERT((ts == 0 && v == 123456 + 1000) || (ts == 3.0 && v == 123456));
    }
    if (strcmp(ph, "B") == 0 && strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, "b") == 0) {
      CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(ev, "ts")->valuedouble, 1.0, 1e-12);
      const cJSON *args = cJSON_GetObjectItem(ev, "args");
      CU_ASSERT_DOUBLE_EQUAL(cJSON_GetObjectItem(args, "work_flop")->valuedouble, 1e6, 0);
      CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(args, "group_cores")->valuestring, "0-1");
      found_b++;
    }
  }
  CU_ASSERT_EQUAL(flows_s, 2);
  CU_ASSERT_EQUAL(flows_f, 2);
  CU_ASSERT_EQUAL(counters, 3);
  CU_ASSERT_EQUAL(found_b, 2);
  cJSON_Delete(root);

  /* The same events give the same bytes. */
  char *a = NULL, *b = NULL;
  CU_ASSERT_EQUAL(timeline_to_string(t, &a, NULL, &err), MP_OK);
  CU_ASSERT_EQUAL(timeline_to_string(t, &b, NULL, &err), MP_OK);
  CU_ASSERT(a && b && strcmp(a, b) == 0);
  free(a);
  free(b);
  timeline_free(t);
  timeline_free(NULL);
  chip_free(c);
}

/* Every thread_name of pid 1 in file order: names[i] with tid tids[i]; returns the count. */
static int core_tracks(const cJSON *events, const char **names, int *tids, int max) {
  int n = 0;
  const cJSON *ev;
  cJSON_ArrayForEach(ev, events) {
    if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "M") == 0 &&
        strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, "thread_name") == 0 &&
        cJSON_GetObjectItem(ev, "pid")->valueint == 1 && n < max) {
      names[n] = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "name")->valuestring;
      tids[n++] = cJSON_GetObjectItem(ev, "tid")->valueint;
    }
  }
  return n;
}

/* The sram_bytes of core's counter at ts (microseconds): the last sample at or before it, or -1. */
static double sram_at(const cJSON *events, int core, double ts) {
  char name[32];
  snprintf(name, sizeof name, "SRAM core %d", core);
  double v = -1, at = -1;
  const cJSON *ev;
  cJSON_ArrayForEach(ev, events) {
    double t = cJSON_GetObjectItem(ev, "ts")->valuedouble;
    if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "C") == 0 &&
        strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, name) == 0 && t <= ts + 1e-9 && t >= at) {
      at = t;
      v = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), "sram_bytes")->valuedouble;
    }
  }
  return v;
}

/* Two groups, three micro-batches whose ops overlap (lanes on and off): each lane is one track with
 * one id, named once, and a core's comm tracks follow its op tracks; an op's all-gather is a slice of
 * its own on the core and on both links between the group's cores; SRAM occupancy steps up as
 * outputs, received tensors and DRAM reads land and down when the micro-batch is done on the group. */
static void tracks_should_be_one_per_lane_beside_their_core_with_all_gathers_and_sram_over_time(void) {
  chip *c = chip4();
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  timeline *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(timeline_new(c, "lanes", &t, &err), MP_OK);
  for (int m = 0; m < 3; m++) {
    double o = 1e-6 * m; /* micro-batch m starts 1 us after m - 1 and each op lasts 1.5 us: lanes alternate */
    timeline_event a = exec_ev("a", m, 0, 2, o, o + 1.5e-6), b = exec_ev("b", m, 2, 1, o + 2e-6, o + 3e-6);
    a.gather_s = o + 1e-6; /* the last 0.5 us all-gather 100 bytes between cores 0 and 1 */
    a.bytes = 100;
    timeline_event s = send_ev("t_a", m, 1, 2, o + 1.5e-6, o + 2e-6);
    s.bytes = 40;
    CU_ASSERT_EQUAL(timeline_add(t, &a, &err), MP_OK);
    CU_ASSERT_EQUAL(timeline_add(t, &s, &err), MP_OK);
    CU_ASSERT_EQUAL(timeline_add(t, &b, &err), MP_OK);
  }
  timeline_event base = {.kind = TIMELINE_SRAM, .start_s = 0, .first_core = 2, .bytes = 1000, .dram_port = -1};
  CU_ASSERT_EQUAL(timeline_add(t, &base, &err), MP_OK);
  timeline_event outside = exec_ev("x", 0, 0, 2, 1e-6, 2e-6);
  outside.gather_s = 3e-6;
  CU_ASSERT_EQUAL(timeline_add(t, &outside, &err), MP_INPUT);
  char *text = NULL;
  size_t len = 0;
  CU_ASSERT_EQUAL_FATAL(timeline_to_string(t, &text, &len, &err), MP_OK);
  CU_ASSERT_EQUAL(timeline_validate("lanes.json", text, len, NULL, &err), MP_OK);
  cJSON *root = cJSON_Parse(text);
  CU_ASSERT_PTR_NOT_NULL_FATAL(root);
  const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
  const char *names[64];
  int tids[64], n = core_tracks(events, names, tids, 64);
  static const char *const want[] = {"core 0", "core 0 #2", "core 1", "core 1 #2", "core 1 comm", "core 2", "core 2 comm"};
  CU_ASSERT_EQUAL_FATAL(n, (int)(sizeof want / sizeof *want));
  for (int i = 0; i < n; i++) {
    CU_ASSERT_STRING_EQUAL(names[i], want[i]);
    CU_ASSERT_EQUAL(tids[i], i + 1);
  }
  /* a of micro-batch m runs m .. m + 1 us, its all-gather m + 1 .. m + 1.5: a of 1 and 2 overlap the
   * all-gathers before them and take the second lane; each op and all-gather once per micro-batch */
  CU_ASSERT_EQUAL(count_on_track(events, "core 0", "a"), 1);
  CU_ASSERT_EQUAL(count_on_track(events, "core 0 #2", "a"), 2);
  CU_ASSERT_EQUAL(count_on_track(events, "core 1", "all-gather a"), 3);
  CU_ASSERT_EQUAL(count_on_track(events, "core 1 #2", "all-gather a"), 0);
  CU_ASSERT_EQUAL(count_on_track(events, "x0y0>x1y0", "all-gather a"), 3);
  CU_ASSERT_EQUAL(count_on_track(events, "x1y0>x0y0", "all-gather a"), 3);
  CU_ASSERT_EQUAL(count_on_track(events, "core 1 comm", "Send t_a"), 3);
  const cJSON *ev;
  cJSON_ArrayForEach(ev, events) { /* the op's slice ends where its all-gather begins */
    if (strcmp(cJSON_GetObjectItem(ev, "ph")->valuestring, "E") == 0 &&
        strcmp(cJSON_GetObjectItem(ev, "name")->valuestring, "a") == 0)
      CU_ASSERT(fabs(fmod(cJSON_GetObjectItem(ev, "ts")->valuedouble, 1.0)) < 1e-9);
  }
  /* core 0: micro-batch m's 100 bytes from m + 1.5 us until its Send ends at m + 2 us */
  CU_ASSERT_EQUAL(sram_at(events, 0, 1.4), -1);
  CU_ASSERT_EQUAL(sram_at(events, 0, 1.5), 100);
  CU_ASSERT_EQUAL(sram_at(events, 0, 2.0), 0);
  CU_ASSERT_EQUAL(sram_at(events, 0, 2.5), 100);
  CU_ASSERT_EQUAL(sram_at(events, 0, 3.7), 100);
  CU_ASSERT_EQUAL(sram_at(events, 0, 4.5), 0);
  /* core 2: 1000 resident; t_a of micro-batch m arrives at m + 2 us and is held until b ends at m + 3 */
  CU_ASSERT_EQUAL(sram_at(events, 2, 0), 1000);
  CU_ASSERT_EQUAL(sram_at(events, 2, 2.0), 1040);
  CU_ASSERT_EQUAL(sram_at(events, 2, 3.0), 1040); /* micro-batch 0 released, 1 arrived */
  CU_ASSERT_EQUAL(sram_at(events, 2, 5.0), 1000);
  cJSON_Delete(root);
  free(text);
  timeline_free(t);
  chip_free(c);
}

static void events_off_the_chip_should_be_refused(void) {
  chip *c = chip4();
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  timeline *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(timeline_new(c, NULL, &t, &err), MP_OK);
  timeline_event bad[] = {
      exec_ev("a", 0, 15, 2, 0, 1),
      exec_ev("a", 0, -1, 1, 0, 1),
      exec_ev("a", 0, 0, 0, 0, 1),
      exec_ev("a", 0, 0, 1, 2, 1),
      exec_ev("a", 0, 0, 1, NAN, 1),
      exec_ev("a", 0, 0, 1, 0, INFINITY),
      send_ev("t", 0, 0, 16, 0, 1),
      send_ev("t", 0, -1, 3, 0, 1),
      {.kind = TIMELINE_TRANSFER, .dst_core = 0, .dram_port = 1, .end_s = 1},
      {.kind = TIMELINE_SRAM, .first_core = 16},
      {.kind = (timeline_kind)7},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    err_clear(&err);
    CU_ASSERT_EQUAL(timeline_add(t, &bad[i], &err), MP_INPUT);
    CU_ASSERT(strncmp(err.msg, "timeline: ", 10) == 0);
  }
  CU_ASSERT_EQUAL(timeline_count(t), 0);
  timeline_free(t);
  chip_free(c);
}

static const struct {
  const char *text;
  const char *msg;
} bad_files[] = {
    {"{\"traceEvents\": [", NULL},
    {"{\"events\": []}", "t.json: traceEvents: missing or not an array"},
    {"3", "t.json: expected an object with traceEvents or an array of events"},
    {"[1]", "t.json: traceEvents[0]: an event must be an object"},
    {"[{\"ts\": 0, \"pid\": 1, \"tid\": 1}]", NULL},
    {"[{\"ph\": \"Q\", \"ts\": 0, \"pid\": 1, \"tid\": 1}]", NULL},
    {"[{\"ph\": \"B E\", \"ts\": 0, \"pid\": 1, \"tid\": 1}]", NULL},
    {"[{\"ph\": \"B\", \"pid\": 1, \"tid\": 1}]", "t.json: traceEvents[0]: ts must be a finite number (microseconds)"},
    {"[{\"ph\": \"B\", \"ts\": 0, \"tid\": 1}]", "t.json: traceEvents[0]: pid must be a number or a string"},
    {"[{\"ph\": \"B\", \"ts\": 0, \"pid\": 1}]", "t.json: traceEvents[0]: tid must be a number or a string"},
    {"[{\"ph\": \"X\", \"ts\": 0, \"pid\": 1, \"tid\": 1, \"dur\": -1}]",
     "t.json: traceEvents[0]: an 'X' event needs a finite dur >= 0"},
    {"[{\"ph\": \"E\", \"ts\": 0, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[0]: 'E' on track pid 1 tid 1 closes no open 'B'"},
    {"[{\"ph\": \"B\", \"ts\": 0, \"pid\": 1, \"tid\": 1}, {\"ph\": \"B\", \"ts\": 1, \"pid\": 1, \"tid\": 1}, "
     "{\"ph\": \"E\", \"ts\": 2, \"pid\": 1, \"tid\": 1}, {\"ph\": \"E\", \"ts\": 2, \"pid\": 1, \"tid\": 2}]",
     "t.json: traceEvents[0]: 'B' on track pid 1 tid 1 is never closed by an 'E'"},
    {"[{\"ph\": \"B\", \"ts\": 5, \"pid\": 1, \"tid\": 1}, {\"ph\": \"E\", \"ts\": 4, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[1]: 'E' at ts 4 ends before its 'B' (traceEvents[0], ts 5)"},
    {"[{\"ph\": \"B\", \"name\": \"a\", \"ts\": 0, \"pid\": 1, \"tid\": \"x\"}, "
     "{\"ph\": \"E\", \"name\": \"b\", \"ts\": 1, \"pid\": 1, \"tid\": \"x\"}]",
     "t.json: traceEvents[1]: 'E' named 'b' closes 'B' named 'a' (traceEvents[0])"},
    {"[{\"ph\": \"s\", \"ts\": 0, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[0]: a flow event needs an id (number or string)"},
    {"[{\"ph\": \"s\", \"id\": 7, \"cat\": \"send\", \"ts\": 0, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[0]: flow 7 (cat 'send') has no finish ('f')"},
    {"[{\"ph\": \"f\", \"id\": 7, \"ts\": 0, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[0]: flow 7 (cat '') has no start ('s')"},
    {"[{\"ph\": \"s\", \"id\": 7, \"ts\": 0, \"pid\": 1, \"tid\": 1}, {\"ph\": \"s\", \"id\": 7, \"ts\": 0, \"pid\": "
     "1, "
     "\"tid\": 1}]",
     "t.json: traceEvents[1]: flow 7 (cat '') starts twice"},
    {"[{\"ph\": \"s\", \"id\": 7, \"ts\": 0, \"pid\": 1, \"tid\": 1}, {\"ph\": \"f\", \"id\": 7, \"ts\": 0, \"pid\": "
     "1, "
     "\"tid\": 1}, {\"ph\": \"f\", \"id\": 7, \"ts\": 0, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[2]: flow 7 (cat '') finishes twice"},
    {"[{\"ph\": \"C\", \"name\": \"m\", \"ts\": 0, \"pid\": 1, \"tid\": 1, \"args\": {\"bytes\": \"3\"}}]",
     "t.json: traceEvents[0]: a counter ('C') needs args with numeric values"},
    {"[{\"ph\": \"C\", \"name\": \"m\", \"ts\": 0, \"pid\": 1, \"tid\": 1}]",
     "t.json: traceEvents[0]: a counter ('C') needs args with numeric values"},
};

static void the_validator_should_reject_every_broken_rule(void) {
  for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
    mp_error err;
    err_clear(&err);
    mp_status st = timeline_validate("t.json", bad_files[i].text, strlen(bad_files[i].text), NULL, &err);
    CU_ASSERT_EQUAL(st, MP_INPUT);
    if (bad_files[i].msg && strcmp(err.msg, bad_files[i].msg) != 0) {
      fprintf(stderr, "\ncase %zu: got '%s'\n      want '%s'\n", i, err.msg, bad_files[i].msg);
      CU_FAIL("message differs");
    }
    if (!bad_files[i].msg) CU_ASSERT(strncmp(err.msg, "t.json: ", 8) == 0);
  }
  /* Balanced, nested slices, complete events, both flow ends and metadata pass. */
  const char *good =
      "{\"traceEvents\": [{\"ph\": \"M\", \"name\": \"thread_name\", \"ts\": 0, \"pid\": 1, \"tid\": 1, "
      "\"args\": {\"name\": \"x\"}}, {\"ph\": \"B\", \"ts\": 0, \"pid\": 1, \"tid\": 1}, "
      "{\"ph\": \"B\", \"ts\": 1, \"pid\": 1, \"tid\": 1}, {\"ph\": \"E\", \"ts\": 2, \"pid\": 1, \"tid\": 1}, "
      "{\"ph\": \"s\", \"id\": \"q\", \"ts\": 2, \"pid\": 1, \"tid\": 1}, "
      "{\"ph\": \"E\", \"ts\": 3, \"pid\": 1, \"tid\": 1}, {\"ph\": \"X\", \"dur\": 0, \"ts\": 3, "
      "\"pid\": 2, \"tid\": 1}, {\"ph\": \"f\", \"id\": \"q\", \"ts\": 2, \"pid\": 1, \"tid\": 1}]}";
  size_t n = 0;
  mp_error err;
  CU_ASSERT_EQUAL(timeline_validate("good.json", good, strlen(good), &n, &err), MP_OK);
  CU_ASSERT_EQUAL(n, 8);
  CU_ASSERT_EQUAL(timeline_validate_file(testutil_temp_path("none.json"), NULL, &err), MP_INPUT);
}

/* A run that starts again drops what it added (timeline_truncate): the first events stay, the names of
 * the others are freed (ASan), and a count above the timeline's changes nothing. */
static void a_truncated_timeline_should_keep_only_its_first_events(void) {
  chip *c = chip4();
  CU_ASSERT_PTR_NOT_NULL_FATAL(c);
  timeline *t = NULL;
  mp_error err;
  CU_ASSERT_EQUAL_FATAL(timeline_new(c, NULL, &t, &err), MP_OK);
  timeline_event evs[] = {exec_ev("a", 0, 0, 2, 0, 1e-6), exec_ev("b", 0, 0, 2, 1e-6, 2e-6),
                          exec_ev("c", 1, 0, 2, 2e-6, 3e-6)};
  for (size_t i = 0; i < 3; i++) CU_ASSERT_EQUAL(timeline_add(t, &evs[i], &err), MP_OK);
  timeline_truncate(t, 5);
  CU_ASSERT_EQUAL(timeline_count(t), 3);
  timeline_truncate(t, 1);
  CU_ASSERT_EQUAL(timeline_count(t), 1);
  CU_ASSERT_EQUAL(timeline_add(t, &evs[2], &err), MP_OK);
  const char *path = testutil_temp_path("truncated.json");
  CU_ASSERT_EQUAL_FATAL(timeline_write(t, path, &err), MP_OK);
  cJSON *root = NULL;
  CU_ASSERT_EQUAL_FATAL(jsonio_load(path, &root, &err), MP_OK);
  const cJSON *events = cJSON_GetObjectItem(root, "traceEvents");
  CU_ASSERT_EQUAL(count_on_track(events, "core 0", "a"), 1);
  CU_ASSERT_EQUAL(count_on_track(events, "core 0", "b"), 0);
  CU_ASSERT_EQUAL(count_on_track(events, "core 0", "c"), 1);
  cJSON_Delete(root);
  timeline_free(t);
  chip_free(c);
}

static CU_TestInfo tests[] = {
    {"tracks_should_be_one_per_lane_beside_their_core_with_all_gathers_and_sram_over_time",
     tracks_should_be_one_per_lane_beside_their_core_with_all_gathers_and_sram_over_time},
    {"a_run_should_become_valid_trace_events_on_the_right_tracks",
     a_run_should_become_valid_trace_events_on_the_right_tracks},
    {"events_off_the_chip_should_be_refused", events_off_the_chip_should_be_refused},
    {"a_truncated_timeline_should_keep_only_its_first_events", a_truncated_timeline_should_keep_only_its_first_events},
    {"the_validator_should_reject_every_broken_rule", the_validator_should_reject_every_broken_rule},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("timeline", tests, argc, argv); }
