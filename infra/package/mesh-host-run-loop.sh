#!/bin/sh
# What systemd does for mesh-host.service, for machines without it (a container): run the
# host, run the installation's rollback step after every exit (the unit's ExecStopPost), and
# start it again (Restart=always, RestartSec=2). SIGTERM or SIGINT stops the host and the loop.
# Needs only sh and coreutils. Run it as the container's command under an init that reaps
# (tini, dumb-init, `docker run --init`).
# usage: mesh-host-run-loop BINARY [STATE_DIR]
set -u

bin="${1:?usage: mesh-host-run-loop BINARY [STATE_DIR]}"
state="${2:-/var/lib/mesh-host}"
rollback="$(dirname "$0")/mesh-host-rollback"
child=""

stop() {
  [ -n "$child" ] && kill -TERM "$child" 2>/dev/null
  [ -n "$child" ] && wait "$child"
  "$rollback" "$state" "$bin" || true
  exit 0
}
trap stop TERM INT

while :; do
  "$bin" run --state-dir "$state" &
  child=$!
  wait "$child"
  status=$?
  child=""
  echo "mesh-host-run-loop: mesh-host exited with status $status; restarting in 2 s" >&2
  "$rollback" "$state" "$bin" || echo "mesh-host-run-loop: the rollback step failed" >&2
  sleep 2 &
  wait $!
done
