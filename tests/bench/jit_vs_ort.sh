#!/usr/bin/env bash
# Benchmark (not a test), issue 10 acceptance 4 and 5: the JIT runtime against ONNX Runtime
# (../shared/peer) on the same machine, in the same run. 1 thread, seq 100, batch 1, input 80,
# one layer, unidirectional:
#   - int8 Scan LSTM (to_scan + model_quantizer --only_for_scan) vs ORT DynamicQuantizeLSTM; the
#     hoisted input projection X*W stays float there, while DynamicQuantizeLSTM quantizes W too;
#   - so also the like-for-like row lstm_int8_wr: to_scan + model_quantizer without --only_for_scan
#     (W and R int8: the hoisted projection becomes a per-row dynamic-quantized MatMul) vs the same ORT model;
#   - int8 Scan GRU (linear_before_reset 0 and 1) vs ORT's float GRU;
#   - float Scan LSTM (to_scan) vs ORT's float LSTM.
# Every engine runs ROUNDS times, interleaved; each cell is the median of the per-round medians.
# "speedup" = ORT / ours (> 1: we are faster); round_range = the lowest and highest speedup of a single
# round (ORT's and our median of that round), the spread behind the median. Then the cold session creation of each model
# (perf_test's load_ms, compile_ms, jit_kernels, jit_nodes, reference_nodes, one core), with the
# coverage of acceptance 2: jit_nodes / (jit_nodes + reference_nodes), the model nodes that generated
# code runs among all the nodes a Run executes (folded constants are not executed).
#
#   tests/bench/jit_vs_ort.sh [-r ROUNDS] [-i ITERS] [HIDDEN...]     (default 3 rounds, 50 iters, 128 256 512 1024)
#
# The shared models' side-by-side run is tests/bench/runtime_vs_ort.sh -e jit.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
rounds=3 iters=50
take_rounds_iters "$@"
set -- "${args[@]}"
sizes=${*:-128 256 512 1024}
[ -f "$shared/peer/ort_run.js" ] || { echo "jit_vs_ort: no peer harness at $shared/peer" >&2; exit 2; }
median_of_json() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median_ms'])" "$1"; }
med() { /usr/bin/python3 -c "import statistics,sys; print('%.3f' % statistics.median(map(float, sys.argv[1:])))" "$@"; }
ratio() { /usr/bin/python3 -c "print('%.2f' % ($1 / $2))"; }
# min-max over the rounds of each round's ORT median / ours: how far one round strays from the median
range_of_ratios() {
  /usr/bin/python3 -c "import sys; o=list(map(float,sys.argv[1].split())); t=list(map(float,sys.argv[2].split())); r=[b/a for a,b in zip(o,t)]; print('%.2f-%.2f' % (min(r), max(r)))" "$1" "$2"
}
make() {  # make OP HIDDEN LBR OUT
  /usr/bin/python3 "$shared/peer/make_rnn_model.py" --op "$1" --input_dim 80 --hidden_dim "$2" --layers 1 \
    --seq_len 100 --batch 1 --opset 11 --seed 0 --linear_before_reset "$3" -o "$4.onnx" > /dev/null
  "$bin/model_editor" --input "$4.onnx" --output "$4.scan.onnx" --mode to_scan > /dev/null
  "$bin/model_quantizer" --input "$4.scan.onnx" --output "$4.int8.onnx" --only_for_scan > /dev/null
  [ "$1" != lstm ] || "$bin/model_quantizer" --input "$4.scan.onnx" --output "$4.int8wr.onnx" > /dev/null
}
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); tier: ${NUPHAR_CODEGEN_TARGET:-host best}"
printf "%-22s %10s %10s %8s %12s\n" config ours_ms ort_ms speedup round_range
for h in $sizes; do
  make lstm "$h" 0 "$work/lstm$h"
  /usr/bin/python3 "$shared/peer/make_dq_lstm.py" "$work/lstm$h.onnx" "$work/lstm$h.dq.onnx" > /dev/null
  make gru "$h" 0 "$work/gru$h"
  make gru "$h" 1 "$work/grulbr$h"
  declare -A runs=()
  for r in $(seq "$rounds"); do
    for pair in "lstm_int8:lstm$h.int8:lstm$h.dq" "lstm_int8_wr:lstm$h.int8wr:lstm$h.dq" "gru_int8:gru$h.int8:gru$h" "gru_lbr_int8:grulbr$h.int8:grulbr$h" \
                "lstm_float:lstm$h.scan:lstm$h"; do
      IFS=: read -r key ours ort <<< "$pair"
      "$bin/perf_test" -x 1 -r "$iters" "$work/$ours.onnx" > "$work/o.json"
      runs[$key.ours]+=" $(median_of_json "$work/o.json")"
      node "$shared/peer/ort_run.js" "$work/$ort.onnx" --threads 1 --iters "$iters" --quiet > "$work/t.json"
      runs[$key.ort]+=" $(median_of_json "$work/t.json")"
    done
  done
  for key in lstm_int8 lstm_int8_wr gru_int8 gru_lbr_int8 lstm_float; do
    o=$(med ${runs[$key.ours]}) t=$(med ${runs[$key.ort]})
    printf "%-22s %10s %10s %8s %12s\n" "H$h $key" "$o" "$t" "$(ratio "$t" "$o")" \
      "$(range_of_ratios "${runs[$key.ours]}" "${runs[$key.ort]}")"
  done
  unset runs
done

echo
echo "cold session creation (1 thread; perf_test -r 1)"
printf "%-32s %9s %11s %11s %9s %15s %9s\n" model load_ms compile_ms jit_kernels jit_nodes reference_nodes coverage
cold() {  # cold MODEL [DIMS [CONST=V,...]]: constant feeds (Silero's sr) go through ort_run.js's saved inputs
  local feed=()
  if [ -n "${3:-}" ]; then
    local ort_args=(--dims "$2")
    for c in ${3//,/ }; do ort_args+=(--const "$c"); done
    rm -rf "$work/cold.in"
    node "$shared/peer/ort_run.js" "$1" --threads 1 --iters 1 --seed 0 "${ort_args[@]}" --save-inputs "$work/cold.in" --quiet > /dev/null
    feed=(--input-dir "$work/cold.in")
  elif [ -n "${2:-}" ]; then
    feed=(--dims "$2")
  fi
  "$bin/perf_test" -x 1 -r 1 --warmup 0 "${feed[@]}" "$1" > "$work/c.json" 2> "$work/c.err" || {
    printf "%-32s FAILED: %s\n" "$(basename "$1")" "$(tail -1 "$work/c.err")"; return; }
  /usr/bin/python3 - "$work/c.json" "$(basename "$1" .onnx)" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
executed = j["jit_nodes"] + j["reference_nodes"]
print("%-32s %9.1f %11.1f %11d %9d %15d %8.0f%%" % (sys.argv[2], j["load_ms"], j["compile_ms"], j["jit_kernels"], j["jit_nodes"],
      j["reference_nodes"], 100.0 * j["jit_nodes"] / max(executed, 1)))
PY
}
make lstm 1024 0 "$work/cold1024"
cold "$work/cold1024.int8.onnx"
for m in "$shared"/models/*.onnx; do
  case $(basename "$m") in
    silero_vad_v3.1.onnx) cold "$m" sequence=1536 ;;
    silero_vad_v5.onnx) cold "$m" "input:0=1,input:1=512,state:1=1" sr=16000 ;;
    silero_vad_16k_op15.onnx) cold "$m" "batch=1,sequence=512" sr=16000 ;;
    ch_PP-OCRv4_rec_infer.onnx) cold "$m" "p2o.DynamicDimension.0=1,p2o.DynamicDimension.1=320" ;;
    oww_embedding_model.onnx) cold "$m" "unk__314=1" ;;
    oww_melspectrogram.onnx) cold "$m" "batch_size=1,samples=1280" ;;
    *) cold "$m" ;;
  esac
done
