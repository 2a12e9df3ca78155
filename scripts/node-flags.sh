#!/usr/bin/env bash
# The Node options of a production start: the compiled build, and V8 sized for a small
# footprint unless BERTH_NODE_PROFILE=throughput (about 2x the requests per second under
# heavy concurrent load, for about 30 MB more at idle and 170 MB more after load; see the
# benchmark figures in the README).
flags="--conditions=berth-js"
[ "${BERTH_NODE_PROFILE:-small}" = throughput ] || flags="$flags --optimize-for-size"
echo "$flags"
