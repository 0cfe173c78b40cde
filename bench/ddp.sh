#!/usr/bin/env bash
# DistributedDataParallel on 1 and 2 ranks, one engine thread each (bench/ddp.lua says what
# each line measures). docs/distributed.md records the numbers and models larger jobs.
#   bash bench/ddp.sh [build/tide] [steps]
set -euo pipefail
cd "$(dirname "$0")/.."
tide=${1:-build/tide}
steps=${2:-20}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
for n in 1 2; do
  mpirun --oversubscribe --bind-to core -n "$n" "$tide" bench/ddp.lua "$steps"
done
