#!/bin/sh
# Install the Debian packages clustersim needs to build and test.
# Idempotent and quiet when everything is already there. Run as root.
#   tools/setup.sh          what the build needs
#   tools/setup.sh --test   and what the whole test suite needs (OpenMPI for
#                           the distributed sweep check, clang-format for
#                           the sources' style, rsvg-convert for the SVGs)
set -eu

PACKAGES="gcc meson ninja-build pkg-config libyaml-dev libgsl-dev libjansson-dev zlib1g-dev libprotobuf-c-dev protobuf-c-compiler check libsubunit-dev"
if [ "${1:-}" = "--test" ]; then
	PACKAGES="$PACKAGES openmpi-bin libopenmpi-dev clang libclang-rt-14-dev clang-format valgrind man-db groff-base librsvg2-bin"
fi

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: missing packages:$missing (run as root to install them)" >&2
	exit 1
fi
echo "setup: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
