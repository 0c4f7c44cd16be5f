#!/usr/bin/env bash
# The one command for the GPU machine (device tool):  bash bench/gpu/run.sh
#
# Runs bench/gpu/run.py on the CUDA libraries that bench/gpu/build.sh built
# on a machine without a GPU (carried as bench/gpu/artifacts). Results go to
# $OUT (the device tool sets it; default ./gpu-out). Extra arguments go to
# run.py (e.g. --only tts_decoder, or --device cpu for a dry run here).
# `timeout` is the hard guard: a kernel stuck inside the driver cannot be
# interrupted from Python, and run.py has already written what it finished.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
PY=${PYTHON:-python3}
# --device emulator: the CUDA libraries on the PTX emulator (a dry run of
# the GPU path here; build with MP_GPU_ARCH=compute_80).
DEVICE=cuda
[[ " $* " == *" --device cpu "* ]] && DEVICE=cpu
[[ " $* " == *" --device emulator "* ]] && DEVICE=emulator
# Emulated kernels take seconds: the time guards grow to match.
if [ $DEVICE = emulator ]; then
  : "${MP_BENCH_TIMEOUT:=1200}" "${MP_KV_TIMEOUT:=600}" "${MP_DYNAMIC_TIMEOUT:=600}"
  set -- "$@" --budget "$((MP_BENCH_TIMEOUT - 30))"
fi
if [ $DEVICE = cuda ]; then
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
    echo "error: no NVIDIA GPU here (nvidia-smi missing or failing)"; exit 3
  fi
fi
if [ ! -f bench/gpu/artifacts/manifest.json ]; then
  echo "error: bench/gpu/artifacts/manifest.json missing: run bash bench/gpu/build.sh on the build"
  echo "machine and carry bench/gpu/artifacts"; exit 3
fi
PYTHONUNBUFFERED=1 timeout -k 10 "${MP_BENCH_TIMEOUT:-330}" "$PY" bench/gpu/run.py --out "$OUT" "$@"
rc=$?
[ $rc = 124 ] && echo "run.py hit the ${MP_BENCH_TIMEOUT:-330} s limit; partial results kept"
CHECK_DEVICE=(); [ $DEVICE = emulator ] && CHECK_DEVICE=(emulator)
if [ -d bench/gpu/artifacts/kv_decode ] && [ $DEVICE != cpu ]; then
  # With CUDA graphs (each step captured again, the graph updated) and without.
  PYTHONUNBUFFERED=1 timeout -k 5 "${MP_KV_TIMEOUT:-60}" "$PY" bench/gpu/kv_decode.py run \
    bench/gpu/artifacts "$OUT" "${CHECK_DEVICE[@]}" || rc=$((rc == 0 ? 1 : rc))
  MP_CUDA_GRAPHS=0 PYTHONUNBUFFERED=1 timeout -k 5 "${MP_KV_TIMEOUT:-60}" "$PY" \
    bench/gpu/kv_decode.py run bench/gpu/artifacts "$OUT" "${CHECK_DEVICE[@]}" \
    || rc=$((rc == 0 ? 1 : rc))
fi
if [ -d bench/gpu/artifacts/dynamic ] && [ $DEVICE != cpu ]; then
  PYTHONUNBUFFERED=1 timeout -k 5 "${MP_DYNAMIC_TIMEOUT:-40}" "$PY" bench/gpu/dynamic.py run \
    bench/gpu/artifacts "$OUT" "${CHECK_DEVICE[@]}" || rc=$((rc == 0 ? 1 : rc))
fi
echo "results: $OUT/results.md, $OUT/results.json, $OUT/kv_decode.md (graphs), $OUT/kv_decode_plain.md and $OUT/dynamic.md (exit $rc)"
exit $rc
