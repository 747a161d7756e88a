#!/usr/bin/env bash
# Float vs quantized output error, measured with the ONNX Runtime peer harness (../shared/peer),
# until the nuphar runtime can run quantized models itself. Both models get the same random
# inputs (numpy RandomState(seed).rand, see the peer README) or the inputs of --input-dir.
#
#   compare_with_ort.sh FLOAT.onnx QUANT.onnx [--dims seq=16,batch=1] [--seed 0] [--input-dir DIR]
#
# Prints, per output: max abs, mean abs and max relative error of QUANT against FLOAT.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,8p' "$0" >&2
  exit 2
fi
float_model=$1 quant_model=$2
shift 2
peer=${NUPHAR_PEER_DIR:-$(cd "$(dirname "$0")/../../../shared/peer" 2>/dev/null && pwd || true)}
if [ -z "$peer" ] || [ ! -f "$peer/ort_run.js" ]; then
  echo "compare_with_ort: ONNX Runtime peer harness not found (set NUPHAR_PEER_DIR)" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
node "$peer/ort_run.js" "$float_model" --iters 1 --dump-outputs "$work/float" "$@" > /dev/null
node "$peer/ort_run.js" "$quant_model" --iters 1 --dump-outputs "$work/quant" "$@" > /dev/null
/usr/bin/python3 "$peer/compare_outputs.py" "$work/float" "$work/quant"
