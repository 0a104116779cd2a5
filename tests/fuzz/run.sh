#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for $1
# seconds (default 60), starting from its committed corpus. TARGETS="a b"
# picks targets; JOBS sets the build's parallelism. Prints the executions of
# each target.
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
out=build-fuzz
targets=${TARGETS:-context_parsers checkpoint mindspore_checkpoint mnist_idx print_file graph_file graph_record image store_protocol}
make -s -f tests/fuzz/fuzz.mk -j "${JOBS:-2}" OUT="$out" TARGETS="$targets"
status=0
for target in $targets; do
  corpus="$out/corpus/$target"
  mkdir -p "$corpus"
  cp -n tests/fuzz/corpus/"$target"/* "$corpus/" 2>/dev/null || true
  # Crashes land in $out/<target>-crash-*; new interesting inputs in $corpus.
  log="$out/$target.log"
  if ! "$out/${target}_fuzz" -max_total_time="$seconds" -max_len=4096 -timeout=10 -rss_limit_mb=4096 \
      -artifact_prefix="$out/$target-" "$corpus" > "$log" 2>&1; then
    status=1
    tail -n 40 "$log"
  fi
  runs=$(grep -o 'Done [0-9]* runs' "$log" | tail -n 1 || true)
  echo "$target: ${runs:-no summary} in ${seconds}s (log: $log)"
done
exit $status
