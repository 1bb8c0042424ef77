#!/bin/sh
# Rewrite the golden results of tests/test_plan.c after an intended change
# of the model; review the diff before committing it.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
ninja -C "$build" clustersim >/dev/null
"$build"/clustersim run scenarios/3d-llama3-70b-64gpu.yaml --format json --no-progress \
	>tests/golden/3d-llama3-70b-64gpu.json
git diff --stat -- tests/golden
