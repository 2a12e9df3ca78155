#!/usr/bin/env bash
# Starts what the tests need and prints the environment for them (eval "$(bash scripts/services.sh)").
# Idempotent: checks before it installs or starts anything. Debian, root.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive NEEDRESTART_SUSPEND=1
log() { echo "[services] $*" >&2; }
apt_install() {
  [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >&2; APT_UPDATED=1; }
  apt-get install -y -qq --no-install-recommends "$@" >&2
}

# ---- PostgreSQL (the tests' external database)
if ! command -v pg_lsclusters >/dev/null; then log "installing postgresql"; apt_install postgresql; fi
PG_VERSION=$(pg_lsclusters -h | awk '{print $1}' | sort -n | tail -1)
if [ -z "$PG_VERSION" ]; then
  PG_VERSION=$(ls /usr/lib/postgresql | sort -n | tail -1)
  pg_createcluster "$PG_VERSION" main >&2
fi
if ! pg_lsclusters -h | awk -v v="$PG_VERSION" '$1==v && $2=="main" && $4 ~ /online/' | grep -q .; then
  log "starting postgresql $PG_VERSION"
  pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" main start >&2 || pg_ctlcluster "$PG_VERSION" main start >&2
fi
PG_PORT=$(pg_lsclusters -h | awk -v v="$PG_VERSION" '$1==v && $2=="main" {print $3}')
for _ in $(seq 50); do su postgres -c "psql -p $PG_PORT -qtAc 'select 1'" >/dev/null 2>&1 && break; sleep 0.2; done
# Works with trust auth (as on our machines) and with password auth (a stock Debian install).
su postgres -c "psql -p $PG_PORT -qtAc \"alter role postgres password 'postgres'\"" >/dev/null
# ---- Docker engine in swarm mode (workloads run here; no registry is reachable, images are built locally)
if ! command -v dockerd >/dev/null; then log "installing docker.io"; apt_install docker.io; fi
if ! docker info >/dev/null 2>&1; then
  log "starting dockerd"
  mkdir -p /var/log/berth
  nohup dockerd >>/var/log/berth/dockerd.log 2>&1 &
  for _ in $(seq 120); do docker info >/dev/null 2>&1 && break; sleep 0.5; done
  docker info >/dev/null 2>&1 || { tail -20 /var/log/berth/dockerd.log >&2; exit 1; }
fi
if [ "$(docker info --format '{{.Swarm.LocalNodeState}}')" != active ]; then
  log "initialising swarm mode"
  docker swarm init --advertise-addr 127.0.0.1 >/dev/null
fi

# ---- The Compose program for compose stacks of type docker-compose: the v2 plugin when the CLI has
# it, else Debian's docker-compose (v1); `docker stack deploy` is part of the Docker CLI itself
if ! docker compose version >/dev/null 2>&1 && ! command -v docker-compose >/dev/null; then log "installing docker-compose"; apt_install docker-compose; fi

# ---- A real container registry for the registry plugin's tests (plugins/registry/test): Debian's
# docker-registry (distribution 2.8), run by the tests on a loopback port, which the engine trusts
if ! command -v docker-registry >/dev/null; then log "installing docker-registry"; apt_install docker-registry; fi

# ---- The monitoring plugin's reference (plugins/monitoring/test/node-exporter.test.ts): Debian's
# prometheus-node-exporter, which the test runs on a loopback port beside Berth's collector (its
# package's own service is not started: the test starts and stops it)
if ! [ -x /usr/bin/prometheus-node-exporter ]; then log "installing prometheus-node-exporter"; apt_install prometheus-node-exporter; fi

# ---- OpenSSH server: git clones over SSH (the suites start their own sshd on a free port)
if ! [ -x /usr/sbin/sshd ]; then log "installing openssh-server"; apt_install openssh-server; fi

# ---- Remote test hosts (test/kit/remote-hosts.ts): network namespaces and a bridge (iproute2),
# nsenter and unshare (util-linux), each host's own dockerd and sshd (above), its user's sudo
if ! command -v ip >/dev/null; then log "installing iproute2"; apt_install iproute2; fi
if ! command -v nsenter >/dev/null || ! command -v unshare >/dev/null; then log "installing util-linux"; apt_install util-linux; fi
if ! [ -x /usr/bin/sudo ]; then log "installing sudo"; apt_install sudo; fi

# ---- A local package repository for server.setup's install steps (plugins/server/test/setup-install.test.ts):
# Debian's docker.io, docker-compose, containerd and runc with their index, in a directory every test
# host sees; a host with Docker and Compose hidden installs them from it, as a server would from its
# distribution's mirror
APT_REPO=/var/cache/berth-apt-repo
if ! [ -s "$APT_REPO/Packages" ] || ! ls "$APT_REPO"/docker.io_*.deb >/dev/null 2>&1; then
  log "filling the local package repository $APT_REPO"
  command -v dpkg-scanpackages >/dev/null || apt_install dpkg-dev
  [ -n "${APT_UPDATED:-}" ] || { apt-get update -qq >&2; APT_UPDATED=1; }
  mkdir -p "$APT_REPO"
  (cd "$APT_REPO" && apt-get download -q docker.io docker-compose containerd runc >&2 && dpkg-scanpackages --multiversion . /dev/null >Packages.new 2>/dev/null && mv Packages.new Packages)
fi

# ---- Test images, built locally from busybox-static (no registry is reachable)
if ! dpkg -s busybox-static >/dev/null 2>&1; then log "installing busybox-static"; apt_install busybox-static; fi
bash "$(dirname "$0")/test-images.sh"
# Database images (postgres, mariadb, redis) from a debootstrapped Debian; a few minutes the first time
if ! command -v debootstrap >/dev/null; then log "installing debootstrap"; apt_install debootstrap; fi
bash "$(dirname "$0")/db-images.sh"

echo "export BERTH_TEST_PG=postgresql://postgres:postgres@127.0.0.1:$PG_PORT/postgres"
