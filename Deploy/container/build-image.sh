#!/usr/bin/env bash
# Builds Concierge's container image without any image registry: a minimal Debian root filesystem made with
# debootstrap from Debian's packages (the host's suite), imported into podman as the base image, then the Containerfile
# beside this script adds the binary and an unprivileged user.
#
#   Deploy/container/build-image.sh BINARY [IMAGE]      # IMAGE defaults to localhost/concierge:latest
#
# BINARY is the `concierge` executable. Production uses the release binary with the Swift runtime linked in:
#   Scripts/build-release --product concierge                 # the default build: no OTLP, HTTPS or PostgreSQL
#   Scripts/build-release --traits Full --product concierge   # with Tracing, TLS and the PostgreSQL journal
# (README, "Build options"); the image's label io.concierge.traits names the traits of the binary it holds.
#   Deploy/container/build-image.sh .build/release/concierge
# A dynamically linked (debug) binary works too: the Swift runtime libraries it loads (found with ldd, outside the
# system's library directories, e.g. under /opt/swift) are copied into the image. A `concierge-worker` beside BINARY
# is copied as well (a pool then runs it instead of `concierge worker`).
#
# Needs root (debootstrap), debootstrap and podman with runc (Scripts/setup installs them). Environment:
#   CONCIERGE_ROOTFS_CACHE   a directory where the base root filesystem's tarball is kept: a second build on the same
#                            machine skips debootstrap (about 30 s). Unset: built afresh in a temporary directory.
#   CONCIERGE_DEBIAN_SUITE   the Debian suite (default: the host's VERSION_CODENAME from /etc/os-release)
#   CONCIERGE_DEBIAN_MIRROR  the Debian mirror (default: the host's apt source, else http://deb.debian.org/debian)
#   CONCIERGE_PODMAN_ROOT    a private podman state directory (storage, run state, temporary files), as the tests
#                            use; unset: podman's defaults
#   CONCIERGE_OCI_RUNTIME    the OCI runtime (default: runc; crun fails on hosts whose cgroups are in hybrid mode)
#   CONCIERGE_STRIP=1        strip the executables' symbol tables in the image (the release binary: 155 MB -> 80 MB;
#                            a crash's backtrace then shows addresses instead of function names)
set -euo pipefail

usage() { echo "usage: $0 BINARY [IMAGE]" >&2; exit 64; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
binary=$(readlink -f "$1")
image=${2:-localhost/concierge:latest}
here=$(cd "$(dirname "$0")" && pwd)
[ -f "$binary" ] && [ -x "$binary" ] || { echo "build-image: $1 is not an executable file" >&2; exit 66; }
for tool in podman debootstrap ldd; do
  command -v "$tool" >/dev/null || { echo "build-image: $tool is missing (run Scripts/setup)" >&2; exit 69; }
done
[ "$(id -u)" -eq 0 ] || { echo "build-image: debootstrap needs root" >&2; exit 77; }

# The runtime packages: libzmq5 (with libsodium for CURVE), SQLite for the journal, CA certificates for a
# PostgreSQL journal over TLS. Everything else comes with debootstrap's minbase variant.
packages=libzmq5,libsqlite3-0,ca-certificates
# shellcheck disable=SC1091
suite=${CONCIERGE_DEBIAN_SUITE:-$(. /etc/os-release && echo "${VERSION_CODENAME:-}")}
if [ -z "$suite" ]; then
  echo "build-image: no VERSION_CODENAME in /etc/os-release; set CONCIERGE_DEBIAN_SUITE" >&2
  exit 78
fi
mirror=${CONCIERGE_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  # The host's own mirror: deb822 sources (bookworm's default), else the one-line format.
  mirror=$(sed -n 's/^URIs: *\([^ ]*debian\/\{0,1\}\)$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null \
    | head -n1 || true)
  [ -n "$mirror" ] ||
    mirror=$(awk '$1 == "deb" && $2 ~ /debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$mirror" ] || mirror=http://deb.debian.org/debian
fi
arch=$(dpkg --print-architecture)

podman=(podman --runtime "${CONCIERGE_OCI_RUNTIME:-runc}")
if [ -n "${CONCIERGE_PODMAN_ROOT:-}" ]; then
  mkdir -p "$CONCIERGE_PODMAN_ROOT"/{storage,run,tmp}
  podman+=(--root "$CONCIERGE_PODMAN_ROOT/storage" --runroot "$CONCIERGE_PODMAN_ROOT/run"
           --tmpdir "$CONCIERGE_PODMAN_ROOT/tmp" --events-backend file)
  export TMPDIR="$CONCIERGE_PODMAN_ROOT/tmp"  # buildah's scratch space for the build
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/concierge-image.XXXXXX")
trap 'rm -rf "$work"' EXIT

# 1. The base root filesystem, as a tarball (cached when CONCIERGE_ROOTFS_CACHE is set).
cache=${CONCIERGE_ROOTFS_CACHE:-$work/cache}
mkdir -p "$cache"
# The name changes with the recipe (its revision below, the packages), so a cached tarball never outlives it.
revision=2
tarball="$cache/debian-$suite-$arch-minbase-$(echo "$packages" | tr ',' '+')-r$revision.tar"
if [ -s "$tarball" ]; then
  echo "build-image: base root filesystem from the cache: $tarball" >&2
else
  start=$SECONDS
  echo "build-image: debootstrap --variant=minbase $suite from $mirror (with $packages)" >&2
  rootfs="$work/rootfs"
  if ! debootstrap --variant=minbase --arch="$arch" --include="$packages" "$suite" "$rootfs" "$mirror" \
      >"$work/debootstrap.log" 2>&1; then
    tail -n 30 "$work/debootstrap.log" >&2
    echo "build-image: debootstrap failed (full log above)" >&2
    exit 1
  fi
  # What an image needs no more: downloaded packages, package lists, documentation, translations.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
    "$rootfs"/usr/share/man/* "$rootfs"/usr/share/info/* "$rootfs"/usr/share/locale/* "$rootfs"/var/log/*.log \
    "$rootfs"/var/cache/debconf/*-old
  # The build host's name and resolver: podman provides the container's own.
  rm -f "$rootfs"/etc/hostname "$rootfs"/etc/resolv.conf
  tar --numeric-owner --xattrs -C "$rootfs" -cf "$tarball.part" .
  mv "$tarball.part" "$tarball"
  rm -rf "$rootfs"
  echo "build-image: base root filesystem built in $((SECONDS - start)) s ($(du -h "$tarball" | cut -f1))" >&2
fi
base="localhost/concierge-base:$suite"
"${podman[@]}" import --quiet --message "debootstrap --variant=minbase $suite ($packages)" "$tarball" "$base" >/dev/null

# 2. The build context: the binaries and, for a dynamically linked binary, the Swift runtime libraries it loads.
mkdir -p "$work/context/bin" "$work/context/lib"
cp "$here/Containerfile" "$work/context/Containerfile"
cp "$binary" "$work/context/bin/concierge"
executables=("$binary")
if [ -x "$(dirname "$binary")/concierge-worker" ]; then
  cp "$(dirname "$binary")/concierge-worker" "$work/context/bin/concierge-worker"
  executables+=("$(dirname "$binary")/concierge-worker")
fi
for exe in "${executables[@]}"; do
  if ldd "$exe" | grep -q 'not found'; then
    ldd "$exe" | grep 'not found' >&2
    echo "build-image: $exe needs libraries this host lacks" >&2
    exit 1
  fi
  # Libraries resolved outside the system's directories are the toolchain's (the Swift runtime): the base image has
  # the system's own (libzmq5, libsqlite3-0, libstdc++6...).
  ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
    case "$lib" in
      /lib/* | /lib64/* | /usr/lib/* | /usr/lib64/*) ;;
      *) cp -L "$lib" "$work/context/lib/" ;;
    esac
  done
done
if [ "${CONCIERGE_STRIP:-0}" = 1 ]; then
  strip "$work/context/bin/"*
fi
swift_libs=$(find "$work/context/lib" -type f | wc -l)
if [ "$swift_libs" -gt 0 ]; then
  echo "build-image: dynamically linked: copying $swift_libs Swift runtime libraries" >&2
fi

# 3. The image.
# The binary's package traits (README "Build options"), as a label: `concierge version --json` of a build without
# the command (older than issue 45) leaves it `unknown`.
traits=$("$binary" version --json 2>/dev/null | python3 -c 'import json, sys
print(",".join(sorted(k for k, v in json.load(sys.stdin)["traits"].items() if v)) or "none")' 2>/dev/null || echo unknown)
"${podman[@]}" build --quiet --pull=never --build-arg "BASE=$base" --build-arg "TRAITS=$traits" --tag "$image" \
  "$work/context" >/dev/null
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$image")
echo "build-image: built $image ($((size / 1000000)) MB)" >&2
