#!/usr/bin/env bash
# Make the docker backend usable on this machine: `rewardkit docker setup`
# (rewardkit/sandbox/docker_setup.py: install docker.io, start dockerd, build the
# image when absent), with this checkout's build cache, .cache/docker.
# PYTHON picks the interpreter that has rewardkit (default: the checkout's .venv).
# REWARDKIT_SKIP_DOCKER=1 skips all of it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
export REWARDKIT_CACHE="${REWARDKIT_CACHE:-$ROOT/.cache/docker}"
exec "$PY" -m rewardkit docker setup "$@"
