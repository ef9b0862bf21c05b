/* meshpipe chip: validates a chip file and prints what it describes — the mesh, the figures of its
 * cores, totals, the NoC, the DRAM ports and the cores that differ (overrides). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chip.h"
#include "cli.h"
#include "fileio.h"
#include "jsonio.h"

static const char usage_text[] =
    "usage: meshpipe chip [FILE] [--json]\n"
    "\n"
    "Checks a chip file (format: platforms/README.md) and prints its summary: the mesh, the typical\n"
    "core, its core model and energy figures, totals over all cores, the NoC, the DRAM ports and the\n"
    "cores that differ (overrides).\n"
    "FILE defaults to the bundled 8x8 chip (platforms/mesh8x8.json).  A bad file is reported as\n"
    "'FILE: where: what' with exit status 2.\n"
    "\n"
    "  -j, --json  print one JSON object: file, hash, name, cores, heterogeneous, total_flops,\n"
    "              total_sram_bytes and \"chip\", the canonical form of the file\n"
    "  -h, --help  show this help\n";

/* v with a decimal prefix (k, M, G, T, P) and the unit, e.g. "64 GB/s". */
static const char *decimal(char *buf, size_t n, double v, const char *unit) {
  static const char *const prefix[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (i < 6 && fabs(v) >= 1000) {
    v /= 1000;
    i++;
  }
  snprintf(buf, n, "%.4g %s%s", v, prefix[i], unit);
  return buf;
}

/* A byte count with a binary prefix, e.g. "1.5 MiB". */
static const char *binary(char *buf, size_t n, uint64_t bytes) {
  static const char *const prefix[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = (double)bytes;
  int i = 0;
  while (i < 5 && v >= 1024) {
    v /= 1024;
    i++;
  }
  snprintf(buf, n, "%.4g %s", v, prefix[i]);
  return buf;
}

/* Seconds with the largest fitting prefix of s, ms, us, ns, ps. */
static const char *seconds(char *buf, size_t n, double s) {
  static const char *const unit[] = {"s", "ms", "us", "ns", "ps"};
  int i = 0;
  while (i < 4 && s != 0 && fabs(s) < 1) {
    s *= 1000;
    i++;
  }
  snprintf(buf, n, "%.4g %s", s, unit[i]);
  return buf;
}

static void print_core(const chip_core *k) {
  char a[32], b[32];
  printf("%s peak, %s SRAM, transfer factor %g", decimal(a, sizeof a, k->flops, "FLOP/s"),
         binary(b, sizeof b, k->sram_bytes), k->transfer_factor);
}

/* The core model and the energy figures, one line each. */
static void print_models(const chip *c) {
  char a[32], b[32];
  const chip_arch *k = &c->arch;
  printf("  core model ");
  if (!c->has_arch) {
    printf("none: every op runs at the peak flop rate\n");
  } else {
    int n = 0;
    if (k->clock_hz > 0) printf("%sclock %s", n++ ? ", " : "", decimal(a, sizeof a, k->clock_hz, "Hz"));
    if (k->matrix_rows > 0) printf("%s%d x %d MAC array", n++ ? ", " : "", k->matrix_rows, k->matrix_cols);
    if (k->vector_lanes > 0) printf("%s%d vector lanes", n++ ? ", " : "", k->vector_lanes);
    if (k->sram_bandwidth > 0) printf("%sSRAM %s", n++ ? ", " : "", decimal(b, sizeof b, k->sram_bandwidth, "B/s"));
    printf("\n");
  }
  const chip_energy *e = &c->energy;
  if (!c->has_energy)
    printf("  energy     none\n");
  else
    printf("  energy     MAC %g pJ, vector op %g pJ, SRAM %g pJ/B, NoC %g pJ/B per hop, DRAM %g pJ/B, static %g W "
           "per core\n",
           e->mac_pj, e->vector_op_pj, e->sram_pj_per_byte, e->noc_pj_per_byte_hop, e->dram_pj_per_byte,
           e->static_w_per_core);
}

static void print_summary(const chip *c) {
  char a[32], b[32], hex[17];
  chip_core t = chip_typical_core(c);
  printf("chip %s (%s): valid, hash %s\n", c->name, c->file, fileio_hash_hex(c->hash, hex));
  printf("  mesh       %d x %d = %d cores, ids in snake order, XY routing\n", c->width, c->height, c->n_cores);
  printf("  core       ");
  print_core(&t);
  printf(c->heterogeneous ? " (typical core)\n" : " (every core)\n");
  print_models(c);
  printf("  total      %s peak, %s SRAM\n", decimal(a, sizeof a, chip_total_flops(c), "FLOP/s"),
         binary(b, sizeof b, chip_total_sram(c)));
  printf("  noc        %s per link and direction, %s per hop\n", decimal(a, sizeof a, c->noc_bandwidth, "B/s"),
         seconds(b, sizeof b, c->noc_latency));
  if (c->n_dram == 0) {
    printf("  dram       none\n");
  } else {
    printf("  dram       %d port%s, %s each:", c->n_dram, c->n_dram == 1 ? "" : "s",
           decimal(a, sizeof a, c->dram_bandwidth, "B/s"));
    for (int i = 0; i < c->n_dram; i++)
      printf("%s (%d, %d) core %d", i ? "," : "", c->dram[i].x, c->dram[i].y, c->dram[i].core);
    printf("\n");
  }
  int n_over = 0;
  for (int id = 0; id < c->n_cores; id++) {
    const chip_core *k = &c->cores[id];
    if (k->flops == t.flops && k->sram_bytes == t.sram_bytes && k->transfer_factor == t.transfer_factor) continue;
    printf(n_over++ ? "             " : "  overrides  ");
    printf("core %d at (%d, %d): ", id, k->x, k->y);
    print_core(k);
    printf("\n");
  }
  if (n_over == 0) printf("  overrides  none\n");
}

static cJSON *summary_json(const chip *c) {
  char hex[17];
  cJSON *o = cJSON_CreateObject(), *canon = chip_to_json(c);
  if (!o || !canon || !cJSON_AddStringToObject(o, "file", c->file) ||
      !cJSON_AddStringToObject(o, "hash", fileio_hash_hex(c->hash, hex)) ||
      !cJSON_AddStringToObject(o, "name", c->name) || !cJSON_AddNumberToObject(o, "cores", c->n_cores) ||
      !cJSON_AddBoolToObject(o, "heterogeneous", c->heterogeneous) ||
      !cJSON_AddNumberToObject(o, "total_flops", chip_total_flops(c)) ||
      !jsonio_add_u64(o, "total_sram_bytes", chip_total_sram(c)) || !cJSON_AddItemToObject(o, "chip", canon)) {
    cJSON_Delete(o);
    cJSON_Delete(canon);
    return NULL;
  }
  return o;
}

static int run(int argc, char **argv) {
  static const struct option options[] = {{"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {0}};
  int json = 0, opt;
  optind = 0;
  opterr = 0;
  while ((opt = getopt_long(argc, argv, "hj", options, NULL)) != -1) {
    switch (opt) {
    case 'j': json = 1; break;
    case 'h': return cli_help(usage_text);
    default: return cli_usage("chip", "unknown option '%s'", argv[optind - 1]);
    }
  }
  if (argc - optind > 1) return cli_usage("chip", "expects one chip file, got %d arguments", argc - optind);
  const char *path = optind < argc ? argv[optind] : CLI_DEFAULT_CHIP;

  mp_error err;
  err_clear(&err);
  chip *c = NULL;
  mp_status st = chip_load(path, &c, &err);
  if (st == MP_OK) {
    if (json) {
      cJSON *o = summary_json(c);
      st = o ? jsonio_print(o, &err) : err_nomem(&err);
      cJSON_Delete(o);
    } else {
      print_summary(c);
      if (fflush(stdout) != 0) st = err_set(&err, MP_OUTPUT, "cannot write to standard output");
    }
  }
  chip_free(c);
  return st == MP_OK ? 0 : cli_fail(&err);
}

const cli_command cmd_chip = {"chip", "check a chip file and print its summary", run};
