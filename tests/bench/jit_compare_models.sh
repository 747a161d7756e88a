#!/usr/bin/env bash
# Issue 10 acceptance 2 and 3 on the shared models (not a test: it needs the ONNX Runtime peer).
# For each model in ../shared/models, fed as a streaming caller feeds it (ORT's seeded random
# inputs, Silero's sr = 16000):
#   - coverage: jit_nodes / (jit_nodes + reference_nodes) of a JIT session (perf_test JSON);
#   - compare mode (nuphar_execution_mode:compare): every generated kernel also runs on the
#     reference executor; the worst relative difference over the kernels (R1: within 1e-5 for
#     float; a breach fails the Run, printed as FAILED);
#   - the end-to-end max |ours - ORT| over the outputs (acceptance: within 1e-4).
#
#   tests/bench/jit_compare_models.sh [MODEL_NAME...]       (default: every shared model)
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
[ -f "$shared/peer/ort_run.js" ] || { echo "jit_compare_models: no peer harness at $shared/peer" >&2; exit 2; }
# name:DIMS[@CONST=V,...]: ort_run.js's --dims and --const (the streaming shapes of runtime_vs_ort.sh).
entries="silero_vad_openvino_16k: silero_vad_v3.1:sequence=1536
         silero_vad_v5:input:0=1,input:1=512,state:1=1@sr=16000 silero_vad_16k_op15:batch=1,sequence=512@sr=16000
         dtln_model_1: gtcrn_simple: ch_PP-OCRv4_rec_infer:p2o.DynamicDimension.0=1,p2o.DynamicDimension.1=320
         oww_embedding_model:unk__314=1 oww_melspectrogram:batch_size=1,samples=1280"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); tier: ${NUPHAR_CODEGEN_TARGET:-host best}"
printf "%-26s %9s %9s %8s %9s %16s %14s\n" model jit_nodes ref_nodes coverage compared worst_kernel_rel max_abs_vs_ort
for entry in $entries; do
  name=${entry%%:*} rest=${entry#*:}
  [ $# -gt 0 ] && [[ " $* " != *" $name "* ]] && continue
  dims=${rest%%@*} consts=""
  [ "$rest" != "$dims" ] && consts=${rest#*@}
  ort_args=()
  [ -n "$dims" ] && ort_args+=(--dims "$dims")
  for c in ${consts//,/ }; do ort_args+=(--const "$c"); done
  model=$shared/models/$name.onnx
  rm -rf "$work/in" "$work/ort" "$work/ours"
  node "$shared/peer/ort_run.js" "$model" --threads 1 --iters 1 --seed 0 "${ort_args[@]}" \
    --save-inputs "$work/in" --dump-outputs "$work/ort" --quiet > /dev/null
  if ! "$bin/perf_test" -x 1 -r 2 --input-dir "$work/in" --dump-outputs "$work/ours" \
      --settings nuphar_execution_mode:compare "$model" > "$work/o.json" 2> "$work/err"; then
    printf "%-26s FAILED: %s\n" "$name" "$(grep -v '^nuphar compare' "$work/err" | tail -1)"
    continue
  fi
  compared=$(grep -c '^nuphar compare' "$work/err" || true)
  worst=$({ grep -o 'max rel diff [0-9.e+-]*' "$work/err" || true; } | awk '{print $4}' | sort -g | tail -1)
  diff=$(/usr/bin/python3 "$shared/peer/compare_outputs.py" "$work/ort" "$work/ours" --max-only 2>/dev/null || echo "?")
  /usr/bin/python3 - "$work/o.json" "$name" "$compared" "${worst:--}" "$diff" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
n = j["jit_nodes"] + j["reference_nodes"]
print("%-26s %9d %9d %7.0f%% %9s %16s %14s" % (sys.argv[2], j["jit_nodes"], j["reference_nodes"],
      100.0 * j["jit_nodes"] / max(n, 1), sys.argv[3], sys.argv[4], sys.argv[5]))
PY
done
