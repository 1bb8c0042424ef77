#!/bin/sh
# Install what the build needs, build clustersim (release) and replay
# Llama 3 405B on 16,384 H100s.
set -eu
cd "$(dirname "$0")/.."
tools/setup.sh
[ -f build-release/build.ninja ] || meson setup build-release --buildtype=release >/dev/null
ninja -C build-release >/dev/null
exec build-release/clustersim run scenarios/llama3-405b-16k.yaml "$@"
