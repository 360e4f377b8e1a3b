/* db.h: the SQLite results database: schema, storing a finished run, reading summaries. */
#ifndef RCUWB_DB_H
#define RCUWB_DB_H

#include <sqlite3.h>
#include <stdint.h>

#include "console.h"
#include "run.h"

/* Everything about a run that is not in its spec or its console. */
struct run_env {
	char cell[192];
	char cmdline[1024];
	char accel[8];			/* kvm | tcg */
	char qemu_version[16], libvirt_version[16];
	char host[64];			/* label (hosts file) or the local host's name */
	char host_uri[256];
	unsigned host_pus;
	char pinned[256];		/* host PUs the guest was pinned to, "" = none */
	double oversub;			/* vCPUs per host PU available to the guest */
	double host_other;		/* PUs other processes used meanwhile, -1 unknown */
	double started, ended;		/* wall clock, seconds */
	char run_dir[4096];
	unsigned long long seed;	/* the matrix's cell-order seed */
	int64_t rerun_of;		/* rcuwb rerun: the run repeated, else 0 */
};

/* What rcuwb rerun needs of a stored run. */
struct stored_run {
	int64_t id;
	char matrix[64], cell[192], kind[16], variant[64], gp_mode[16], boot_params[512];
	char config_sha[24], patches[2048], run_dir[4096];
	char kconfig[64];		/* "" for runs stored before scenarios (= KCONFIG_DEFAULT) */
	int rep, nwriters, nreaders, vcpus, sockets, cores, threads, numa_nodes, mem_mib;
};

/* Default database: $RCUWB_DB, else results/rcuwb.db. */
const char *db_default_path(void);
/* Open (creating it and the schema if needed). */
int db_open(const char *path, sqlite3 **db);
void db_close(sqlite3 *db);
/* Store one finished run with all its samples and probe lines in one transaction. */
int db_store_run(sqlite3 *db, const struct run_spec *s, const struct run_env *e,
		 const struct console *c, const struct run_result *r, int64_t *id);
struct trace;
struct anatomy;
/*
 * Store what a traced run's ftrace dump held (traces) and, when it is whole,
 * its writers' calls cut into phases (gp_anatomy), replacing what was stored
 * for the run before, in one transaction.
 */
int db_store_anatomy(sqlite3 *db, int64_t run_id, const struct trace *t, const struct anatomy *a);

/* Read one stored run; -1 with set_err() if there is none. */
int db_get_run(sqlite3 *db, int64_t id, struct stored_run *r);
/* 1 + the number of runs already stored for (matrix, cell, variant). */
int db_next_rep(sqlite3 *db, const char *matrix, const char *cell, const char *variant);
/* Highest repetition stored for a matrix (0 = none). */
int db_max_rep(sqlite3 *db, const char *matrix);
/* Is (matrix, cell, variant, rep) stored, other than as interrupted or host-busy? */
int db_has_run(sqlite3 *db, const char *matrix, const char *cell, const char *variant, int rep);
/* Column i of the current row as text into out ("" for NULL). */
void db_col_text(sqlite3_stmt *st, int i, char *out, size_t cap);
/* Average wall time of stored runs of a cell (any variant), -1 if none. */
double db_avg_wall(sqlite3 *db, const char *cell);
#endif
