#!/usr/bin/python3
"""Corpus check for symbolic_shape_infer (spec §5 case 1, issue 4 acceptance 2).

Runs build/bin/symbolic_shape_infer (flags of the original's corpus test: --auto_merge
--int_max 100000 --guess_output_rank) over every model.onnx of Debian's libonnx-testdata
(node, pytorch-converted, pytorch-operator, simple) and checks:
  - no crash and no hang (20 s timeout per model): exit code 0, or 1 with "opset 7" in the message for opset < 7;
  - every value for which ONNX's own shape inference gives a complete static shape gets the
    same shape from us.
Prints a summary; exits non-zero on any failure.

Usage: /usr/bin/python3 tests/shape_infer/corpus_check.py [path/to/symbolic_shape_infer]
"""
import collections
import glob
import os
import subprocess
import sys
import tempfile
import time

import onnx

DATA = "/usr/share/libonnx-testdata/data"
SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]


def graphs(g):
    yield g
    for n in g.node:
        for a in n.attribute:
            if a.HasField("g"):
                yield from graphs(a.g)
            for sg in a.graphs:
                yield from graphs(sg)


def static_shapes(model):
    out = {}
    for g in graphs(model.graph):
        for vi in list(g.value_info) + list(g.output):
            t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
            if t is None or not t.HasField("shape"):
                continue
            dims = [d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim]
            if all(d is not None for d in dims):
                out[vi.name] = dims
    return out


def strip_declared(model):
    """Drops declared value_info and output shapes so only ONNX's own inference remains."""
    for g in graphs(model.graph):
        del g.value_info[:]
        for vi in g.output:
            if vi.type.HasField("tensor_type"):
                vi.type.tensor_type.ClearField("shape")
    return model


def our_shapes(model):
    out = {}
    for g in graphs(model.graph):
        for vi in list(g.value_info) + list(g.output):
            t = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
            if t is None or not t.HasField("shape"):
                continue
            out[vi.name] = [d.dim_value if d.HasField("dim_value") else (d.dim_param or "?") for d in t.shape.dim]
    return out


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "..", "build", "bin", "symbolic_shape_infer")
    models = sorted(m for s in SUITES for m in glob.glob(os.path.join(DATA, s, "*", "model.onnx")))
    exits = collections.Counter()
    failures = []
    compared = mismatched = 0
    start = time.time()
    with tempfile.TemporaryDirectory() as tmp:
        out_path = os.path.join(tmp, "out.onnx")
        for path in models:
            name = os.path.relpath(os.path.dirname(path), DATA)
            try:
                proc = subprocess.run([binary, "--input", path, "--output", out_path, "--auto_merge", "--int_max",
                                       "100000", "--guess_output_rank"], capture_output=True, text=True, timeout=20)
                rc = proc.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout"
            exits[rc] += 1
            if rc == 1 and "opset 7 and above" in proc.stderr:
                exits["opset<7"] += 1
                continue
            if rc != 0:
                failures.append(f"{name}: exit {rc}: {proc.stderr.strip()[:300] if rc != 'timeout' else ''}")
                continue
            try:
                reference = static_shapes(onnx.shape_inference.infer_shapes(strip_declared(onnx.load(path))))
            except Exception:  # ONNX's own inference fails on a few models: nothing to compare
                continue
            ours = our_shapes(onnx.load(out_path))
            for value, dims in reference.items():
                compared += 1
                if ours.get(value) != dims:
                    mismatched += 1
                    failures.append(f"{name}: value {value}: ONNX {dims} vs ours {ours.get(value)}")
    print(f"models: {len(models)}  exit codes: {dict(exits)}  time: {time.time() - start:.1f} s")
    print(f"static values compared with ONNX: {compared}, mismatched: {mismatched}")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
