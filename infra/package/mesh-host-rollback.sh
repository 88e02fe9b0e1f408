#!/bin/sh
# The installation's half of self-upgrade rollback, run after every exit of mesh-host
# (the unit's ExecStopPost): a freshly upgraded binary that exits before it reached the
# control plane (even one that dies before running any code) is replaced by BINARY.prev.
# The host never runs this and never touches its unit. Needs only sh and coreutils.
# usage: mesh-host-rollback STATE_DIR BINARY
set -eu

state="${1:?usage: mesh-host-rollback STATE_DIR BINARY}"
bin="${2:?usage: mesh-host-rollback STATE_DIR BINARY}"
# The host upgrades the file a symlink names, so the script looks there too.
bin=$(readlink -f "$bin" || echo "$bin")
# Written by the host before it renames the new binary over BINARY; removed when the new one reaches the control plane.
crumb="$state/upgrade.json"
exited="$state/upgrade.exited"

[ -f "$crumb" ] || exit 0

if [ ! -e "$exited" ]; then
  # The first exit after the rename is the old binary's (it exits 0 to be replaced);
  # from now on an exit is the new binary's, still on trial.
  : >"$exited"
  sync
  exit 0
fi

# The old binary reads this at its start and reports the upgrade as failed (without
# a reason field it knows this script did it), and does not try the same release again.
# Written first (a copy renamed into place), before .prev is moved back: a crash between the
# two never leaves the old binary back with no record of why (it would try the release again).
# A record that cannot be written (a full disk) never keeps .prev from coming back (the move
# needs no space): the copy's failure is said and passed over.
if cp -f "$crumb" "$state/.upgrade-failed.json.rollback" && sync &&
  mv -f "$state/.upgrade-failed.json.rollback" "$state/upgrade-failed.json"; then
  sync
else
  rm -f "$state/.upgrade-failed.json.rollback" 2>/dev/null || :
  echo "mesh-host-rollback: cannot record why the upgrade failed; putting $bin.prev back anyway" >&2
fi
if [ -f "$bin.prev" ]; then
  mv -f "$bin.prev" "$bin"
fi
rm -f "$crumb" "$exited"
sync
echo "mesh-host-rollback: the upgraded mesh-host exited before it reached the control plane; put $bin.prev back" >&2
exit 0
