#!/usr/bin/env bash
# Benchmark (not a test), issue 12 acceptance 3: int8 Scan LSTMs (--only_for_scan) on 1 and 2
# threads of our runtime, side by side with ONNX Runtime at 1 and 2 intra-op threads (its own
# int8 DynamicQuantizeLSTM and its float LSTM). seq 100, batch 1, input 80. Every engine is
# timed ROUNDS times, interleaved; the medians of the per-round medians are printed.
#
#   tests/bench/threads_lstm_vs_ort.sh [-r ROUNDS] [CONFIG...]
#   CONFIG = hidden:layers:uni|bi   (default: 1024:2:bi 512:1:uni)
#
# Our 2-thread runs use nuphar_parallel_min_workloads:131072 (README) so the per-step GEMV and
# the input-projection GEMMs split too; the directions of a bidirectional layer always run side
# by side with 2 threads.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
rounds=3
if [ "${1:-}" = -r ]; then rounds=$2; shift 2; fi
configs=${*:-1024:2:bi 512:1:uni}
iters=20
median() { /usr/bin/python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['median_ms'])" "$1"; }
med_of() { /usr/bin/python3 -c "import statistics,sys; print('%.3f' % statistics.median(map(float, sys.argv[1:])))" "$@"; }
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
printf "%-14s %9s %9s %7s %9s %9s %9s %9s %10s %10s\n" config ours_1t ours_2t 2t/1t ortdq_1t ortdq_2t ortf_1t ortf_2t ours2/dq2 ours2/f2
for c in $configs; do
  IFS=: read -r h layers dir <<< "$c"
  m=$work/lstm_h${h}_l${layers}_$dir
  bi=(); [ "$dir" = bi ] && bi=(--bidirectional)
  /usr/bin/python3 "$shared/peer/make_rnn_model.py" --op lstm --input_dim 80 --hidden_dim "$h" --layers "$layers" \
    "${bi[@]}" --seq_len 100 --batch 1 --opset 11 --seed 0 -o "$m.onnx" > /dev/null
  /usr/bin/python3 "$shared/peer/make_dq_lstm.py" "$m.onnx" "$m.dq.onnx" > /dev/null
  "$bin/model_editor" --input "$m.onnx" --output "$m.scan.onnx" --mode to_scan > /dev/null
  "$bin/model_quantizer" --input "$m.scan.onnx" --output "$m.int8.onnx" --only_for_scan > /dev/null
  declare -A runs=()
  for r in $(seq "$rounds"); do
    "$bin/perf_test" -x 1 -r "$iters" "$m.int8.onnx" > "$work/o1.json"; runs[o1]+=" $(median "$work/o1.json")"
    "$bin/perf_test" -x 2 -r "$iters" --settings nuphar_parallel_min_workloads:131072 "$m.int8.onnx" > "$work/o2.json"
    runs[o2]+=" $(median "$work/o2.json")"
    for t in 1 2; do
      node "$shared/peer/ort_run.js" "$m.dq.onnx" --threads "$t" --iters "$iters" --quiet > "$work/d$t.json"
      runs[d$t]+=" $(median "$work/d$t.json")"
      node "$shared/peer/ort_run.js" "$m.onnx" --threads "$t" --iters "$iters" --quiet > "$work/f$t.json"
      runs[f$t]+=" $(median "$work/f$t.json")"
    done
  done
  o1=$(med_of ${runs[o1]}) o2=$(med_of ${runs[o2]}) d1=$(med_of ${runs[d1]}) d2=$(med_of ${runs[d2]})
  f1=$(med_of ${runs[f1]}) f2=$(med_of ${runs[f2]})
  ratio() { /usr/bin/python3 -c "print('%.2f' % ($1 / $2))"; }
  printf "%-14s %9s %9s %7s %9s %9s %9s %9s %10s %10s\n" "$c" "$o1" "$o2" "$(ratio "$o1" "$o2")x" "$d1" "$d2" "$f1" "$f2" \
    "$(ratio "$o2" "$d2")" "$(ratio "$o2" "$f2")"
  unset runs
done
echo "(medians in ms; 2t/1t = our speed-up from the second thread; ours2/dq2 < 1: faster than ORT's int8 LSTM at 2 threads)"
