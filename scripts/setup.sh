#!/usr/bin/env bash
# Installs everything msrt needs from Debian packages (skipping what is
# present) and makes the .venv from Debian's Python.
#   scripts/setup.sh            packages to build and test
#   scripts/setup.sh --bench    also the peers benchmarks compare against
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ clang libclang-rt-14-dev
  # oneDNN's CMake package looks for OpenCL (its GPU runtime); Debian only
  # recommends ocl-icd-opencl-dev, so it is named here.
  libgtest-dev libbenchmark-dev nlohmann-json3-dev libdnnl-dev ocl-icd-opencl-dev
  dataset-fashion-mnist
  python3-dev python3-venv python3-numpy python3-pytest pybind11-dev
  # MindSpore's checkpoint schema (protoc, libprotobuf); the Python module
  # builds the independent files the checkpoint tests read.
  libprotobuf-dev protobuf-compiler python3-protobuf
  # JPEG and PNG decoding for the data pipeline (src/io/image.cc).
  libturbojpeg0-dev libpng-dev
  # Collectives between processes on CPU (src/parallel/gloo).
  libgloo-dev
  # The linters `make lint` runs (scripts/lint.sh).
  clang-format clang-tidy flake8 python3-flake8-builtins python3-pep8-naming
  # The peer the gradient tests compare with, on the BLAS the benchmarks'
  # peer must run on (OpenBLAS's OpenMP build: benchmarks/peers.py loads it
  # and refuses any other; tests/python/benchmarks check that), and
  # threadpoolctl, which reports the thread pools each side loaded.
  python3-torch libopenblas0-openmp python3-threadpoolctl
)
if [[ "${1:-}" == "--bench" ]]; then
  # matplotlib draws docs/performance.png (benchmarks/report.py).
  packages+=(libtorch-dev python3-matplotlib)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -ne 0 ]] && sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "setup: creating .venv from /usr/bin/python3"
  /usr/bin/python3 -m venv --system-site-packages .venv
fi
# The package is used in place: a .pth file puts python/ on the path.
site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD/python" > "$site/msrt.pth"
# msrun (python -m msrt.parallel.cluster.run) as a command of the venv.
cat > .venv/bin/msrun.tmp <<LAUNCHER
#!$PWD/.venv/bin/python
import sys
from msrt.parallel.cluster.run import main
sys.exit(main())
LAUNCHER
chmod 755 .venv/bin/msrun.tmp
mv -f .venv/bin/msrun.tmp .venv/bin/msrun
