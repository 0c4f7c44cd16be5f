#!/usr/bin/env bash
# Builds everything the GPU benchmark needs, on a machine WITHOUT a GPU.
#
#   bash bench/gpu/build.sh [NAME-FILTER]      # e.g. openwakeword_hello_deepa
#
# The GPU machine has no MLIR/LLVM (mp-compile and mp-run cannot run there),
# so every library is compiled here: for each model (../shared/models/* and
# examples/*, those with model.onnx and test_data_set_0), in fp32 and mixed,
# a CUDA library for sm_90 and a CPU library. The CPU library is run here and
# its outputs are the reference the CUDA library is compared with there
# (bench/gpu/prepare.py). The output folder travels to the GPU machine with
# the device tool's `carry`, which takes at most 64 MiB, hence the size check.
#
# NAME-FILTER (optional): only model folders whose name contains it.
# ARTIFACTS (env, default bench/gpu/artifacts): where everything goes; it is
# emptied first. Exit status: 1 if any compile or reference run failed (the
# rest is still built and listed in manifest.json) or the folder is too big.
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
FILTER=${1:-}
ART=${ARTIFACTS:-bench/gpu/artifacts}
# The CUDA libraries' architecture: sm_90 (H200 cubins), or compute_80 (PTX)
# for a dry run on the PTX emulator (run.sh --device emulator).
export MP_GPU_ARCH=${MP_GPU_ARCH:-sm_90}
GPU_ARCH=$MP_GPU_ARCH
PY=${PYTHON:-$REPO/.venv/bin/python}
# mp's build: $MP_BUILD_DIR (absolute, or relative to the repository), else build/.
BUILD=${MP_BUILD_DIR:-build}
case "$BUILD" in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
MP_COMPILE=$BUILD/bin/mp-compile
RUNTIME=$BUILD/lib/libmp_runtime.so
MAX_MIB=${MAX_MIB:-56}   # 64 MiB carry limit, less the repo (~3 MiB) and slack
export PYTHONPATH=$REPO/python${PYTHONPATH:+:$PYTHONPATH}

# The binaries may be relinked by someone else for a moment: wait for them.
for f in "$MP_COMPILE" "$RUNTIME"; do
  for _ in $(seq 30); do [ -x "$f" ] && break; echo "waiting for $f"; sleep 2; done
  [ -x "$f" ] || { echo "error: $f is missing (build mp first)"; exit 2; }
done
# python/mp/library.py binds mp_cuda_memory_stats; a runtime without it is
# stale, and shipping it would waste GPU time on a load failure.
if ! "$PY" -c 'import ctypes, sys; ctypes.CDLL(sys.argv[1]).mp_cuda_memory_stats' "$RUNTIME" 2>/dev/null; then
  echo "error: $RUNTIME lacks mp_cuda_memory_stats (older than python/mp/library.py): rebuild mp_runtime"
  exit 2
fi
command -v ptxas >/dev/null || [ -x "${CUDA_HOME:-/usr/local/cuda}/bin/ptxas" ] ||
  { echo "error: no ptxas (CUDA toolkit): the CUDA libraries cannot be built"; exit 2; }

MODELS=()
for d in ../shared/models/*/ examples/*/; do
  d=${d%/}; name=$(basename "$d")
  [ -f "$d/model.onnx" ] && [ -d "$d/test_data_set_0" ] || continue
  [[ -z $FILTER || $name == *"$FILTER"* ]] || continue
  MODELS+=("$d")
done
[ ${#MODELS[@]} -gt 0 ] || { echo "error: no model matches '$FILTER'"; exit 2; }

rm -rf "$ART"; mkdir -p "$ART"
echo "building ${#MODELS[@]} model(s) into $ART"
failed=0
compile() {  # model-dir name precision target: one library; log beside it
  local dir=$1 name=$2 p=$3 t=$4 out="$ART/$2/$3/$4"
  local args=(--target "$t"); [ "$t" = cuda ] && args+=(--gpu "$GPU_ARCH")
  mkdir -p "$out"
  "$MP_COMPILE" "$dir/model.onnx" --shapes-from "$dir/test_data_set_0" "${args[@]}" \
      --precision "$p" -o "$out/lib$name.so" >"$out/compile.log" 2>&1
}
t0=$SECONDS
for dir in "${MODELS[@]}"; do
  name=$(basename "$dir")
  for p in fp32 mixed; do
    # The two targets compile in parallel (this machine has few cores).
    compile "$dir" "$name" "$p" cuda & c=$!
    compile "$dir" "$name" "$p" cpu & h=$!
    wait $c; rc_c=$?; wait $h; rc_h=$?
    for t in cuda cpu; do
      rc=$rc_c; [ $t = cpu ] && rc=$rc_h
      if [ "$rc" = 0 ]; then
        cp "$RUNTIME" "$ART/$name/$p/$t/"   # found beside the library (rpath $ORIGIN)
        echo "  [$((SECONDS - t0))s] $name $p $t: ok"
      else
        failed=1
        echo "  [$((SECONDS - t0))s] $name $p $t: FAILED (exit $rc), $ART/$name/$p/$t/compile.log:"
        tail -3 "$ART/$name/$p/$t/compile.log" | sed 's/^/      /'
      fi
    done
  done
done

echo "converting test sets, running the CPU libraries for reference outputs"
"$PY" bench/gpu/prepare.py "$ART" "$RUNTIME" "${MODELS[@]}" || failed=1

# The TTS decoder compiled with ARGS into $ART/CHECK/P/T/libdec.so for
# both precisions and targets, then `CHECK.py prepare` (its CPU reference).
decoder_check() {  # CHECK ARGS...
  local check=$1; shift
  for p in fp32 mixed; do
    for t in cpu cuda; do
      local out="$ART/$check/$p/$t" args=(--target "$t")
      [ "$t" = cuda ] && args+=(--gpu "$GPU_ARCH")
      mkdir -p "$out"
      if "$MP_COMPILE" examples/tts_decoder/model.onnx "$@" "${args[@]}" \
          --precision "$p" -o "$out/libdec.so" >"$out/compile.log" 2>&1; then
        cp "$RUNTIME" "$out/"
        echo "  $check $p $t: ok"
      else
        failed=1; echo "  $check $p $t: FAILED, $out/compile.log"
      fi
    done
  done
  "$PY" "bench/gpu/$check.py" prepare "$ART" || failed=1
}

# A decode loop with in-place KV caches and the flash attention kernels
# (bench/gpu/kv_decode.py): the TTS decoder fused, 64-position caches.
if [[ -z $FILTER || tts_decoder == *"$FILTER"* || kv_decode == *"$FILTER"* ]]; then
  pins=(--input-shape mel_frame=2x1x80 --input-shape encoder_out=2x10x128)
  for l in 0 1; do for kind in key value; do
    pins+=(--input-shape "past_${kind}_$l=2x4x0x32")
  done; done
  decoder_check kv_decode --fuse-attention --max-seq-len 64 "${pins[@]}"
fi

# One library for every shape (bench/gpu/dynamic.py): the decoder with
# --dynamic-shapes, its grids sized at run time on CUDA.
if [[ -z $FILTER || tts_decoder == *"$FILTER"* || dynamic == *"$FILTER"* ]]; then
  decoder_check dynamic --dynamic-shapes
fi

kib=$(du -sk "$ART" | cut -f1)
echo "artifacts: $ART, $((kib / 1024)) MiB ($kib KiB; limit $MAX_MIB MiB)"
if [ $((kib / 1024)) -ge "$MAX_MIB" ]; then
  echo "error: too big to carry to the GPU machine"; exit 1
fi
[ $failed = 0 ] || echo "some builds FAILED (see above); the others are usable"
exit $failed
