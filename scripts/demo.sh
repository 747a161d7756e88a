#!/usr/bin/env bash
# End-to-end demo on the bundled default model (a small LSTM, made by make_demo_model.py):
#   model_editor --mode to_scan -> symbolic_shape_infer -> model_quantizer --only_for_scan
# then the float and the int8 model on the runtime: latency (perf_test) and output error
# (compare_models), and last a small rnn_benchmark sweep of the same model family with its
# HTML report. Installs what is missing and builds first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" "$root/build"
bin=$root/build/bin
out=$root/out/demo
mkdir -p "$out"
dims="seq=100"

/usr/bin/python3 "$root/scripts/make_demo_model.py" -o "$out/lstm.onnx"
echo "== 1. to_scan: LSTM -> Scan"
"$bin/model_editor" --input "$out/lstm.onnx" --output "$out/lstm_scan.onnx" --mode to_scan
echo "== 2. symbolic shape inference"
"$bin/symbolic_shape_infer" --input "$out/lstm_scan.onnx" --output "$out/lstm_scan_si.onnx"
echo "== 3. quantize the MatMuls inside the Scan body"
"$bin/model_quantizer" --input "$out/lstm_scan_si.onnx" --output "$out/lstm_int8.onnx" --only_for_scan
echo "== 4. latency on the nuphar runtime (1 thread, $dims)"
for m in lstm lstm_scan_si lstm_int8; do
  printf "%-14s " "$m"
  "$bin/perf_test" -r 50 --dims "$dims" "$out/$m.onnx" |
    /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); print('median %.3f ms  min %.3f ms' % (r['median_ms'], r['min_ms']))"
done
echo "== 5. output error: float LSTM vs Scan (float), and vs int8"
"$bin/compare_models" --dims "$dims" "$out/lstm.onnx" "$out/lstm_scan_si.onnx"
"$bin/compare_models" --dims "$dims" "$out/lstm.onnx" "$out/lstm_int8.onnx"
echo "== 6. rnn_benchmark: LSTM sweep over hidden sizes (input 80, seq 100, 1 layer, 1 thread), float vs Scan vs int8"
"$bin/rnn_benchmark" --rnn_type lstm --input_dim 80 --layers 1 --seq_len 100 --num_threads 1 \
  --sweep hidden=128,256,512 --min_seconds 0.5 --out "$out/rnn_benchmark"
echo "report: $out/rnn_benchmark/report.html (open it in a browser; results.json and results.csv beside it)"
