#!/usr/bin/env bash
# The Node options of a production start: the compiled build, and a V8 tuned for a small
# footprint (see the benchmark figures in the README).
echo "--conditions=berth-js --optimize-for-size"
