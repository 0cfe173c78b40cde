#!/bin/bash
# The CUDA checks for a lent GPU machine (the `device` tool), in one call: unpacks the build
# made here (.dev/bundle.tar.xz: tide, libtide.so, libtide_cuda.so and the Debian libraries
# they need, which that machine lacks), takes cuBLAS and the CUDA runtime from the machine,
# then runs the CUDA tests, every op on CUDA against the CPU, and the GPU benchmark rows
# against PyTorch on the same card. Logs go to $OUT. Made here with:
#   tests/gpu/bundle.sh   (then: device run "bash tests/gpu/on_device.sh", carry .dev)
set -u
OUT=${OUT:-/tmp/tide-gpu-out}; mkdir -p "$OUT"; rm -f "$OUT"/*.log  # (steps append to their logs)
B=/tmp/tidebin; rm -rf $B; mkdir -p $B; tar -xJf .dev/bundle.tar.xz -C $B || exit 1
cub=$(find /usr/local /opt -name 'libcublas.so.13' 2>/dev/null | head -1)
export LD_LIBRARY_PATH=$B:$B/lib:${cub:+$(dirname "$cub")}:/usr/local/cuda/lib64
export TIDE_CUDA_MODULE=$B/libtide_cuda.so TIDE_FFT_MODULE=$B/libtide_fft.so
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv
ldd $B/libtide_cuda.so $B/tide | grep -i 'not found\|cublas\|cudart'
$B/tide -e 'print("cuda available:", torch.cuda.is_available(), torch.cuda.unavailable_reason())'
# step NAME LIMIT CMD...: runs CMD into $OUT/$LOG.log (LOG defaults to NAME; at most 8 files
# come back from the machine, so related steps share one log) and prints its summary lines.
step() { local name=$1 limit=$2 log="$OUT/${LOG:-$1}.log"; shift 2; local t0=$(date +%s)
  echo "==== $name" >> "$log"; timeout "$limit" "$@" >> "$log" 2>&1; local rc=$?
  echo "== $name: exit $rc in $(( $(date +%s) - t0 )) s"
  sed -n "/^==== $name\$/,\$p" "$log" | grep -E 'FAIL|passed|failed|skipped|rror' | tail -${TAIL:-25}; }
step test_cuda 150 $B/tide tests/lua/test_cuda.lua
step devicecheck 240 $B/tide tests/conformance/devicecheck.lua
step devicecheck_reversed 240 $B/tide tests/conformance/devicecheck.lua cuda reversed
# The CUDA sections of the other test files (optimizers, nn utilities, autocast, keywords,
# the two-layer scripts with --device cuda against NumPy run by the machine's python3).
export TIDE_PYTHON=$(command -v ${PYTHON:-python3})
for t in test_optim_more test_nn_utils test_amp test_keywords test_tensor test_two_layer test_compile; do
  LOG=cuda_sections step $t 90 $B/tide tests/lua/$t.lua
done
# capturable Adam/AdamW against PyTorch's on the same card.
LOG=cuda_sections step adam_capturable 60 ${PYTHON:-python3} tests/gpu/adam_capturable.py $B/tide
# torch.compile's CUDA graphs and replays under compute-sanitizer (invalid device accesses).
if command -v compute-sanitizer >/dev/null; then
  LOG=cuda_sections TAIL=8 step memcheck_test_compile 240 compute-sanitizer --tool memcheck --leak-check no \
    --error-exitcode 9 $B/tide tests/lua/test_compile.lua
fi
# complex tensors and FFTs stay on the CPU; the device column checks their refusals there.
step test_fft 60 $B/tide tests/lua/test_fft.lua
step bench 150 ${PYTHON:-python3} bench/run.py --tide $B/tide --python ${PYTHON:-python3} --rounds 1 \
  --repeats 5 --startup-runs 1 --filter w10_,c10_ --out "$OUT/results.md" --chart "$OUT/results.png"
grep -E '^\| [wc]10' "$OUT/results.md"
