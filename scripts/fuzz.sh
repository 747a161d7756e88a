#!/usr/bin/env bash
# Builds the libFuzzer targets (clang-14, ASan + UBSan; build-fuzz/) and runs each on its seed
# corpus for SECONDS, after replaying every input kept under tests/fuzz/regressions/<target>/.
# A crash, leak, hang (> 10 s per input) or out-of-memory (> 2 GiB) fails the run; libFuzzer
# leaves the input as build-fuzz/artifacts/<target>/crash-* (keep it as a regression input).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]      (default: 15 seconds, every target; 0 = no time
#                                               budget: replay the regression inputs and the seed
#                                               corpus, then mutate until NUPHAR_FUZZ_RUNS executions
#                                               in all (default 0: none) from seed NUPHAR_FUZZ_SEED
#                                               (default 1): a fixed, repeatable amount of fuzzing,
#                                               what scripts/test.sh runs)
#
# Seeds (built here, never committed): the shared models and fixtures, the ONNX backend node
# test models and tensors (Debian libonnx-testdata), and a few settings and qcfg strings.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
shared=$(cd "$root/.." && pwd)/shared
build=$root/build-fuzz
seconds=${1:-15}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fuzz_settings fuzz_qcfg_json fuzz_tensor_file fuzz_session_create fuzz_session_run fuzz_graph_tools)
jobs=$(nproc 2>/dev/null || echo 2)
testdata=/usr/share/libonnx-testdata/data/node

mkdir -p "$build"
CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNUPHAR_FUZZ=ON \
  -DNUPHAR_BUILD_TESTS=OFF -DNUPHAR_BUILD_BENCH=OFF > "$build/configure.log" || { cat "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" --target "${targets[@]}"

seeds() {  # target -> fills $build/corpus/<target> once
  local t=$1 dir=$build/corpus/$1
  [ -d "$dir" ] && return 0
  mkdir -p "$dir"
  local models=()
  while IFS= read -r -d '' f; do models+=("$f"); done < <(
    find "$shared/models" "$shared/fixtures" -name '*.onnx' -size -3M -print0 2>/dev/null
    [ -d "$testdata" ] && find "$testdata" -name model.onnx -print0 | head -z -n 400)
  case $t in
    fuzz_session_create)
      local i=0; for f in "${models[@]}"; do cp "$f" "$dir/m$i.onnx"; i=$((i + 1)); done ;;
    fuzz_graph_tools)
      local i=0; for f in "${models[@]}"; do
        { printf "\\x$(printf %02x $((i % 12)))"; cat "$f"; } > "$dir/m$i"; i=$((i + 1)); done ;;
    fuzz_session_run)
      for i in 0 1 2 3 4; do head -c 4096 /dev/urandom | { printf "\\x0$i\\x00"; cat; } > "$dir/r$i"; done ;;
    fuzz_settings)
      printf 'nuphar_execution_mode:jit' > "$dir/s0"
      printf 'nuphar_num_threads:2, nuphar_parallel_min_workloads:131072' > "$dir/s1"
      printf 'nuphar_igemm_tile_m:8,nuphar_igemm_tile_n:16,nuphar_igemm_tile_k:32,nuphar_igemm_permute:all' > "$dir/s2"
      printf 'nuphar_cache_path:C:\\x, nuphar_codegen_target:avx2' > "$dir/s3" ;;
    fuzz_tensor_file)
      local i=0
      if [ -d "$testdata" ]; then
        while IFS= read -r -d '' f; do { printf '\x00'; cat "$f"; } > "$dir/t$i"; i=$((i + 1)); done < <(
          find "$testdata" -name 'input_0.pb' -print0 | head -z -n 200)
      fi
      printf '\x01{"name":"x","dtype":"float32","shape":[2,2]}\x00' > "$dir/b0"
      head -c 16 /dev/zero >> "$dir/b0" ;;
    fuzz_qcfg_json)
      cp "$shared"/fixtures/quantizer/*.json "$dir/" 2>/dev/null || true
      printf '{"y":{"W":{"QuantizationType":"Signed","ReservedBit":0,"QuantizeBit":8},"X":{"QuantizationType":"Unsigned","ReservedBit":1,"QuantizeBit":8},"Symmetric":0}}' > "$dir/q0" ;;
  esac
}

status=0 passed=0 failed=0
for t in "${targets[@]}"; do
  seeds "$t"
  regress=$root/tests/fuzz/regressions/$t
  artifacts=$build/artifacts/$t
  mkdir -p "$artifacts"
  if [ -d "$regress" ] && [ -n "$(ls -A "$regress")" ]; then
    echo "fuzz: $t: replaying $(ls "$regress" | wc -l) regression inputs"
    "$build/fuzz/$t" -rss_limit_mb=2048 -timeout=10 "$regress"/* > "$artifacts/regressions.log" 2>&1 ||
      { echo "fuzz: $t: a regression input fails again (log: $artifacts/regressions.log)"; status=1
        failed=$((failed + 1)); continue; }
  fi
  budget=(-max_total_time="$seconds")
  what="${seconds}s"
  if [ "$seconds" = 0 ]; then budget=(-runs="${NUPHAR_FUZZ_RUNS:-0}"); what="seed corpus, then mutations up to ${NUPHAR_FUZZ_RUNS:-0} executions"; fi
  echo "fuzz: $t: $what"
  if ! "$build/fuzz/$t" -seed="${NUPHAR_FUZZ_SEED:-1}" "${budget[@]}" -rss_limit_mb=2048 -timeout=10 -max_len=4000000 \
       -artifact_prefix="$artifacts/" -print_final_stats=1 "$build/corpus/$t" > "$artifacts/run.log" 2>&1; then
    echo "fuzz: $t FAILED; log: $artifacts/run.log"; tail -40 "$artifacts/run.log"; status=1
    failed=$((failed + 1))
  else
    passed=$((passed + 1))
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb|cov: ' "$artifacts/run.log" | tail -3 | sed "s/^/fuzz: $t: /"
  fi
done
echo "fuzz: $passed passed, $failed failed"
exit $status
