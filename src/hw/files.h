/*
 * files.h - the files a scenario names for its GPU: the kernel profile
 * (cluster.gpu.profile) and the calibration (cluster.gpu.calibration).
 *
 * A file that cannot be opened is reported at the key's location
 * (cs_config_locate: "file:line:col" or "--set 'key'"), a malformed one at
 * its own file:line:col. Nothing here keeps state; what a call returns
 * belongs to the caller.
 */
#ifndef CS_HW_FILES_H
#define CS_HW_FILES_H

#include "clustersim/clustersim.h"
#include "config/scenario.h"
#include "hw/calib.h"
#include "hw/kprof.h"

/* The kernel profile into *out: NULL for none ("none" or no profile: the
 * flat efficiencies); the caller frees it with cs_kprof_free. */
cs_status cs_hw_load_profile(const cs_scenario *sc, cs_kprof **out, cs_diag *diag);

/* The calibration into the caller's *out (every factor 1 without one). */
cs_status cs_hw_load_calibration(const cs_scenario *sc, cs_calib *out, cs_diag *diag);

/* The scenario's collective settings with the network factors of its
 * calibration applied (cs_hw_load_calibration's errors). */
cs_status cs_hw_coll_spec(const cs_scenario *sc, cs_coll_spec *out, cs_diag *diag);

/* The files the scenario names and a run reads, as paths from here: its
 * kernel profile (unless built in or none) and its calibration. Fills
 * paths[0..count) and returns the count; NULL entries stand for none. */
#define CS_HW_NAMED_FILES 2
#define CS_HW_NAMED_PATH (CS_PATH_MAX * 2)
int cs_hw_named_files(const cs_scenario *sc, char paths[CS_HW_NAMED_FILES][CS_HW_NAMED_PATH]);

/* Load both and drop them: what loading a scenario checks before anything
 * runs. A built-in profile is not parsed again (its tests check it). */
cs_status cs_hw_check_files(const cs_scenario *sc, cs_diag *diag);

#endif
