#!/usr/bin/env bash
# Sets up and builds mp, then imports an ONNX model with mp-opt and prints the
# model summary (--mp-model-summary): inputs/outputs, op counts, parameters.
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

mp_banner "Model summary"
echo "model: ${model#"$MP_ROOT"/}"
echo "shows: the model as imported into the mp dialect (mp-opt --mp-model-summary)"
echo
"$mp_opt" "$model" --mp-model-summary -o /dev/null
