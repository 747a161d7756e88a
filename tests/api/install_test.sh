#!/usr/bin/env bash
# Acceptance test of the installed package (issue 16): cmake --install into a fresh prefix, then
#  - a separate CMake project (find_package(nuphar), C++ wrapper) and
#  - a C99 program built with cc -std=c99 -Wall -Werror $(pkg-config --cflags --libs nuphar)
# run silero_vad_v5 on the same inputs as the installed perf_test; outputs must be byte-identical.
# The installed Python package is imported from <prefix>/lib/python3/dist-packages and must
# match too.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR(tests/api) SHARED_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 shared=$3 work=$4
model=$shared/models/silero_vad_v5.onnx
rm -rf "$work"
mkdir -p "$work"/in "$work"/ref "$work"/out_c "$work"/out_cxx "$work"/out_py
prefix=$work/prefix

cmake --install "$build" --prefix "$prefix" > "$work"/install.log
libdir=$(dirname "$(find "$prefix" -name 'libnuphar.so' | head -1)")
[ -L "$libdir/libnuphar.so" ] && [ -e "$libdir/libnuphar.so.0" ] || { echo "libnuphar.so symlinks missing"; exit 1; }
for f in include/nuphar/nuphar_c_api.h include/nuphar/nuphar_cxx_api.h bin/perf_test bin/model_editor \
         bin/symbolic_shape_infer bin/model_quantizer lib/python3/dist-packages/nuphar/__init__.py; do
  [ -e "$prefix/$f" ] || { echo "not installed: $f"; exit 1; }
done

# Inputs: NAME.bin + NAME.json for perf_test --input-dir, inputs.txt for the consumers.
/usr/bin/python3 - "$work/in" <<'PY'
import json, sys
import numpy as np
d = sys.argv[1]
rng = np.random.RandomState(7)
feeds = {"input": rng.rand(1, 512).astype(np.float32) - 0.5,
         "state": (rng.rand(2, 1, 128).astype(np.float32) - 0.5) * 0.1,
         "sr": np.array(16000, dtype=np.int64)}
codes = {np.dtype(np.float32): 1, np.dtype(np.int64): 7}
with open(d + "/inputs.txt", "w") as lst:
    for name, a in feeds.items():
        a.tofile("%s/%s.bin" % (d, name))
        json.dump({"name": name, "dtype": str(a.dtype), "shape": list(a.shape)}, open("%s/%s.json" % (d, name), "w"))
        lst.write("%s %d %d %s\n" % (name, codes[a.dtype], a.ndim, " ".join(str(x) for x in a.shape)))
PY

"$prefix"/bin/perf_test -r 1 --warmup 0 --input-dir "$work"/in --dump-outputs "$work"/ref "$model" > "$work"/perf_test.json

# C++ through find_package(nuphar).
cmake -S "$src"/consumer -B "$work"/consumer_build -G Ninja -DCMAKE_PREFIX_PATH="$prefix" > "$work"/consumer_configure.log
cmake --build "$work"/consumer_build > "$work"/consumer_build.log
"$work"/consumer_build/consumer_cxx "$model" "$work"/in "$work"/out_cxx

# C99 through pkg-config; the rpath comes from pkg-config's libdir, as a packager would set it.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cc -std=c99 -Wall -Werror -o "$work"/consumer_c "$src"/consumer/consumer.c $(pkg-config --cflags --libs nuphar) \
   -Wl,-rpath,"$(pkg-config --variable=libdir nuphar)"
"$work"/consumer_c "$model" "$work"/in "$work"/out_c

# Python from the install tree (no build-tree path on sys.path).
PYTHONPATH=$prefix/lib/python3/dist-packages /usr/bin/python3 - "$model" "$work" <<'PY'
import json, sys
import numpy as np
import nuphar
model, work = sys.argv[1], sys.argv[2]
assert nuphar.__file__.startswith(work), nuphar.__file__
sess = nuphar.InferenceSession(model)
feeds = {}
for line in open(work + "/in/inputs.txt"):
    name, code, rank, *dims = line.split()
    dtype = {"1": np.float32, "7": np.int64}[code]
    feeds[name] = np.fromfile("%s/in/%s.bin" % (work, name), dtype=dtype).reshape([int(d) for d in dims])
outs = sess.run(None, feeds)
for arg, value in zip(sess.get_outputs(), outs):
    value.tofile("%s/out_py/%s.bin" % (work, arg.name))
print("python (installed %s): %d outputs" % (nuphar.__file__, len(outs)))
PY

n=0
for ref in "$work"/ref/*.bin; do
  name=$(basename "$ref")
  for out in out_c out_cxx out_py; do
    cmp "$ref" "$work/$out/$name" || { echo "$out/$name differs from perf_test's output"; exit 1; }
  done
  n=$((n + 1))
done
[ "$n" -ge 2 ] || { echo "perf_test dumped $n outputs, expected 2"; exit 1; }
echo "install_test: $n outputs of $(basename "$model") identical in perf_test, C (pkg-config), C++ (find_package), Python (installed)"
