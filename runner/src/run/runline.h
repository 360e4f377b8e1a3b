/* runline.h: one line per finished run, for the people watching (or JSON for programs). */
#ifndef RCUWB_RUNLINE_H
#define RCUWB_RUNLINE_H

#include "job.h"

/* Run idx of total: on stderr (nothing with --quiet), or a JSON object on stdout with --json. */
void runline_print(const struct job *j, int idx, int total);

#endif
