#!/usr/bin/env bash
# PgBouncer in front of the shared PostgreSQL (127.0.0.1:5432, database test), for the test matrix's
# "pgbouncer" and "pgbouncer_session" entries. One pgbouncer process, its own directory and port,
# three databases that all lead to the same PostgreSQL database "test":
#   test          pool_mode=transaction, pool_size 20   (HOLDFAST_PGBOUNCER_URL)
#   test_session  pool_mode=session,     pool_size 40   (HOLDFAST_PGBOUNCER_SESSION_URL)
#   test_single   pool_mode=transaction, pool_size 1    (two clients take turns on one server connection)
#   test_all      pool_mode=transaction, pool_size 20   (holdfast-ha-tests' pass of every core test: server
#                                                        connections of its own, apart from the other modules')
#
#   scripts/pgbouncer.sh up       start (fast if running); fails, never hangs, if it cannot
#   scripts/pgbouncer.sh down     stop it and delete its directory
#   scripts/pgbouncer.sh status   one line; exit 1 unless it accepts connections
#
# Installs nothing: needs /usr/sbin/pgbouncer (Debian: apt-get install -y pgbouncer) and psql. PgBouncer
# refuses to run as root, so as root it runs as user postgres (HOLDFAST_PGBOUNCER_USER). Settings:
# HOLDFAST_PGBOUNCER_PORT (6432), HOLDFAST_PGBOUNCER_DIR (/tmp/holdfast-pgbouncer),
# HOLDFAST_PGBOUNCER_UPSTREAM_PORT (5432).
set -euo pipefail
# The servers it starts run as another user, who may not enter the caller's directory (a clone made by
# mktemp -d is 0700): nothing here depends on it.
cd /

PORT=${HOLDFAST_PGBOUNCER_PORT:-6432}
DIR=${HOLDFAST_PGBOUNCER_DIR:-/tmp/holdfast-pgbouncer}
UPSTREAM_PORT=${HOLDFAST_PGBOUNCER_UPSTREAM_PORT:-5432}
RUN_AS=${HOLDFAST_PGBOUNCER_USER:-postgres}
CONF=$DIR/pgbouncer.ini
PIDFILE=$DIR/pgbouncer.pid
LOGFILE=$DIR/pgbouncer.log

die() { echo "pgbouncer.sh: $*" >&2; exit 1; }

binary() {
  command -v pgbouncer 2>/dev/null || { [ -x /usr/sbin/pgbouncer ] && echo /usr/sbin/pgbouncer; } || true
}

ready() {
  # the admin console answers only once pgbouncer listens; SHOW VERSION needs no server connection
  psql -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SHOW VERSION" pgbouncer >/dev/null 2>&1
}

pid() {
  cat "$PIDFILE" 2>/dev/null || true
}

running() {
  local p; p=$(pid)
  [ -n "$p" ] && kill -0 "$p" 2>/dev/null
}

# as root, commands run as $RUN_AS (pgbouncer refuses root); otherwise as the caller
as_owner() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$RUN_AS" -- "$@"
  else
    "$@"
  fi
}

write_config() {
  mkdir -p "$DIR"
  # trust: the shared PostgreSQL trusts loopback too; pgbouncer still wants the user in the auth file
  printf '"postgres" ""\n' >"$DIR/userlist.txt"
  cat >"$CONF" <<EOF
[databases]
test = host=127.0.0.1 port=$UPSTREAM_PORT dbname=test pool_mode=transaction pool_size=20
test_session = host=127.0.0.1 port=$UPSTREAM_PORT dbname=test pool_mode=session pool_size=40
test_single = host=127.0.0.1 port=$UPSTREAM_PORT dbname=test pool_mode=transaction pool_size=1
test_all = host=127.0.0.1 port=$UPSTREAM_PORT dbname=test pool_mode=transaction pool_size=20

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $PORT
unix_socket_dir =
auth_type = trust
auth_file = $DIR/userlist.txt
admin_users = postgres
stats_users = postgres
pidfile = $PIDFILE
logfile = $LOGFILE
max_client_conn = 1000
default_pool_size = 20
reserve_pool_size = 0
; pgjdbc sets these at connect; pgbouncer must let them through
ignore_startup_parameters = extra_float_digits,options
server_reset_query = DISCARD ALL
server_check_delay = 10
; idle server connections close after 30 s: the later, direct tests of a build need PostgreSQL's connection slots
server_idle_timeout = 30
; a client that waits for a server connection longer than this gets an error instead of hanging
query_wait_timeout = 60
EOF
  if [ "$(id -u)" = 0 ]; then
    chown -R "$RUN_AS" "$DIR"
  fi
}

up() {
  local bin; bin=$(binary)
  [ -n "$bin" ] || die "pgbouncer is not installed. Install it with: apt-get install -y pgbouncer
(Debian's package also enables a systemd service on port 6432; this script runs its own process instead)"
  command -v psql >/dev/null 2>&1 || die "psql is missing (apt-get install -y postgresql-client)"
  if [ "$(id -u)" = 0 ]; then
    id -u "$RUN_AS" >/dev/null 2>&1 || die "user $RUN_AS does not exist: pgbouncer refuses to run as root,
so set HOLDFAST_PGBOUNCER_USER to an unprivileged user"
  fi
  if running && ready; then
    return 0
  fi
  running && down
  pg_isready -q -h 127.0.0.1 -p "$UPSTREAM_PORT" \
    || die "PostgreSQL on 127.0.0.1:$UPSTREAM_PORT does not accept connections: start it first"
  if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
    die "port $PORT is taken by another process (see: ss -ltnp | grep :$PORT); set HOLDFAST_PGBOUNCER_PORT"
  fi
  write_config
  as_owner "$bin" -d -q "$CONF" || { tail -n 20 "$LOGFILE" >&2 2>/dev/null || true; die "pgbouncer did not start"; }
  for _ in $(seq 1 100); do
    ready && break
    sleep 0.1
  done
  ready || { tail -n 20 "$LOGFILE" >&2 2>/dev/null || true; down; die "pgbouncer on port $PORT did not accept connections within 10 s"; }
  # through the pooler to the server: fails at once if the upstream database is wrong
  psql -h 127.0.0.1 -p "$PORT" -U postgres -tAc "SELECT 1" test >/dev/null \
    || die "pgbouncer runs but cannot reach database test on 127.0.0.1:$UPSTREAM_PORT (see $LOGFILE)"
  echo "pgbouncer: running on 127.0.0.1:$PORT (pid $(pid), $(psql -h 127.0.0.1 -p "$PORT" -U postgres -tAc 'SHOW VERSION' pgbouncer))"
}

down() {
  local p; p=$(pid)
  if [ -n "$p" ] && kill -0 "$p" 2>/dev/null; then
    kill -INT "$p"   # SIGINT: immediate shutdown, client connections are closed
    for _ in $(seq 1 100); do
      kill -0 "$p" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$p" 2>/dev/null; then
      kill -KILL "$p" 2>/dev/null || true
    fi
  fi
  rm -rf "$DIR"
}

status() {
  if running && ready; then
    echo "pgbouncer: running on 127.0.0.1:$PORT (pid $(pid), directory $DIR)"
  elif running; then
    echo "pgbouncer: pid $(pid) does not accept connections on 127.0.0.1:$PORT"; return 1
  elif [ -z "$(binary)" ]; then
    echo "pgbouncer: not installed (apt-get install -y pgbouncer)"; return 1
  else
    echo "pgbouncer: stopped"; return 1
  fi
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) die "usage: $0 up|down|status" ;;
esac
