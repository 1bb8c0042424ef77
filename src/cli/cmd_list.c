/*
 * cmd_list.c - `clustersim list gpus|models|scenarios`: the presets a
 * scenario can name, with their key figures, and the scenarios shipped
 * (the working directory's scenarios/, else the build's: cs_cli_scenario_dirs)
 * with the file each is read from.
 */
#include "cli/commands.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "clustersim/clustersim.h"
#include "config/config.h"
#include "config/scenario.h"
#include "report/list_out.h"

static const char list_help[] = "usage: clustersim list gpus|models|scenarios [DIR]\n"
				"\n"
				"  gpus       the GPU presets (cluster.gpu): peak, memory, SMs, and the\n"
				"             standard server each implies (GPUs per node, NVLink, NICs)\n"
				"  models     the model presets (model): shape and parameters\n"
				"  scenarios  the scenarios in DIR (default: ./scenarios when it exists,\n"
				"             else the installed ones, or the source tree's for a\n"
				"             binary run from its build folder): GPUs, model, parallel\n"
				"             plan and the file; a command given a scenario's name\n"
				"             (clustersim run ddp-gpt-small) reads that file\n"
				"\n"
				"examples:\n"
				"  clustersim list gpus\n"
				"  clustersim list models\n"
				"  clustersim list scenarios\n"
				"\n"
				"exit status: 0 success, 2 bad input\n";

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list_scenarios(const char *dir_arg)
{
	const char *dir = dir_arg, *dirs[2];
	if (!dir) {
		cs_cli_scenario_dirs(dirs);
		dir = dirs[0];
	}
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "clustersim list: cannot open the scenario directory '%s'\n", dir);
		return 2;
	}
	char *names[512];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL && n < 512) {
		size_t len = strlen(e->d_name);
		if (len > 5 && strcmp(e->d_name + len - 5, ".yaml") == 0 && (names[n] = strdup(e->d_name)))
			n++;
	}
	closedir(d);
	qsort(names, n, sizeof *names, by_name);
	cs_list_write_scenario_header(stdout);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		cs_scenario *sc = NULL;
		cs_diag diag = { { 0 } };
		if (cs_scenario_load(path, NULL, 0, &sc, &diag) != CS_OK) {
			fprintf(stderr, "%s\n", CS_CLEAN(diag));
			rc = 2;
		} else {
			cs_list_write_scenario(stdout, sc, path);
			cs_scenario_free(sc);
		}
		free(names[i]);
	}
	return rc;
}

int cs_cmd_list(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(list_help, stdout);
		return 0;
	}
	const char *what = argc >= 2 ? argv[1] : NULL;
	if (!what) {
		fprintf(stderr, "clustersim list: say what to list: gpus, models or scenarios\n"
				"(see 'clustersim list --help')\n");
		return 2;
	}
	if (strcmp(what, "scenarios") == 0 && argc <= 3)
		return list_scenarios(argc == 3 ? argv[2] : NULL);
	if (argc > 2) {
		fprintf(stderr, "clustersim list: unexpected argument '%s'\n", argv[2]);
		return 2;
	}
	if (strcmp(what, "gpus") == 0) {
		cs_list_write_gpus(stdout);
		return 0;
	}
	if (strcmp(what, "models") == 0) {
		cs_list_write_models(stdout);
		return 0;
	}
	static const char *const kinds[] = { "gpus", "models", "scenarios" };
	const char *near = cs_suggest(what, kinds, 3);
	fprintf(stderr, "clustersim list: unknown list '%s'%s%s%s (gpus, models or scenarios)\n", what,
		near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "");
	return 2;
}
