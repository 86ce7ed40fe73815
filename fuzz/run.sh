#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time (CTest's fuzz-* tests):
#   fuzz/run.sh TARGET SECONDS WORKDIR SEED_DIR...
# New inputs go to WORKDIR/corpus, never to the seed folders in the
# repository; a crash leaves its input in WORKDIR (crash-<sha1>) and fails
# the run with libFuzzer's report. Copy such an input into fuzz/corpus/<target>
# as a regression input once it is fixed (docs/testing.md, "Fuzzing").
# The mutations follow STRATA_FUZZ_SEED (default 1), so that a run replays
# what an earlier one did with the same binary and seeds: CI's short runs
# are regression tests; exploring is for the long runs by hand.
set -euo pipefail
tool=$1 seconds=$2 work=$3
shift 3
mkdir -p "$work/corpus"
exec "$tool" "$work/corpus" "$@" -max_total_time="$seconds" \
  -seed="${STRATA_FUZZ_SEED:-1}" -rss_limit_mb=2048 -artifact_prefix="$work/" \
  -print_final_stats=1
