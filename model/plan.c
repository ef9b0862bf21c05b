/* plan: arranged_core lists, the stages they imply, and plan files.  See plan.h.
 *
 * A stage ends at every non-zero entry: the zeros before it are the other cores of its group.  A
 * plan file records the graph and chip it was made for (name and hash); loading checks the list
 * against the counts of the graph and chip it will run on, and the optional "stages" against the list. */
#include "plan.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fileio.h"
#include "jsonio.h"

#define NO_FILE "plan" /* the label of messages about lists that come from no file */

mp_status plan_validate(const int *arranged, int n_cores, int n_layers, const char *file, mp_error *err) {
  if (!file) file = NO_FILE;
  if (n_cores < 1) return err_at(err, MP_INPUT, file, "arranged_core", "empty: a plan needs at least one core");
  if (n_layers < 1) return err_at(err, MP_INPUT, file, "arranged_core", "the graph has no layers to place");
  long long sum = 0;
  for (int i = 0; i < n_cores; i++) {
    if (arranged[i] < 0)
      return err_at(err, MP_INPUT, file, NULL, "arranged_core[%d]: %d is negative (each entry counts layers)", i,
                    arranged[i]);
    sum += arranged[i];
  }
  if (arranged[n_cores - 1] == 0) {
    int first = n_cores - 1;
    while (first > 0 && arranged[first - 1] == 0) first--;
    char cores[48];
    if (first < n_cores - 1)
      snprintf(cores, sizeof cores, "cores %d-%d join", first, n_cores - 1);
    else
      snprintf(cores, sizeof cores, "core %d joins", first);
    return err_at(err, MP_INPUT, file, NULL,
                  "arranged_core[%d]: the last entry is 0, so %s no group (zeros join the group of the next "
                  "non-zero entry)",
                  n_cores - 1, cores);
  }
  if (sum != n_layers)
    return err_at(err, MP_INPUT, file, "arranged_core", "the entries sum to %lld layers, but the graph has %d", sum,
                  n_layers);
  return MP_OK;
}

/* The stages of a valid arranged_core list, in order. */
static void fill_stages(const int *arranged, int n_cores, plan_stage *stages) {
  int s = 0, first_core = 0, first_layer = 0;
  for (int i = 0; i < n_cores; i++) {
    if (arranged[i] == 0) continue;
    stages[s++] = (plan_stage){first_layer, arranged[i], first_core, i - first_core + 1};
    first_layer += arranged[i];
    first_core = i + 1;
  }
}

void plan_view(const int *arranged, int n_cores, int n_layers, plan_stage *stages, plan *view) {
  view->n_cores = n_cores;
  view->n_layers = n_layers;
  view->n_stages = 0;
  for (int i = 0; i < n_cores; i++) view->n_stages += arranged[i] > 0;
  view->arranged = (int *)arranged; /* a view never writes it: plans are immutable */
  view->stages = stages;
  fill_stages(arranged, n_cores, stages);
}

mp_status plan_new(const int *arranged, int n_cores, int n_layers, plan **out, mp_error *err) {
  *out = NULL;
  mp_status st = plan_validate(arranged, n_cores, n_layers, NULL, err);
  if (st != MP_OK) return st;
  plan *p = calloc(1, sizeof *p);
  if (!p) return err_nomem(err);
  p->n_cores = n_cores;
  p->n_layers = n_layers;
  for (int i = 0; i < n_cores; i++) p->n_stages += arranged[i] > 0;
  p->arranged = malloc((size_t)n_cores * sizeof *p->arranged);
  p->stages = malloc((size_t)p->n_stages * sizeof *p->stages);
  if (!p->arranged || !p->stages) {
    st = err_nomem(err);
    goto cleanup;
  }
  memcpy(p->arranged, arranged, (size_t)n_cores * sizeof *arranged);
  fill_stages(arranged, n_cores, p->stages);

cleanup:
  if (st != MP_OK)
    plan_free(p);
  else
    *out = p;
  return st;
}

void plan_arranged_of_stages(const int *stage_layers, const int *stage_cores, int n_stages, int *arranged) {
  int k = 0;
  for (int s = 0; s < n_stages; s++) {
    for (int j = 1; j < stage_cores[s]; j++) arranged[k++] = 0;
    arranged[k++] = stage_layers[s];
  }
}

mp_status plan_from_stages(const int *stage_layers, const int *stage_cores, int n_stages, plan **out, mp_error *err) {
  *out = NULL;
  if (n_stages < 1) return err_at(err, MP_INPUT, NO_FILE, "stages", "empty: a plan needs at least one stage");
  long long cores = 0, layers = 0;
  for (int s = 0; s < n_stages; s++) {
    if (stage_layers[s] < 1)
      return err_at(err, MP_INPUT, NO_FILE, NULL, "stages[%d]: the layer count must be >= 1 (got %d)", s,
                    stage_layers[s]);
    if (stage_cores[s] < 1)
      return err_at(err, MP_INPUT, NO_FILE, NULL, "stages[%d]: the core count must be >= 1 (got %d)", s,
                    stage_cores[s]);
    cores += stage_cores[s];
    layers += stage_layers[s];
  }
  if (cores > INT_MAX || layers > INT_MAX)
    return err_at(err, MP_INPUT, NO_FILE, "stages", "%lld cores and %lld layers are too many", cores, layers);
  int *arranged = malloc((size_t)cores * sizeof *arranged);
  if (!arranged) return err_nomem(err);
  plan_arranged_of_stages(stage_layers, stage_cores, n_stages, arranged);
  mp_status st = plan_new(arranged, (int)cores, (int)layers, out, err);
  free(arranged);
  return st;
}

void plan_free(plan *p) {
  if (!p) return;
  free(p->arranged);
  free(p->stages);
  free(p);
}

/* Index of the stage whose range [first, first + n) holds v, by bisection; -1 when none does. */
static int find_stage(const plan *p, int v, int by_core) {
  int lo = 0, hi = p->n_stages - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    const plan_stage *s = &p->stages[mid];
    int first = by_core ? s->first_core : s->first_layer, n = by_core ? s->n_cores : s->n_layers;
    if (v < first)
      hi = mid - 1;
    else if (v >= first + n)
      lo = mid + 1;
    else
      return mid;
  }
  return -1;
}

int plan_stage_of_layer(const plan *p, int layer) { return find_stage(p, layer, 0); }

int plan_stage_of_core(const plan *p, int core) { return find_stage(p, core, 1); }

uint64_t plan_hash(const plan *p) {
  uint64_t h = FILEIO_HASH_INIT;
  for (int i = 0; i < p->n_cores; i++) { /* fixed little-endian bytes, the same on every host */
    uint32_t v = (uint32_t)p->arranged[i];
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    h = fileio_hash(h, b, sizeof b);
  }
  return h;
}

int plan_equal(const plan *a, const plan *b) {
  return a->n_cores == b->n_cores && a->n_layers == b->n_layers &&
         memcmp(a->arranged, b->arranged, (size_t)a->n_cores * sizeof *a->arranged) == 0;
}

/* ---- plan files ------------------------------------------------------------------------------- */

static cJSON *pair(int a, int b) {
  int v[2] = {a, b};
  return cJSON_CreateIntArray(v, 2);
}

/* Adds {"name": ..., "hash": "<16 hex digits>"} under key. */
static int add_made_for(cJSON *root, const char *key, const char *name, uint64_t hash) {
  char hex[17];
  cJSON *o = cJSON_AddObjectToObject(root, key);
  return o && cJSON_AddStringToObject(o, "name", name) && cJSON_AddStringToObject(o, "hash", fileio_hash_hex(hash, hex));
}

static int add_item(cJSON *array, cJSON *item) {
  if (item && cJSON_AddItemToArray(array, item)) return 1;
  cJSON_Delete(item);
  return 0;
}

/* Adds item under key, or deletes it (cJSON leaves an item it could not add to the caller). */
static int add_member(cJSON *obj, const char *key, cJSON *item) {
  if (item && cJSON_AddItemToObject(obj, key, item)) return 1;
  cJSON_Delete(item);
  return 0;
}

cJSON *plan_to_json(const plan *p, const graph *g, const chip *c) {
  int names = g && g->n_ops == p->n_layers;
  cJSON *root = cJSON_CreateObject(), *list, *stages;
  if (!root || !cJSON_AddStringToObject(root, "format", PLAN_FORMAT) ||
      !cJSON_AddNumberToObject(root, "version", PLAN_VERSION) ||
      !(list = cJSON_AddArrayToObject(root, "arranged_core")) || !(stages = cJSON_AddArrayToObject(root, "stages")))
    goto fail;
  for (int i = 0; i < p->n_cores; i++)
    if (!add_item(list, cJSON_CreateNumber(p->arranged[i]))) goto fail;
  for (int s = 0; s < p->n_stages; s++) {
    const plan_stage *st = &p->stages[s];
    cJSON *o = cJSON_CreateObject();
    if (!add_item(stages, o) ||
        !add_member(o, "layers", pair(st->first_layer, st->first_layer + st->n_layers - 1)) ||
        !add_member(o, "cores", pair(st->first_core, st->first_core + st->n_cores - 1)))
      goto fail;
    if (names && (!cJSON_AddStringToObject(o, "first_op", g->ops[st->first_layer].name) ||
                  !cJSON_AddStringToObject(o, "last_op", g->ops[st->first_layer + st->n_layers - 1].name)))
      goto fail;
  }
  if (g && !add_made_for(root, "graph", g->name, g->hash)) goto fail;
  if (c && !add_made_for(root, "chip", c->name, c->hash)) goto fail;
  return root;
fail:
  cJSON_Delete(root);
  return NULL;
}

mp_status plan_write(const plan *p, const graph *g, const chip *c, const char *path, mp_error *err) {
  cJSON *j = plan_to_json(p, g, c);
  if (!j) return err_nomem(err);
  mp_status st = jsonio_save(path, j, err);
  cJSON_Delete(j);
  return st;
}

/* Reads the optional {"name", "hash"} record of what the plan was made for; *name stays NULL if absent. */
static mp_status read_made_for(const cJSON *root, const char *key, const char *file, const char **name,
                               const char **hash, mp_error *err) {
  static const char *const keys[] = {"name", "hash", NULL};
  const cJSON *o = NULL;
  int present = 0;
  *name = NULL;
  *hash = NULL;
  jsonio_reader top = {file, NULL, err}, in = {file, key, err};
  mp_status st = jsonio_get_object(&top, root, key, JSONIO_OPTIONAL, &o, &present);
  if (st != MP_OK || !present) return st;
  st = jsonio_known_keys(&in, o, keys);
  if (st == MP_OK) st = jsonio_get_str(&in, o, "name", JSONIO_REQUIRED, name, NULL);
  if (st == MP_OK) st = jsonio_get_str(&in, o, "hash", JSONIO_REQUIRED, hash, NULL);
  if (st == MP_OK && (strlen(*hash) != 16 || strspn(*hash, "0123456789abcdef") != 16))
    return err_at(err, MP_INPUT, file, NULL, "%s.hash: expected 16 lowercase hex digits (got \"%.40s\")", key, *hash);
  return st;
}

/* Reads a [first, last] pair at where. */
static mp_status read_range(const cJSON *o, const char *key, const char *file, const char *where, int *first,
                            int *last, mp_error *err) {
  const cJSON *a = NULL;
  char path[96], what[112];
  snprintf(path, sizeof path, "%s.%s", where, key);
  jsonio_reader in = {file, where, err}, at = {file, what, err};
  mp_status st = jsonio_get_array(&in, o, key, JSONIO_REQUIRED, &a, NULL);
  if (st != MP_OK) return st;
  if (cJSON_GetArraySize(a) != 2) return err_at(err, MP_INPUT, file, path, "expected [first, last]");
  snprintf(what, sizeof what, "%s[0]", path);
  st = jsonio_as_int(&at, a->child, INT_MIN, INT_MAX, first);
  snprintf(what, sizeof what, "%s[1]", path);
  if (st == MP_OK) st = jsonio_as_int(&at, a->child->next, INT_MIN, INT_MAX, last);
  return st;
}

/* Checks the optional "stages" of a plan file against the stages p derives from arranged_core. */
static mp_status check_stages(const cJSON *root, const plan *p, const graph *g, const char *file, mp_error *err) {
  static const char *const keys[] = {"layers", "cores", "first_op", "last_op", NULL};
  const cJSON *list = NULL;
  int present = 0;
  jsonio_reader top = {file, NULL, err};
  mp_status st = jsonio_get_array(&top, root, "stages", JSONIO_OPTIONAL, &list, &present);
  if (st != MP_OK || !present) return st;
  int n = cJSON_GetArraySize(list);
  if (n != p->n_stages)
    return err_at(err, MP_INPUT, file, "stages", "%d stage%s, but arranged_core makes %d", n, n == 1 ? "" : "s",
                  p->n_stages);
  const cJSON *o = list->child;
  for (int s = 0; s < n; s++, o = o->next) {
    const plan_stage *want = &p->stages[s];
    char where[48];
    snprintf(where, sizeof where, "stages[%d]", s);
    if (!cJSON_IsObject(o)) return err_at(err, MP_INPUT, file, where, "expected an object with layers and cores");
    int first, last;
    jsonio_reader in = {file, where, err};
    st = jsonio_known_keys(&in, o, keys);
    if (st == MP_OK) st = read_range(o, "layers", file, where, &first, &last, err);
    if (st != MP_OK) return st;
    if (first != want->first_layer || last != want->first_layer + want->n_layers - 1)
      return err_at(err, MP_INPUT, file, where, "layers [%d, %d] disagree with arranged_core, which gives layers %d-%d",
                    first, last, want->first_layer, want->first_layer + want->n_layers - 1);
    st = read_range(o, "cores", file, where, &first, &last, err);
    if (st != MP_OK) return st;
    if (first != want->first_core || last != want->first_core + want->n_cores - 1)
      return err_at(err, MP_INPUT, file, where, "cores [%d, %d] disagree with arranged_core, which gives cores %d-%d",
                    first, last, want->first_core, want->first_core + want->n_cores - 1);
    static const char *const ends[] = {"first_op", "last_op"};
    for (int e = 0; e < 2; e++) {
      const char *name = NULL;
      int has = 0;
      st = jsonio_get_str(&in, o, ends[e], JSONIO_OPTIONAL, &name, &has);
      if (st != MP_OK) return st;
      int layer = e == 0 ? want->first_layer : want->first_layer + want->n_layers - 1;
      if (has && g && strcmp(name, g->ops[layer].name) != 0)
        return err_at(err, MP_INPUT, file, NULL,
                      "%s.%s: \"%.80s\", but layer %d of graph '%s' is \"%.80s\" (was the plan made for another "
                      "version of the graph?)",
                      where, ends[e], name, layer, g->name, g->ops[layer].name);
    }
  }
  return MP_OK;
}

mp_status plan_load(const char *path, const graph *g, const chip *c, plan **out, mp_error *err) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  mp_status st = fileio_read_all(path, &text, &len, err);
  if (st == MP_OK) st = plan_parse(path, text, len, g, c, out, err);
  free(text);
  return st;
}

mp_status plan_parse(const char *path, const char *text, size_t len, const graph *g, const chip *c, plan **out,
                     mp_error *err) {
  static const char *const keys[] = {"format", "version", "arranged_core", "stages", "graph", "chip", NULL};
  cJSON *root = NULL;
  const cJSON *list = NULL;
  const char *format = NULL, *for_graph = NULL, *for_chip = NULL, *graph_hash = NULL, *chip_hash = NULL;
  int version = 0, *arranged = NULL;
  jsonio_reader top = {path, NULL, err};
  *out = NULL;
  mp_status st = jsonio_parse(path, text, len, &root, err);
  if (st != MP_OK) return st;
  if (!cJSON_IsObject(root)) {
    st = err_at(err, MP_INPUT, path, NULL, "expected a JSON object (a meshpipe plan)");
    goto cleanup;
  }
  st = jsonio_known_keys(&top, root, keys);
  if (st == MP_OK) st = jsonio_get_str(&top, root, "format", JSONIO_REQUIRED, &format, NULL);
  if (st == MP_OK && strcmp(format, PLAN_FORMAT) != 0)
    st = err_at(err, MP_INPUT, path, "format", "expected \"%s\", got \"%.80s\" (not a plan file)", PLAN_FORMAT, format);
  if (st == MP_OK) st = jsonio_get_int(&top, root, "version", JSONIO_REQUIRED, 0, INT_MAX, &version, NULL);
  if (st == MP_OK && version != PLAN_VERSION)
    st = err_at(err, MP_INPUT, path, "version", "version %d is not supported (this meshpipe reads version %d)",
                version, PLAN_VERSION);
  if (st == MP_OK) st = read_made_for(root, "graph", path, &for_graph, &graph_hash, err);
  if (st == MP_OK) st = read_made_for(root, "chip", path, &for_chip, &chip_hash, err);
  if (st == MP_OK) st = jsonio_get_array(&top, root, "arranged_core", JSONIO_REQUIRED, &list, NULL);
  if (st != MP_OK) goto cleanup;

  int n = cJSON_GetArraySize(list);
  if (n == 0) {
    st = err_at(err, MP_INPUT, path, "arranged_core", "empty: a plan needs at least one core");
    goto cleanup;
  }
  arranged = malloc((size_t)n * sizeof *arranged);
  if (!arranged) {
    st = err_nomem(err);
    goto cleanup;
  }
  long long sum = 0;
  const cJSON *v = list->child;
  for (int i = 0; i < n; i++, v = v->next) {
    char what[48];
    snprintf(what, sizeof what, "arranged_core[%d]", i);
    jsonio_reader at = {path, what, err};
    st = jsonio_as_int(&at, v, INT_MIN, INT_MAX, &arranged[i]);
    if (st != MP_OK) goto cleanup;
    sum += arranged[i];
  }
  if (c && n != c->n_cores) {
    char hint[160] = "";
    if (for_chip) snprintf(hint, sizeof hint, "; the plan was made for chip '%.80s'", for_chip);
    st = err_at(err, MP_INPUT, path, "arranged_core", "%d entries (one per core), but chip '%s' has %d cores%s", n,
                c->name, c->n_cores, hint);
    goto cleanup;
  }
  int negative = 0;
  for (int i = 0; i < n; i++) negative |= arranged[i] < 0;
  if (!negative && g && sum != g->n_ops) { /* the message says which graph the plan was made for */
    char hint[160] = "";
    if (for_graph) snprintf(hint, sizeof hint, "; the plan was made for graph '%.80s'", for_graph);
    st = err_at(err, MP_INPUT, path, "arranged_core", "the entries sum to %lld layers, but graph '%s' has %d%s", sum,
                g->name, g->n_ops, hint);
    goto cleanup;
  }
  if (!negative && sum > INT_MAX) {
    st = err_at(err, MP_INPUT, path, "arranged_core", "the entries sum to %lld layers, too many to place", sum);
    goto cleanup;
  }
  int n_layers = g ? g->n_ops : sum < 1 ? 1 : sum > INT_MAX ? INT_MAX : (int)sum;
  st = plan_validate(arranged, n, n_layers, path, err);
  if (st == MP_OK) st = plan_new(arranged, n, n_layers, out, err);
  if (st == MP_OK) st = check_stages(root, *out, g, path, err);
  char hex[17];
  if (st == MP_OK && g && graph_hash && strcmp(graph_hash, fileio_hash_hex(g->hash, hex)) != 0)
    st = err_at(err, MP_INPUT, path, "graph.hash",
                "the plan was made for graph '%.80s' of hash %s, but graph '%.80s' (%.200s) has hash %s: another batch, "
                "dtype, fusion or version of the network; make its own plan with 'meshpipe partition'",
                for_graph, graph_hash, g->name, g->file, hex);

cleanup:
  if (st != MP_OK && *out) {
    plan_free(*out);
    *out = NULL;
  }
  free(arranged);
  cJSON_Delete(root);
  return st;
}
