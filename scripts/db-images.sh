#!/usr/bin/env bash
# Builds the database images the tests run, locally (no registry is reachable from our machines):
#   berth-test/debian:12    a Debian bookworm minbase root from debootstrap, imported as a base image
#   berth-test/postgres:1   PostgreSQL 15, honouring the public postgres image's environment
#   berth-test/mariadb:1    MariaDB 10.11, honouring the public mariadb/mysql images' environment
#   berth-test/redis:1      Redis 7, run like the public redis image
#   berth-test/libsql:1     a stand-in for the public libsql-server image: Python serving sqld's HTTP API
#                           (Hrana over HTTP) over SQLite files, laid out like the public image
#   berth-test/caddy:1      Caddy 2.6 (Debian's caddy), the image of the caddy proxy provider in tests
#   berth-test/pebble:1     Pebble (Debian's pebble, Let's Encrypt's ACME test server), with a TLS
#                           certificate made at build time; its CA is /etc/pebble/ca.pem
#   berth-test/registry:1   Debian's docker-registry (distribution 2.8), laid out and configured like the
#                           public registry:2 image (config, port 5000, /var/lib/registry, REGISTRY_* env)
# Idempotent and fast when nothing changed: each image carries a label with a hash of its recipe (this
# script's text for it) and is rebuilt only when that label is missing or differs.
# Needs docker and debootstrap; the containers of `docker build` must reach the Debian archive.
set -euo pipefail
log() { echo "[db-images] $*" >&2; }

DEBIAN=berth-test/debian:12
POSTGRES=berth-test/postgres:1
MARIADB=berth-test/mariadb:1
REDIS=berth-test/redis:1
LIBSQL=berth-test/libsql:1
CADDY=berth-test/caddy:1
PEBBLE=berth-test/pebble:1
REGISTRY=berth-test/registry:1
SUITE=bookworm
LABEL=berth-test.recipe

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

recipe_of() { docker image inspect --format "{{ index .Config.Labels \"$LABEL\" }}" "$1" 2>/dev/null || true; }

# The Debian mirror this machine uses (sources.list or deb822 .sources), so the image's apt uses it too.
debian_mirror() {
  [ -n "${DEBIAN_MIRROR:-}" ] && { echo "$DEBIAN_MIRROR"; return; }
  local found
  found=$(
    {
      [ -f /etc/apt/sources.list ] && awk -v suite="$SUITE" '$1 == "deb" {
        for (i = 2; i < NF; i++) if ($i ~ /^[a-z]+:\/\//) { if ($(i + 1) == suite) { print $i; exit } break }
      }' /etc/apt/sources.list
      for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # deb822 stanzas are separated by blank lines: print the URI of one that carries the plain suite.
        awk -v suite="$SUITE" 'BEGIN { RS = "" } {
          uri = ""; ok = 0
          n = split($0, lines, "\n")
          for (i = 1; i <= n; i++) {
            if (lines[i] ~ /^URIs:/) { split(lines[i], w, /[ \t]+/); uri = w[2] }
            if (lines[i] ~ /^Suites:/) { m = split(lines[i], s, /[ \t]+/); for (j = 2; j <= m; j++) if (s[j] == suite) ok = 1 }
          }
          if (ok && uri != "") { print uri; exit }
        }' "$f"
      done
    } | head -1 || true
  )
  echo "${found:-http://deb.debian.org/debian}"
}

# ---------------------------------------------------------------- berth-test/debian:12
build_debian() {
  local tree=$work/rootfs mirror
  mirror=$(debian_mirror)
  command -v debootstrap >/dev/null || { log "debootstrap is missing (apt-get install debootstrap)"; exit 1; }
  log "building $DEBIAN: debootstrap --variant=minbase $SUITE from $mirror"
  if ! debootstrap --variant=minbase "$SUITE" "$tree" "$mirror" >"$work/debootstrap.log" 2>&1; then
    tail -30 "$work/debootstrap.log" >&2
    exit 1
  fi
  # What the official Debian images do for containers: services never start during apt-get install
  # (there is no init), no documentation, no package cache kept.
  printf '#!/bin/sh\nexit 101\n' >"$tree/usr/sbin/policy-rc.d"
  chmod 755 "$tree/usr/sbin/policy-rc.d"
  cat >"$tree/etc/dpkg/dpkg.cfg.d/berth-excludes" <<'EOF'
path-exclude=/usr/share/doc/*
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
EOF
  printf 'DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };\nAPT::Install-Recommends "false";\n' \
    >"$tree/etc/apt/apt.conf.d/docker-clean"
  rm -rf "$tree"/var/cache/apt/archives/*.deb "$tree"/var/cache/apt/*.bin "$tree"/var/lib/apt/lists/* \
    "$tree"/usr/share/doc/* "$tree"/usr/share/man/* "$tree"/usr/share/info/* "$tree"/var/log/*.log "$tree"/tmp/*
  # Docker supplies these at run time.
  rm -f "$tree/etc/resolv.conf" "$tree/etc/hostname"
  tar -C "$tree" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change "LABEL $LABEL=$1" \
    --change 'CMD ["bash"]' - "$DEBIAN" >/dev/null
  rm -rf "$tree"
}

# Writes $1/Dockerfile: FROM the local Debian base, then a RUN that updates the package lists and
# goes on with the lines read from stdin (the packages to install, and what else the image needs).
debian_dockerfile() {
  mkdir -p "$1"
  { printf 'FROM %s\nRUN set -eux; \\\n    apt-get update; \\\n' "$DEBIAN"; cat; } >"$1/Dockerfile"
}

# Writes $1/docker-entrypoint.sh from stdin, executable.
entrypoint() {
  cat >"$1/docker-entrypoint.sh"
  chmod 755 "$1/docker-entrypoint.sh"
}

# ---------------------------------------------------------------- berth-test/postgres:1
postgres_context() {
  local ctx=$1
  mkdir -p "$ctx"
  cat >"$ctx/Dockerfile" <<'EOF'
FROM berth-test/debian:12
# No cluster of Debian's own: the entrypoint initialises $PGDATA like the public image does.
RUN set -eux; \
    apt-get update; \
    apt-get install -y --no-install-recommends postgresql-common; \
    sed -ri 's/^#?\s*(create_main_cluster)\s*=.*$/\1 = false/' /etc/postgresql-common/createcluster.conf; \
    apt-get install -y --no-install-recommends postgresql-15; \
    rm -rf /var/lib/apt/lists/*; \
    mkdir -p /var/lib/postgresql/data /var/run/postgresql; \
    chown postgres:postgres /var/lib/postgresql/data /var/run/postgresql; \
    chmod 700 /var/lib/postgresql/data
ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PGDATA=/var/lib/postgresql/data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
# Fast shutdown (SIGTERM would wait for every client to disconnect), as the public image.
STOPSIGNAL SIGINT
EXPOSE 5432
CMD ["postgres"]
EOF
  entrypoint "$ctx" <<'EOF'
#!/bin/sh
# berth-test/postgres:1 entrypoint, with the public postgres image's environment:
#   POSTGRES_PASSWORD (required unless POSTGRES_HOST_AUTH_METHOD=trust), POSTGRES_USER (postgres),
#   POSTGRES_DB (= user), PGDATA (/var/lib/postgresql/data), POSTGRES_HOST_AUTH_METHOD (scram-sha-256).
set -eu
: "${POSTGRES_USER:=postgres}"
: "${POSTGRES_DB:=$POSTGRES_USER}"
: "${PGDATA:=/var/lib/postgresql/data}"
: "${POSTGRES_HOST_AUTH_METHOD:=scram-sha-256}"
export PGDATA
fail() { echo "postgres entrypoint: $*" >&2; exit 1; }

case "${1:-}" in -*) set -- postgres "$@" ;; esac
[ "${1:-}" = postgres ] || exec "$@"

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" /var/run/postgresql
  find "$PGDATA" /var/run/postgresql \! -user postgres -exec chown postgres:postgres '{}' +
  chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi

if [ ! -s "$PGDATA/PG_VERSION" ]; then
  case "$POSTGRES_HOST_AUTH_METHOD" in
    trust | scram-sha-256 | md5 | password) ;;
    *) fail "POSTGRES_HOST_AUTH_METHOD must be trust, scram-sha-256, md5 or password" ;;
  esac
  if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "$POSTGRES_HOST_AUTH_METHOD" != trust ]; then
    fail "the database is uninitialized and POSTGRES_PASSWORD is not set (or set POSTGRES_HOST_AUTH_METHOD=trust)"
  fi
  echo "postgres entrypoint: initialising $PGDATA" >&2
  if [ -n "${POSTGRES_PASSWORD:-}" ]; then
    # A file, so the password never shows in a process list.
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
    initdb --username="$POSTGRES_USER" --pwfile="$pwfile" --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=trust -D "$PGDATA" >/dev/null
    rm -f "$pwfile"
  else
    initdb --username="$POSTGRES_USER" --encoding=UTF8 --locale=C.UTF-8 \
      --auth-local=trust --auth-host=trust -D "$PGDATA" >/dev/null
  fi
  # Inside the container (docker exec pg_dump, psql) the socket and loopback stay trusted, as in the
  # public image; every other host authenticates.
  {
    echo 'local all all trust'
    echo 'host all all 127.0.0.1/32 trust'
    echo 'host all all ::1/128 trust'
    echo "host all all all $POSTGRES_HOST_AUTH_METHOD"
  } >"$PGDATA/pg_hba.conf"
  echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    # psql quotes the name (:"db"); variables are only expanded in its input, not in -c.
    echo 'CREATE DATABASE :"db";' |
      psql -q -v ON_ERROR_STOP=1 --no-psqlrc --username="$POSTGRES_USER" --dbname=postgres --set=db="$POSTGRES_DB"
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  fi
fi

exec "$@"
EOF
}

# ---------------------------------------------------------------- berth-test/mariadb:1
mariadb_context() {
  local ctx=$1
  debian_dockerfile "$ctx" <<'EOF'
    apt-get install -y --no-install-recommends mariadb-server mariadb-client; \
    rm -rf /var/lib/apt/lists/* /var/lib/mysql; \
    mkdir -p /var/lib/mysql /run/mysqld; \
    chown mysql:mysql /var/lib/mysql /run/mysqld; \
    chmod 750 /var/lib/mysql
COPY 90-berth.cnf /etc/mysql/mariadb.conf.d/90-berth.cnf
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 3306
CMD ["mariadbd"]
EOF
  # Debian binds to 127.0.0.1; a container answers on every interface, and without name lookups.
  cat >"$ctx/90-berth.cnf" <<'EOF'
[mysqld]
bind-address = 0.0.0.0
port = 3306
skip-name-resolve
EOF
  entrypoint "$ctx" <<'EOF'
#!/bin/sh
# berth-test/mariadb:1 entrypoint, with the public mariadb and mysql images' environment (MARIADB_* first):
#   MARIADB_ROOT_PASSWORD / MYSQL_ROOT_PASSWORD (or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD / MYSQL_ALLOW_EMPTY_PASSWORD),
#   MARIADB_DATABASE / MYSQL_DATABASE, MARIADB_USER / MYSQL_USER, MARIADB_PASSWORD / MYSQL_PASSWORD.
set -eu
root_password=${MARIADB_ROOT_PASSWORD:-${MYSQL_ROOT_PASSWORD:-}}
allow_empty=${MARIADB_ALLOW_EMPTY_ROOT_PASSWORD:-${MYSQL_ALLOW_EMPTY_PASSWORD:-}}
database=${MARIADB_DATABASE:-${MYSQL_DATABASE:-}}
user=${MARIADB_USER:-${MYSQL_USER:-}}
password=${MARIADB_PASSWORD:-${MYSQL_PASSWORD:-}}
datadir=/var/lib/mysql
socket=/run/mysqld/mysqld.sock
fail() { echo "mariadb entrypoint: $*" >&2; exit 1; }

case "${1:-}" in -*) set -- mariadbd "$@" ;; esac
case "${1:-}" in mariadbd | mysqld) ;; *) exec "$@" ;; esac

if [ "$(id -u)" = 0 ]; then
  mkdir -p "$datadir" /run/mysqld
  find "$datadir" /run/mysqld \! -user mysql -exec chown mysql:mysql '{}' +
  exec setpriv --reuid=mysql --regid=mysql --init-groups "$0" "$@"
fi

# A value reaches SQL only as a hex literal; statements that need it as a name or a string literal are
# built by the server itself (QUOTE, backtick doubling), so no value can break out of its quotes.
hex() { printf '%s' "$1" | od -An -v -tx1 | tr -d ' \n'; }
text() { printf "CONVERT(x'%s' USING utf8mb4)" "$(hex "$1")"; }
# printf, not echo: dash's echo would turn the backslashes below into escapes.
sql() { printf '%s\n' "$1"; }

if [ ! -d "$datadir/mysql" ]; then
  if [ -z "$root_password" ] && [ -z "$allow_empty" ]; then
    fail "the database is uninitialized: set MARIADB_ROOT_PASSWORD (or MYSQL_ROOT_PASSWORD, or MARIADB_ALLOW_EMPTY_ROOT_PASSWORD=1)"
  fi
  if [ -n "$user" ] && [ -z "$password" ]; then fail "MARIADB_USER (MYSQL_USER) is set but its password is empty"; fi
  if [ "$user" = root ]; then fail "MARIADB_USER (MYSQL_USER) is for a regular user; the root password has its own variable"; fi
  echo "mariadb entrypoint: initialising $datadir" >&2
  mariadb-install-db --datadir="$datadir" --skip-test-db --auth-root-authentication-method=normal --cross-bootstrap \
    --skip-name-resolve >/dev/null
  "$@" --skip-networking --socket="$socket" --datadir="$datadir" &
  pid=$!
  i=0
  until mariadb-admin --socket="$socket" -uroot ping >/dev/null 2>&1; do
    i=$((i + 1))
    [ "$i" -lt 300 ] || fail "the temporary server did not start"
    kill -0 "$pid" 2>/dev/null || fail "the temporary server exited"
    sleep 0.1
  done
  {
    sql 'SET @@SESSION.SQL_LOG_BIN = 0;'
    sql "SET @root_password = $(text "$root_password");"
    sql "DROP USER IF EXISTS 'root'@'127.0.0.1', 'root'@'::1';"
    sql "EXECUTE IMMEDIATE CONCAT('CREATE USER ''root''@''%'' IDENTIFIED BY ', QUOTE(@root_password));"
    sql "GRANT ALL ON *.* TO 'root'@'%' WITH GRANT OPTION;"
    sql "EXECUTE IMMEDIATE CONCAT('ALTER USER ''root''@''localhost'' IDENTIFIED VIA mysql_native_password USING PASSWORD(', QUOTE(@root_password), ') OR unix_socket');"
    if [ -n "$database" ]; then
      sql "SET @db = $(text "$database");"
      sql "EXECUTE IMMEDIATE CONCAT('CREATE DATABASE IF NOT EXISTS \`', REPLACE(@db, '\`', '\`\`'), '\`');"
    fi
    if [ -n "$user" ]; then
      sql "SET @user = $(text "$user");"
      sql "SET @password = $(text "$password");"
      sql "EXECUTE IMMEDIATE CONCAT('CREATE USER ', QUOTE(@user), '@''%'' IDENTIFIED BY ', QUOTE(@password));"
      if [ -n "$database" ]; then
        # In GRANT, _ and % in a database name are wildcards: escape them so only this database is meant.
        sql "EXECUTE IMMEDIATE CONCAT('GRANT ALL ON \`', REPLACE(REPLACE(REPLACE(@db, '_', '\\\\_'), '%', '\\\\%'), '\`', '\`\`'), '\`.* TO ', QUOTE(@user), '@''%''');"
      fi
    fi
  } | mariadb --socket="$socket" -uroot --batch
  kill "$pid"
  wait "$pid" || true
fi

exec "$@"
EOF
}

# ---------------------------------------------------------------- berth-test/redis:1
redis_context() {
  local ctx=$1
  debian_dockerfile "$ctx" <<'EOF'
    apt-get install -y --no-install-recommends redis-server redis-tools; \
    rm -rf /var/lib/apt/lists/*; \
    mkdir -p /data; \
    chown redis:redis /data
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
# The public image's working directory: a command without --dir keeps its data in /data too.
WORKDIR /data
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 6379
CMD ["redis-server", "--bind", "0.0.0.0", "--protected-mode", "no", "--dir", "/data"]
EOF
  entrypoint "$ctx" <<'EOF'
#!/bin/sh
# berth-test/redis:1 entrypoint, as the public redis image's: a first argument that is an option means
# redis-server; redis-server runs as the redis user; protected mode is off unless a config file or the
# command says otherwise (the public image builds redis with it off: the container is its boundary).
set -eu
case "${1:-}" in -*) set -- redis-server "$@" ;; esac
if [ "${1:-}" = redis-server ]; then
  if [ "$(id -u)" = 0 ]; then
    find . \! -user redis -exec chown redis:redis '{}' +
    exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
  fi
  case "${2:-}" in
    '' | -*) shift; set -- redis-server --protected-mode no "$@" ;;
  esac
fi
exec "$@"
EOF
}

# ---------------------------------------------------------------- berth-test/libsql:1
# A stand-in for ghcr.io/tursodatabase/libsql-server (test/stand-ins): sqld is Rust and can be neither
# pulled nor built here. Laid out like the public image (user sqld 666, /var/lib/sqld its home, working
# directory and volume, ports 8080 http, 5001 grpc, an entrypoint that runs a given command as is);
# its `sqld` is a Python server of the HTTP API over SQLite files (the script says what it serves).
libsql_context() {
  local ctx=$1
  debian_dockerfile "$ctx" <<'EOF'
    apt-get install -y --no-install-recommends python3 tar; \
    rm -rf /var/lib/apt/lists/*; \
    groupadd --system --gid 666 sqld; \
    useradd --system --uid 666 --gid 666 --home-dir /var/lib/sqld --no-create-home sqld; \
    mkdir -p /var/lib/sqld; \
    chown sqld:sqld /var/lib/sqld
COPY sqld /bin/sqld
COPY docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
VOLUME ["/var/lib/sqld"]
WORKDIR /var/lib/sqld
USER sqld
ENTRYPOINT ["docker-entrypoint.sh"]
EXPOSE 5001 8080
CMD ["/bin/sqld"]
EOF
  entrypoint "$ctx" <<'EOF'
#!/bin/sh
# berth-test/libsql:1 entrypoint, as the public image's: sqld alone gets the listen addresses of its
# node (SQLD_NODE); any other command runs as given.
set -eu
if [ "${1:-}" = /bin/sqld ] && [ "$#" = 1 ]; then
  set -- /bin/sqld --db-path "${SQLD_DB_PATH:-iku.db}" --http-listen-addr "${SQLD_HTTP_LISTEN_ADDR:-0.0.0.0:8080}"
  [ "${SQLD_NODE:-primary}" = primary ] && set -- "$@" --grpc-listen-addr "${SQLD_GRPC_LISTEN_ADDR:-0.0.0.0:5001}"
fi
exec "$@"
EOF
  cat >"$ctx/sqld" <<'EOF'
#!/usr/bin/python3
# berth-test/libsql:1's `sqld`: a stand-in for libsql-server (test/stand-ins), speaking what
# @libsql/client and Berth use of its HTTP API over SQLite files: Hrana over HTTP (/v2/pipeline,
# /v3/pipeline, JSON, with batons), /health and /version, HTTP basic auth from SQLD_HTTP_AUTH
# ("basic:<base64 of user:password>"). The database lives at <db-path>/dbs/default/data, as sqld
# lays it out. Not modelled: gRPC (its port accepts and closes connections), replication, the admin
# API beyond /health, namespaces (every request reaches the default database) and JWT auth
# (SQLD_AUTH_JWT_KEY makes it refuse every Bearer token).
import base64, json, os, secrets, signal, socket, sqlite3, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

OPTIONS = {'--db-path': 'SQLD_DB_PATH', '--http-listen-addr': 'SQLD_HTTP_LISTEN_ADDR', '--grpc-listen-addr': 'SQLD_GRPC_LISTEN_ADDR',
           '--admin-listen-addr': 'SQLD_ADMIN_LISTEN_ADDR', '--primary-grpc-url': 'SQLD_PRIMARY_URL'}
FLAGS = {'--enable-namespaces'}


def parse(argv):
    conf = {k: os.environ.get(v) for k, v in OPTIONS.items()}
    conf['--db-path'] = conf['--db-path'] or 'data.sqld'
    conf['--http-listen-addr'] = conf['--http-listen-addr'] or '127.0.0.1:8080'
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, value = arg.partition('=')
        if name in OPTIONS:
            if not eq:
                i += 1
                if i >= len(argv):
                    sys.exit(f'sqld: {name} needs a value')
                value = argv[i]
            conf[name] = value
        elif arg in FLAGS:
            conf[arg] = True
        elif arg in ('--version', '-V'):
            print('sqld (berth-test stand-in) 0.24.32')
            sys.exit(0)
        else:
            sys.exit(f'sqld: unknown argument {arg}')
        i += 1
    return conf


CONF = parse(sys.argv[1:])
DB_FILE = os.path.join(CONF['--db-path'], 'dbs', 'default', 'data')
AUTH = os.environ.get('SQLD_HTTP_AUTH', '')
JWT_KEY = os.environ.get('SQLD_AUTH_JWT_KEY') or os.environ.get('SQLD_AUTH_JWT_KEY_FILE')


def address(text):
    host, _, port = text.rpartition(':')
    return (host.strip('[]') or '0.0.0.0', int(port))


def authorized(header):
    if AUTH.startswith('basic:'):
        scheme, _, value = (header or '').partition(' ')
        if scheme.lower() == 'basic' and secrets.compare_digest(value.strip().encode(), AUTH[6:].encode()):
            return True
        return False
    if JWT_KEY:
        return False
    return True


# ------------------------------------------------------------------ values and statements
def decode(v):
    t = v.get('type')
    if t == 'null':
        return None
    if t == 'integer':
        return int(v['value'])
    if t == 'float':
        return float(v['value'])
    if t == 'text':
        return v['value']
    if t == 'blob':
        data = v.get('base64', '')
        return base64.b64decode(data + '=' * (-len(data) % 4))
    raise ValueError(f'unknown value type {t}')


def encode(x):
    if x is None:
        return {'type': 'null'}
    if isinstance(x, bool) or isinstance(x, int):
        return {'type': 'integer', 'value': str(int(x))}
    if isinstance(x, float):
        return {'type': 'float', 'value': x}
    if isinstance(x, (bytes, memoryview)):
        return {'type': 'blob', 'base64': base64.b64encode(bytes(x)).decode()}
    return {'type': 'text', 'value': str(x)}


class HranaError(Exception):
    def __init__(self, message, code='SQLITE_ERROR'):
        super().__init__(message)
        self.code = code


class Stream:
    def __init__(self):
        os.makedirs(os.path.dirname(DB_FILE), exist_ok=True)
        self.conn = sqlite3.connect(DB_FILE, isolation_level=None, check_same_thread=False, timeout=10)
        self.sqls = {}
        self.lock = threading.Lock()
        self.used = time.monotonic()

    def close(self):
        self.conn.close()

    def sql_of(self, stmt):
        if stmt.get('sql') is not None:
            return stmt['sql']
        if stmt.get('sql_id') in self.sqls:
            return self.sqls[stmt['sql_id']]
        raise HranaError('the statement has neither sql nor a stored sql_id', 'SQL_NOT_FOUND')

    def execute(self, stmt):
        sql = self.sql_of(stmt)
        if stmt.get('named_args'):
            params = {a['name'].lstrip(':@$'): decode(a['value']) for a in stmt['named_args']}
        else:
            params = [decode(a) for a in stmt.get('args') or []]
        try:
            cur = self.conn.execute(sql, params)
            rows = cur.fetchall() if stmt.get('want_rows', True) else []
        except sqlite3.Error as e:
            raise HranaError(str(e), getattr(e, 'sqlite_errorname', 'SQLITE_ERROR'))
        cols = [{'name': d[0], 'decltype': None} for d in cur.description or []]
        return {'cols': cols, 'rows': [[encode(x) for x in r] for r in rows], 'affected_row_count': max(cur.rowcount, 0),
                'last_insert_rowid': str(cur.lastrowid) if cur.lastrowid else None, 'rows_read': len(rows), 'rows_written': max(cur.rowcount, 0)}

    def condition(self, cond, results, errors):
        t = cond['type']
        if t == 'ok':
            return results[cond['step']] is not None
        if t == 'error':
            return errors[cond['step']] is not None
        if t == 'not':
            return not self.condition(cond['cond'], results, errors)
        if t == 'and':
            return all(self.condition(c, results, errors) for c in cond['conds'])
        if t == 'or':
            return any(self.condition(c, results, errors) for c in cond['conds'])
        if t == 'is_autocommit':
            return not self.conn.in_transaction
        raise HranaError(f'unknown condition {t}')

    def batch(self, batch):
        steps = batch['steps']
        results, errors = [None] * len(steps), [None] * len(steps)
        for i, step in enumerate(steps):
            if step.get('condition') and not self.condition(step['condition'], results, errors):
                continue
            try:
                results[i] = self.execute(step['stmt'])
            except HranaError as e:
                errors[i] = {'message': str(e), 'code': e.code}
        return {'step_results': results, 'step_errors': errors}

    def request(self, req):
        t = req['type']
        if t == 'execute':
            return {'type': 'execute', 'result': self.execute(req['stmt'])}
        if t == 'batch':
            return {'type': 'batch', 'result': self.batch(req['batch'])}
        if t == 'sequence':
            try:
                self.conn.executescript(self.sql_of(req))
            except sqlite3.Error as e:
                raise HranaError(str(e))
            return {'type': 'sequence'}
        if t == 'get_autocommit':
            return {'type': 'get_autocommit', 'is_autocommit': not self.conn.in_transaction}
        if t == 'store_sql':
            self.sqls[req['sql_id']] = req['sql']
            return {'type': 'store_sql'}
        if t == 'close_sql':
            self.sqls.pop(req['sql_id'], None)
            return {'type': 'close_sql'}
        if t == 'close':
            return {'type': 'close'}
        raise HranaError(f'the stand-in does not serve {t} requests', 'NOT_SUPPORTED')


STREAMS = {}
STREAMS_LOCK = threading.Lock()


def pipeline(body):
    baton = body.get('baton')
    with STREAMS_LOCK:
        stream = STREAMS.pop(baton, None) if baton else Stream()
        # Streams idle for more than 10 s are closed, as sqld expires them.
        for b, s in list(STREAMS.items()):
            if time.monotonic() - s.used > 10:
                STREAMS.pop(b).close()
    if stream is None:
        return 400, {'message': 'The stream has expired or the baton is invalid', 'code': 'STREAM_EXPIRED'}
    results, closed = [], False
    with stream.lock:
        for req in body.get('requests', []):
            try:
                results.append({'type': 'ok', 'response': stream.request(req)})
            except HranaError as e:
                results.append({'type': 'error', 'error': {'message': str(e), 'code': e.code}})
            except (KeyError, TypeError, ValueError) as e:
                return 400, {'message': f'invalid request: {e}', 'code': 'PROTO_ERROR'}
            closed = closed or req.get('type') == 'close'
        stream.used = time.monotonic()
    next_baton = None
    if closed:
        stream.close()
    else:
        next_baton = secrets.token_urlsafe(16)
        with STREAMS_LOCK:
            STREAMS[next_baton] = stream
    return 200, {'baton': next_baton, 'base_url': None, 'results': results}


# ------------------------------------------------------------------ HTTP
class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    server_version = 'sqld-stand-in'
    admin = False

    def log_message(self, *args):
        pass

    def answer(self, status, body=b'', content_type='text/plain'):
        if not isinstance(body, bytes):
            body, content_type = json.dumps(body, separators=(',', ':')).encode(), 'application/json'
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        path = self.path.split('?')[0]
        if path == '/health':
            return self.answer(200)
        if self.admin:
            return self.answer(404, b'not served by the stand-in')
        if path == '/version':
            return self.answer(200, b'sqld (berth-test stand-in) 0.24.32')
        if path in ('/v2', '/v3'):
            return self.answer(200)
        return self.answer(404, b'not found')

    def do_POST(self):
        length = int(self.headers.get('Content-Length') or 0)
        raw = self.rfile.read(length)
        path = self.path.split('?')[0]
        if self.admin or path not in ('/v2/pipeline', '/v3/pipeline'):
            return self.answer(404, b'not found')
        if not authorized(self.headers.get('Authorization')):
            return self.answer(401, {'error': 'Unauthorized: the credentials were not accepted'})
        try:
            body = json.loads(raw)
        except ValueError as e:
            return self.answer(400, {'message': f'invalid JSON: {e}', 'code': 'PROTO_ERROR'})
        status, reply = pipeline(body)
        self.answer(status, reply)


class AdminHandler(Handler):
    admin = True


def serve(addr, handler):
    server = ThreadingHTTPServer(address(addr), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()


def grpc(addr):
    sock = socket.create_server(address(addr), reuse_port=True)

    def accept():
        while True:
            conn, _ = sock.accept()
            conn.close()

    threading.Thread(target=accept, daemon=True).start()


# As PID 1 nothing ends the process on SIGTERM unless it says so.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
os.makedirs(os.path.dirname(DB_FILE), exist_ok=True)
sqlite3.connect(DB_FILE).close()
if CONF['--admin-listen-addr']:
    serve(CONF['--admin-listen-addr'], AdminHandler)
if CONF['--grpc-listen-addr']:
    grpc(CONF['--grpc-listen-addr'])
print(f"sqld stand-in: {DB_FILE} on http {CONF['--http-listen-addr']}, node {os.environ.get('SQLD_NODE', 'primary')}", file=sys.stderr, flush=True)
server = ThreadingHTTPServer(address(CONF['--http-listen-addr']), Handler)
server.daemon_threads = True
try:
    server.serve_forever()
except KeyboardInterrupt:
    pass
EOF
  chmod 755 "$ctx/sqld"
}

# ---------------------------------------------------------------- berth-test/caddy:1
caddy_context() {
  local ctx=$1
  # Debian's package runs caddy under systemd; in a container it runs in the foreground. Berth starts
  # it with its own --config (the proxy provider's generated JSON); without one it serves nothing.
  debian_dockerfile "$ctx" <<'EOF'
    apt-get install -y --no-install-recommends caddy ca-certificates; \
    rm -rf /var/lib/apt/lists/*; \
    mkdir -p /data /config
ENV XDG_DATA_HOME=/data XDG_CONFIG_HOME=/config
EXPOSE 80 443
CMD ["caddy", "run", "--config", "/etc/caddy/Caddyfile", "--adapter", "caddyfile"]
EOF
}

# ---------------------------------------------------------------- berth-test/pebble:1
pebble_context() {
  local ctx=$1
  # Debian's pebble ships no test certificates: a CA and a server certificate (for the names pebble and
  # localhost) are made at build time. It validates challenges on ports 80 (http-01) and 443 (tls-alpn-01).
  debian_dockerfile "$ctx" <<'EOF'
    apt-get install -y --no-install-recommends pebble openssl; \
    rm -rf /var/lib/apt/lists/*; \
    mkdir -p /etc/pebble; cd /etc/pebble; \
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 3650 -subj '/CN=berth test pebble CA'; \
    openssl req -newkey rsa:2048 -nodes -keyout key.pem -out cert.csr -subj '/CN=pebble'; \
    printf 'subjectAltName=DNS:pebble,DNS:localhost,IP:127.0.0.1\n' >ext.cnf; \
    openssl x509 -req -in cert.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 3650 -extfile ext.cnf; \
    rm -f cert.csr ext.cnf ca.key
COPY pebble-config.json /etc/pebble/pebble-config.json
EXPOSE 14000 15000
CMD ["pebble", "-config", "/etc/pebble/pebble-config.json"]
EOF
  cat >"$ctx/pebble-config.json" <<'EOF'
{
  "pebble": {
    "listenAddress": "0.0.0.0:14000",
    "managementListenAddress": "0.0.0.0:15000",
    "certificate": "/etc/pebble/cert.pem",
    "privateKey": "/etc/pebble/key.pem",
    "httpPort": 80,
    "tlsPort": 443,
    "ocspResponderURL": "",
    "externalAccountBindingRequired": false
  }
}
EOF
}

# ---------------------------------------------------------------- berth-test/registry:1
registry_context() {
  local ctx=$1
  # The binary is Debian's (linked against glibc): the public image's layout around it, so Berth runs
  # either image the same way (its settings through REGISTRY_* variables, the command left as it is).
  debian_dockerfile "$ctx" <<'EOF'
    apt-get install -y --no-install-recommends docker-registry; \
    rm -rf /var/lib/apt/lists/*; \
    mkdir -p /var/lib/registry
COPY config.yml /etc/docker/registry/config.yml
VOLUME ["/var/lib/registry"]
EXPOSE 5000
ENTRYPOINT ["docker-registry", "serve"]
CMD ["/etc/docker/registry/config.yml"]
EOF
  cat >"$ctx/config.yml" <<'EOF'
version: 0.1
log:
  fields:
    service: registry
storage:
  cache:
    blobdescriptor: inmemory
  filesystem:
    rootdirectory: /var/lib/registry
http:
  addr: :5000
  headers:
    X-Content-Type-Options: [nosniff]
health:
  storagedriver:
    enabled: true
    interval: 10s
    threshold: 3
EOF
}

# ---------------------------------------------------------------- build what is missing or stale
debian_recipe=$( { declare -f build_debian; echo "$SUITE"; } | sha256sum | cut -c1-16)
if [ "$(recipe_of "$DEBIAN")" != "$debian_recipe" ]; then
  started=$SECONDS
  old=$(docker image inspect --format '{{.Id}}' "$DEBIAN" 2>/dev/null || true)
  build_debian "$debian_recipe"
  [ -z "$old" ] || docker image rm "$old" >/dev/null 2>&1 || true
  log "built $DEBIAN in $((SECONDS - started)) s"
fi

# The derived images build side by side (most of their time is apt downloading).
pids=()
names=()
for kind in postgres mariadb redis libsql caddy pebble registry; do
  case $kind in postgres) image=$POSTGRES ;; mariadb) image=$MARIADB ;; redis) image=$REDIS ;; libsql) image=$LIBSQL ;; caddy) image=$CADDY ;; pebble) image=$PEBBLE ;; registry) image=$REGISTRY ;; esac
  ctx=$work/$kind
  "${kind}_context" "$ctx"
  recipe=$( { echo "$debian_recipe"; (cd "$ctx" && find . -type f | sort | xargs cat); } | sha256sum | cut -c1-16)
  [ "$(recipe_of "$image")" = "$recipe" ] && continue
  log "building $image"
  (
    started=$SECONDS
    old=$(docker image inspect --format '{{.Id}}' "$image" 2>/dev/null || true)
    if ! docker build --pull=false --label "$LABEL=$recipe" -t "$image" "$ctx" >"$work/$kind.log" 2>&1; then
      tail -40 "$work/$kind.log" >&2
      log "building $image failed"
      exit 1
    fi
    [ -z "$old" ] || docker image rm "$old" >/dev/null 2>&1 || true
    log "built $image in $((SECONDS - started)) s"
  ) &
  pids+=("$!")
  names+=("$image")
done
failed=0
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { failed=1; log "${names[$i]} was not built"; }
done
exit $failed
