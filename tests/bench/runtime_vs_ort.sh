#!/usr/bin/env bash
# Benchmark (not a test): the nuphar runtime against ONNX Runtime (../shared/peer) on the same
# machine, in the same run, on identical inputs. For each model: both medians, their ratio
# (ours / ORT; < 1 is faster) and the largest absolute output difference.
#
#   tests/bench/runtime_vs_ort.sh [-e reference|jit] [-r RUNS] [--models "A.onnx:dims B.onnx:dims ..."]
#
# Default models: the four in ../shared/models and make_rnn_model.py LSTMs (hidden 128 and 512,
# seq 100, batch 1). One thread on both sides. Needs the peer: bash ../shared/peer/setup_ort.sh.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
engine=reference runs=20 models=""
while [ $# -gt 0 ]; do
  case $1 in
    -e) engine=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -f "$shared/peer/ort_run.js" ] || { echo "runtime_vs_ort: no peer harness at $shared/peer" >&2; exit 2; }
if [ -z "$models" ]; then
  for h in 128 512; do
    /usr/bin/python3 "$shared/peer/make_rnn_model.py" --op lstm --input_dim 80 --hidden_dim $h --layers 1 \
      --seq_len 100 --batch 1 --opset 11 --seed 0 -o "$work/lstm_h$h.onnx" >/dev/null
  done
  models="$shared/models/silero_vad_openvino_16k.onnx: $shared/models/silero_vad_v3.1.onnx:sequence=1536
          $shared/models/dtln_model_1.onnx: $shared/models/gtcrn_simple.onnx: $work/lstm_h128.onnx: $work/lstm_h512.onnx:"
fi
printf "%-32s %10s %10s %8s %12s\n" model ours_ms ort_ms ratio max_abs_diff
for entry in $models; do
  model=${entry%%:*} dims=${entry#*:}
  name=$(basename "$model" .onnx)
  dim_args=()
  [ -n "$dims" ] && dim_args=(--dims "$dims")
  node "$shared/peer/ort_run.js" "$model" --threads 1 --iters "$runs" --seed 0 "${dim_args[@]}" \
    --save-inputs "$work/$name.in" --dump-outputs "$work/$name.ort" --quiet > "$work/$name.ort.json"
  if ! "$bin/perf_test" -e "$engine" -x 1 -r "$runs" --input-dir "$work/$name.in" \
      --dump-outputs "$work/$name.ours" "$model" > "$work/$name.ours.json" 2> "$work/$name.err"; then
    printf "%-32s %s\n" "$name" "FAILED: $(tail -1 "$work/$name.err")"
    continue
  fi
  ours=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/$name.ours.json'))['median_ms'])")
  ort=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/$name.ort.json'))['median_ms'])")
  diff=$(/usr/bin/python3 "$shared/peer/compare_outputs.py" "$work/$name.ort" "$work/$name.ours" --max-only 2>/dev/null || echo "?")
  ratio=$(/usr/bin/python3 -c "print('%.2f' % ($ours / $ort))")
  printf "%-32s %10s %10s %8s %12s\n" "$name" "$ours" "$ort" "$ratio" "$diff"
done
