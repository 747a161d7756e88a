#!/usr/bin/env bash
# Benchmark (not a test), issue 13 acceptance 1: session creation with a cold vs a warm JIT cache
# (runtime/jit/kernel_cache.h), per model: the int8 to_scan LSTM at hidden 512 (seq 100, input 80)
# and every shared model perf_test runs with random inputs. One core; ROUNDS interleaved rounds,
# medians. Columns (perf_test load_ms / reload_ms, milliseconds):
#   cold      first session of a fresh process, no cache (compiles every kernel)
#   cold2     a second session in that process, no cache (compiles again; process set-up paid)
#   warm2     a second session in a process whose first session filled an empty cache
#   warm_new  first session of a new process on the warm cache (objects)
#   aot_new   first session of a new process on create_shared's jit.so with force_no_jit
#   ref2      a second session in reference mode (no JIT at all): the floor warm2 can reach
#   c2cpu, w2cpu  the CPU time of cold2 and warm2 (perf_test reload_cpu_ms): on a busy machine a
#             load of a few ms is often preempted for a time slice, which only wall time shows
# Ratios: cold2 / warm2 (same process state: what the cache saves), the same by CPU time, and
# cold / warm_new.
#
#   tests/bench/cache_load.sh [-r ROUNDS] [MODEL[:DIMS]...]     (DIMS as perf_test --dims)
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
rounds=3
[ "${1:-}" = -r ] && { rounds=$2; shift 2; }
models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  /usr/bin/python3 "$shared/peer/make_rnn_model.py" --op lstm --input_dim 80 --hidden_dim 512 --layers 1 \
    --seq_len 100 --batch 1 --opset 11 --seed 0 -o "$work/lstm512.onnx" > /dev/null
  "$bin/model_editor" --input "$work/lstm512.onnx" --output "$work/lstm512.scan.onnx" --mode to_scan > /dev/null
  "$bin/model_quantizer" --input "$work/lstm512.scan.onnx" --output "$work/lstm512_int8.onnx" --only_for_scan > /dev/null
  models=("$work/lstm512_int8.onnx:" "$shared/models/dtln_model_1.onnx:" "$shared/models/gtcrn_simple.onnx:"
          "$shared/models/silero_vad_v3.1.onnx:sequence=1536" "$shared/models/silero_vad_openvino_16k.onnx:"
          "$shared/models/silero_vad_16k_op15.onnx:batch=1,sequence=512"
          "$shared/models/ch_PP-OCRv4_rec_infer.onnx:p2o.DynamicDimension.0=1,p2o.DynamicDimension.1=320"
          "$shared/models/oww_embedding_model.onnx:unk__314=1"
          "$shared/models/oww_melspectrogram.onnx:batch_size=1,samples=1280")
fi
field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['$1'])"; }
med() { /usr/bin/python3 -c "import statistics,sys; print('%.1f' % statistics.median(map(float, sys.argv[1:])))" "$@"; }
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); tier: ${NUPHAR_CODEGEN_TARGET:-host best}"
printf '%-26s %7s %7s %7s %8s %7s %7s %11s %7s %7s %8s %13s %7s\n' model cold cold2 warm2 warm_new aot_new ref2 \
  cold2/warm2 c2cpu w2cpu cpu-ratio cold/warm_new kernels
for entry in "${models[@]}"; do
  m=${entry%%:*} dims=${entry#*:}
  [ "$dims" = "$entry" ] && dims=""
  name=$(basename "$m" .onnx)
  perf() { "$bin/perf_test" -r 1 --warmup 0 ${dims:+--dims "$dims"} "$@" 2>/dev/null; }
  perf "$m" > /dev/null || { printf '%-26s perf_test cannot run it with random inputs\n' "$name"; continue; }
  cold=() cold2=() warm2=() warm_new=() aot=() ref2=() cold2cpu=() warm2cpu=() kernels=0
  for ((r = 0; r < rounds; ++r)); do
    out=$(perf --reload 1 "$m"); cold+=("$(field load_ms <<< "$out")"); cold2+=("$(field reload_ms <<< "$out")")
    cold2cpu+=("$(field reload_cpu_ms <<< "$out")")
    dir="$work/cache$r"; rm -rf "$dir"
    out=$(perf --reload 1 --settings "nuphar_cache_path:$dir" "$m"); warm2+=("$(field reload_ms <<< "$out")")
    warm2cpu+=("$(field reload_cpu_ms <<< "$out")")
    kernels=$(field jit_from_cache <<< "$out")
    out=$(perf --settings "nuphar_cache_path:$dir" "$m"); warm_new+=("$(field load_ms <<< "$out")")
    [ "$(field jit_compiled <<< "$out")" = 0 ] || echo "warning: $name: the warm session compiled kernels" >&2
    if [ "$kernels" != 0 ]; then  # a model without generated kernels has no cache directory
      "$bin/create_shared" --input_dir "$dir"/* --input_model "$m" > /dev/null
      out=$(perf --settings "nuphar_cache_path:$dir, nuphar_cache_force_no_jit:on" "$m"); aot+=("$(field load_ms <<< "$out")")
    else
      aot+=(0)
    fi
    out=$(perf -e reference --reload 1 "$m"); ref2+=("$(field reload_ms <<< "$out")")
  done
  c=$(med "${cold[@]}") c2=$(med "${cold2[@]}") w2=$(med "${warm2[@]}") wn=$(med "${warm_new[@]}") a=$(med "${aot[@]}")
  rf=$(med "${ref2[@]}") c2c=$(med "${cold2cpu[@]}") w2c=$(med "${warm2cpu[@]}")
  ratio() { /usr/bin/python3 -c "print('%.1f' % ($1 / $2))"; }
  printf '%-26s %7s %7s %7s %8s %7s %7s %10sx %7s %7s %7sx %12sx %7s\n' "$name" "$c" "$c2" "$w2" "$wn" "$a" "$rf" \
    "$(ratio "$c2" "$w2")" "$c2c" "$w2c" "$(ratio "$c2c" "$w2c")" "$(ratio "$c" "$wn")" "$kernels"
done
