/* objective: what a partitioner minimises.  See objective.h. */
#include "objective.h"

#include <string.h>

static const char *const names[] = {"time", "energy", "edp"};

const char *objective_name(objective o) { return o >= OBJECTIVE_TIME && o <= OBJECTIVE_EDP ? names[o] : "?"; }

int objective_parse(const char *name, objective *out) {
  for (int i = 0; i < (int)(sizeof names / sizeof names[0]); i++)
    if (strcmp(name, names[i]) == 0) {
      *out = (objective)i;
      return 1;
    }
  return 0;
}

double objective_value(objective o, double period_s, double energy_j) {
  switch (o) {
  case OBJECTIVE_ENERGY: return energy_j;
  case OBJECTIVE_EDP: return energy_j * period_s;
  default: return period_s;
  }
}
