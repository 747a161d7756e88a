#!/usr/bin/env bash
# Benchmark (not a test), issue 11 acceptance 3: every shared model on 1 thread, our runtime
# side by side with ONNX Runtime 1.20.1 (../shared/peer), interleaved: each round times ours,
# then ORT, ITERS runs each; the medians of the per-round medians are printed with their ratio.
#
#   tests/bench/cnn_vs_ort.sh [-r ROUNDS] [-i ITERS] [MODEL...]   (default: every model below)
#
# ratio = ours / ORT: below 1.0 we are faster. max_abs: the largest absolute difference of any
# output between the two (same inputs; --dump-outputs on both sides, peer compare_outputs.py),
# which must stay within 1e-4. The CNN models of the issue (PaddleOCR v4
# recognizer, openWakeWord embedding and melspectrogram) must reach <= 1.0, the others < 1.0.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
rounds=5 iters=50
take_rounds_iters "$@"
set -- "${args[@]}"
# model -> dims (ours and ORT take the same syntax: name=value, INPUT:AXIS=value). Inputs are
# drawn once by ort_run.js (--save-inputs; the Silero sample rate sr set to 16000, the rate
# these models are named for) and fed to both sides from that directory.
declare -A dims=(
  [ch_PP-OCRv4_rec_infer]=p2o.DynamicDimension.0=1,p2o.DynamicDimension.1=320
  [oww_embedding_model]=unk__314=1
  [oww_melspectrogram]=batch_size=1,samples=1280
  [dtln_model_1]=
  [gtcrn_simple]=
  [silero_vad_openvino_16k]=
  [silero_vad_16k_op15]=batch=1,sequence=512
  [silero_vad_v3.1]=sequence=512
  [silero_vad_v5]=input:0=1,input:1=512,state:1=1
)
order="ch_PP-OCRv4_rec_infer oww_embedding_model oww_melspectrogram dtln_model_1 gtcrn_simple silero_vad_openvino_16k silero_vad_16k_op15 silero_vad_v3.1 silero_vad_v5"
models=${*:-$order}
median() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median_ms'])" "$1"; }
med_of() { /usr/bin/python3 -c "import statistics,sys; print('%.3f' % statistics.median(map(float, sys.argv[1:])))" "$@"; }
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); our tier: ${NUPHAR_CODEGEN_TARGET:-$(grep -qw avx512_vnni /proc/cpuinfo && echo avx512vnni || echo 'best (see cpu_features.h)')}"
echo "1 thread, $rounds rounds x $iters runs, interleaved"
printf "%-26s %10s %10s %7s %10s\n" model ours_ms ort_ms ratio max_abs
for name in $models; do
  m=$shared/models/$name.onnx
  d=${dims[$name]-}
  dim_args=(); [ -n "$d" ] && dim_args=(--dims "$d")
  in=$work/in_$name
  node "$shared/peer/ort_run.js" "$m" --iters 1 "${dim_args[@]}" --const sr=16000 --save-inputs "$in" --quiet > /dev/null
  ours="" ort=""
  for _ in $(seq "$rounds"); do
    "$bin/perf_test" -x 1 -r "$iters" --input-dir "$in" "$m" > "$work/o.json"; ours+=" $(median "$work/o.json")"
    node "$shared/peer/ort_run.js" "$m" --threads 1 --iters "$iters" --input-dir "$in" --quiet > "$work/r.json"
    ort+=" $(median "$work/r.json")"
  done
  o=$(med_of $ours) r=$(med_of $ort)
  "$bin/perf_test" -x 1 -r 1 --input-dir "$in" --dump-outputs "$work/out_ours" "$m" > /dev/null
  node "$shared/peer/ort_run.js" "$m" --iters 1 --input-dir "$in" --dump-outputs "$work/out_ort" --quiet > /dev/null
  diff=$(/usr/bin/python3 "$shared/peer/compare_outputs.py" "$work/out_ort" "$work/out_ours" --atol 1e-4 2>/dev/null |
    /usr/bin/python3 -c "import json,sys; r=json.load(sys.stdin); print('%.1e%s' % (max(x['max_abs'] for x in r), '' if all(x['within_tol'] for x in r) else '!'))")
  rm -rf "$work/out_ours" "$work/out_ort"
  printf "%-26s %10s %10s %7s %10s\n" "$name" "$o" "$r" "$(/usr/bin/python3 -c "print('%.2f' % ($o / $r))")" "$diff"
done
