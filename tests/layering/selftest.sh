#!/usr/bin/env bash
# The layering checks must fail on a planted violation (else a broken grep passes silently):
# editor/ including a runtime/ header, graph/ including a header from above it, and a library
# writing to std::cerr.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=${1:?usage: selftest.sh SOURCE_DIR}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/graph" "$tmp/editor" "$tmp/quantizer"
echo '#include "runtime/session.h"' > "$tmp/editor/bad.cc"
if bash "$here/include_rule.sh" "$tmp" >/dev/null; then echo "include_rule.sh missed editor -> runtime"; exit 1; fi
rm "$tmp/editor/bad.cc"
echo '#include "shape_infer/shape_infer.h"' > "$tmp/graph/bad.h"
if bash "$here/include_rule.sh" "$tmp" >/dev/null; then echo "include_rule.sh missed graph -> shape_infer"; exit 1; fi
rm "$tmp/graph/bad.h"
bash "$here/include_rule.sh" "$tmp" >/dev/null
echo 'void F() { std::cerr << "x"; }' > "$tmp/quantizer/bad.cc"
if bash "$here/no_direct_output.sh" "$tmp" >/dev/null; then echo "no_direct_output.sh missed std::cerr"; exit 1; fi
echo "layering checks fail on planted violations"
