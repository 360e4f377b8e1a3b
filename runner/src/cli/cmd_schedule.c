/*
 * cmd_schedule.c: rcuwb schedule install|list|remove: a schedule's nightly
 * rounds on a systemd timer (a .service and a .timer unit), or as a
 * crontab line.  rcuwb writes and removes the unit files; enabling them is
 * systemctl's job (the command to run is printed).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "cli.h"
#include "common.h"
#include "kernel.h"
#include "proc.h"
#include "schedule.h"

static const char schedule_help[] =
	"Usage: rcuwb schedule install [--at HH:MM] [--unit-dir DIR] [--cron] SCHEDULE\n"
	"       rcuwb schedule list [--unit-dir DIR]\n"
	"       rcuwb schedule remove [--unit-dir DIR] NAME\n"
	"\n"
	"install writes rcuwb-nightly-NAME.service and rcuwb-nightly-NAME.timer: a\n"
	"round of SCHEDULE (rcuwb nightly --wait) every day at HH:MM (default 02:00),\n"
	"caught up after the machine was off (Persistent=), with this rcuwb, its\n"
	"database (-d) and cache ($RCUWB_CACHE) written into the unit.  The units go to\n"
	"DIR (default: /etc/systemd/system for root, else ~/.config/systemd/user);\n"
	"enable them with the systemctl command printed.  --cron prints the crontab\n"
	"line instead and writes nothing.  list shows the installed timers; remove\n"
	"deletes a schedule's two units (disable the timer first).\n"
	"\n"
	"The service counts exit 1 (new change point, gate slowdown) and 3\n"
	"(inconclusive) as success: those are reported by the schedule's notify\n"
	"command; exit 2 (hard failure) fails the unit.\n";

struct sched_opts {
	const char *at, *unit_dir, *arg;
	bool cron;
	int hour, minute;
	char dir[PATH_MAX];
	bool user;
};

static int parse_at(struct sched_opts *o)
{
	char extra;

	if (sscanf(o->at, "%2d:%2d%c", &o->hour, &o->minute, &extra) != 2 || o->hour < 0 || o->hour > 23 ||
	    o->minute < 0 || o->minute > 59)
		return set_err("--at '%s': give a time of day as HH:MM (e.g. 02:30)", o->at);
	return 0;
}

static int parse_opts(int argc, char **argv, struct sched_opts *o, bool want_arg)
{
	static const struct option opts[] = {
		{ "at", required_argument, NULL, 'a' }, { "unit-dir", required_argument, NULL, 'u' },
		{ "cron", no_argument, NULL, 'c' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	const char *home = getenv("HOME");
	int c;

	o->at = "02:00";
	while ((c = getopt_long(argc, argv, "a:u:ch", opts, NULL)) != -1) {
		switch (c) {
		case 'a': o->at = optarg; break;
		case 'u': o->unit_dir = optarg; break;
		case 'c': o->cron = true; break;
		case 'h': print_usage(schedule_help); return 1;
		default: return bad_usage("schedule");
		}
	}
	if (want_arg && optind != argc - 1)
		return set_err("schedule %s takes one schedule: see 'rcuwb schedule --help'", argv[0]);
	if (!want_arg && optind != argc)
		return set_err("schedule %s takes no argument: see 'rcuwb schedule --help'", argv[0]);
	o->arg = want_arg ? argv[optind] : NULL;
	o->user = geteuid() != 0;
	if (o->unit_dir)
		snprintf(o->dir, sizeof(o->dir), "%s", o->unit_dir);
	else if (!o->user)
		snprintf(o->dir, sizeof(o->dir), "/etc/systemd/system");
	else if (getenv("XDG_CONFIG_HOME") && *getenv("XDG_CONFIG_HOME"))
		snprintf(o->dir, sizeof(o->dir), "%s/systemd/user", getenv("XDG_CONFIG_HOME"));
	else
		snprintf(o->dir, sizeof(o->dir), "%s/.config/systemd/user", home ? home : ".");
	return parse_at(o);
}

static int abs_path(const char *p, char *out, size_t cap)
{
	char *r = realpath(p, NULL);

	if (!r)
		return set_err("%s: %s", p, strerror(errno));
	snprintf(out, cap, "%s", r);
	free(r);
	return 0;
}

/* The database's absolute path (it may not exist yet: its directory must). */
static int abs_db(char *out, size_t cap)
{
	char dir[PATH_MAX], tmp[PATH_MAX];
	const char *slash = strrchr(opt_db, '/');

	if (abs_path(opt_db, out, cap) == 0)
		return 0;
	snprintf(tmp, sizeof(tmp), "%.*s", slash ? (int)(slash - opt_db) : 1, slash ? opt_db : ".");
	if (abs_path(tmp, dir, sizeof(dir)) < 0)
		return set_err("results database %s: its directory does not exist", opt_db);
	return path_fmt(out, cap, "%s/%s", dir, slash ? slash + 1 : opt_db);
}

struct unit_paths {
	char service[PATH_MAX], timer[PATH_MAX];
	char self[PATH_MAX], db[PATH_MAX], cache[PATH_MAX], sched[PATH_MAX], data[PATH_MAX];
};

static int unit_paths(struct sched_opts *o, const struct schedule *s, struct unit_paths *u)
{
	if (path_fmt(u->service, sizeof(u->service), "%s/rcuwb-nightly-%s.service", o->dir, s->name) < 0 ||
	    path_fmt(u->timer, sizeof(u->timer), "%s/rcuwb-nightly-%s.timer", o->dir, s->name) < 0 ||
	    abs_path(proc_self(), u->self, sizeof(u->self)) < 0 || abs_db(u->db, sizeof(u->db)) < 0 ||
	    abs_path(s->path, u->sched, sizeof(u->sched)) < 0 || !data_dir() ||
	    abs_path(data_dir(), u->data, sizeof(u->data)) < 0)
		return -1;
	if (mkdir_p(cache_dir()) < 0 || abs_path(cache_dir(), u->cache, sizeof(u->cache)) < 0)
		return -1;
	{
		const char *p[] = { u->self, u->db, u->sched, u->cache, u->data, opt_uri };
		size_t i;

		for (i = 0; i < ARRAY_SIZE(p); i++)
			if (strpbrk(p[i], " \t\n%\"'\\"))
				return set_err("'%s' has a space, quote or %% in it, which a unit file or crontab line "
					       "would split or expand: use a path without them", p[i]);
	}
	return 0;
}

static int write_units(struct sched_opts *o, const struct schedule *s, const struct unit_paths *u)
{
	struct buf svc = { 0 }, tmr = { 0 };
	int ret;

	buf_printf(&svc,
		   "# Written by rcuwb schedule install: a nightly round of schedule %s.\n"
		   "[Unit]\n"
		   "Description=rcuwb nightly round of schedule %s\n"
		   "Documentation=file://%s/perf-configs/schedules/README.md\n"
		   "After=network-online.target libvirtd.service\n"
		   "Wants=network-online.target\n"
		   "\n"
		   "[Service]\n"
		   "Type=oneshot\n"
		   "WorkingDirectory=%s\n"
		   "Environment=RCUWB_CACHE=%s\n"
		   "ExecStart=%s -d %s -c %s nightly --wait %s\n"
		   "SuccessExitStatus=1 3\n"
		   "TimeoutStartSec=infinity\n",
		   s->name, s->name, u->data, u->data, u->cache, u->self, u->db, opt_uri, u->sched);
	buf_printf(&tmr,
		   "# Written by rcuwb schedule install: when schedule %s runs.\n"
		   "[Unit]\n"
		   "Description=rcuwb nightly rounds of schedule %s, daily at %02d:%02d\n"
		   "\n"
		   "[Timer]\n"
		   "OnCalendar=*-*-* %02d:%02d:00\n"
		   "Persistent=true\n"
		   "Unit=rcuwb-nightly-%s.service\n"
		   "\n"
		   "[Install]\n"
		   "WantedBy=timers.target\n",
		   s->name, s->name, o->hour, o->minute, o->hour, o->minute, s->name);
	ret = svc.data && tmr.data ? 0 : set_err("out of memory");
	if (!ret)
		ret = mkdir_p(o->dir);
	if (!ret)
		ret = write_file(u->service, svc.data, svc.len);
	if (!ret)
		ret = write_file(u->timer, tmr.data, tmr.len);
	buf_free(&svc);
	buf_free(&tmr);
	return ret;
}

static int install(struct sched_opts *o)
{
	struct schedule s;
	struct unit_paths u;
	const char *user = o->user ? "--user " : "";
	int ret;

	if (schedule_load(o->arg, &s) < 0)
		return -1;
	ret = unit_paths(o, &s, &u);
	if (!ret && o->cron) {
		printf("%d %d * * * cd %s && RCUWB_CACHE=%s %s -d %s -c %s nightly --wait %s >> %s/nightly-%s.log 2>&1\n",
		       o->minute, o->hour, u.data, u.cache, u.self, u.db, opt_uri, u.sched, u.cache, s.name);
	} else if (!ret && (ret = write_units(o, &s, &u)) == 0) {
		if (json_output) {
			printf("{\"service\": \"%s\", \"timer\": \"%s\"}\n", u.service, u.timer);
		} else {
			printf("wrote %s\nwrote %s\n", u.service, u.timer);
			printf("enable: systemctl %sdaemon-reload && systemctl %senable --now rcuwb-nightly-%s.timer\n",
			       user, user, s.name);
		}
	}
	schedule_free(&s);
	return ret;
}

/* "OnCalendar=..." and "ExecStart=..." of an installed pair. */
static void unit_value(const char *path, const char *key, char *out, size_t cap)
{
	struct buf b = { 0 };
	const char *p;
	size_t klen = strlen(key);

	out[0] = '\0';
	if (read_file(path, &b) < 0)
		return;
	for (p = b.data; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			snprintf(out, cap, "%.*s", (int)strcspn(p + klen + 1, "\n"), p + klen + 1);
			break;
		}
	buf_free(&b);
}

static int list(struct sched_opts *o)
{
	json_object *arr = json_output ? json_object_new_array() : NULL;
	DIR *d = opendir(o->dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char timer[PATH_MAX], service[PATH_MAX], name[256], cal[128], exec[PATH_MAX];

		if (strncmp(e->d_name, "rcuwb-nightly-", 14) || len < 20 || strcmp(e->d_name + len - 6, ".timer"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 20), e->d_name + 14);
		if (path_fmt(timer, sizeof(timer), "%s/%s", o->dir, e->d_name) < 0 ||
		    path_fmt(service, sizeof(service), "%s/rcuwb-nightly-%s.service", o->dir, name) < 0)
			continue;
		unit_value(timer, "OnCalendar", cal, sizeof(cal));
		unit_value(service, "ExecStart", exec, sizeof(exec));
		if (arr) {
			json_object *j = json_object_new_object();

			json_object_object_add(j, "schedule", json_object_new_string(name));
			json_object_object_add(j, "on_calendar", json_object_new_string(cal));
			json_object_object_add(j, "exec_start", json_object_new_string(exec));
			json_object_object_add(j, "timer", json_object_new_string(timer));
			json_object_array_add(arr, j);
		} else {
			printf("%-20s %-22s %s\n", name, cal, exec);
		}
		n++;
	}
	if (d)
		closedir(d);
	if (arr) {
		printf("%s\n", json_object_to_json_string_ext(arr, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED));
		json_object_put(arr);
	} else if (!n) {
		printf("no schedule installed in %s\n", o->dir);
	}
	return 0;
}

static int remove_units(struct sched_opts *o)
{
	char path[PATH_MAX];
	const char *ext[] = { "timer", "service" };
	int i, removed = 0;

	for (i = 0; i < 2; i++) {
		if (path_fmt(path, sizeof(path), "%s/rcuwb-nightly-%s.%s", o->dir, o->arg, ext[i]) < 0)
			return -1;
		if (unlink(path) == 0) {
			printf("removed %s\n", path);
			removed++;
		} else if (errno != ENOENT) {
			return set_err("cannot remove %s: %s", path, strerror(errno));
		}
	}
	return removed ? 0 : set_err("no schedule '%s' installed in %s (see rcuwb schedule list)", o->arg, o->dir);
}

int do_schedule(int argc, char **argv)
{
	struct sched_opts o = { 0 };
	const char *verb = argc > 1 ? argv[1] : "";
	int rc;

	if (!strcmp(verb, "-h") || !strcmp(verb, "--help") || !*verb) {
		print_usage(schedule_help);
		return *verb ? 0 : set_err("schedule needs install, list or remove: see 'rcuwb schedule --help'");
	}
	if (strcmp(verb, "install") && strcmp(verb, "list") && strcmp(verb, "remove"))
		return set_err("schedule: unknown '%s': give install, list or remove", verb);
	rc = parse_opts(argc - 1, argv + 1, &o, strcmp(verb, "list") != 0);
	if (rc)
		return rc > 0 ? 0 : -1;
	if (!strcmp(verb, "install"))
		return install(&o);
	if (!strcmp(verb, "list"))
		return list(&o);
	return remove_units(&o);
}
