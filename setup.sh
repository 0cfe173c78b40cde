#!/usr/bin/env bash
# Sets tide up on a Debian machine and runs it:
#   bash setup.sh demo   install what is missing, configure, build, run the main demo
#   bash setup.sh test   the same set-up, then every test (what CI runs)
#   bash setup.sh build  set-up and build only
# Run as root on a fresh machine (it uses apt-get); as another user it only builds.
set -euo pipefail
cd "$(dirname "$0")"

# Debian packages: the build (meson, ninja, g++, pkg-config), the libraries tide links
# (Lua 5.4, OpenBLAS with LAPACKE, zlib, doctest for the C++ tests, libedit for the REPL's
# line editing), FFTW for the FFT module libtide_fft.so (np.fft, torch.fft), OpenMPI for
# torch.distributed's module libtide_mpi.so (and mpirun to start ranks) and, for the tests
# and benchmarks, NumPy and PyTorch (the references: the
# DLPack exchange test hands tensors to PyTorch, and bench/ times both).
packages=(g++ meson ninja-build pkg-config liblua5.4-dev lua5.4 libopenblas-dev liblapacke-dev
          zlib1g-dev doctest-dev libdlpack-dev libedit-dev libfftw3-dev libopenmpi-dev openmpi-bin python3 python3-numpy python3-torch)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing Debian packages (run as root to install): ${missing[*]}" >&2
    exit 1
  fi
  echo "setup: installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -f build/build.ninja ]; then
  meson setup build --buildtype=release >/dev/null
fi
build_start=$SECONDS
ninja -C build
echo "setup: build took $((SECONDS - build_start)) s"

case "${1:-demo}" in
  demo) exec build/tide scripts/demo.lua ;;
  test) exec bash tests/run_all.sh ;;
  build) ;;
  *) echo "usage: bash setup.sh [demo|test|build]" >&2; exit 2 ;;
esac
