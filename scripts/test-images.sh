#!/usr/bin/env bash
# Builds the images the tests run, locally (no registry is reachable from our machines):
#   berth-test/busybox:1      a busybox-static tree imported as a base image (CMD ["sh"])
#   berth-test/static-httpd:2 FROM the above, serves /www on port 80 (the static builder's image in tests);
#                             its PID 1 is a shell that ends on SIGTERM (busybox httpd as PID 1 ignores it,
#                             and every stop waited the engine's 10 s before SIGKILL; :1 was that image)
# Idempotent: an image that exists is left alone. Needs busybox-static (/bin/busybox) and docker.
set -euo pipefail
log() { echo "[test-images] $*" >&2; }
BASE=berth-test/busybox:1
STATIC=berth-test/static-httpd:2
BUSYBOX=${BUSYBOX:-/bin/busybox}
has_image() { docker image inspect "$1" >/dev/null 2>&1; }

if ! has_image "$BASE"; then
  log "building $BASE from $BUSYBOX"
  case "$(ldd "$BUSYBOX" 2>&1 || true)" in
    *'not a dynamic'*) ;;
    *) log "$BUSYBOX is not a static busybox (install busybox-static)"; exit 1 ;;
  esac
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  mkdir -p "$tree/bin" "$tree/etc" "$tree/tmp" "$tree/root" "$tree/www"
  chmod 1777 "$tree/tmp"
  cp "$BUSYBOX" "$tree/bin/busybox"
  for applet in sh ls cat echo env httpd nc sleep wget uname mkdir rm cp mv ps id test true false grep sed head tail \
      awk chmod cut date find hostname kill ln sort touch tr wc which whoami xargs timeout nslookup; do
    ln -s busybox "$tree/bin/$applet"
  done
  # Debian's busybox has no printenv applet: a small stand-in with the same behaviour.
  cat >"$tree/bin/printenv" <<'EOF'
#!/bin/sh
[ $# -eq 0 ] && exec env
rc=0
for name in "$@"; do
  env | awk -v n="$name" 'BEGIN { f = 1 } index($0, n "=") == 1 { print substr($0, length(n) + 2); f = 0 } END { exit f }' || rc=1
done
exit $rc
EOF
  chmod 755 "$tree/bin/printenv"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' >"$tree/etc/passwd"
  printf 'root:x:0:\nnogroup:x:65534:\n' >"$tree/etc/group"
  tar -C "$tree" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["sh"]' - "$BASE" >/dev/null
  rm -rf "$tree"
  trap - EXIT
fi

if ! has_image "$STATIC"; then
  log "building $STATIC"
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  cat >"$ctx/Dockerfile" <<EOF
FROM $BASE
RUN mkdir -p /www
EXPOSE 80
CMD ["sh", "-c", "trap 'exit 0' TERM; httpd -f -p 80 -h /www & wait"]
EOF
  docker build -q -t "$STATIC" "$ctx" >/dev/null
  rm -rf "$ctx"
  trap - EXIT
fi
