#!/usr/bin/env bash
# Formats the C++ sources with clang-format (.clang-format) and names each file it changed.
#   scripts/format.sh                 every tracked C++ file, in place
#   scripts/format.sh --check         changes nothing; names the files that differ, exits 1 if any do
#   scripts/format.sh [--check] PATH...   only these files or folders
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  shift
fi
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
if ! command -v "$CLANG_FORMAT" > /dev/null; then
  echo "format: $CLANG_FORMAT is not installed (scripts/setup.sh installs it)" >&2
  exit 2
fi

# Tracked files only: build trees and third-party headers are never formatted.
mapfile -t files < <(git ls-files -- "${@:-.}" | grep -E '\.(cc|h|cu|cuh)$')

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
changed=()
for f in "${files[@]}"; do
  "$CLANG_FORMAT" --style=file "$f" > "$tmp"
  if ! cmp -s "$tmp" "$f"; then
    changed+=("$f")
    ((check)) || cp "$tmp" "$f"
  fi
done

if ((${#changed[@]} == 0)); then
  echo "format: ${#files[@]} files, all formatted"
  exit 0
fi
if ((check)); then
  for f in "${changed[@]}"; do echo "format: not formatted: $f"; done
  echo "format: ${#changed[@]} of ${#files[@]} files differ from .clang-format; scripts/format.sh fixes them" >&2
  exit 1
fi
for f in "${changed[@]}"; do echo "format: formatted $f"; done
echo "format: ${#changed[@]} of ${#files[@]} files changed"
