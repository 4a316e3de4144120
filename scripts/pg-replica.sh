#!/usr/bin/env bash
# A PostgreSQL primary and hot standby for failover tests, separate from the shared server on 5432
# and the fault servers on 5433/3307 (never touched here):
#   cluster "holdfast_primary" (installed major version) on 127.0.0.1:5434, trust auth, db test
#   cluster "holdfast_standby" on 127.0.0.1:5435: pg_basebackup -R of the primary, streaming replication
#
#   scripts/pg-replica.sh up [sync|async]   a fresh pair (any old pair is dropped first); sync (default):
#                                           the standby is synchronous (synchronous_standby_names), so a
#                                           commit returns only after the standby has flushed it
#   scripts/pg-replica.sh down              stop both and delete them completely
#   scripts/pg-replica.sh stop-primary      stop the primary hard (SIGQUIT, as pg_ctl stop -m immediate)
#   scripts/pg-replica.sh promote           promote the standby (waits until it accepts writes)
#   scripts/pg-replica.sh failover          stop-primary, then promote
#   scripts/pg-replica.sh cut-standby       end the standby's WAL stream for good (primary_conninfo leads nowhere), so
#                                           that an asynchronous failover right after loses what follows
#   scripts/pg-replica.sh status            one line per cluster; exit 1 unless a primary runs
#
# Ports can be changed with HOLDFAST_REPLICA_PRIMARY_PORT and HOLDFAST_REPLICA_STANDBY_PORT, the clusters'
# names (<name>_primary, <name>_standby; default holdfast) with HOLDFAST_REPLICA_CLUSTERS; tests
# reach the pair through HOLDFAST_REPLICA_URL (default
# jdbc:postgresql://127.0.0.1:5434,127.0.0.1:5435/test?targetServerType=primary). Needs root.
set -euo pipefail
# The servers it starts run as another user, who may not enter the caller's directory (a clone made by
# mktemp -d is 0700): nothing here depends on it.
cd /
[ -n "${PG_REPLICA_TRACE:-}" ] && PS4='+ $(date +%s.%N) ' && set -x

CLUSTERS=${HOLDFAST_REPLICA_CLUSTERS:-holdfast}
PRIMARY=${CLUSTERS}_primary
STANDBY=${CLUSTERS}_standby
PRIMARY_PORT=${HOLDFAST_REPLICA_PRIMARY_PORT:-5434}
STANDBY_PORT=${HOLDFAST_REPLICA_STANDBY_PORT:-5435}

die() { echo "pg-replica: $*" >&2; exit 1; }

pg_version() {
  ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1
}

exists() { [ -d "/etc/postgresql/$(pg_version)/$1" ]; }

ready() { pg_isready -q -h 127.0.0.1 -p "$1"; }

in_recovery() {
  psql -h 127.0.0.1 -p "$1" -U postgres -tAXc "SELECT pg_is_in_recovery()" postgres 2>/dev/null
}

wait_ready() {
  for _ in $(seq 1 300); do
    ready "$1" && return 0
    sleep 0.1
  done
  die "PostgreSQL on port $1 did not become ready"
}

configure() { # cluster, extra settings
  local dir; dir="/etc/postgresql/$(pg_version)/$1/conf.d"
  mkdir -p "$dir"
  printf "listen_addresses = '127.0.0.1'\nwal_level = replica\nmax_wal_senders = 5\nhot_standby = on\n%s" "$2" \
    >"$dir/holdfast-replica.conf"
}

up() {
  local mode=${1:-sync} v; v=$(pg_version)
  [ -n "$v" ] || die "no PostgreSQL installed (/etc/postgresql is empty)"
  case "$mode" in sync|async) ;; *) die "usage: $0 up [sync|async]" ;; esac
  down
  pg_createcluster -q "$v" "$PRIMARY" -p "$PRIMARY_PORT" --start-conf=manual \
    -o max_connections=100 -- --auth-local=trust --auth-host=trust >/dev/null
  configure "$PRIMARY" ""
  pg_ctlcluster --skip-systemctl-redirect "$v" "$PRIMARY" start
  wait_ready "$PRIMARY_PORT"
  psql -q -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -c "CREATE DATABASE test" postgres

  pg_createcluster -q "$v" "$STANDBY" -p "$STANDBY_PORT" --start-conf=manual \
    -o max_connections=100 -- --auth-local=trust --auth-host=trust >/dev/null
  configure "$STANDBY" ""
  local data="/var/lib/postgresql/$v/$STANDBY"
  rm -rf "${data:?}"/*
  su postgres -c "pg_basebackup -h 127.0.0.1 -p $PRIMARY_PORT -U postgres -D '$data' -X stream -R -c fast \
    -d 'application_name=$STANDBY'" >/dev/null
  pg_ctlcluster --skip-systemctl-redirect "$v" "$STANDBY" start
  wait_ready "$STANDBY_PORT"
  if [ "$mode" = sync ]; then
    # only now (the CREATE DATABASE above would wait for it), and only on the primary: after a
    # promotion the new primary has no standby and must not wait for one
    printf "synchronous_standby_names = '%s'\nsynchronous_commit = on\n" "$STANDBY" \
      >>"/etc/postgresql/$v/$PRIMARY/conf.d/holdfast-replica.conf"
    pg_ctlcluster --skip-systemctl-redirect "$v" "$PRIMARY" reload
  fi
  # the standby streams (and, in sync mode, is the synchronous one) before up returns
  local want=async; [ "$mode" = sync ] && want=sync
  for _ in $(seq 1 300); do
    [ "$(psql -h 127.0.0.1 -p "$PRIMARY_PORT" -U postgres -tAXc \
      "SELECT sync_state FROM pg_stat_replication WHERE application_name = '$STANDBY' AND state = 'streaming'" postgres)" = "$want" ] \
      && { echo "pg-replica: $mode pair up: primary 127.0.0.1:$PRIMARY_PORT, standby 127.0.0.1:$STANDBY_PORT"; return 0; }
    sleep 0.1
  done
  die "the standby did not start streaming ($want)"
}

down() {
  local v c; v=$(pg_version)
  for c in "$STANDBY" "$PRIMARY"; do
    if exists "$c"; then
      pg_ctlcluster --skip-systemctl-redirect "$v" "$c" stop -m immediate 2>/dev/null || true
      pg_dropcluster "$v" "$c"
    fi
  done
}

stop_primary() { # SIGQUIT, as stop -m immediate sends, without pg_ctlcluster's start-up time
  exists "$PRIMARY" || die "no primary (run: $0 up)"
  local pidfile pid; pidfile="/var/lib/postgresql/$(pg_version)/$PRIMARY/postmaster.pid"
  [ -f "$pidfile" ] || die "the primary is not running"
  pid=$(head -n 1 "$pidfile")
  kill -QUIT "$pid"
  for _ in $(seq 1 600); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  die "the primary (pid $pid) did not stop"
}

promote() { # pg_promote waits until the standby accepts writes
  exists "$STANDBY" && ready "$STANDBY_PORT" || die "the standby is not running (run: $0 up)"
  [ "$(psql -h 127.0.0.1 -p "$STANDBY_PORT" -U postgres -tAXc "SELECT pg_promote(true, 60)" postgres)" = t ] \
    || die "the standby did not leave recovery"
}

cut_standby() { # ends the standby's WAL stream: what the primary commits from now on the standby never gets
  ready "$STANDBY_PORT" || die "the standby is not running (run: $0 up)"
  # a primary_conninfo that leads nowhere: the reload restarts the WAL receiver, which then cannot connect
  psql -q -h 127.0.0.1 -p "$STANDBY_PORT" -U postgres -tAX postgres \
    -c "ALTER SYSTEM SET primary_conninfo = 'host=127.0.0.1 port=1 connect_timeout=1'" -c "SELECT pg_reload_conf()" >/dev/null
  for _ in $(seq 1 200); do
    [ "$(psql -h 127.0.0.1 -p "$STANDBY_PORT" -U postgres -tAXc \
      "SELECT count(*) FROM pg_stat_wal_receiver WHERE status = 'streaming' AND sender_port = $PRIMARY_PORT" postgres)" = 0 ] && return 0
    sleep 0.05
  done
  die "the standby still streams from the primary"
}

status() {
  local rc=1 c port
  for c in "$PRIMARY:$PRIMARY_PORT" "$STANDBY:$STANDBY_PORT"; do
    port=${c#*:}; c=${c%%:*}
    if exists "$c" && ready "$port"; then
      if [ "$(in_recovery "$port")" = t ]; then
        echo "$c: standby on 127.0.0.1:$port"
      else
        echo "$c: primary on 127.0.0.1:$port"; rc=0
      fi
    elif exists "$c"; then
      echo "$c: stopped"
    else
      echo "$c: absent"
    fi
  done
  return $rc
}

case "${1:-}" in
  up) up "${2:-sync}" ;;
  down) down ;;
  stop-primary) stop_primary ;;
  promote) promote ;;
  failover) stop_primary; promote ;;
  cut-standby) cut_standby ;;
  status) status ;;
  *) die "usage: $0 up [sync|async]|down|stop-primary|promote|failover|cut-standby|status" ;;
esac
