#!/usr/bin/env bash
# Installs the compilers and runtimes the sandbox runs solutions with, and
# valgrind for meter="instructions", from Debian's packages when they are
# missing. Without root or apt, says what is missing and goes on: the sandbox
# then reports those languages as compile errors that name the missing tool.
set -euo pipefail

declare -A want=(
  [gcc]=gcc [g++]=g++ [javac]=default-jdk-headless [node]=nodejs
  [go]=golang-go [rustc]=rustc [valgrind]=valgrind
)
missing=()
for tool in "${!want[@]}"; do
  # rustc under a home directory (rustup) is not reachable by the sandbox uid
  if ! PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v "$tool" >/dev/null; then
    missing+=("${want[$tool]}")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "toolchains: missing ${missing[*]} (no root/apt here): those languages will report compile_error"
  exit 0
fi
echo "toolchains: installing ${missing[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
