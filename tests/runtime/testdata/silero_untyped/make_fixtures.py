#!/usr/bin/python3
"""Inputs and ONNX Runtime 1.20.1 outputs for untyped_subgraph_values_test.cc (not run by the
tests; rerun by hand to refresh): Silero VAD v5 and silero_vad_16k_op15, whose If branches have
subgraph outputs with an empty TypeProto. Writes TensorProto .pb files next to this script.

  /usr/bin/python3 make_fixtures.py   (needs ../shared/peer set up: node + onnxruntime-node)
"""
import json, os, subprocess, tempfile
import numpy as np
from onnx import numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
shared = os.path.abspath(os.path.join(here, '../../../../../shared'))
rng = np.random.RandomState(0)
inputs = {'input': (rng.rand(1, 512) - 0.5).astype(np.float32),
          'state': ((rng.rand(2, 1, 128) - 0.5) * 0.1).astype(np.float32),
          'sr': np.array(16000, dtype=np.int64)}
os.makedirs(os.path.join(here, 'inputs'), exist_ok=True)
with tempfile.TemporaryDirectory() as tmp:
    indir = os.path.join(tmp, 'in')
    os.makedirs(indir)
    for name, arr in inputs.items():
        open(os.path.join(here, "inputs", "input_%s.pb" % name), "wb").write(numpy_helper.from_array(arr, name).SerializeToString())
        arr.tofile(os.path.join(indir, name + '.bin'))
        json.dump({'name': name, 'dtype': str(arr.dtype), 'shape': list(arr.shape)}, open(os.path.join(indir, name + '.json'), 'w'))
    for model in ('silero_vad_v5', 'silero_vad_16k_op15'):
        out = os.path.join(tmp, model)
        subprocess.run(['node', os.path.join(shared, 'peer/ort_run.js'), os.path.join(shared, 'models', model + '.onnx'),
                        '--input-dir', indir, '--dump-outputs', out, '--iters', '1', '--quiet'], check=True,
                       stdout=subprocess.DEVNULL)
        for f in sorted(os.listdir(out)):
            if f.endswith('.json') and f != 'manifest.json':
                meta = json.load(open(os.path.join(out, f)))
                arr = np.fromfile(os.path.join(out, f[:-5] + '.bin'), dtype=meta['dtype']).reshape(meta['shape'])
                open(os.path.join(here, '%s_ort_%s.pb' % (model, meta['name'])), 'wb').write(
                    numpy_helper.from_array(arr, meta['name']).SerializeToString())
