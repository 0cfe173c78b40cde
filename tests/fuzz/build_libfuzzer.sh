#!/usr/bin/env bash
# Builds the file-format fuzz targets (tests/fuzz/file_fuzz.cpp) as a coverage-guided libFuzzer
# binary, build-libfuzzer/file_fuzz (docs/fuzzing.md). Needs clang with libFuzzer (Debian:
# clang, libclang-rt-dev or libfuzzer-*-dev) and the release build (build/). The readers
# (tensor/io/*.cpp) are compiled into the binary with coverage, ASan and UBSan; the rest of
# the engine comes from build/libtide.so (uninstrumented), whose copies of the readers the
# binary's own take the place of.
#   bash tests/fuzz/build_libfuzzer.sh
#   mkdir -p corpus-npy && TIDE_FUZZ_TARGET=npy build-libfuzzer/file_fuzz -max_total_time=600 \
#     corpus-npy tests/fuzz/corpus/npy tests/data
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -f build/libtide.so ] || { echo "build_libfuzzer.sh: build the release build (ninja -C build) first" >&2; exit 1; }
mkdir -p build-libfuzzer
clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -DTIDE_LIBFUZZER \
  -I. tests/fuzz/file_fuzz.cpp tensor/io/*.cpp -o build-libfuzzer/file_fuzz \
  -Lbuild -ltide -lz -pthread -Wl,-rpath,"$PWD/build"
echo "built build-libfuzzer/file_fuzz"
