/* End-to-end tests of the meshpipe binary: commands, exit statuses, error lines, JSON output.
 * Commands that start SimGrid are tested in their own suites (label simgrid). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "testutil.h"

static void help_should_list_every_command_and_exit_0(void) {
  char *out, *err;
  CU_ASSERT_EQUAL(testutil_meshpipe("help", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "info"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "Exit status"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("info --help", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: meshpipe info GRAPH"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("help info", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "usage: meshpipe info GRAPH"));
  free(out);
  free(err);
}

static void an_unknown_command_or_option_should_exit_2_with_one_line(void) {
  char *out, *err;
  CU_ASSERT_EQUAL(testutil_meshpipe("frobnicate", &out, &err), 2);
  CU_ASSERT_STRING_EQUAL(err, "meshpipe: no command 'frobnicate' (see 'meshpipe help')\n");
  CU_ASSERT_STRING_EQUAL(out, "");
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("info --bogus traces/tiny_resnet.json", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "meshpipe info: unknown option '--bogus'"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("info", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "expects one graph file"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("", &out, &err), 2);
  free(out);
  free(err);
}

static void info_should_print_the_hand_counted_totals(void) {
  char *out, *err;
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe("info traces/tiny_resnet.json", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "MACs                5161120 (5.16 M MAC)"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "flops               10453338"));
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "peak activations    98304 bytes (96 KiB) at layer 2 'block.conv_b'"));
  free(out);
  free(err);
}

static void info_json_should_expose_totals_and_what_the_cost_model_needs(void) {
  char *out, *err;
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe("info traces/tiny_resnet.json --json --layers --by-type", &out, &err), 0);
  cJSON *o = cJSON_Parse(out);
  CU_ASSERT_PTR_NOT_NULL_FATAL(o);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "ops")->valueint, 6);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "layers")->valueint, 6);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "macs")->valuedouble, 5161120.0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "flops")->valuedouble, 10453338.0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "weight_bytes")->valuedouble, 10516.0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(o, "peak_activation_bytes")->valuedouble, 98304.0);
  cJSON *list = cJSON_GetObjectItem(o, "layer_list");
  CU_ASSERT_EQUAL_FATAL(cJSON_GetArraySize(list), 6);
  cJSON *l0 = cJSON_GetArrayItem(list, 0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(l0, "name")->valuestring, "conv1");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(l0, "macs")->valuedouble, 442368.0);
  cJSON *out0 = cJSON_GetArrayItem(cJSON_GetObjectItem(l0, "outputs"), 0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(out0, "bytes")->valuedouble, 32768.0);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(out0, "last_consumer")->valueint, 3);
  cJSON *by = cJSON_GetObjectItem(o, "by_type");
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(by, 0), "type")->valuestring, "Conv");
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(by, 0), "count")->valueint, 3);
  CU_ASSERT_EQUAL(cJSON_GetObjectItem(cJSON_GetArrayItem(by, 0), "macs")->valuedouble, 5160960.0);
  cJSON_Delete(o);
  free(out);
  free(err);
}

static void info_should_exit_2_naming_the_file_and_place_of_bad_input(void) {
  const char *path = testutil_write_temp("bad.json", "{\"format\":\"meshpipe-graph\",\n\"version\" 1}");
  char args[4200], *out, *err, want[4300];
  snprintf(args, sizeof args, "info '%s'", path);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
  snprintf(want, sizeof want, "meshpipe: %s: line 2, column 11: not valid JSON\n", path);
  CU_ASSERT_STRING_EQUAL(err, want);
  CU_ASSERT_STRING_EQUAL(out, "");
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("info /nonexistent/graph.json", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "meshpipe: /nonexistent/graph.json: cannot open: No such file or directory"));
  free(out);
  free(err);
}

static double jnum(const cJSON *o, const char *key) { return cJSON_GetObjectItem(o, key)->valuedouble; }

/* info --mode train: the training totals by hand count on the tiny graph (fp16: an fp32 master copy;
 * adam 2 fp32 states: 2 + 2 + 4 + 8 bytes per parameter, sgd 8; adam's update 12 + 1 flops per
 * parameter), the one-stage need (GPipe: every micro-batch's stash), and training options without
 * --mode train refused. */
static void info_mode_train_should_count_what_training_holds(void) {
  char *out, *err;
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe("info traces/tiny_resnet.json --json --mode train --schedule gpipe", &out, &err), 0);
  cJSON *o = cJSON_Parse(out), *t = cJSON_GetObjectItem(o, "train");
  CU_ASSERT_PTR_NOT_NULL_FATAL(t);
  CU_ASSERT_EQUAL(jnum(t, "fwd_flops"), jnum(o, "flops")); /* the forward is the inference graph */
  CU_ASSERT_EQUAL(jnum(t, "bytes_per_param"), 16);
  CU_ASSERT_EQUAL(jnum(t, "static_bytes"), 16 * jnum(t, "params"));
  CU_ASSERT_EQUAL(jnum(t, "update_flops"), 13 * jnum(t, "params"));
  CU_ASSERT_EQUAL(jnum(t, "in_flight"), 8);
  CU_ASSERT_EQUAL(jnum(t, "one_core_bytes"), jnum(t, "static_bytes") + 7 * jnum(t, "stash_bytes") + jnum(t, "peak_bytes"));
  CU_ASSERT(jnum(t, "peak_bytes") <= jnum(t, "naive_bytes"));
  CU_ASSERT(jnum(t, "dx_flops") > 0 && jnum(t, "dw_flops") > 0);
  cJSON_Delete(o);
  free(out);
  free(err);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe("info traces/tiny_resnet.json --json --mode train --optimizer sgd -M 3", &out, &err), 0);
  o = cJSON_Parse(out), t = cJSON_GetObjectItem(o, "train");
  CU_ASSERT_EQUAL(jnum(t, "bytes_per_param"), 8);
  CU_ASSERT_EQUAL(jnum(t, "microbatches"), 3);
  CU_ASSERT_EQUAL(jnum(t, "in_flight"), 1); /* 1F1B: one stage holds one stash */
  cJSON_Delete(o);
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("info traces/tiny_resnet.json --optimizer sgd", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "need --mode train"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("info traces/tiny_resnet.json -M 3", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "-M/--microbatches needs --mode train"));
  free(out);
  free(err);
}

/* train --mode train (on the training model, no SimGrid): its rewards are training ones - the initial
 * plan's figure is the training model's samples/s of that plan, as 'partition --mode train' reports it -
 * and a checkpoint does not resume under another schedule. */
static void train_mode_train_should_reward_training_and_resume_only_under_the_same_options(void) {
  char *out, *err, args[1024];
  const char *policy = testutil_temp_path("train-mode.policy.json");
  snprintf(args, sizeof args,
           "train -g traces/tiny_resnet.json -c platforms/mesh4x4.json -o '%s' --mode train --schedule gpipe "
           "--reward model --episodes 16 -q --json", policy);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &err), 0);
  cJSON *o = cJSON_Parse(out), *g0 = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "graphs"), 0);
  CU_ASSERT_PTR_NOT_NULL_FATAL(g0);
  CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "mode")->valuestring, "train");
  double initial = jnum(g0, "initial_samples_per_s"), best = jnum(g0, "best_samples_per_s");
  CU_ASSERT(best >= initial);
  cJSON_Delete(o);
  free(out);
  free(err);
  CU_ASSERT_EQUAL_FATAL(testutil_meshpipe("partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json -m even "
                                          "--mode train --schedule gpipe --no-simulate --json", &out, &err), 0);
  o = cJSON_Parse(out);
  CU_ASSERT_DOUBLE_EQUAL(jnum(o, "model_samples_per_s"), initial, 1e-9 * initial);
  cJSON_Delete(o);
  free(out);
  free(err);
  snprintf(args, sizeof args,
           "train -g traces/tiny_resnet.json -c platforms/mesh4x4.json -o '%s' --mode train --schedule 1f1b "
           "--reward model --episodes 24 -q --resume", policy);
  CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "differs from the checkpoint's run"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("train -g traces/tiny_resnet.json -o /tmp/x --objective edp --reward model", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--objective edp needs a chip with energy figures, and mesh8x8 has none"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("train -g traces/tiny_resnet.json -o /tmp/x --schedule gpipe", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "need --mode train"));
  free(out);
  free(err);
}

/* --objective: an unknown name and a chip without energy figures exit 2 with one line; on a chip with
 * energy figures optimal's energy plan spends less energy in the model than its time plan, which is no
 * slower, and a method that does not minimise objectives says so. */
static void partition_objective_should_trade_period_for_energy_and_refuse_what_it_cannot_do(void) {
  char *out, *err;
  CU_ASSERT_EQUAL(testutil_meshpipe("partition -g traces/tiny_resnet.json --no-simulate --objective fast", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--objective must be time, energy or edp, not 'fast'"));
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("partition -g traces/tiny_resnet.json --no-simulate --objective energy", &out, &err), 2);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "--objective energy needs a chip with energy figures, and mesh8x8 has none"));
  CU_ASSERT_STRING_EQUAL(out, "");
  free(out);
  free(err);
  double e[2], t[2];
  const char *objs[] = {"time", "energy"};
  for (int k = 0; k < 2; k++) {
    char args[256];
    snprintf(args, sizeof args,
             "partition -g traces/mobilenet_v2.json -c platforms/mesh8x8_fp16.json --no-simulate --json --objective %s",
             objs[k]);
    CU_ASSERT_EQUAL_FATAL(testutil_meshpipe(args, &out, &err), 0);
    cJSON *o = cJSON_Parse(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_STRING_EQUAL(cJSON_GetObjectItem(o, "objective")->valuestring, objs[k]);
    e[k] = cJSON_GetObjectItem(o, "model_energy_j_per_sample")->valuedouble;
    t[k] = cJSON_GetObjectItem(o, "period_s")->valuedouble;
    cJSON_Delete(o);
    free(out);
    free(err);
  }
  CU_ASSERT(e[1] < 0.95 * e[0]); /* 545.9 against 634.2 uJ when measured */
  CU_ASSERT(t[0] <= t[1]);
  CU_ASSERT_EQUAL(testutil_meshpipe("partition -g traces/mobilenet_v2.json -c platforms/mesh8x8_fp16.json "
                                    "--no-simulate -m even --objective edp", &out, &err), 0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "even splits by its own rule: --objective edp does not apply to it."));
  free(out);
  free(err);
}

/* The options only learning methods take are refused, with the option named, for a method that does not
 * learn (they used to be ignored); rl still takes them. */
static void partition_should_refuse_learning_options_for_a_method_that_does_not_learn(void) {
  const char *cases[][2] = {{"-m optimal --init even", "--init is for learning methods (rl); optimal does not learn"},
                            {"-m even --episodes 3", "--episodes is for learning methods (rl); even does not learn"},
                            {"-m greedy --policy p.bin", "--policy is for learning methods (rl); greedy does not learn"},
                            {"-m balanced --jobs 2", "--jobs is for learning methods (rl); balanced does not learn"}};
  char *out, *err, args[256];
  for (int i = 0; i < 4; i++) {
    snprintf(args, sizeof args, "partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json --no-simulate %s",
             cases[i][0]);
    CU_ASSERT_EQUAL(testutil_meshpipe(args, &out, &err), 2);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, cases[i][1]));
    CU_ASSERT_STRING_EQUAL(out, "");
    free(out);
    free(err);
  }
  CU_ASSERT_EQUAL(testutil_meshpipe("partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json --no-simulate "
                                    "-m even --jobs 1 -q",
                                    &out, &err),
                  0);
  free(out);
  free(err);
  CU_ASSERT_EQUAL(testutil_meshpipe("partition -g traces/tiny_resnet.json -c platforms/mesh4x4.json --no-simulate "
                                    "-m rl --init balanced --episodes 2 -q",
                                    &out, &err),
                  0);
  CU_ASSERT_PTR_NOT_NULL(strstr(out, "rl on tiny_resnet"));
  free(out);
  free(err);
}

static CU_TestInfo tests[] = {
    {"partition_should_refuse_learning_options_for_a_method_that_does_not_learn",
     partition_should_refuse_learning_options_for_a_method_that_does_not_learn},
    {"help_should_list_every_command_and_exit_0", help_should_list_every_command_and_exit_0},
    {"info_mode_train_should_count_what_training_holds", info_mode_train_should_count_what_training_holds},
    {"train_mode_train_should_reward_training_and_resume_only_under_the_same_options",
     train_mode_train_should_reward_training_and_resume_only_under_the_same_options},
    {"partition_objective_should_trade_period_for_energy_and_refuse_what_it_cannot_do",
     partition_objective_should_trade_period_for_energy_and_refuse_what_it_cannot_do},
    {"an_unknown_command_or_option_should_exit_2_with_one_line", an_unknown_command_or_option_should_exit_2_with_one_line},
    {"info_should_print_the_hand_counted_totals", info_should_print_the_hand_counted_totals},
    {"info_json_should_expose_totals_and_what_the_cost_model_needs",
     info_json_should_expose_totals_and_what_the_cost_model_needs},
    {"info_should_exit_2_naming_the_file_and_place_of_bad_input", info_should_exit_2_naming_the_file_and_place_of_bad_input},
    CU_TEST_INFO_NULL,
};

int main(int argc, char **argv) { return testutil_run("cli", tests, argc, argv); }
