#!/usr/bin/env bash
# Benchmark (not a test), issue 3 acceptance 7: model_editor --mode to_scan on a 5-layer
# bidirectional LSTM with hidden 1024, wall time and peak memory, medians of repeated runs.
# Baseline measured in the same run: `cp` of the same model file (the file-system floor of reading
# and writing that many bytes), so a slow or busy machine shows up in both columns.
#
#   tests/bench/to_scan_speed.sh [-r RUNS] [INPUT_DIM...]     (default: 5 runs, input dims 80 1024)
#
# Targets: median wall < 2 s and peak RSS < 3x the model size.
set -euo pipefail
source "$(dirname "$0")/bench_env.sh"  # root, shared, bin, work
runs=5
if [ "${1:-}" = -r ]; then runs=$2; shift 2; fi
dims=${*:-80 1024}
median() { sort -g | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
printf "%-9s %9s %10s %10s %10s %10s %8s %s\n" input_dim model_MB cp_s to_scan_s ratio_cp peak_MB peak/x verdict
for d in $dims; do
  m=$work/lstm_i$d.onnx
  /usr/bin/python3 "$shared/peer/make_rnn_model.py" --op lstm --input_dim "$d" --hidden_dim 1024 --layers 5 \
    --bidirectional --seed 0 -o "$m" > /dev/null
  size=$(stat -c %s "$m")
  : > "$work/cp.txt"; : > "$work/scan.txt"; : > "$work/rss.txt"
  for _ in $(seq "$runs"); do
    rm -f "$work/copy.onnx" "$work/out.onnx"
    /usr/bin/time -f "%e" -o "$work/t" cp "$m" "$work/copy.onnx"; cat "$work/t" >> "$work/cp.txt"
    /usr/bin/time -f "%e %M" -o "$work/t" "$bin/model_editor" --input "$m" --output "$work/out.onnx" --mode to_scan > /dev/null
    awk '{print $1}' "$work/t" >> "$work/scan.txt"; awk '{print $2}' "$work/t" >> "$work/rss.txt"
  done
  cp_s=$(median < "$work/cp.txt") scan_s=$(median < "$work/scan.txt") rss_kb=$(median < "$work/rss.txt")
  /usr/bin/python3 - "$d" "$size" "$cp_s" "$scan_s" "$rss_kb" <<'PY'
import sys
d, size, cp, scan, rss = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5])
peak = rss * 1024 / size
ok = scan < 2.0 and peak < 3.0
print('%-9s %9.0f %10.2f %10.2f %10.2f %10.0f %8.2f %s' % (d, size / 1e6, cp, scan, scan / cp if cp else 0,
      rss / 1024, peak, 'meets target' if ok else 'MISSES target (2 s, 3x)'))
PY
done
echo "(medians of $runs runs; ratio_cp = to_scan time / cp time of the same file)"
