#!/usr/bin/env bash
# The README's demo: run the main job on its small default and print where the results are.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
BUILD=${BUILD:-build}
exec "$BUILD/sapo" demo experiments/model_demo.ini --steps 2000 "$@"
