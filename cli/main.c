/* meshpipe: the command-line front end.  Finds the subcommand in the table and runs it; every
 * command lives in its own cmd_<name>.c.  Add a command by adding one line to the table. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

extern const cli_command cmd_info;
extern const cli_command cmd_chip;
extern const cli_command cmd_import;
extern const cli_command cmd_partition, cmd_compare;
extern const cli_command cmd_split, cmd_simulate;
extern const cli_command cmd_record, cmd_replay;
extern const cli_command cmd_train;
extern const cli_command cmd_sweep, cmd_bench;

static int run_help(int argc, char **argv);
static const cli_command cmd_help = {"help", "show the commands, or one command's options", run_help};

/* The commands, in the order 'meshpipe help' lists them. */
static const cli_command *const commands[] = {
    &cmd_info,
    &cmd_chip,
    &cmd_import,
    &cmd_partition,
    &cmd_compare,
    &cmd_split,
    &cmd_simulate,
    &cmd_record,
    &cmd_replay,
    &cmd_train,
    &cmd_sweep,
    &cmd_bench,
    &cmd_help,
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const cli_command *find_command(const char *name) {
  for (int i = 0; i < N_COMMANDS; i++)
    if (strcmp(commands[i]->name, name) == 0) return commands[i];
  return NULL;
}

static void print_overview(FILE *out) {
  fprintf(out,
          "meshpipe %s: how fast does a network run on a many-core chip, split into pipeline stages,\n"
          "and what is the best split?\n\n"
          "usage: meshpipe COMMAND [OPTIONS]\n\ncommands:\n",
          MESHPIPE_VERSION);
  for (int i = 0; i < N_COMMANDS; i++) fprintf(out, "  %-10s %s\n", commands[i]->name, commands[i]->summary);
  fprintf(out,
          "\n'meshpipe COMMAND --help' explains one command.  Exit status: 0 success, 1 a failed run,\n"
          "2 bad usage or bad input.\n");
}

static int run_help(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stdout);
    return 0;
  }
  const cli_command *c = find_command(argv[1]);
  if (!c || c == &cmd_help) {
    if (c) {
      print_overview(stdout);
      return 0;
    }
    fprintf(stderr, "meshpipe help: no command '%s' (see 'meshpipe help')\n", argv[1]);
    return 2;
  }
  char *args[] = {(char *)c->name, "--help", NULL};
  return c->run(2, args);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_overview(stderr);
    return 2;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) return run_help(1, argv);
  if (strcmp(argv[1], "--version") == 0) {
    printf("meshpipe %s\n", MESHPIPE_VERSION);
    return 0;
  }
  const cli_command *c = find_command(argv[1]);
  if (!c) {
    fprintf(stderr, "meshpipe: no command '%s' (see 'meshpipe help')\n", argv[1]);
    return 2;
  }
  return c->run(argc - 1, argv + 1);
}
