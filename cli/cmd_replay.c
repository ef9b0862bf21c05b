/* meshpipe replay: run a recorded time-independent trace on a chip and print the simulate report. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fileio.h"
#include "jsonio.h"
#include "report.h"
#include "report_train.h"
#include "sim.h"
#include "sim_train.h"
#include "trace.h"

static const char usage[] =
    "usage: meshpipe replay RUN.trace [-c CHIP] [--map MAP] [--json]\n"
    "\n"
    "Runs the actions of a trace written by 'meshpipe record' on a chip in the SimGrid simulator and\n"
    "prints the same report as 'meshpipe simulate'.  The chip may differ from the recorded one in\n"
    "every figure (core speeds, SRAM, NoC bandwidth and latency, DRAM ports) but needs as many cores,\n"
    "unless --map places the recorded cores on a larger mesh.  On the chip it was recorded on, a\n"
    "replay reproduces the recorded simulation exactly.  A training trace ('record --mode train') prints\n"
    "the report of 'simulate --mode train': its mini-batch runs as recorded, each group's passes in the\n"
    "recorded schedule's order, and the model figures, SRAM verdicts and DRAM streams are the chip's.\n"
    "\n"
    "  -c, --chip CHIP      chip file (default: platforms/mesh8x8.json)\n"
    "  --map MAP            place the recorded cores on a larger mesh: snake:K (core k becomes core\n"
    "                       k+K; groups stay contiguous) or xy:X,Y (the recorded mesh at offset X,Y)\n"
    "  -l, --links N        busiest links to list (default 8)\n"
    "  -j, --json           print one JSON object (as 'simulate --json', plus trace and map, and on a\n"
    "                       chip with energy figures energy_counts_recorded, false for a trace recorded\n"
    "                       before traces carried them, whose replay leaves out compute and SRAM energy)\n"
    "  -v, --verbose        let SimGrid log to stderr\n";

static void print_header(const char *path, const trace *t, const chip *c, const char *map) {
  char hex[17];
  printf("replay of %s (recorded by meshpipe %s on %s, plan %s)%s%s%s\n", path, t->version, t->chip_name,
         fileio_hash_hex(t->plan_hash, hex), t->chip_hash == c->hash ? ", on the chip it was recorded on" : "",
         map ? ", placed with --map " : "", map ? map : "");
}

/* A training trace: one mini-batch (sim_train.h). */
static int replay_train(const char *path, const trace *t, const chip *c, const sim_options *so, const char *map,
                        int json) {
  sim *s = NULL;
  sim_train_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (sim_new(c, so, &s, &err) != MP_OK || sim_train_replay(s, t, &r, &err) != MP_OK) {
    rc = cli_fail(&err);
  } else if (json) {
    cJSON *root = sim_train_result_to_json(&r);
    if (!root || !report_add_mesh_json(root, c) || !cJSON_AddStringToObject(root, "trace", path) ||
        !cJSON_AddStringToObject(root, "map", map ? map : "") || jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    print_header(path, t, c, map);
    report_train_sim(t->graph_name, c, &r);
  }
  sim_train_result_clear(&r);
  sim_free(s);
  return rc;
}

/* Loads the trace and the chip, places the trace (--map) and runs it: a training trace as its mini-batch,
 * any other as 'simulate' runs a plan. */
static int replay(const char *path, const char *chip_path, const char *map, sim_options *so, int json) {
  chip *c = NULL;
  trace *rec = NULL, *t = NULL;
  sim *s = NULL;
  sim_result r;
  memset(&r, 0, sizeof r);
  mp_error err;
  err_clear(&err);
  int rc = 0;
  if (trace_load(path, &rec, &err) != MP_OK || chip_load(chip_path, &c, &err) != MP_OK ||
      trace_map(rec, c, map, &t, &err) != MP_OK) {
    rc = err.status == MP_USAGE ? cli_usage("replay", "%s", err.msg) : cli_fail(&err);
    goto cleanup;
  }
  if (t->training) {
    rc = replay_train(path, t, c, so, map, json);
    goto cleanup;
  }
  so->microbatches = t->microbatches;
  if (sim_new(c, so, &s, &err) != MP_OK || sim_replay(s, t, &r, &err) != MP_OK) {
    rc = cli_fail(&err);
    goto cleanup;
  }
  /* a trace recorded before groups carried their MACs, flops and SRAM bytes (trace.h) spends no compute
   * or SRAM energy in a replay: say so where energy is reported */
  int uncounted = 0;
  for (int g = 0; c->has_energy && g < t->n_groups; g++)
    if (t->groups[g].ops == 0 && t->groups[g].flops > 0) uncounted = 1;
  if (json) {
    cJSON *root = sim_result_to_json(&r);
    if (!root || !report_add_mesh_json(root, c) || !cJSON_AddStringToObject(root, "trace", path) ||
        !cJSON_AddStringToObject(root, "map", map ? map : "") ||
        (c->has_energy && !cJSON_AddBoolToObject(root, "energy_counts_recorded", !uncounted)) ||
        jsonio_print(root, &err) != MP_OK) {
      if (err.status == MP_OK) err_nomem(&err);
      rc = cli_fail(&err);
    }
    cJSON_Delete(root);
  } else {
    print_header(path, t, c, map);
    report_print(t->graph_name, c, &r, NULL);
    if (uncounted)
      printf("note: %s was recorded before traces carried each group's MACs, flops and SRAM bytes: its energy "
             "leaves out compute and SRAM (record it again to count them)\n",
             path);
  }
cleanup:
  sim_result_clear(&r);
  sim_free(s);
  trace_free(t);
  trace_free(rec);
  chip_free(c);
  return rc;
}

static int run(int argc, char **argv) {
  enum { OPT_MAP = CLI_OPT_FIRST_FREE };
  static const struct option options[] = {{"chip", required_argument, NULL, 'c'},
                                          {"map", required_argument, NULL, OPT_MAP},
                                          {"links", required_argument, NULL, 'l'},
                                          {"json", no_argument, NULL, 'j'},
                                          {"verbose", no_argument, NULL, 'v'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
  const char *chip_path = CLI_DEFAULT_CHIP, *map = NULL;
  int json = 0, opt;
  long v;
  sim_options so;
  sim_options_init(&so);
  so.cache_size = 0;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, ":c:l:jvh", options, NULL)) != -1) {
    switch (opt) {
    case 'h': return cli_help(usage);
    case 'c': chip_path = optarg; break;
    case OPT_MAP: map = optarg; break;
    case 'l':
      if (cli_parse_int("replay", "--links", optarg, 0, 100000L, &v)) return 2;
      so.top_links = (int)v;
      break;
    case 'j': json = 1; break;
    case 'v': so.verbose = 1; break;
    case ':': return cli_usage("replay", "option '%s' needs a value", argv[optind - 1]);
    default: return cli_usage("replay", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind != 1) return cli_usage("replay", "expects one trace file, got %d arguments", argc - optind);
  return replay(argv[optind], chip_path, map, &so, json);
}

const cli_command cmd_replay = {"replay", "run a recorded trace on a chip and print the simulate report", run};
