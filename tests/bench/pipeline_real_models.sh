#!/usr/bin/env bash
# The full pipeline on the real models of ../shared/models (issue 5 acceptance 3):
#   model_editor --mode to_scan -> symbolic_shape_infer -> model_quantizer --only_for_scan
# For each model: whether every step succeeded, the float vs int8 output error on the nuphar
# runtime (compare_models), and, with the ONNX Runtime peer installed, the largest difference
# between the int8 model on our runtime and on ORT (identical inputs).
#
#   tests/bench/pipeline_real_models.sh [MODEL.onnx:dims ...]
set -uo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
models=${*:-"$shared/models/silero_vad_openvino_16k.onnx: $shared/models/silero_vad_v3.1.onnx:sequence=1536 $shared/models/dtln_model_1.onnx: $shared/models/gtcrn_simple.onnx:"}
have_ort=0
[ -f "$shared/peer/ort_run.js" ] && node -e "require('$HOME/.cache/ort-peer/node_modules/onnxruntime-node')" 2>/dev/null && have_ort=1
for entry in $models; do
  model=${entry%%:*} dims=${entry#*:}
  name=$(basename "$model" .onnx)
  m=$work/$name
  dim_args=()
  [ -n "$dims" ] && dim_args=(--dims "$dims")
  echo "== $name"
  if ! "$bin/model_editor" --input "$model" --output "$m.scan.onnx" --mode to_scan > "$m.log" 2>&1; then
    echo "to_scan FAILED: $(tail -1 "$m.log")"; continue
  fi
  if "$bin/symbolic_shape_infer" --input "$m.scan.onnx" --output "$m.si.onnx" --auto_merge > "$m.log" 2>&1; then
    echo "symbolic_shape_infer: complete"
  else
    echo "symbolic_shape_infer: INCOMPLETE ($(tail -1 "$m.log")); quantizing the to_scan output"
    cp "$m.scan.onnx" "$m.si.onnx"
  fi
  rc=0
  "$bin/model_quantizer" --input "$m.si.onnx" --output "$m.int8.onnx" --only_for_scan > "$m.log" 2>&1 || rc=$?
  if [ $rc = 3 ]; then  # README exit codes: 3 = nothing quantized (no MatMul inside a Scan)
    echo "model_quantizer: nothing to quantize: $(grep -m1 'quantized nothing' "$m.log")"; continue
  elif [ $rc != 0 ]; then
    echo "model_quantizer FAILED: $(tail -1 "$m.log")"; continue
  fi
  echo "float vs int8 on the nuphar runtime:"
  "$bin/compare_models" "${dim_args[@]}" "$model" "$m.int8.onnx" || echo "compare_models FAILED"
  if [ $have_ort = 1 ]; then
    node "$shared/peer/ort_run.js" "$m.int8.onnx" --iters 1 --warmup 0 --quiet "${dim_args[@]}" \
      --save-inputs "$m.in" --dump-outputs "$m.ort" > /dev/null 2> "$m.log" || { echo "ORT FAILED: $(tail -1 "$m.log")"; continue; }
    "$bin/perf_test" -r 1 --warmup 0 --input-dir "$m.in" --dump-outputs "$m.ours" "$m.int8.onnx" > /dev/null
    echo "int8 model, nuphar runtime vs ORT, max abs diff: $(/usr/bin/python3 "$shared/peer/compare_outputs.py" "$m.ort" "$m.ours" --max-only)"
  fi
done
