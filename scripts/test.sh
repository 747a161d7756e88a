#!/usr/bin/env bash
# Installs what is missing, builds, and runs every test: the unit tests and the ONNX backend
# conformance suite (Release build), the threading tests under TSan, the unit tests again under
# ASan+UBSan, then every libFuzzer target on its regression inputs and seed corpus followed by
# mutations up to a fixed number of executions from a fixed seed (scripts/fuzz.sh; repeatable, so a
# green run here is green in CI).
# Usage: scripts/test.sh   (NUPHAR_SKIP_SANITIZE=1 skips the sanitizer passes, NUPHAR_SKIP_FUZZ=1
#                           the fuzz pass; NUPHAR_FUZZ_RUNS executions per target, default 2000;
#                           NUPHAR_FUZZ_SECONDS > 0 fuzzes each target that long instead)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc 2>/dev/null || echo 2)
bash "$root/scripts/setup.sh"

bash "$root/scripts/build.sh" "$root/build"
(cd "$root/build" && ctest --output-on-failure -j "$jobs")

if [ "${NUPHAR_SKIP_SANITIZE:-0}" != 1 ]; then
  # ThreadSanitizer pass: the threading tests only (the worker pool, NGEMM splits, sessions on
  # two threads, concurrent Runs, and one session under 8 threads x 1,000 Runs of mixed shapes);
  # halt on the first report.
  cmake -S "$root" -B "$root/build-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUPHAR_SANITIZE=thread \
    -DNUPHAR_BUILD_BENCH=OFF
  cmake --build "$root/build-tsan" -j "$jobs" --target threading_test
  (cd "$root/build-tsan" && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" ctest --output-on-failure -R '^threading_test$')

  # Sanitizer pass: unit tests only (the conformance suite forks per test and takes longer).
  bash "$root/scripts/build.sh" "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUPHAR_SANITIZE=ON -DNUPHAR_BUILD_BENCH=OFF
  (cd "$root/build-asan" && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" -E '^conformance_')
fi

if [ "${NUPHAR_SKIP_FUZZ:-0}" != 1 ]; then
  NUPHAR_FUZZ_RUNS=${NUPHAR_FUZZ_RUNS:-2000} bash "$root/scripts/fuzz.sh" "${NUPHAR_FUZZ_SECONDS:-0}"
fi
