#!/usr/bin/python3
"""Generates the issue-3 acceptance-2 matrix of single/stacked LSTM/GRU/RNN models for ort_compare.py.

usage: gen_rnn_matrix.py OUT_DIR [--quick]
op (LSTM, GRU lbr 0/1, RNN) x direction x layers 1-2 x seq_lens (none / ragged initializer) x initial
states (none / graph input / initializer) x batch (fixed 3 / symbolic) x opset (9, 11, 13, 17).
Inputs: X [T=5, B, 4]; the symbolic dims are named seq and batch (pass --dims seq=5,batch=3).
"""
import itertools, os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

H, I, T, B = 3, 4, 5, 3
GATES = {'LSTM': 4, 'GRU': 3, 'RNN': 1}


def make(op, lbr, direction, layers, seq, init, batch, opset, rng):
    nd = 2 if direction == 'bidirectional' else 1
    G = GATES[op]
    bdim = B if batch == 'fixed' else 'batch'
    inputs = [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['seq', bdim, I])]
    inits, nodes, x, in_dim = [], [], 'X', I
    if seq:
        inits.append(numpy_helper.from_array(np.array([5, 2, 3], np.int32), 'seq_lens'))
    for l in range(layers):
        w = (rng.rand(nd, G * H, in_dim) - 0.5).astype(np.float32)
        r = (rng.rand(nd, G * H, H) - 0.5).astype(np.float32)
        b = (rng.rand(nd, 2 * G * H) - 0.5).astype(np.float32)
        inits += [numpy_helper.from_array(w, f'W{l}'), numpy_helper.from_array(r, f'R{l}'), numpy_helper.from_array(b, f'B{l}')]
        ins = [x, f'W{l}', f'R{l}', f'B{l}', 'seq_lens' if seq else '']
        states = ['h'] + (['c'] if op == 'LSTM' else [])
        for s in states:
            name = f'{s}0_{l}'
            if init == 'none':
                ins.append('')
            elif init == 'input':
                inputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [nd, bdim, H]))
                ins.append(name)
            else:
                inits.append(numpy_helper.from_array((rng.rand(nd, B, H) - 0.5).astype(np.float32), name))
                ins.append(name)
        while ins and ins[-1] == '':
            ins.pop()
        outs = [f'Y{l}', f'Yh{l}'] + ([f'Yc{l}'] if op == 'LSTM' else [])
        attrs = dict(hidden_size=H, direction=direction)
        if op == 'GRU':
            attrs['linear_before_reset'] = lbr
        nodes.append(helper.make_node(op, ins, outs, name=f'{op}_{l}', **attrs))
        if l + 1 < layers:  # [T, nd, B, H] -> [T, B, nd*H]
            nodes.append(helper.make_node('Transpose', [f'Y{l}'], [f'Yt{l}'], perm=[0, 2, 1, 3]))
            shape = numpy_helper.from_array(np.array([0, 0, -1], np.int64), f'shape{l}')
            inits.append(shape)
            nodes.append(helper.make_node('Reshape', [f'Yt{l}', f'shape{l}'], [f'X{l + 1}']))
            x, in_dim = f'X{l + 1}', nd * H
    last = layers - 1
    outputs = [helper.make_tensor_value_info(f'Y{last}', TensorProto.FLOAT, None),
               helper.make_tensor_value_info(f'Yh{last}', TensorProto.FLOAT, None)]
    if op == 'LSTM':
        outputs.append(helper.make_tensor_value_info(f'Yc{last}', TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, 'g', inputs, outputs, inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])
    m.ir_version = {9: 4, 11: 6, 13: 7, 17: 8}[opset]
    return m


def main():
    out = sys.argv[1]
    quick = '--quick' in sys.argv
    os.makedirs(out, exist_ok=True)
    rng = np.random.RandomState(0)
    ops = [('LSTM', 0), ('GRU', 0), ('GRU', 1), ('RNN', 0)]
    dirs = ['forward', 'reverse', 'bidirectional']
    combos = itertools.product(ops, dirs, [1, 2], [False, True], ['none', 'input', 'initializer'], ['fixed', 'symbolic'],
                               [9, 11, 13, 17])
    n = 0
    for (op, lbr), d, layers, seq, init, batch, opset in combos:
        if quick and (layers == 2 or opset in (11, 17)):
            continue
        name = f'{op}{lbr if op == "GRU" else ""}_{d[:3]}_L{layers}_{"seq" if seq else "noseq"}_{init}_{batch}_op{opset}.onnx'
        onnx.save(make(op, lbr, d, layers, seq, init, batch, opset, rng), os.path.join(out, name))
        n += 1
    print(n, 'models in', out)


if __name__ == '__main__':
    main()
