#!/usr/bin/env bash
# Dedicated database servers for fault tests (restarts, stalls), separate from the shared ones on
# 5432/3306, which must never be restarted:
#   PostgreSQL cluster "holdfast_fault" (installed major version) on 127.0.0.1:5433, trust auth, db test
#   MariaDB server on 127.0.0.1:3307 with its own datadir, socket and pid file; root, empty password, db test
#
#   scripts/fault-servers.sh up                        create (first time) and start both; fast if running
#   scripts/fault-servers.sh down                      stop both and delete them completely
#   scripts/fault-servers.sh restart postgresql|mariadb  real restart: the server process exits, a new one starts
#   scripts/fault-servers.sh crash postgresql|mariadb    as restart, but the server dies without a shutdown
#                                                      (PostgreSQL: immediate stop; MariaDB: SIGKILL), then recovers
#   scripts/fault-servers.sh status                    one line per server; exit 1 unless both run
#
# Ports and locations can be changed with HOLDFAST_FAULT_PG_PORT, HOLDFAST_FAULT_MARIADB_PORT and
# HOLDFAST_FAULT_MARIADB_DIR. Needs root (creates a cluster, runs mariadbd as user mysql).
set -euo pipefail
# The servers it starts run as another user, who may not enter the caller's directory (a clone made by
# mktemp -d is 0700): nothing here depends on it.
cd /

PG_CLUSTER=holdfast_fault
PG_PORT=${HOLDFAST_FAULT_PG_PORT:-5433}
MARIADB_PORT=${HOLDFAST_FAULT_MARIADB_PORT:-3307}
MARIADB_DIR=${HOLDFAST_FAULT_MARIADB_DIR:-/var/lib/holdfast-fault-mariadb}
MARIADB_DATA=$MARIADB_DIR/data
MARIADB_SOCKET=$MARIADB_DIR/mariadbd.sock
MARIADB_PID=$MARIADB_DIR/mariadbd.pid
MARIADB_LOG=$MARIADB_DIR/mariadbd.err

die() { echo "fault-servers: $*" >&2; exit 1; }

pg_version() {
  ls /etc/postgresql 2>/dev/null | sort -V | tail -n 1
}

# --- PostgreSQL -------------------------------------------------------------------------------
pg_exists() {
  local v; v=$(pg_version)
  [ -n "$v" ] && [ -f "/etc/postgresql/$v/$PG_CLUSTER/postgresql.conf" ]
}

pg_ready() {
  pg_isready -q -h 127.0.0.1 -p "$PG_PORT"
}

pg_pid() {
  local v; v=$(pg_version)
  head -n 1 "/var/lib/postgresql/$v/$PG_CLUSTER/postmaster.pid" 2>/dev/null || true
}

pg_wait_ready() {
  for _ in $(seq 1 300); do
    pg_ready && return 0
    sleep 0.1
  done
  die "PostgreSQL on port $PG_PORT did not become ready"
}

pg_up() {
  local v; v=$(pg_version)
  [ -n "$v" ] || die "no PostgreSQL installed (/etc/postgresql is empty)"
  if ! pg_exists; then
    pg_createcluster -q "$v" "$PG_CLUSTER" -p "$PG_PORT" --start-conf=manual \
      -o max_connections=200 -- --auth-local=trust --auth-host=trust >/dev/null
    mkdir -p "/etc/postgresql/$v/$PG_CLUSTER/conf.d"
    printf "listen_addresses = '127.0.0.1'\n" >"/etc/postgresql/$v/$PG_CLUSTER/conf.d/holdfast-fault.conf"
  fi
  if ! pg_ready; then
    pg_ctlcluster --skip-systemctl-redirect "$v" "$PG_CLUSTER" start
    pg_wait_ready
  fi
  psql -h 127.0.0.1 -p "$PG_PORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'test'" postgres \
    | grep -q 1 || psql -q -h 127.0.0.1 -p "$PG_PORT" -U postgres -c "CREATE DATABASE test" postgres
}

pg_down() {
  local v; v=$(pg_version)
  if pg_exists; then
    pg_dropcluster --stop "$v" "$PG_CLUSTER"
  fi
  # pg_dropcluster leaves files it did not create (our conf.d) behind
  [ -z "$v" ] || rm -rf "/etc/postgresql/$v/$PG_CLUSTER"
  rm -f "/var/log/postgresql/postgresql-$v-$PG_CLUSTER.log"
}

pg_restart() {
  local v old new; v=$(pg_version)
  pg_exists && pg_ready || die "PostgreSQL fault cluster is not running (run: $0 up)"
  old=$(pg_pid)
  # fast shutdown: sessions are terminated, the postmaster exits, a new one starts
  pg_ctlcluster --skip-systemctl-redirect "$v" "$PG_CLUSTER" restart -m fast
  pg_wait_ready
  new=$(pg_pid)
  [ -n "$new" ] && [ "$new" != "$old" ] || die "PostgreSQL restart kept pid $old"
  echo "postgresql restarted: pid $old -> $new"
}

pg_crash() {
  local v old new; v=$(pg_version)
  pg_exists && pg_ready || die "PostgreSQL fault cluster is not running (run: $0 up)"
  old=$(pg_pid)
  # immediate: every server process quits at once; nothing is flushed, the next start runs crash recovery
  pg_ctlcluster --skip-systemctl-redirect "$v" "$PG_CLUSTER" stop -m immediate
  pg_ctlcluster --skip-systemctl-redirect "$v" "$PG_CLUSTER" start
  pg_wait_ready
  new=$(pg_pid)
  [ -n "$new" ] && [ "$new" != "$old" ] || die "PostgreSQL crash restart kept pid $old"
  echo "postgresql crashed and restarted: pid $old -> $new"
}

pg_status() {
  if pg_exists && pg_ready; then
    echo "postgresql: running on 127.0.0.1:$PG_PORT (cluster $(pg_version)/$PG_CLUSTER, pid $(pg_pid))"
  elif pg_exists; then
    echo "postgresql: stopped (cluster $(pg_version)/$PG_CLUSTER exists)"; return 1
  else
    echo "postgresql: absent"; return 1
  fi
}

# --- MariaDB ----------------------------------------------------------------------------------
mariadb_ready() {
  mariadb-admin --no-defaults --protocol=tcp -h 127.0.0.1 -P "$MARIADB_PORT" -uroot ping >/dev/null 2>&1
}

mariadb_pid() {
  cat "$MARIADB_PID" 2>/dev/null || true
}

mariadb_start() {
  rm -f "$MARIADB_SOCKET"
  # setsid + nohup: the server must not die with the shell (or Maven) that started it
  setsid nohup /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$MARIADB_DATA" \
    --port="$MARIADB_PORT" --bind-address=127.0.0.1 --socket="$MARIADB_SOCKET" --pid-file="$MARIADB_PID" \
    --log-error="$MARIADB_LOG" --skip-name-resolve --max-connections=300 \
    --innodb-buffer-pool-size=64M --innodb-log-file-size=48M </dev/null >/dev/null 2>&1 &
  for _ in $(seq 1 300); do
    mariadb_ready && [ -s "$MARIADB_PID" ] && return 0
    sleep 0.1
  done
  tail -n 20 "$MARIADB_LOG" >&2 || true
  die "MariaDB on port $MARIADB_PORT did not become ready"
}

mariadb_stop() {
  local pid; pid=$(mariadb_pid)
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"   # a normal shutdown, as mariadb-admin shutdown does
    for _ in $(seq 1 600); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && die "MariaDB pid $pid did not stop"
  fi
  rm -f "$MARIADB_PID"
}

mariadb_up() {
  if [ ! -d "$MARIADB_DATA/mysql" ]; then
    mkdir -p "$MARIADB_DATA"
    chown -R mysql:mysql "$MARIADB_DIR"
    mariadb-install-db --no-defaults --user=mysql --datadir="$MARIADB_DATA" --skip-test-db \
      --skip-name-resolve --auth-root-authentication-method=normal >/dev/null
  fi
  if ! mariadb_ready; then
    local pid; pid=$(mariadb_pid)
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
      mariadb_stop   # a process that does not answer: start over
    fi
    mariadb_start
  fi
  mariadb --no-defaults -S "$MARIADB_SOCKET" -uroot -e "
    CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
    GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
    CREATE DATABASE IF NOT EXISTS test;"
}

mariadb_down() {
  mariadb_stop
  rm -rf "$MARIADB_DIR"
}

mariadb_restart() {
  local old new
  mariadb_ready || die "MariaDB fault server is not running (run: $0 up)"
  old=$(mariadb_pid)
  mariadb_stop
  mariadb_start
  new=$(mariadb_pid)
  [ -n "$new" ] && [ "$new" != "$old" ] || die "MariaDB restart kept pid $old"
  echo "mariadb restarted: pid $old -> $new"
}

mariadb_crash() {
  local old new
  mariadb_ready || die "MariaDB fault server is not running (run: $0 up)"
  old=$(mariadb_pid)
  kill -KILL "$old"
  for _ in $(seq 1 300); do
    kill -0 "$old" 2>/dev/null || break
    sleep 0.1
  done
  rm -f "$MARIADB_PID"
  mariadb_start
  new=$(mariadb_pid)
  [ -n "$new" ] && [ "$new" != "$old" ] || die "MariaDB crash restart kept pid $old"
  echo "mariadb crashed and restarted: pid $old -> $new"
}

mariadb_status() {
  if mariadb_ready; then
    echo "mariadb: running on 127.0.0.1:$MARIADB_PORT (datadir $MARIADB_DATA, pid $(mariadb_pid))"
  elif [ -d "$MARIADB_DATA" ]; then
    echo "mariadb: stopped (datadir $MARIADB_DATA exists)"; return 1
  else
    echo "mariadb: absent"; return 1
  fi
}

# --- commands ---------------------------------------------------------------------------------
case "${1:-}" in
  up)
    pg_up
    mariadb_up
    ;;
  down)
    pg_down
    mariadb_down
    ;;
  restart)
    case "${2:-}" in
      postgresql) pg_restart ;;
      mariadb) mariadb_restart ;;
      *) die "usage: $0 restart postgresql|mariadb" ;;
    esac
    ;;
  crash)
    case "${2:-}" in
      postgresql) pg_crash ;;
      mariadb) mariadb_crash ;;
      *) die "usage: $0 crash postgresql|mariadb" ;;
    esac
    ;;
  status)
    rc=0
    pg_status || rc=1
    mariadb_status || rc=1
    exit $rc
    ;;
  *)
    die "usage: $0 up|down|restart postgresql|mariadb|crash postgresql|mariadb|status"
    ;;
esac
