/*
 * files.c - the kernel profile a scenario names (cluster.gpu.profile):
 * a built-in profile's name, or a YAML file whose path is relative to the
 * scenario's directory; "none" (or no profile) means the flat efficiencies.
 * Also the calibration file it names (cluster.gpu.calibration), read into
 * the caller's cs_calib (hw/calib.h), whose network factors go to the
 * collective settings; nothing here outlives a call but the profile the
 * caller frees.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hw/files.h"

#include "config/config.h"
#include "hw/calib.h"
#include "hw/kprof.h"

/* `name` as a path from the scenario's directory (a built-in profile's name
 * as it is, when `builtin` allows one); 0, or -1 when it does not fit. */
static int resolve(const cs_scenario *sc, const char *name, bool builtin, char *out, size_t n)
{
	if ((builtin && cs_kprof_builtin(name)) || name[0] == '/' || !sc->path[0])
		return snprintf(out, n, "%s", name) < (int)n ? 0 : -1;
	const char *slash = strrchr(sc->path, '/');
	if (!slash)
		return snprintf(out, n, "%s", name) < (int)n ? 0 : -1;
	int dir = (int)(slash - sc->path);
	return snprintf(out, n, "%.*s/%s", dir, sc->path, name) < (int)n ? 0 : -1;
}

/* The file a key names, as a path in path[n]: resolved from the scenario's
 * directory and opened once, so that a missing file is reported at the
 * key's location (and a FIFO or a directory refused there, never waited
 * on); a built-in profile's name (with `builtin`) is taken as it is. `what` and `hint` word the message. */
static cs_status locate_file(const cs_scenario *sc, const char *key, const char *name, bool builtin,
			     const char *what, const char *hint, char *path, size_t n, cs_diag *diag)
{
	char where[CS_PATH_MAX + 64];
	cs_config_locate(sc, key, where, sizeof where);
	if (resolve(sc, name, builtin, path, n)) {
		snprintf(diag->msg, sizeof diag->msg, "%s: %s path '%.200s' is too long", where, what, name);
		return CS_ERR_INPUT;
	}
	if (builtin && cs_kprof_builtin(path))
		return CS_OK;
	/* O_NONBLOCK: a FIFO without a writer must not hold the open */
	struct stat st;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		snprintf(diag->msg, sizeof diag->msg, "%s: cannot open %s '%.200s': %s (%s)", where, what,
			 path, strerror(errno), hint);
		if (fd >= 0)
			close(fd);
		return CS_ERR_INPUT;
	}
	close(fd);
	if (!S_ISREG(st.st_mode)) {
		snprintf(diag->msg, sizeof diag->msg, "%s: cannot read %s '%.200s': not a regular file",
			 where, what, path);
		return CS_ERR_INPUT;
	}
	return CS_OK;
}

cs_status cs_hw_load_profile(const cs_scenario *sc, cs_kprof **out, cs_diag *diag)
{
	const char *name = sc->cluster.gpu.profile;
	*out = NULL;
	if (!name[0] || strcmp(name, "none") == 0)
		return CS_OK;
	char path[CS_PATH_MAX * 2];
	cs_status st = locate_file(sc, "cluster.gpu.profile", name, true, "kernel profile",
				   "built-in profiles: h200-sxm, h100-sxm, a100-sxm, b200, gb200; or none",
				   path, sizeof path, diag);
	/* a malformed file is reported at its own file:line:col */
	return st == CS_OK ? cs_kprof_load(path, out, diag) : st;
}

cs_status cs_hw_load_calibration(const cs_scenario *sc, cs_calib *out, cs_diag *diag)
{
	const char *name = sc->cluster.gpu.calibration;
	cs_calib_init(out);
	if (!name[0])
		return CS_OK;
	char path[CS_PATH_MAX * 2];
	cs_status st = locate_file(sc, "cluster.gpu.calibration", name, false, "calibration",
				   "make one with clustersim calibrate", path, sizeof path, diag);
	/* a malformed file is reported at its own file:line:col */
	return st == CS_OK ? cs_calib_load(path, out, diag) : st;
}

cs_status cs_hw_coll_spec(const cs_scenario *sc, cs_coll_spec *out, cs_diag *diag)
{
	cs_calib cal;
	*out = sc->coll;
	cs_status st = cs_hw_load_calibration(sc, &cal, diag);
	if (st != CS_OK)
		return st;
	out->scale_up_bw = cal.net[CS_CALIB_SCALE_UP_BW];
	out->scale_out_bw = cal.net[CS_CALIB_SCALE_OUT_BW];
	out->latency = cal.net[CS_CALIB_LATENCY];
	return CS_OK;
}

int cs_hw_named_files(const cs_scenario *sc, char paths[CS_HW_NAMED_FILES][CS_HW_NAMED_PATH])
{
	int n = 0;
	const char *prof = sc->cluster.gpu.profile, *cal = sc->cluster.gpu.calibration;
	if (prof[0] && strcmp(prof, "none") != 0 && !cs_kprof_builtin(prof) &&
	    resolve(sc, prof, false, paths[n], CS_HW_NAMED_PATH) == 0)
		n++;
	if (cal[0] && resolve(sc, cal, false, paths[n], CS_HW_NAMED_PATH) == 0)
		n++;
	return n;
}

cs_status cs_hw_check_files(const cs_scenario *sc, cs_diag *diag)
{
	cs_calib cal;
	cs_status st = cs_hw_load_calibration(sc, &cal, diag);
	if (st != CS_OK ||
	    (cs_kprof_builtin(sc->cluster.gpu.profile) && sc->cluster.gpu.clock != CS_CLOCK_POWER))
		return st; /* the built-in profiles are checked by their tests */
	cs_kprof *p = NULL;
	st = cs_hw_load_profile(sc, &p, diag);
	if (st == CS_OK && sc->cluster.gpu.clock == CS_CLOCK_POWER && !cs_kprof_clock_model(p)) {
		char where[CS_PATH_MAX + 64];
		cs_config_locate(sc, "cluster.gpu.clock", where, sizeof where);
		snprintf(diag->msg, sizeof diag->msg,
			 "%s: 'cluster.gpu.clock' is power, but kernel "
			 "profile '%.100s' has no clock model (use auto or table)",
			 where, p ? cs_kprof_name(p) : sc->cluster.gpu.profile);
		st = CS_ERR_INPUT;
	}
	cs_kprof_free(p);
	return st;
}
