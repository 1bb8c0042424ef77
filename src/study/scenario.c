/*
 * scenario.c - cs_scenario_load: the scenario as the configuration reads
 * it (config/), and the files it names for its GPU checked (hw/files.h),
 * so that a bad profile or calibration is reported when the scenario is
 * loaded, not when it first runs.
 */
#include "clustersim/clustersim.h"
#include "config/config.h"
#include "hw/files.h"

cs_status cs_scenario_load(const char *path, const char *const *overrides, size_t n_overrides,
			   cs_scenario **out, cs_diag *diag)
{
	cs_diag scratch;
	if (!diag)
		diag = &scratch;
	cs_status st = cs_config_load(path, overrides, n_overrides, out, diag);
	if (st != CS_OK || (st = cs_hw_check_files(*out, diag)) == CS_OK)
		return st;
	cs_scenario_free(*out);
	*out = NULL;
	return st;
}
