#!/usr/bin/env bash
# Sets up (packages, venv, configure, build), then runs every test suite:
#   1. the lit suite      (ninja -C $BUILD check-mp)
#   2. the Python tests   (pytest python/tests, on every core with pytest-xdist)
# and ends with one line: `test: N passed, N failed, N skipped`.
# Exits non-zero if any test failed or a stage errored.
# Logs: $BUILD/test-logs/{lit,pytest}.log
#
#   scripts/test.sh          the fast tier: pytest -m "not slow" (every capability,
#                            one model per path); prints what it deselected
#   scripts/test.sh --full   every test, the sweeps marked slow included
# MP_TEST_WORKERS: pytest processes (default: the cores this process may use, at most 4).
set -euo pipefail

tier=fast
for arg in "$@"; do
  case "$arg" in
    --full) tier=full ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "scripts/test.sh: unknown argument '$arg' (expected --full)" >&2; exit 2 ;;
  esac
done

# shellcheck source-path=SCRIPTDIR source=lib/setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/setup.sh"

total_passed=0
total_failed=0
total_skipped=0
errors=()

summary_and_exit() {
  local e
  for e in "${errors[@]}"; do
    printf 'error: %s\n' "$e" >&2
  done
  echo "test: $total_passed passed, $total_failed failed, $total_skipped skipped"
  if [ "$total_failed" -ne 0 ] || [ "${#errors[@]}" -ne 0 ]; then
    exit 1
  fi
  exit 0
}

# Setup runs in a subshell so that a failed build still ends with the summary.
set +e
(set -e; mp_setup)
setup_rc=$?
set -e
cd "$MP_ROOT"
if [ "$setup_rc" -ne 0 ]; then
  errors+=("setup (packages/venv/configure/build) failed with exit $setup_rc")
  summary_and_exit
fi

LOG_DIR="$MP_BUILD/test-logs"
mkdir -p "$LOG_DIR"

# ---------------------------------------------------------------- lit
mp_banner "lit suite (ninja -C $MP_BUILD check-mp)"
lit_log="$LOG_DIR/lit.log"
if [ "${MP_SKIP_BUILD:-0}" = "1" ]; then
  echo "skipped: MP_SKIP_BUILD=1 (check-mp would build)"
  : >"$lit_log"
else
  jobs=()
  [ -n "${MP_JOBS:-}" ] && jobs=(-j "$MP_JOBS")
  set +e
  env -u LIT_OPTS ninja -C "$MP_BUILD" "${jobs[@]}" check-mp 2>&1 | tee "$lit_log"
  lit_rc=${PIPESTATUS[0]}
  set -e
  # lit's summary: "Total Discovered Tests: N" then "  <Label><pad>: N (x%)".
  lit_counts="$(awk '
    /^Total Discovered Tests:/ { found = 1 }
    /^  [A-Za-z][A-Za-z ]*: *[0-9]+ \(/ {
      line = $0; sub(/^  /, "", line)
      label = line; sub(/ *:.*$/, "", label)
      n = line; sub(/^[^:]*: */, "", n); sub(/ .*$/, "", n)
      if (label == "Passed" || label == "Passed With Retry" || label == "Expectedly Failed") p += n
      else if (label == "Failed" || label == "Unresolved" || label == "Timed Out" || label == "Unexpectedly Passed") f += n
      else if (label == "Unsupported" || label == "Skipped") s += n
    }
    END { printf "%d %d %d %d\n", found, p, f, s }' "$lit_log")"
  read -r lit_found lit_p lit_f lit_s <<<"$lit_counts"
  if [ "$lit_found" != "1" ]; then
    errors+=("lit: no summary in output (ninja exit $lit_rc; see $lit_log)")
  else
    echo "lit: $lit_p passed, $lit_f failed, $lit_s skipped"
    total_passed=$((total_passed + lit_p))
    total_failed=$((total_failed + lit_f))
    total_skipped=$((total_skipped + lit_s))
    if [ "$lit_rc" -ne 0 ] && [ "$lit_f" -eq 0 ]; then
      errors+=("lit: ninja check-mp exited $lit_rc (see $lit_log)")
    fi
  fi
fi

# ---------------------------------------------------------------- pytest
mp_banner "Python tests (pytest -q python/tests)"
py_log="$LOG_DIR/pytest.log"
shopt -s nullglob globstar
py_files=(python/tests/**/test_*.py python/tests/**/*_test.py)
shopt -u nullglob globstar
if [ "${#py_files[@]}" -eq 0 ]; then
  echo "skipped: no test files in python/tests"
  : >"$py_log"
else
  # After a build, a test that skips because mp "is not built" fails: it looks
  # in the wrong place (python/tests/strict_skips.py). MP_TEST_NO_SKIP=0 allows it.
  no_skip=1
  [ "${MP_SKIP_BUILD:-0}" = "1" ] && no_skip=0
  workers="${MP_TEST_WORKERS:-$(nproc)}"
  [ -n "${MP_TEST_WORKERS:-}" ] || [ "$workers" -le 4 ] || workers=4
  # loadfile: a file's tests share one process, so module fixtures compile once.
  py_args=(-q -n "$workers" --dist loadfile --durations=15 -p no:cacheprovider)
  [ "$tier" = full ] || py_args+=(-m "not slow")
  echo "tier: $tier ($workers workers)"
  set +e
  MP_TEST_NO_SKIP="${MP_TEST_NO_SKIP:-$no_skip}" \
  PYTHONPATH="$MP_ROOT/python${PYTHONPATH:+:$PYTHONPATH}" MP_BUILD_DIR="$MP_BUILD" \
    "$MP_PYTHON" -m pytest "${py_args[@]}" python/tests 2>&1 | tee "$py_log"
  py_rc=${PIPESTATUS[0]}
  set -e
  # Last line, e.g. "3 failed, 10 passed, 2 skipped, 1 xfailed in 1.23s".
  py_last="$(grep -v '^[[:space:]]*$' "$py_log" | tail -n 1 | sed 's/=//g')"
  py_counts="$(awk '
    {
      for (i = 2; i <= NF; i++) {
        k = $i; sub(/,$/, "", k); n = $(i - 1)
        if (n !~ /^[0-9]+$/) continue
        if (k == "passed" || k == "xfailed" || k == "xpassed") p += n
        else if (k == "failed" || k == "error" || k == "errors") f += n
        else if (k == "skipped") s += n
      }
    }
    END { printf "%d %d %d\n", p, f, s }' <<<"$py_last")"
  read -r py_p py_f py_s <<<"$py_counts"
  echo "pytest: $py_p passed, $py_f failed, $py_s skipped"
  if [ "$tier" = fast ]; then
    # pytest-xdist's summary line has no "N deselected": list them ourselves.
    slow_list="$(PYTHONPATH="$MP_ROOT/python${PYTHONPATH:+:$PYTHONPATH}" MP_BUILD_DIR="$MP_BUILD" \
      "$MP_PYTHON" -m pytest --collect-only -q -m slow -p no:cacheprovider python/tests 2>/dev/null |
      grep '::' || true)"
    echo "fast tier: $(grep -c '::' <<<"$slow_list" || true) slow tests deselected (scripts/test.sh --full runs them):"
    # Per file: how many of its tests the tier left out.
    awk -F'::' 'NF > 1 { n[$1]++ } END { for (f in n) printf "  %4d  %s\n", n[f], f }' <<<"$slow_list" | sort -k2
  fi
  total_passed=$((total_passed + py_p))
  total_failed=$((total_failed + py_f))
  total_skipped=$((total_skipped + py_s))
  case "$py_rc" in
    0) ;;
    1) [ "$py_f" -gt 0 ] || errors+=("pytest: exit 1 but no failure counted (see $py_log)") ;;
    5) errors+=("pytest: no tests collected although python/tests has test files") ;;
    *) errors+=("pytest: exit $py_rc (see $py_log)") ;;
  esac
fi

# ---------------------------------------------------------------- summary
summary_and_exit
