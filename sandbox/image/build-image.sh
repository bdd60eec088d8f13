#!/usr/bin/env bash
# Build the sandbox base image (rewardkit-sandbox:latest) without any registry:
# a minimal Debian bookworm root filesystem made by debootstrap, holding
# python3 and what it needs, imported with `docker import`.
# Shipped in the wheel and run by `rewardkit docker setup` (rewardkit.sandbox.docker_setup).
#
# Two caches in the cache folder make rebuilds fast:
#   debs-*.tgz    the packages debootstrap downloaded (--make-tarball)
#   rootfs-*.tar  the finished, trimmed root filesystem
# Both are keyed by the suite, architecture, package list and a hash of this
# script, so editing the script rebuilds the root filesystem.
#
# Environment:
#   REWARDKIT_IMAGE          image tag            (default rewardkit-sandbox:latest)
#   REWARDKIT_DEBIAN_MIRROR  Debian mirror URL    (default: read from /etc/apt)
#   REWARDKIT_CACHE          cache folder         (default ${XDG_CACHE_HOME:-~/.cache}/rewardkit/docker;
#                                                  `make docker` uses <repo>/.cache/docker)
#   DOCKER                   docker CLI           (default docker)
# Flags: --force rebuilds the root filesystem even when it is cached.
set -euo pipefail

IMAGE="${REWARDKIT_IMAGE:-rewardkit-sandbox:latest}"
CACHE="${REWARDKIT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rewardkit/docker}"
DOCKER="${DOCKER:-docker}"
SUITE=bookworm
PACKAGES=python3,python3-pytest
FORCE=0
[[ "${1:-}" == "--force" ]] && FORCE=1

log() { printf 'build-image: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[[ $EUID -eq 0 ]] || die "debootstrap needs root; run as root"

# The Debian mirror this machine's apt already uses (deb822 or one-line format).
debian_mirror() {
  local url=""
  if compgen -G "/etc/apt/sources.list.d/*.sources" >/dev/null; then
    url="$(awk '
      /^URIs:/   { uris = $2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "'"$SUITE"'") { print uris; exit } }
      /^$/       { uris = "" }' /etc/apt/sources.list.d/*.sources)"
  fi
  if [[ -z "$url" && -f /etc/apt/sources.list ]]; then
    url="$(awk '$1 == "deb" && $0 ~ / '"$SUITE"' / { for (i = 2; i <= NF; i++)
      if ($i ~ /^https?:/) { print $i; exit } }' /etc/apt/sources.list)"
  fi
  printf '%s' "$url"
}

MIRROR="${REWARDKIT_DEBIAN_MIRROR:-$(debian_mirror)}"
[[ -n "$MIRROR" ]] || die "no Debian $SUITE mirror found in /etc/apt; set REWARDKIT_DEBIAN_MIRROR"

if ! command -v debootstrap >/dev/null; then
  log "installing debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi

ARCH="$(dpkg --print-architecture)"
KEY="$SUITE-$ARCH-${PACKAGES//,/_}"
SCRIPT_HASH="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-12)"
DEBS="$CACHE/debs-$KEY.tgz"
ROOTFS_TAR="$CACHE/rootfs-$KEY-$SCRIPT_HASH.tar"
mkdir -p "$CACHE"

WORK="$(mktemp -d "$CACHE/build.XXXXXX")"
cleanup() {
  # debootstrap may leave /proc or /sys mounted inside the root on failure.
  local mnt
  for mnt in proc sys dev/pts dev; do
    mountpoint -q "$WORK/rootfs/$mnt" 2>/dev/null && umount -l "$WORK/rootfs/$mnt"
  done
  rm -rf "$WORK"
}
trap cleanup EXIT

if [[ $FORCE -eq 1 || ! -s "$ROOTFS_TAR" ]]; then
  if [[ ! -s "$DEBS" ]]; then
    log "downloading $SUITE packages from $MIRROR (once; cached in $DEBS)"
    debootstrap --variant=minbase --include="$PACKAGES" --arch="$ARCH" \
      --make-tarball="$WORK/debs.tgz" "$SUITE" "$WORK/rootfs" "$MIRROR" >&2
    mv "$WORK/debs.tgz" "$DEBS"
    rm -rf "$WORK/rootfs"
  fi
  log "installing the root filesystem (debootstrap --variant=minbase, $PACKAGES)"
  debootstrap --variant=minbase --include="$PACKAGES" --arch="$ARCH" \
    --unpack-tarball="$DEBS" "$SUITE" "$WORK/rootfs" "$MIRROR" >&2

  R="$WORK/rootfs"
  # The sandbox user: Debian's `nobody`/`nogroup` are 65534; add them if absent.
  grep -q '^[^:]*:[^:]*:65534:' "$R/etc/group" || echo 'nogroup:x:65534:' >>"$R/etc/group"
  grep -q '^[^:]*:[^:]*:65534:' "$R/etc/passwd" ||
    echo 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin' >>"$R/etc/passwd"
  # Trim what a sandbox never needs: package caches, docs, locales, apt itself.
  chroot "$R" dpkg --purge --force-remove-essential --force-depends apt libapt-pkg6.0 \
    e2fsprogs libext2fs2 libss2 logsave gpgv debian-archive-keyring >/dev/null 2>&1 || true
  rm -rf "$R"/usr/lib/*-linux-gnu/gconv "$R"/var/cache/apt/* "$R"/var/lib/apt/lists/* "$R"/var/cache/debconf/*-old \
    "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* \
    "$R"/usr/share/locale/* "$R"/usr/share/lintian "$R"/var/log/* "$R"/tmp/* \
    "$R"/usr/lib/python3.11/test "$R"/usr/lib/python3.11/idlelib \
    "$R"/usr/lib/python3.11/tkinter "$R"/usr/lib/python3.11/ensurepip
  mkdir -p "$R/opt/rewardkit/runtime"
  chmod 1777 "$R/tmp"
  # Byte-compile the standard library now: the root is read-only at run time.
  chroot "$R" python3 -m compileall -q -j 0 /usr/lib/python3.11 >/dev/null 2>&1 || true
  tar --numeric-owner -C "$R" -cf "$ROOTFS_TAR.part" .
  mv "$ROOTFS_TAR.part" "$ROOTFS_TAR"
  # Keep only the newest root filesystem.
  find "$CACHE" -maxdepth 1 -name "rootfs-$KEY-*.tar" ! -name "$(basename "$ROOTFS_TAR")" -delete
fi

OLD_ID="$("$DOCKER" image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)"
log "importing $ROOTFS_TAR as $IMAGE"
"$DOCKER" import \
  --change 'USER 65534:65534' \
  --change 'WORKDIR /tmp' \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV LANG=C.UTF-8' \
  --change 'ENV PYTHONDONTWRITEBYTECODE=1' \
  --change 'LABEL org.opencontainers.image.title=rewardkit-sandbox' \
  --change "LABEL rewardkit.build=$SCRIPT_HASH" \
  --change 'CMD ["python3"]' \
  - "$IMAGE" <"$ROOTFS_TAR" >/dev/null
# Drop the image this one replaced, unless something still uses it.
if [[ -n "$OLD_ID" && "$OLD_ID" != "$("$DOCKER" image inspect -f '{{.Id}}' "$IMAGE")" ]]; then
  "$DOCKER" image rm "$OLD_ID" >/dev/null 2>&1 || true
fi
log "built $IMAGE ($("$DOCKER" image inspect -f '{{.Size}}' "$IMAGE" | awk '{printf "%.0f MB", $1/1e6}'))"
