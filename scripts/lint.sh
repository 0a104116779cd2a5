#!/usr/bin/env bash
# The linters `make lint` and CI run; exits non-zero on any finding.
#   scripts/lint.sh [BUILD_DIR]     BUILD_DIR (default build) holds compile_commands.json
#   LINT_JOBS=N                     clang-tidy processes at once (default 2)
# 1. clang-format: every tracked C++ file matches .clang-format (scripts/format.sh --check).
# 2. clang-tidy: every src/ translation unit in compile_commands.json passes .clang-tidy,
#    its warnings taken as errors (the project's headers are checked through them).
# 3. flake8: the Python code passes .flake8.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
jobs=${LINT_JOBS:-2}
failed=()

echo "lint: clang-format"
scripts/format.sh --check || failed+=(clang-format)

echo "lint: clang-tidy"
if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "lint: $build/compile_commands.json is missing; build first (make build)" >&2
  exit 2
fi
if ! command -v clang-tidy > /dev/null; then
  echo "lint: clang-tidy is not installed (scripts/setup.sh installs it)" >&2
  exit 2
fi
mapfile -t units < <(/usr/bin/python3 - "$build/compile_commands.json" "$PWD/src/" <<'EOF'
import json, os, sys
entries = json.load(open(sys.argv[1]))
paths = {os.path.normpath(os.path.join(e["directory"], e["file"])) for e in entries}
print("\n".join(sorted(p for p in paths if p.startswith(sys.argv[2]) and p.endswith(".cc"))))
EOF
)
if ((${#units[@]} == 0)); then
  echo "lint: $build/compile_commands.json names no file under src/" >&2
  exit 2
fi
# One clang-tidy a unit; its report is printed whole (not interleaved), and only when it found something.
tidy_one='out=$(clang-tidy -p "$0" --quiet --warnings-as-errors="*" "$1" 2>&1); rc=$?
if ((rc)); then printf "%s\n" "$out" | grep -v -e "warnings\? generated\.$" -e "^Suppressed [0-9]* warnings"; fi
exit $((rc ? 1 : 0))'
if ! printf '%s\0' "${units[@]}" | xargs -0 -P "$jobs" -n 1 bash -c "$tidy_one" "$build"; then
  failed+=(clang-tidy)
fi
echo "lint: clang-tidy checked ${#units[@]} files"

echo "lint: flake8"
/usr/bin/python3 -m flake8 python tests benchmarks examples tools scripts || failed+=(flake8)

if ((${#failed[@]})); then
  echo "lint: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "lint: clean"
