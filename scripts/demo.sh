#!/usr/bin/env bash
# End-to-end demo: installs what is missing, builds, makes the bundled default model (a small
# LSTM) and runs it on the runtime with perf_test.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bash "$root/scripts/setup.sh"
bash "$root/scripts/build.sh" "$root/build"
bin=$root/build/bin
out=$root/out/demo
mkdir -p "$out"
model=$out/lstm.onnx
/usr/bin/python3 "$root/scripts/make_demo_model.py" -o "$model"
echo "== float LSTM on the nuphar runtime (perf_test)"
"$bin/perf_test" -r 50 --dims seq=100 --dump-outputs "$out/float_outputs" "$model"
