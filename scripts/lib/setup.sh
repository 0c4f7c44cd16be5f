# shellcheck shell=bash
# Common setup for scripts/test.sh and scripts/demo.sh. Source it, then call
# `mp_setup`. It can also be run directly: `bash scripts/lib/setup.sh`.
#
#   1. installs the Debian packages the build needs (only those missing);
#   2. creates/refreshes the Python venv in .venv from python/requirements.txt;
#   3. configures CMake into $MP_BUILD_DIR (default: build) if not configured;
#   4. builds with ninja.
#
# Environment:
#   MP_BUILD_DIR   build directory (default: build, relative to the repo root)
#   MP_JOBS        parallel jobs for ninja (-j); default: ninja's own choice
#   MP_SKIP_BUILD  1 = skip steps 3 and 4
#
# After sourcing, these are set: MP_ROOT (repo root, also the cwd after
# mp_setup), MP_BUILD (absolute build dir), MP_VENV (absolute venv dir),
# MP_PYTHON (the venv's python).

MP_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MP_VENV="$MP_ROOT/.venv"
MP_PYTHON="$MP_VENV/bin/python"
MP_BUILD="${MP_BUILD_DIR:-build}"
case "$MP_BUILD" in
  /*) ;;
  *) MP_BUILD="$MP_ROOT/$MP_BUILD" ;;
esac
MP_LLVM_PREFIX=/usr/lib/llvm-22

MP_DEB_PACKAGES=(
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 lld-22
  libonnx-dev libprotobuf-dev protobuf-compiler ninja-build libonnx-testdata
)

mp_banner() { printf '==> %s\n' "$*"; }
mp_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

mp_setup_packages() {
  mp_banner "Debian packages"
  local missing=() p
  for p in "${MP_DEB_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    echo "all ${#MP_DEB_PACKAGES[@]} required packages are installed"
    return 0
  fi
  echo "installing missing packages: ${missing[*]}"
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || mp_die "not root and no sudo: install ${missing[*]} yourself"
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

mp_setup_venv() {
  mp_banner "Python venv (.venv)"
  local req="$MP_ROOT/python/requirements.txt"
  local stamp="$MP_VENV/.requirements.sha256"
  [ -f "$req" ] || mp_die "missing $req"
  if [ ! -x "$MP_PYTHON" ] || ! "$MP_PYTHON" -c 'import sys' >/dev/null 2>&1; then
    echo "creating $MP_VENV"
    rm -rf "$MP_VENV"
    python3 -m venv "$MP_VENV"
    rm -f "$stamp"
  fi
  local want have=""
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  [ -f "$stamp" ] && have="$(cat "$stamp")"
  if [ "$want" = "$have" ]; then
    echo "up to date with python/requirements.txt"
    return 0
  fi
  echo "installing python/requirements.txt"
  # -q keeps the progress noise out; errors are still printed.
  "$MP_PYTHON" -m pip install -q --disable-pip-version-check -r "$req"
  echo "$want" >"$stamp"
}

# First existing executable among the arguments (names on PATH or paths).
mp_first_tool() {
  local t
  for t in "$@"; do
    if [ -x "$t" ]; then echo "$t"; return 0; fi
    if command -v "$t" >/dev/null 2>&1; then command -v "$t"; return 0; fi
  done
  return 1
}

mp_setup_configure() {
  mp_banner "CMake configure ($MP_BUILD)"
  if [ -f "$MP_BUILD/build.ninja" ]; then
    echo "already configured"
    return 0
  fi
  [ -f "$MP_ROOT/CMakeLists.txt" ] || mp_die "no CMakeLists.txt in $MP_ROOT"
  local cc cxx
  cc="$(mp_first_tool clang-22 "$MP_LLVM_PREFIX/bin/clang")" || mp_die "clang-22 not found"
  cxx="$(mp_first_tool clang++-22 "$MP_LLVM_PREFIX/bin/clang++")" || mp_die "clang++-22 not found"
  mp_first_tool ld.lld-22 "$MP_LLVM_PREFIX/bin/ld.lld" >/dev/null || mp_die "ld.lld (lld-22) not found"
  cmake -S "$MP_ROOT" -B "$MP_BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_CXX_COMPILER="$cxx" \
    -DLLVM_USE_LINKER=lld \
    -DMLIR_DIR="$MP_LLVM_PREFIX/lib/cmake/mlir" \
    -DLLVM_DIR="$MP_LLVM_PREFIX/lib/cmake/llvm" \
    -DPython3_EXECUTABLE="$MP_PYTHON" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
}

mp_setup_build() {
  mp_banner "Build (ninja -C $MP_BUILD)"
  local jobs=()
  [ -n "${MP_JOBS:-}" ] && jobs=(-j "$MP_JOBS")
  ninja -C "$MP_BUILD" "${jobs[@]}"
}

mp_setup() {
  cd "$MP_ROOT"
  mp_setup_packages
  mp_setup_venv
  if [ "${MP_SKIP_BUILD:-0}" = "1" ]; then
    mp_banner "CMake configure and build skipped (MP_SKIP_BUILD=1)"
    return 0
  fi
  mp_setup_configure
  mp_setup_build
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  mp_setup
fi
