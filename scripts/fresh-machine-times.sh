#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Times a README command (scripts/quickstart.sh or scripts/test.sh) the way a newcomer meets it:
# on a bare Debian 12 (a minimal debootstrap root, nothing installed), from the committed tree of
# this checkout, so that the package installation, the build and the run all count.
#
#   sudo scripts/fresh-machine-times.sh quickstart|test [WORK_DIR]
#
# Needs root (debootstrap, chroot, bind mounts) and Debian's mirror. WORK_DIR (default
# /var/tmp/gemmtune-fresh) keeps a pristine root between runs (base.tar), so only the first run
# pays for debootstrap; each run starts from a fresh copy of it. Prints the command's own output
# and "<command>: <seconds> s on <cores> cores".
set -euo pipefail
what="${1:-}"
case "$what" in
  quickstart | test) ;;
  *)
    echo "usage: $0 quickstart|test [WORK_DIR]" >&2
    exit 2
    ;;
esac
[[ $(id -u) -eq 0 ]] || { echo "fresh-machine-times: needs root (debootstrap, chroot)" >&2; exit 2; }
root_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${2:-/var/tmp/gemmtune-fresh}"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$work"

if [[ ! -f "$work/base.tar" ]]; then
  command -v debootstrap >/dev/null || apt-get install -y -q debootstrap >/dev/null
  rm -rf "$work/base"
  debootstrap --variant=minbase bookworm "$work/base" "$mirror" >"$work/debootstrap.log"
  tar -C "$work/base" -cf "$work/base.tar.tmp" . && mv "$work/base.tar.tmp" "$work/base.tar"
  rm -rf "$work/base"
fi

machine="$work/machine"
unmount() {
  for m in dev sys proc; do umount "$machine/$m" 2>/dev/null || true; done
}
trap unmount EXIT
unmount
rm -rf "$machine"
mkdir -p "$machine"
tar -C "$machine" -xf "$work/base.tar"
for m in proc sys dev; do mount --bind "/$m" "$machine/$m"; done
cp /etc/resolv.conf "$machine/etc/resolv.conf"
git -C "$root_dir" archive --prefix=gemmtune/ HEAD | tar -x -C "$machine/root"

start=$(date +%s)
status=0
chroot "$machine" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  bash -c "cd /root/gemmtune && scripts/$what.sh" || status=$?
echo "$what: $(($(date +%s) - start)) s on $(nproc) cores (exit $status)"
exit "$status"
