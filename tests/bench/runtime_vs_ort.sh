#!/usr/bin/env bash
# Benchmark (not a test): the nuphar runtime against ONNX Runtime (../shared/peer) on the same
# machine, in the same run, on identical inputs. For each model: both medians, their ratio
# (ours / ORT; < 1 is faster) and the largest absolute output difference. Both engines run
# ROUNDS times, interleaved; each cell is the median of the per-round medians.
#
#   tests/bench/runtime_vs_ort.sh [-e reference|jit] [-r RUNS] [--rounds ROUNDS]
#                                 [--models "A.onnx:DIMS[@NAME=V,...] B.onnx: ..."]
#
# DIMS is ort_run.js's --dims (symbol=value, or INPUT:AXIS=value); the optional @NAME=V,... fill
# integer inputs with constants (ort_run.js --const; ours reads the same saved inputs).
# Default models: the six streaming models of ../shared/models, called once with their state
# inputs as a VAD or enhancer calls them per frame (Silero v5 and op15: 512 samples at
# sr=16000; v3.1: 1536), and make_rnn_model.py LSTMs (hidden 128 and 512, seq 100, batch 1).
# One thread on both sides. Needs the peer: bash ../shared/peer/setup_ort.sh.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
engine=reference runs=20 rounds=3 models=""
while [ $# -gt 0 ]; do
  case $1 in
    -e) engine=$2; shift 2 ;;
    -r) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
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
  m=$shared/models
  models="$m/silero_vad_openvino_16k.onnx: $m/silero_vad_v3.1.onnx:sequence=1536
          $m/silero_vad_v5.onnx:input:0=1,input:1=512,state:1=1@sr=16000
          $m/silero_vad_16k_op15.onnx:batch=1,sequence=512@sr=16000
          $m/dtln_model_1.onnx: $m/gtcrn_simple.onnx: $work/lstm_h128.onnx: $work/lstm_h512.onnx:"
fi
median_of_json() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median_ms'])" "$1"; }
med() { /usr/bin/python3 -c "import statistics,sys; print('%.4f' % statistics.median(map(float, sys.argv[1:])))" "$@"; }
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); tier: ${NUPHAR_CODEGEN_TARGET:-host best};" \
     "engine $engine, $runs runs x $rounds rounds"
printf "%-32s %10s %10s %8s %12s\n" model ours_ms ort_ms ratio max_abs_diff
for entry in $models; do
  model=${entry%%:*} rest=${entry#*:}
  dims=${rest%%@*} consts=""
  [ "$rest" != "$dims" ] && consts=${rest#*@}
  name=$(basename "$model" .onnx)
  ort_args=()
  [ -n "$dims" ] && ort_args+=(--dims "$dims")
  for c in ${consts//,/ }; do ort_args+=(--const "$c"); done
  ours_ms="" ort_ms="" failed=""
  for r in $(seq "$rounds"); do
    save=()
    [ "$r" = 1 ] && save=(--save-inputs "$work/$name.in" --dump-outputs "$work/$name.ort")
    node "$shared/peer/ort_run.js" "$model" --threads 1 --iters "$runs" --seed 0 "${ort_args[@]}" \
      "${save[@]}" --quiet > "$work/$name.ort.json"
    ort_ms+=" $(median_of_json "$work/$name.ort.json")"
    dump=()
    [ "$r" = 1 ] && dump=(--dump-outputs "$work/$name.ours")
    if ! "$bin/perf_test" -e "$engine" -x 1 -r "$runs" --input-dir "$work/$name.in" \
        "${dump[@]}" "$model" > "$work/$name.ours.json" 2> "$work/$name.err"; then
      failed=$(tail -1 "$work/$name.err")
      break
    fi
    ours_ms+=" $(median_of_json "$work/$name.ours.json")"
  done
  if [ -n "$failed" ]; then
    printf "%-32s %s\n" "$name" "FAILED: $failed"
    continue
  fi
  ours=$(med $ours_ms) ort=$(med $ort_ms)
  diff=$(/usr/bin/python3 "$shared/peer/compare_outputs.py" "$work/$name.ort" "$work/$name.ours" --max-only 2>/dev/null || echo "?")
  ratio=$(/usr/bin/python3 -c "print('%.2f' % ($ours / $ort))")
  printf "%-32s %10s %10s %8s %12s\n" "$name" "$ours" "$ort" "$ratio" "$diff"
done
