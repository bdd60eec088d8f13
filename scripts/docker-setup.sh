#!/usr/bin/env bash
# Make the docker backend usable on this machine, idempotently:
#   1. install Debian's docker.io when dockerd is missing;
#   2. start dockerd in the background when `docker info` does not answer
#      (there is no systemd here; the log goes to $REWARDKIT_DOCKERD_LOG);
#   3. build the sandbox image when it is absent (scripts/build-image.sh).
# REWARDKIT_SKIP_DOCKER=1 skips all of it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IMAGE="${REWARDKIT_IMAGE:-rewardkit-sandbox:latest}"
DOCKERD_LOG="${REWARDKIT_DOCKERD_LOG:-/var/log/rewardkit-dockerd.log}"
START_TIMEOUT="${REWARDKIT_DOCKERD_TIMEOUT:-60}"

log() { printf 'docker-setup: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

if [[ "${REWARDKIT_SKIP_DOCKER:-0}" == "1" ]]; then
  log "REWARDKIT_SKIP_DOCKER=1: docker is skipped (the docker backend tests will be skipped too)"
  exit 0
fi

engine_up() { docker info >/dev/null 2>&1; }

if ! engine_up; then
  [[ $EUID -eq 0 ]] || die "the docker engine is not running and starting it needs root"
  if ! command -v dockerd >/dev/null || ! command -v docker >/dev/null; then
    log "installing Debian's docker.io"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
  fi
  if ! pgrep -x dockerd >/dev/null; then
    log "starting dockerd (log: $DOCKERD_LOG)"
    mkdir -p "$(dirname "$DOCKERD_LOG")"
    setsid nohup dockerd >>"$DOCKERD_LOG" 2>&1 </dev/null &
  else
    log "dockerd is running but not answering yet; waiting for it"
  fi
  for ((waited = 0; waited < START_TIMEOUT; waited++)); do
    engine_up && break
    sleep 1
  done
  if ! engine_up; then
    tail -n 20 "$DOCKERD_LOG" >&2 2>/dev/null || true
    die "dockerd did not answer within ${START_TIMEOUT} s; see $DOCKERD_LOG"
  fi
  log "docker engine is up ($(docker version --format '{{.Server.Version}}'))"
fi

if docker image inspect "$IMAGE" >/dev/null 2>&1; then
  log "image $IMAGE is present"
else
  log "image $IMAGE is missing; building it"
  "$ROOT/scripts/build-image.sh"
fi
