/* objective: what a partitioner minimises about a plan — its period (time), the energy of a
 * micro-batch (energy: dynamic energy plus the chip's static energy over the period, energy.h) or their
 * product (edp, the energy-delay product) — and its name on the command line.  Time is the default and
 * the only objective on a chip without energy figures.  Pure functions. */
#ifndef MESHPIPE_OBJECTIVE_H
#define MESHPIPE_OBJECTIVE_H

typedef enum objective { OBJECTIVE_TIME, OBJECTIVE_ENERGY, OBJECTIVE_EDP } objective;

/* "time", "energy" or "edp". */
const char *objective_name(objective o);

/* The objective named name (borrowed) into *out: 1, or 0 for an unknown name (*out untouched). */
int objective_parse(const char *name, objective *out);

/* The value minimised: period_s, energy_j or their product (seconds, joules, joule-seconds). */
double objective_value(objective o, double period_s, double energy_j);

#endif
