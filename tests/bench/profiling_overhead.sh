#!/usr/bin/env bash
# Benchmark (not a test), issue 15 acceptance 3: what profiling costs. Times the int8 and the float
# Scan LSTM H512 (input 80, seq 100, batch 1, 1 thread) with
#   base  a perf_test built without the profiler (BASE_PERF_TEST, e.g. a build of the commit before it)
#   off   this build, profiling off (the default)
#   on    this build, --profile-summary (profiling on, events kept in memory)
# in interleaved rounds, and prints the median of the per-round medians and the ratios off/base
# and on/off. Never fails on timing.
#
#   BASE_PERF_TEST=/path/to/old/perf_test tests/bench/profiling_overhead.sh [ROUNDS] [RUNS_PER_ROUND]
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, bin, work
base=${BASE_PERF_TEST:?set BASE_PERF_TEST to a perf_test built without the profiler}
rounds=${1:-15}
runs=${2:-40}
"$bin/rnn_benchmark" --rnn_type lstm --input_dim 80 --hidden_dim 512 --layers 1 --seq_len 100 --num_threads 1 \
  --min_seconds 0.01 --min_runs 1 --out "$work" > /dev/null 2>&1
py=/usr/bin/python3
median_of() { $py -c "import json,sys; print(json.load(sys.stdin)['median_ms'])"; }
tier=$($py -c "import json,sys; print(json.load(open(sys.argv[1]))['machine']['isa_tier'])" "$work/results.json")
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), ISA tier $tier; rounds $rounds x $runs runs, 1 thread"
printf "%-12s %9s %9s %9s %9s %11s %9s %9s\n" model base_ms base2_ms off_ms on_ms base2/base off/base on/off
for m in lstm_i80_h512__l1_no_batch_int8 lstm_i80_h512__l1_no_batch_scan; do
  : > "$work/$m.times"
  for r in $(seq "$rounds"); do
    b=$("$base" -x 1 -r "$runs" --dims seq=100 "$work/models/$m.onnx" | median_of)
    b2=$("$base" -x 1 -r "$runs" --dims seq=100 "$work/models/$m.onnx" | median_of)
    o=$("$bin/perf_test" -x 1 -r "$runs" --dims seq=100 "$work/models/$m.onnx" | median_of)
    p=$("$bin/perf_test" -x 1 -r "$runs" --dims seq=100 --profile-summary "$work/models/$m.onnx" 2>/dev/null | median_of)
    echo "$b $b2 $o $p" >> "$work/$m.times"
  done
  $py - "$work/$m.times" "$m" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
b, b2, o, p = (statistics.median(c) for c in zip(*rows))
print("%-12s %9.3f %9.3f %9.3f %9.3f %11.3f %9.3f %9.3f" % (sys.argv[2].replace('lstm_i80_h512__l1_no_batch', 'h512'),
                                                          b, b2, o, p, b2 / b, o / b, p / o))
PY
done
echo "(medians of per-round medians; base2/base is the machine's noise: off/base within it means profiling off"
echo " costs nothing measurable; on/off is what recording every kernel run costs)"
