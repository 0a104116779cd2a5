#!/usr/bin/env bash
# Builds the libFuzzer target with clang and runs it for $1 seconds (default 60).
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-60}
out=build-fuzz
mkdir -p "$out" "$out/corpus"
cp -n tests/fuzz/corpus/* "$out/corpus/" 2>/dev/null || true
sources=$(ls src/core/*.cc src/context/*.cc src/memory/*.cc src/kernels/no_cuda/*.cc)
clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
  -Iinclude -Isrc $sources tests/fuzz/context_parsers_fuzz.cc -o "$out/context_parsers_fuzz" -lpthread
# Crashes land in $out; new interesting inputs in $out/corpus.
"$out/context_parsers_fuzz" -max_total_time="$seconds" -max_len=512 -artifact_prefix="$out/" "$out/corpus"
