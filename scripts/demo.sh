#!/usr/bin/env bash
# Sets up and builds mp, then runs the main job on a TTS decoder: import the
# ONNX model, assign fp16/fp32 per op from the built-in policy, insert casts,
# show what it did (summary, precision report, plan and IR written to
# build/demo/), run it on the CPU in fp32 and mixed precision and compare
# with onnxruntime's reference outputs, then compile it ahead of time into
# shared libraries for the CPU and for CUDA (sm_80, sm_90) with mp-compile.
#
#   scripts/demo.sh [MODEL.onnx]     (default: examples/tts_decoder/model.onnx)
set -euo pipefail

# Resolve a user-given model path against the caller's cwd before setup cds.
model="${1:-}"
if [ -n "$model" ]; then
  [ -f "$model" ] || { echo "error: no such model: $model" >&2; exit 1; }
  model="$(cd "$(dirname "$model")" && pwd)/$(basename "$model")"
fi

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"
mp_setup

model="${model:-examples/tts_decoder/model.onnx}"
mp_opt="$MP_BUILD/bin/mp-opt"
[ -x "$mp_opt" ] || { echo "error: $mp_opt not built" >&2; exit 1; }

out="$MP_BUILD/demo"
mkdir -p "$out"
name="$(basename "$(dirname "$model")")"

mp_banner "1. Import: what mp sees of ${model#"$MP_ROOT"/} (--mp-model-summary)"
"$mp_opt" "$model" --mp-model-summary -o /dev/null

mp_banner "2. Mixed precision: the decisions (--mp-mixed-precision report=1)"
"$mp_opt" "$model" \
  --mp-mixed-precision="report=1 plan=$out/$name.plan.json" \
  --mlir-elide-resource-strings-if-larger=64 -o "$out/$name.mixed.mlir"

mp_banner "3. What it wrote"
echo "plan (every node's decision and rule; usable as a policy): ${out#"$MP_ROOT"/}/$name.plan.json"
echo "mixed-precision IR: ${out#"$MP_ROOT"/}/$name.mixed.mlir"
echo "first decisions in the IR:"
grep -m 4 -o 'mp\.[a-z_.]* [^{]*{mp.precision = #mp.precision<[^>]*>' "$out/$name.mixed.mlir" |
  sed 's/^/  /'
echo "casts in the IR: $(grep -c 'mp.cast' "$out/$name.mixed.mlir" || true)"

data="$(dirname "$model")/test_data_set_0"
if [ -d "$data" ]; then
  mp_banner "4. Run it on the CPU (JIT) and compare with onnxruntime's outputs"
  mp_run="$MP_BUILD/bin/mp-run"
  echo "fp32:"
  "$mp_run" "$model" --compare "$data"
  echo
  echo "mixed precision (fp16 where the plan says so; fp16-scale tolerance):"
  "$mp_run" "$model" --compare "$data" --precision mixed
fi

if [ -d "$data" ]; then
  mp_compile="$MP_BUILD/bin/mp-compile"
  mp_banner "5. Compile it ahead of time (mp-compile), mixed precision, CPU target"
  "$mp_compile" "$model" --precision mixed --shapes-from "$data" \
    -o "$out/cpu/lib$name.so"
  echo "run through the runtime alone (libmp_runtime.so, no MLIR):"
  "$mp_run" "$out/cpu/lib$name.so" --compare "$data"

  mp_banner "6. The CUDA target: kernels compiled by ptxas for sm_80 and sm_90"
  if "$mp_compile" "$model" --precision mixed --shapes-from "$data" \
      --target cuda --gpu sm_80,sm_90 -o "$out/cuda/lib$name.so"; then
    echo "kernels per architecture: $("$mp_compile" "$model" --precision mixed \
      --shapes-from "$data" --target cuda --gpu sm_90 --emit ptx -o - 2>/dev/null |
      grep -c '^\.visible \.entry')"
    echo "description: ${out#"$MP_ROOT"/}/cuda/lib$name.json"
    set +e
    "$mp_run" "$out/cuda/lib$name.so" --compare "$data"
    rc=$?
    set -e
    case "$rc" in
      0) ;;
      3|4|5) echo "(no usable GPU here: mp-run exited with the runtime's status $rc, see docs/runtime.md)" ;;
      *) exit "$rc" ;;
    esac
  else
    echo "(the CUDA target needs the CUDA toolkit's ptxas: see docs/compile.md)"
  fi
fi
