#!/usr/bin/env bash
# A Patroni-managed PostgreSQL pair for the HA fault tests: one etcd member and two Patroni nodes, all
# on loopback, with their own ports and directories (never the shared 5432 cluster, the fault servers
# 5433/3307 or the replica pair 5434/5435):
#   etcd          client 127.0.0.1:2479, peer 127.0.0.1:2480
#   node1, node2  PostgreSQL 127.0.0.1:5446 / 5447, Patroni REST API 127.0.0.1:8108 / 8109, database test
# Applications reach whichever node leads through HOLDFAST_PATRONI_URL (default
# jdbc:postgresql://127.0.0.1:5446,127.0.0.1:5447/test?targetServerType=primary).
#
#   scripts/patroni.sh up [sync|async]  a fresh cluster (any old one is removed first); sync: Patroni's
#                                       synchronous_mode is on (not strict: a
#                                       leader alone runs on rather than block, and only a synchronous replica is promoted)
#   scripts/patroni.sh down             stop everything and delete its directory
#   scripts/patroni.sh status           patronictl list; exit 1 unless a leader runs and a replica streams
#   scripts/patroni.sh leader           the leader's name (node1 or node2)
#   scripts/patroni.sh wait-healthy     waits until a leader accepts writes and the other node streams from it
#   scripts/patroni.sh kill-postmaster  kill -9 the leader's postmaster (Patroni restarts or fails over)
#   scripts/patroni.sh stop-patroni     stop the leader's Patroni (SIGTERM: it stops its PostgreSQL, gives up the lead)
#   scripts/patroni.sh start-patroni    start a stopped node's Patroni again (it rejoins as a replica)
#   scripts/patroni.sh switchover       patronictl switchover to the replica (planned, graceful)
#   scripts/patroni.sh failover         patronictl failover to the replica (forced promotion)
#   scripts/patroni.sh stall [seconds]  SIGSTOP the leader's Patroni and PostgreSQL processes for seconds (default:
#                                       one DCS TTL and 3 s more, so the replica takes over), then SIGCONT them
#
# Patroni talks to etcd through its v2 API (etcd runs with --enable-v2): Debian's Patroni 3.0.2 has an etcd3
# bug (patroni#2779, fixed later) where, after the leader stalls, its cached revision of the sync key goes stale
# and it never again assigns a synchronous standby ("Synchronous replication key updated by someone else").
# Timing (bootstrap DCS settings): ttl 10 s, loop_wait 1 s, retry_timeout 3 s: a dead leader's key expires
# within 10 s. Needs root (the nodes run as user postgres) and Debian's packages patroni (3.0) and
# etcd-server (3.4): apt-get install -y patroni etcd-server. Directory: HOLDFAST_PATRONI_DIR (/tmp/holdfast-patroni).
set -euo pipefail
# The servers it starts run as another user, who may not enter the caller's directory (a clone made by
# mktemp -d is 0700): nothing here depends on it.
cd /

DIR=${HOLDFAST_PATRONI_DIR:-/tmp/holdfast-patroni}
RUN_AS=postgres
ETCD_CLIENT=2479
ETCD_PEER=2480
TTL=10
SCOPE=holdfast
declare -A PG_PORT=([node1]=5446 [node2]=5447)
declare -A API_PORT=([node1]=8108 [node2]=8109)

die() { echo "patroni.sh: $*" >&2; exit 1; }
log() { echo "patroni.sh: $*"; }

need() {
  command -v patroni >/dev/null 2>&1 || die "patroni is not installed (Debian: apt-get install -y patroni etcd-server)"
  command -v etcd >/dev/null 2>&1 || die "etcd is not installed (Debian: apt-get install -y etcd-server)"
  [ "$(id -u)" = 0 ] || die "run as root (the nodes run as user $RUN_AS)"
  [ -x "$(bin_dir)/postgres" ] || die "no PostgreSQL server binaries under $(bin_dir)"
}

bin_dir() { echo "/usr/lib/postgresql/$(ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1)/bin"; }

as_owner() { runuser -u "$RUN_AS" -- "$@"; }

ctl() { patronictl -c "$DIR/node1.yml" "$@"; }

pid_of() { cat "$DIR/$1.pid" 2>/dev/null || true; }

alive() { local p; p=$(pid_of "$1"); [ -n "$p" ] && kill -0 "$p" 2>/dev/null; }

# node's REST API: GET /<path>, prints the body; fails unless 200
api() { curl -fsS --max-time 1 "http://127.0.0.1:${API_PORT[$1]}/$2" 2>/dev/null; }

leader() {
  local n
  for n in node1 node2; do
    api "$n" primary >/dev/null && { echo "$n"; return 0; }
  done
  return 1
}

other() { [ "$1" = node1 ] && echo node2 || echo node1; }

write_etcd() {
  mkdir -p "$DIR/etcd"
  chown -R "$RUN_AS": "$DIR"
}

start_etcd() {
  alive etcd && return 0
  # the process writes its own pid (exec keeps it); nothing of it holds the caller's stdout open
  as_owner sh -c "echo \$\$ >'$DIR/etcd.pid'; exec etcd --name holdfast --data-dir '$DIR/etcd' \
    --listen-client-urls http://127.0.0.1:$ETCD_CLIENT --advertise-client-urls http://127.0.0.1:$ETCD_CLIENT \
    --listen-peer-urls http://127.0.0.1:$ETCD_PEER --initial-advertise-peer-urls http://127.0.0.1:$ETCD_PEER \
    --initial-cluster holdfast=http://127.0.0.1:$ETCD_PEER --initial-cluster-state new \
    --heartbeat-interval 100 --election-timeout 1000 --enable-v2=true >'$DIR/etcd.log' 2>&1" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 100); do
    [ -s "$DIR/etcd.pid" ] || { sleep 0.1; continue; }
    curl -fsS --max-time 1 "http://127.0.0.1:$ETCD_CLIENT/health" 2>/dev/null | grep -q '"health":"true"' && return 0
    alive etcd || break
    sleep 0.1
  done
  tail -n 20 "$DIR/etcd.log" >&2 || true
  die "etcd did not become healthy on 127.0.0.1:$ETCD_CLIENT"
}

write_node() { # name, mode
  local name=$1 sync=false
  [ "$2" = sync ] && sync=true
  cat >"$DIR/$name.yml" <<EOF
scope: $SCOPE
name: $name
log:
  level: INFO
  dir: $DIR/$name-log
restapi:
  listen: 127.0.0.1:${API_PORT[$name]}
  connect_address: 127.0.0.1:${API_PORT[$name]}
etcd:
  hosts: 127.0.0.1:$ETCD_CLIENT
ctl:
  insecure: true
bootstrap:
  dcs:
    ttl: $TTL
    loop_wait: 1
    retry_timeout: 3
    maximum_lag_on_failover: 1073741824
    synchronous_mode: $sync
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        wal_level: replica
        hot_standby: "on"
        wal_log_hints: "on"
        max_wal_senders: 10
        max_replication_slots: 10
        max_connections: 100
        wal_keep_size: 128MB
  initdb:
    - encoding: UTF8
    - locale: C
  pg_hba:
    - local all all trust
    - host replication all 127.0.0.1/32 trust
    - host all all 127.0.0.1/32 trust
postgresql:
  listen: 127.0.0.1:${PG_PORT[$name]}
  connect_address: 127.0.0.1:${PG_PORT[$name]}
  data_dir: $DIR/$name
  bin_dir: $(bin_dir)
  pgpass: $DIR/$name.pgpass
  basebackup:
    - checkpoint: fast
  authentication:
    superuser: {username: postgres, password: postgres}
    replication: {username: postgres, password: postgres}
    rewind: {username: postgres, password: postgres}
  parameters:
    unix_socket_directories: $DIR
tags: {}
EOF
  mkdir -p "$DIR/$name-log"
  chown -R "$RUN_AS": "$DIR"
}

start_node() {
  alive "$1" && return 0
  as_owner sh -c "echo \$\$ >'$DIR/$1.pid'; exec patroni '$DIR/$1.yml' >>'$DIR/$1.out' 2>&1" </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 50); do [ -s "$DIR/$1.pid" ] && return 0; sleep 0.1; done
  die "Patroni of $1 did not start"
}

wait_healthy() { # a leader that takes writes and a replica that streams from it (sync: is the synchronous one)
  local l r deadline=$((SECONDS + ${1:-60}))
  while [ $SECONDS -lt $deadline ]; do
    if l=$(leader); then
      r=$(other "$l")
      if api "$r" replica >/dev/null \
          && psql -h 127.0.0.1 -p "${PG_PORT[$l]}" -U postgres -tAXc \
            "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'" postgres 2>/dev/null | grep -qx 1 \
          && psql -h 127.0.0.1 -p "${PG_PORT[$l]}" -U postgres -tAXc "SELECT NOT pg_is_in_recovery()" postgres 2>/dev/null \
            | grep -qx t; then
        if ! grep -q 'synchronous_mode: true' "$DIR/node1.yml" || api "$r" sync >/dev/null; then
          return 0
        fi
      fi
    fi
    sleep 0.2
  done
  ctl list >&2 || true
  die "no healthy leader with a streaming replica within ${1:-60} s (logs: $DIR/*.out, $DIR/*-log)"
}

up() {
  local mode=${1:-sync}
  case "$mode" in sync|async) ;; *) die "usage: $0 up [sync|async]" ;; esac
  need
  down
  write_etcd
  start_etcd
  write_node node1 "$mode"
  write_node node2 "$mode"
  start_node node1
  # node1 bootstraps the cluster; node2 then clones it
  for _ in $(seq 1 300); do api node1 primary >/dev/null && break; alive node1 || break; sleep 0.2; done
  api node1 primary >/dev/null || { tail -n 30 "$DIR/node1.out" >&2 || true; die "node1 did not bootstrap a primary"; }
  psql -q -h 127.0.0.1 -p "${PG_PORT[node1]}" -U postgres -c "CREATE DATABASE test" postgres
  start_node node2
  wait_healthy 90
  log "$mode cluster up: leader $(leader), URL jdbc:postgresql://127.0.0.1:${PG_PORT[node1]},127.0.0.1:${PG_PORT[node2]}/test?targetServerType=primary"
}

down() {
  local n p
  for n in node1 node2; do
    p=$(pid_of "$n")
    if [ -n "$p" ]; then
      kill -CONT "$p" 2>/dev/null || true
      kill -TERM "$p" 2>/dev/null || true
    fi
  done
  for n in node1 node2; do
    p=$(pid_of "$n")
    for _ in $(seq 1 100); do { [ -n "$p" ] && kill -0 "$p" 2>/dev/null; } || break; sleep 0.1; done
    [ -n "$p" ] && kill -KILL "$p" 2>/dev/null || true
    # a postmaster left behind (Patroni killed hard): stop it by its pid file
    if [ -f "$DIR/$n/postmaster.pid" ]; then
      p=$(head -n 1 "$DIR/$n/postmaster.pid")
      kill -CONT "$p" 2>/dev/null || true
      kill -QUIT "$p" 2>/dev/null || true
      for _ in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    fi
  done
  # the runuser wrappers left (one stopped by a stall would never exit by itself)
  for p in $(pgrep -f "runuser -u $RUN_AS -- sh -c echo .* >'$DIR/" || true); do
    kill -CONT "$p" 2>/dev/null || true
    kill -KILL "$p" 2>/dev/null || true
  done
  p=$(pid_of etcd)
  if [ -n "$p" ]; then
    kill -TERM "$p" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "${DIR:?}"
}

postmaster_pid() { head -n 1 "$DIR/$1/postmaster.pid"; }

kill_postmaster() {
  local l; l=$(leader) || die "no leader"
  kill -KILL "$(postmaster_pid "$l")"
  log "killed the postmaster of $l"
}

stop_patroni() {
  local l p; l=$(leader) || die "no leader"
  p=$(pid_of "$l")
  kill -TERM "$p"
  for _ in $(seq 1 300); do kill -0 "$p" 2>/dev/null || { log "stopped Patroni of $l"; return 0; }; sleep 0.1; done
  die "Patroni of $l did not stop"
}

start_patroni() {
  local n
  for n in node1 node2; do alive "$n" || { start_node "$n"; log "started Patroni of $n"; }; done
}

switchover() {
  local l; l=$(leader) || die "no leader"
  ctl switchover --leader "$l" --candidate "$(other "$l")" --force "$SCOPE" >/dev/null
  log "switched over from $l to $(other "$l")"
}

failover() {
  local l; l=$(leader) || die "no leader"
  ctl failover --candidate "$(other "$l")" --force "$SCOPE" >/dev/null
  log "failed over from $l to $(other "$l")"
}

stall() {
  local l seconds=${1:-$((TTL + 3))} pids
  l=$(leader) || die "no leader"
  pids="$(pid_of "$l") $(pgrep -d ' ' -P "$(postmaster_pid "$l")") $(postmaster_pid "$l")"
  # shellcheck disable=SC2086
  kill -STOP $pids
  log "stalled $l (Patroni and PostgreSQL) for $seconds s"
  sleep "$seconds"
  # shellcheck disable=SC2086
  kill -CONT $pids 2>/dev/null || true
  # runuser, Patroni's parent, stopped itself when its child stopped (as su does): it must go on too, or it
  # never reaps Patroni after it exits
  kill -CONT "$(ps -o ppid= -p "$(pid_of "$l")" | tr -d ' ')" 2>/dev/null || true
  log "resumed $l"
}

status() {
  ctl list || true
  local l; l=$(leader) || return 1
  api "$(other "$l")" replica >/dev/null
}

case "${1:-}" in
  up) up "${2:-sync}" ;;
  down) down ;;
  status) status ;;
  leader) leader ;;
  wait-healthy) wait_healthy "${2:-60}" ;;
  kill-postmaster) kill_postmaster ;;
  stop-patroni) stop_patroni ;;
  start-patroni) start_patroni ;;
  switchover) switchover ;;
  failover) failover ;;
  stall) stall "${2:-}" ;;
  *) die "usage: $0 up [sync|async]|down|status|leader|wait-healthy [s]|kill-postmaster|stop-patroni|start-patroni|switchover|failover|stall [s]" ;;
esac
