#!/bin/bash
# Packs the release build (with the FFT module) and the Debian libraries it links (which the GPU machine's image
# lacks) into .dev/bundle.tar.xz for tests/gpu/on_device.sh; .dev/ stays out of git.
set -eu
cd "$(dirname "$0")/../.."
grep -qx '/.dev/' .git/info/exclude 2>/dev/null || echo /.dev/ >> .git/info/exclude
s=$(mktemp -d); mkdir -p $s/lib .dev
cp build/tide build/libtide.so build/libtide_cuda.so build/libtide_fft.so $s/
for l in liblua5.4.so.0 libblas.so.3 liblapack.so.3 liblapacke.so.3 libtmglib.so.3 libgfortran.so.5 \
         libquadmath.so.0 libedit.so.2 libbsd.so.0 libmd.so.0 libfftw3.so.3 libfftw3f.so.3; do
  cp -L /lib/x86_64-linux-gnu/$l $s/lib/
done
cp -L /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0 $s/lib/
strip --strip-unneeded $s/tide $s/*.so $s/lib/*
tar -C $s -cf - . | xz -T2 -6 > .dev/bundle.tar.xz
rm -rf $s; ls -la .dev/bundle.tar.xz
