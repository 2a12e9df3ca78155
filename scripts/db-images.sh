#!/usr/bin/env bash
# Builds the database images the tests run, locally (no registry is reachable from our machines):
#   berth-test/debian:12    a Debian bookworm minbase root from debootstrap, imported as a base image
#   berth-test/postgres:1   PostgreSQL 15, honouring the public postgres image's environment
#   berth-test/mariadb:1    MariaDB 10.11, honouring the public mariadb/mysql images' environment
#   berth-test/redis:1      Redis 7, run like the public redis image
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
for kind in postgres mariadb redis caddy pebble registry; do
  case $kind in postgres) image=$POSTGRES ;; mariadb) image=$MARIADB ;; redis) image=$REDIS ;; caddy) image=$CADDY ;; pebble) image=$PEBBLE ;; registry) image=$REGISTRY ;; esac
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
