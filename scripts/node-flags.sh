#!/usr/bin/env bash
# The Node options of a production start: the compiled build. BERTH_NODE_PROFILE=small adds
# --optimize-for-size: about 30 MB less right after start and 170 MB less right after heavy
# load, but half the requests per second; 35 s after activity both settle at the same RSS
# (V8 gives memory back by itself), so the default keeps the faster V8. Figures: docs/benchmarks.md.
flags="--conditions=berth-js"
# The bundled dependencies (scripts/bundle-deps.ts, made by scripts/build.sh) replace their
# hundreds of installed modules: about 30 MB less resident memory.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ -f "$root/core/vendor/manifest.json" ] && flags="$flags --import=$root/core/src/bundled-deps.js"
# A young generation of 1 MB semi-spaces instead of up to 16 MB: 13-16 MB less resident memory
# (bench/api.ts: idle 139 -> 123 MB, after 200 projects and sequential requests 148 -> 135 MB),
# no measurable cost on an allocation-heavy loop shaped like project.all.
flags="$flags --max-semi-space-size=1"
# A full collection once the old generation has grown 20 % past what the last one kept, instead of
# letting it grow up to V8's initial limit first: after 200 projects and 1,200 sequential requests
# 189 -> 127 MB (50 %: 142 MB), no measurable latency cost (bench/api.ts, external PostgreSQL).
flags="$flags --heap-growing-percent=20"
# One V8 worker thread instead of four (concurrent marking, parallel scavenges and background
# compiles share it): on 2 cores shared with the database and the client, after 200 projects and
# 1,200 sequential requests 124.7 MB instead of 126.8-130.0, 35 s later 111.7-112.2 instead of
# 116.8-117.4, and project.all p99 13.4-18.0 ms instead of 18.1-21.9 (bench/api.ts, two runs each).
flags="$flags --v8-pool-size=1"
[ "${BERTH_NODE_PROFILE:-default}" = small ] && flags="$flags --optimize-for-size"
# Further flags from the operator (V8 flags, which NODE_OPTIONS refuses): e.g. bench/api.ts --env BERTH_NODE_FLAGS=...
[ -n "${BERTH_NODE_FLAGS:-}" ] && flags="$flags $BERTH_NODE_FLAGS"
echo "$flags"
