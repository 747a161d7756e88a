#!/usr/bin/env bash
# Benchmark (not a test), issue 6 acceptance 4: the --only_for_scan int8 model of a
# make_rnn_model.py LSTM (seq 100, batch 1, 1 thread) on the nuphar runtime against the float
# LSTM in ONNX Runtime, measured in the same run. Also prints ORT's own int8 LSTM
# (DynamicQuantizeLSTM, make_dq_lstm.py) and our float runs for context.
#
#   tests/bench/int8_lstm_vs_ort.sh [-r RUNS] [HIDDEN...]      (default hidden sizes: 512 1024)
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
runs=30
if [ "${1:-}" = -r ]; then runs=$2; shift 2; fi
sizes=${*:-512 1024}
median() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median_ms'])" "$1"; }
printf "%-6s %12s %12s %12s %12s %12s %10s\n" hidden ort_float ort_dq_int8 ours_float ours_scan ours_int8 int8/ort
for h in $sizes; do
  m=$work/lstm_h$h
  /usr/bin/python3 "$shared/peer/make_rnn_model.py" --op lstm --input_dim 80 --hidden_dim "$h" --layers 1 \
    --seq_len 100 --batch 1 --opset 11 --seed 0 -o "$m.onnx" > /dev/null
  /usr/bin/python3 "$shared/peer/make_dq_lstm.py" "$m.onnx" "$m.dq.onnx" > /dev/null
  "$bin/model_editor" --input "$m.onnx" --output "$m.scan.onnx" --mode to_scan > /dev/null
  "$bin/model_quantizer" --input "$m.scan.onnx" --output "$m.int8.onnx" --only_for_scan > /dev/null
  node "$shared/peer/ort_run.js" "$m.onnx" --threads 1 --iters "$runs" --quiet > "$m.ort.json"
  node "$shared/peer/ort_run.js" "$m.dq.onnx" --threads 1 --iters "$runs" --quiet > "$m.ortdq.json"
  for v in "" .scan .int8; do
    "$bin/perf_test" -x 1 -r "$runs" "$m$v.onnx" > "$m$v.ours.json"
  done
  ort=$(median "$m.ort.json") dq=$(median "$m.ortdq.json")
  f=$(median "$m.ours.json") s=$(median "$m.scan.ours.json") q=$(median "$m.int8.ours.json")
  printf "%-6s %12s %12s %12s %12s %12s %10s\n" "$h" "$ort" "$dq" "$f" "$s" "$q" \
    "$(/usr/bin/python3 -c "print('%.2f' % ($q / $ort))")"
done
echo "(medians in ms; int8/ort < 1 means our int8 model is faster than ORT's float LSTM)"
