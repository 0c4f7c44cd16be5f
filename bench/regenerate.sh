#!/usr/bin/env bash
# Regenerates bench pages from a clean commit, one after the other (each page
# names the commit it measured; a modified tree would be marked on it).
#
#   bash bench/regenerate.sh [PAGE ...]     # e.g. fuzz-import import conformance
#
# With no PAGE: every page whose script needs no GPU and no torch venv, in the
# order below. corpus (over an hour on one core), compile (~16 min, mostly
# onnxconverter-common), precision-search (~30 min) and calibration (~50 min; its AutoCast columns need the scratch venv
# /tmp/modelopt-venv) run only when named. Each
# page's own script has the options; this only runs them with their defaults.
# Refuses to run on a tree with uncommitted tracked changes.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
PY=${PYTHON:-.venv/bin/python}

if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  echo "bench/regenerate.sh: the tree has uncommitted changes; commit them first" >&2
  exit 2
fi

declare -A CMD=(
  [fuzz-import]="$PY bench/fuzz-import.py"
  [import]="$PY bench/import.py"
  [conformance]="$PY bench/conformance.py"
  [arena]="$PY bench/arena.py"
  [kernels]="$PY bench/kernels.py"
  [precision]="$PY bench/precision.py"
  [emulator]="$PY bench/emulator.py"
  [kv_cache]="$PY bench/kv_cache.py"
  [training]="$PY bench/training.py"
  [cpu]="$PY bench/cpu.py -o bench/cpu.md"
  [corpus]="$PY bench/corpus.py"
  [precision-search]="$PY bench/precision_search.py"
  [calibration]="$PY bench/calibration.py"
  [compile]="$PY bench/compile.py"
)
ORDER=(fuzz-import import conformance arena kernels precision emulator kv_cache training cpu)

pages=("$@")
[ ${#pages[@]} -gt 0 ] || pages=("${ORDER[@]}")
for page in "${pages[@]}"; do
  [ -n "${CMD[$page]:-}" ] || { echo "unknown page '$page' (known: ${!CMD[*]})" >&2; exit 2; }
done
for page in "${pages[@]}"; do
  echo "==> bench/$page.md: ${CMD[$page]} ($(date -u +%H:%M:%S) UTC)"
  start=$(date +%s)
  ${CMD[$page]}
  echo "    done in $(( $(date +%s) - start )) s"
done
