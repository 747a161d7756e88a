#!/usr/bin/python3
"""Acceptance 3 of issue 3: a converted model agrees with its original in ONNX Runtime.

usage: ort_compare.py [--mode to_scan] [--editor BIN] [--atol 1e-5] [--dims a=1,b=2] MODEL_OR_NODE_TEST_DIR...

For a model file: runs model_editor, then ORT on the original and on the converted model with the same
random inputs (ort_run.js --seed 0), and compares every output. For an ONNX backend node test dir
(model.onnx + test_data_set_0): W/R/B/P are turned into initializers first (to_scan needs constant
weights), and the converted model is also compared with the stored expected outputs.
Needs the peer: bash /work/shared/peer/setup_ort.sh. Exit 1 on any mismatch.
"""
import argparse, glob, json, os, subprocess, sys, tempfile
import numpy as np
import onnx
from onnx import numpy_helper

PEER = '/work/shared/peer'
HERE = os.path.dirname(os.path.abspath(__file__))


def load_dump(d):
    out = {}
    for m in json.load(open(os.path.join(d, 'manifest.json'))):
        meta = json.load(open(os.path.join(d, m['file'][:-4] + '.json'))) if m['file'].endswith('.bin') else None
        arr = np.fromfile(os.path.join(d, m['file']), dtype=np.dtype(meta['dtype']) if meta else np.float32)
        out[m['name']] = arr.reshape(meta['shape']) if meta else arr
    return out


def ort(model, out_dir, args, input_dir=None):
    cmd = ['node', os.path.join(PEER, 'ort_run.js'), model, '--iters', '1', '--warmup', '0', '--quiet',
           '--dump-outputs', out_dir, '--seed', '0']
    if args.dims: cmd += ['--dims', args.dims]
    cmd += args.ort_args.split()
    if input_dir: cmd += ['--input-dir', input_dir]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return None, r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'failed'
    return load_dump(out_dir), ''


def all_op_types(g):
    for n in g.node:
        yield n.op_type
        for a in n.attribute:
            if a.type == onnx.AttributeProto.GRAPH:
                yield from all_op_types(a.g)


def node_test_model(test_dir, tmp):
    """Model with the weight inputs as initializers; the other inputs saved for ORT."""
    m = onnx.load(os.path.join(test_dir, 'model.onnx'))
    rnn = [n for n in m.graph.node if n.op_type in ('LSTM', 'GRU', 'RNN')][0]
    weights = {rnn.input[i] for i in (1, 2, 3, 7) if len(rnn.input) > i and rnn.input[i]}
    data = os.path.join(test_dir, 'test_data_set_0')
    inputs = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(data + '/input_*.pb'))]
    in_dir = os.path.join(tmp, 'inputs'); os.makedirs(in_dir, exist_ok=True)
    kept = []
    for vi, arr in zip(list(m.graph.input), inputs):
        if vi.name in weights:
            m.graph.initializer.append(numpy_helper.from_array(arr, vi.name))
            m.graph.input.remove(vi)
        else:
            onnx.save_tensor(numpy_helper.from_array(arr, vi.name), os.path.join(in_dir, vi.name + '.pb'))
            kept.append(vi.name)
    expected = [numpy_helper.to_array(onnx.load_tensor(f)) for f in sorted(glob.glob(data + '/output_*.pb'))]
    path = os.path.join(tmp, 'orig.onnx'); onnx.save(m, path)
    return path, in_dir, dict(zip([o.name for o in m.graph.output], expected))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('paths', nargs='+')
    ap.add_argument('--mode', default='to_scan')
    ap.add_argument('--editor', default=os.path.join(HERE, '../../build/bin/model_editor'))
    ap.add_argument('--atol', type=float, default=1e-5)
    ap.add_argument('--dims', default='')
    ap.add_argument('--editor-args', default='')
    ap.add_argument('--ort-args', default='', help='extra ort_run.js flags, e.g. "--const sr=16000"')
    args = ap.parse_args()
    bad = 0
    for p in args.paths:
        with tempfile.TemporaryDirectory() as tmp:
            expected, in_dir = None, None
            model = p
            if os.path.isdir(p):
                model, in_dir, expected = node_test_model(p, tmp)
            conv = os.path.join(tmp, 'conv.onnx')
            r = subprocess.run([args.editor, '--input', model, '--output', conv, '--mode', args.mode] +
                               args.editor_args.split(), capture_output=True, text=True)
            if r.returncode != 0:
                print(f'FAIL {p}: model_editor: {r.stderr.strip()}'); bad += 1; continue
            a, why_a = ort(model, os.path.join(tmp, 'a'), args, in_dir)
            b, why_b = ort(conv, os.path.join(tmp, 'b'), args, in_dir)
            if b is None:
                print(f'FAIL {p}: ORT cannot run the converted model: {why_b}'); bad += 1; continue
            if a is not None:
                worst = max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) if a[k].size else 0.0 for k in a)
                line = f'{p}: ORT original vs converted max abs diff {worst:.3g}'
                ok = worst <= args.atol
            else:
                line, ok = f'{p}: ORT cannot run the original ({why_a[:60]}...)', expected is not None
            if expected:
                we = max(float(np.max(np.abs(expected[k] - b[k]))) for k in expected)
                line += f'; converted vs expected {we:.3g}'
                ok = ok and we <= args.atol
            try:
                onnx.checker.check_model(onnx.load(conv), full_check=True)
            except Exception as e:  # noqa: BLE001 - report any checker failure
                print(f'FAIL {p}: onnx.checker: {str(e).splitlines()[0]}'); bad += 1; continue
            left = [t for t in all_op_types(onnx.load(conv).graph) if t in ('LSTM', 'GRU', 'RNN', 'Loop')]
            if args.mode == 'to_scan' and any(t != 'Loop' for t in left):
                ok = False; line += f'; recurrent nodes left: {left}'
            print(('ok   ' if ok else 'FAIL ') + line)
            bad += not ok
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
