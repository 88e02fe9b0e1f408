#!/bin/sh
# Installs mesh-host from this tarball. Needs only sh, tar and coreutils.
# usage: sh install.sh [--root DIR]   (DIR: a sandbox root; default /)
set -eu

root=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --root=*) root="${1#--root=}"; shift ;;
    -h|--help) echo "usage: sh install.sh [--root DIR]"; exit 0 ;;
    *) echo "install.sh: unknown argument: $1" >&2; exit 2 ;;
  esac
done

here=$(dirname "$0")
bindir="$root/usr/local/bin"
libdir="$root/usr/local/lib/mesh-host"
unitdir="$root/etc/systemd/system"
statedir="$root/var/lib/mesh-host"

mkdir -p "$bindir" "$libdir" "$unitdir" "$statedir"
chmod 0700 "$statedir"

# Copy beside, then rename: a running host keeps its inode, a crash leaves no half file.
cp "$here/mesh-host" "$bindir/.mesh-host.new"
chmod 0755 "$bindir/.mesh-host.new"
sync "$bindir/.mesh-host.new"
mv -f "$bindir/.mesh-host.new" "$bindir/mesh-host"
# The unit's rollback step for self-upgrade (ExecStopPost).
cp "$here/mesh-host-rollback" "$libdir/.mesh-host-rollback.new"
chmod 0755 "$libdir/.mesh-host-rollback.new"
mv -f "$libdir/.mesh-host-rollback.new" "$libdir/mesh-host-rollback"
# What systemd does for the unit, for machines without it (restart on every exit, the rollback step).
cp "$here/mesh-host-run-loop" "$libdir/.mesh-host-run-loop.new"
chmod 0755 "$libdir/.mesh-host-run-loop.new"
mv -f "$libdir/.mesh-host-run-loop.new" "$libdir/mesh-host-run-loop"
cp "$here/mesh-host.service" "$unitdir/mesh-host.service"
chmod 0644 "$unitdir/mesh-host.service"

echo "installed $bindir/mesh-host and $unitdir/mesh-host.service"
if [ -z "$root" ] && [ -d /run/systemd/system ]; then
  systemctl daemon-reload
  systemctl enable --now mesh-host.service
  echo "mesh-host.service is enabled and running; enrol with: mesh-host enrol URL --token T --ca-pin sha256:..."
else
  echo "systemd is not running here: start the host with '${libdir#$root}/mesh-host-run-loop ${bindir#$root}/mesh-host'"
  echo "(it restarts the host on every exit and rolls back a failed self-upgrade, as the unit does; run it under an init that reaps, e.g. tini)"
  echo "then enrol with: mesh-host enrol URL --token T --ca-pin sha256:..."
fi
