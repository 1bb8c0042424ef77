#!/bin/sh
# Build ASTRA-sim's analytical congestion-unaware backend from a checkout
# whose submodules are in place (see README.md), as its
# build/astra_analytical/build.sh does, with three edits it needs outside
# ASTRA-sim's Docker image and at most JOBS (default 2) compiler jobs.
#
#   tools/astra-sim/build.sh ASTRA_SIM_DIR [JOBS]
#
# The binary: ASTRA_SIM_DIR/build/astra_analytical/build/bin/
# AstraSim_Analytical_Congestion_Unaware.
set -eu
dir=${1:?usage: tools/astra-sim/build.sh ASTRA_SIM_DIR [JOBS]}
jobs=${2:-2}
et=$dir/extern/graph_frontend/chakra/schema/protobuf
# 1. CMakeLists.txt links three abseil libraries by their path in the Docker
#    image (/usr/local/lib/libabsl_log_internal_*.so.2401.0.0, for a
#    protobuf built from source); Debian's protobuf 3.21 needs none.
sed -i '/libabsl_log_internal/d' "$dir/CMakeLists.txt"
# 2. astra-sim/workload/Workload.hh names Chakra::ETFeeder, which chakra
#    f37c2bb declares only as Chakra::FeederV3::ETFeeder (its later commits
#    add the alias); add it.
h=$dir/extern/graph_frontend/chakra/src/feeder_v3/et_feeder.h
grep -A1 '^} // namespace FeederV3$' "$h" | grep -q 'using ETFeeder' ||
	sed -i 's|^} // namespace FeederV3$|&\nusing ETFeeder = FeederV3::ETFeeder;|' "$h"
# 3. astra-sim/workload/Workload.cc at 4b6e027 stores PyTorch's process
#    groups in this->comm_group[pgName], a member Workload.hh does not have
#    (it has comm_groups, keyed by number); store them there by number, as
#    ASTRA-sim's later commits do. Only METADATA_NODEs carrying PyTorch's
#    groups reach this code; clustersim writes none.
sed -i 's|this->comm_group\[pgName\] = cg;|this->comm_groups[std::stoi(pgName)] = cg;|' \
	"$dir/astra-sim/workload/Workload.cc"
# what build.sh does: the schema's C++ and Python code when missing, then cmake
if [ ! -f "$et/et_def.pb.h" ] || [ ! -f "$et/et_def.pb.cc" ]; then
	protoc et_def.proto --proto_path="$et" --cpp_out="$et"
fi
[ -f "$et/et_def_pb2.py" ] || protoc et_def.proto --proto_path="$et" --python_out="$et"
mkdir -p "$dir/build/astra_analytical/build"
cd "$dir/build/astra_analytical/build"
cmake .. -DBUILDTARGET=congestion_unaware
cmake --build . -j "$jobs"
