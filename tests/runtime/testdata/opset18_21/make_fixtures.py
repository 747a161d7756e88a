#!/usr/bin/python3
"""Hand-built opset 18-21 models, one per changed op, with ONNX Runtime 1.20.1's outputs
(issue 11). Each case is an ONNX backend-test directory: CASE/model.onnx and
CASE/test_data_set_0/{input,output}_K.pb, run by onnx_test_runner (ctest opset18_21_fixtures).
Not run by the tests; rerun by hand to refresh (needs ../shared/peer set up):

  /usr/bin/python3 make_fixtures.py [CASE ...]
  /usr/bin/python3 make_fixtures.py --quantized ../../../../build/bin   (after a build: int8 reference)

Debian's python3-onnx is 1.12 (opset 17): the models are built with make_opsetid and never
passed to the checker, which does not know these ops.
"""
import os, shutil, subprocess, sys, tempfile
import numpy as np
from onnx import TensorProto, helper, numpy_helper

here = os.path.dirname(os.path.abspath(__file__))
shared = os.path.abspath(os.path.join(here, '../../../../../shared'))
IR = {18: 8, 19: 9, 20: 9, 21: 10}
F, I64, I32 = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32
rng = np.random.RandomState(0)


def rand(*shape):
    return (rng.rand(*shape).astype(np.float32) - 0.5) * 4


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def model(opset, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, 'g', inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)], producer_name='make_fixtures.py')
    m.ir_version = IR[opset]
    return m


def const(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


CASES = {}


def case(fn):
    CASES[fn.__name__] = fn
    return fn


@case
def split18_num_outputs():
    n = helper.make_node('Split', ['x'], ['a', 'b', 'c'], axis=1, num_outputs=3)
    return model(18, [n], [vi('x', F, [2, 7])], [vi(o, F, None) for o in 'abc']), [rand(2, 7)]


@case
def reduce18_axes_input():
    ops = ['ReduceMax', 'ReduceMin', 'ReduceMean', 'ReduceProd', 'ReduceL1', 'ReduceL2', 'ReduceLogSum',
           'ReduceLogSumExp', 'ReduceSumSquare', 'ReduceSum']
    nodes = [helper.make_node(op, ['xp' if 'Log' in op and 'Exp' not in op else 'x', 'axes'], ['y_' + op], keepdims=k % 2)
             for k, op in enumerate(ops)]
    nodes.insert(0, helper.make_node('Abs', ['x'], ['xp']))
    nodes.append(helper.make_node('ReduceMean', ['x'], ['y_all'], keepdims=0))  # axes omitted: all
    return model(18, nodes, [vi('x', F, [2, 3, 4])], [vi('y_' + op, F, None) for op in ops] + [vi('y_all', F, None)],
                 [const('axes', np.array([0, -1], np.int64))]), [rand(2, 3, 4)]


@case
def pad18_axes():
    n = helper.make_node('Pad', ['x', 'pads', 'value', 'axes'], ['y'], mode='constant')
    return model(18, [n], [vi('x', F, [2, 3, 4])], [vi('y', F, None)],
                 [const('pads', np.array([1, 0, 2, 3], np.int64)), const('value', np.array(1.5, np.float32)),
                  const('axes', np.array([0, -1], np.int64))]), [rand(2, 3, 4)]


@case
def pad19_wrap():
    n = helper.make_node('Pad', ['x', 'pads'], ['y'], mode='wrap')
    return model(19, [n], [vi('x', F, [3, 4])], [vi('y', F, None)],
                 [const('pads', np.array([1, 2, 2, 3], np.int64))]), [rand(3, 4)]


@case
def scatternd18_max():
    n = helper.make_node('ScatterND', ['x', 'idx', 'u'], ['y'], reduction='max')
    return model(18, [n], [vi('x', F, [4, 3]), vi('u', F, [3, 3])], [vi('y', F, None)],
                 [const('idx', np.array([[1], [3], [1]], np.int64))]), [rand(4, 3), rand(3, 3)]


@case
def scatterelements18_min():
    n = helper.make_node('ScatterElements', ['x', 'idx', 'u'], ['y'], axis=1, reduction='min')
    return model(18, [n], [vi('x', F, [2, 4]), vi('u', F, [2, 3])], [vi('y', F, None)],
                 [const('idx', np.array([[0, 2, 0], [3, 3, 1]], np.int64))]), [rand(2, 4), rand(2, 3)]


@case
def col2im18():
    n = helper.make_node('Col2Im', ['x', 'image', 'block'], ['y'], strides=[1, 1], dilations=[1, 1], pads=[0, 0, 0, 0])
    # [N=1, C*2*2 = 8, L = (4-1)*(5-1) = 12] -> [1, 2, 4, 5]
    return model(18, [n], [vi('x', F, [1, 8, 12])], [vi('y', F, None)],
                 [const('image', np.array([4, 5], np.int64)), const('block', np.array([2, 2], np.int64))]), [rand(1, 8, 12)]


@case
def groupnorm18():
    n = helper.make_node('GroupNormalization', ['x', 's', 'b'], ['y'], num_groups=2, epsilon=1e-3)
    return model(18, [n], [vi('x', F, [2, 4, 3, 2])], [vi('y', F, None)],
                 [const('s', np.array([0.5, 2.0], np.float32)), const('b', np.array([0.1, -0.3], np.float32))]), [rand(2, 4, 3, 2)]


@case
def groupnorm21():
    n = helper.make_node('GroupNormalization', ['x', 's', 'b'], ['y'], num_groups=2)
    return model(21, [n], [vi('x', F, [2, 4, 3])], [vi('y', F, None)],
                 [const('s', np.array([0.5, 2.0, 1.0, -1.0], np.float32)),
                  const('b', np.array([0.1, -0.3, 0.0, 0.2], np.float32))]), [rand(2, 4, 3)]


@case
def bitwise18():
    nodes = [helper.make_node('BitwiseAnd', ['a', 'b'], ['and']), helper.make_node('BitwiseOr', ['a', 'b'], ['or']),
             helper.make_node('BitwiseXor', ['a', 'b'], ['xor']), helper.make_node('BitwiseNot', ['a'], ['not'])]
    a = np.array([[0, 1, -7, 123456], [5, 6, 7, 8]], np.int32)
    b = np.array([3, -1, 12, 255], np.int32)
    return model(18, nodes, [vi('a', I32, [2, 4]), vi('b', I32, [4])], [vi(o, I32, None) for o in ('and', 'or', 'xor', 'not')]), [a, b]


@case
def centercroppad18():
    n = helper.make_node('CenterCropPad', ['x', 'shape'], ['y'], axes=[1, 2])
    return model(18, [n], [vi('x', F, [2, 5, 3])], [vi('y', F, None)],
                 [const('shape', np.array([2, 6], np.int64))]), [rand(2, 5, 3)]


@case
def mish18():
    n = helper.make_node('Mish', ['x'], ['y'])
    x = np.array([-30, -3, -1, -0.25, 0, 0.25, 1, 3, 30, 100], np.float32).reshape(2, 5)
    return model(18, [n], [vi('x', F, [2, 5])], [vi('y', F, None)]), [x]


@case
def lppool18_dilations():
    n = helper.make_node('LpPool', ['x'], ['y'], kernel_shape=[2, 2], dilations=[2, 1], strides=[1, 2], p=3, ceil_mode=1)
    return model(18, [n], [vi('x', F, [1, 2, 5, 5])], [vi('y', F, None)]), [rand(1, 2, 5, 5)]


@case
def averagepool19_dilations():
    n = helper.make_node('AveragePool', ['x'], ['y'], kernel_shape=[2, 2], dilations=[2, 2], pads=[1, 1, 1, 1],
                         count_include_pad=0)
    n2 = helper.make_node('AveragePool', ['x'], ['y2'], kernel_shape=[3, 2], dilations=[1, 2], strides=[2, 2],
                          pads=[1, 0, 1, 1], count_include_pad=1, ceil_mode=1)
    return model(19, [n, n2], [vi('x', F, [1, 2, 5, 6])], [vi('y', F, None), vi('y2', F, None)]), [rand(1, 2, 5, 6)]


@case
def cast19_castlike():
    nodes = [helper.make_node('Cast', ['x'], ['i'], to=I32, saturate=1),  # saturate only acts on float8
             helper.make_node('CastLike', ['x', 'like'], ['d'])]
    return model(19, nodes, [vi('x', F, [2, 3])], [vi('i', I32, None), vi('d', TensorProto.DOUBLE, None)],
                 [const('like', np.array([0], np.float64))]), [rand(2, 3) * 10]


@case
def opset21_shape_ops():
    nodes = [helper.make_node('Transpose', ['x'], ['t'], perm=[1, 0, 2]),
             helper.make_node('Unsqueeze', ['t', 'ax0'], ['u']),
             helper.make_node('Squeeze', ['u', 'ax0'], ['s']),
             helper.make_node('Flatten', ['s'], ['f'], axis=1),
             helper.make_node('Shape', ['f'], ['shape']),
             helper.make_node('ConstantOfShape', ['shape'], ['c'], value=numpy_helper.from_array(np.array([2.5], np.float32))),
             helper.make_node('Reshape', ['f', 'newshape'], ['r']),
             helper.make_node('Identity', ['r'], ['id']),
             helper.make_node('Add', ['f', 'c'], ['y']),
             helper.make_node('Size', ['y'], ['n'])]
    return model(21, nodes, [vi('x', F, [2, 3, 4])], [vi('y', F, None), vi('id', F, None), vi('n', I64, None)],
                 [const('ax0', np.array([0], np.int64)), const('newshape', np.array([-1, 6], np.int64))]), [rand(2, 3, 4)]


@case
def resize18_axes_keep_aspect():
    nodes = [helper.make_node('Resize', ['x', '', '', 'sizes'], ['small'], mode='linear', axes=[2, 3],
                              keep_aspect_ratio_policy='not_larger'),
             helper.make_node('Resize', ['x', '', '', 'sizes'], ['big'], mode='nearest', axes=[2, 3],
                              keep_aspect_ratio_policy='not_smaller'),
             helper.make_node('Resize', ['x', '', 'scales'], ['scaled'], mode='cubic', axes=[3], antialias=0)]
    return model(18, nodes, [vi('x', F, [1, 2, 4, 6])], [vi(o, F, None) for o in ('small', 'big', 'scaled')],
                 [const('sizes', np.array([3, 5], np.int64)), const('scales', np.array([1.5], np.float32))]), [rand(1, 2, 4, 6)]


@case
def resize18_antialias():
    nodes = [helper.make_node('Resize', ['x', '', 'down'], ['lin'], mode='linear', antialias=1),
             helper.make_node('Resize', ['x', '', '', 'sizes'], ['cub'], mode='cubic', antialias=1),
             helper.make_node('Resize', ['x', '', '', 'sizes'], ['cub_excl'], mode='cubic', antialias=1,
                              exclude_outside=1, cubic_coeff_a=-0.5),
             helper.make_node('Resize', ['x', '', 'up'], ['lin_up'], mode='linear', antialias=1,
                              coordinate_transformation_mode='pytorch_half_pixel')]
    return model(18, nodes, [vi('x', F, [1, 2, 8, 9])], [vi(o, F, None) for o in ('lin', 'cub', 'cub_excl', 'lin_up')],
                 [const('down', np.array([1, 1, 0.6, 0.45], np.float32)), const('sizes', np.array([1, 2, 3, 4], np.int64)),
                  const('up', np.array([1, 1, 1.5, 0.8], np.float32))]), [rand(1, 2, 8, 9)]


@case
def resize19_half_pixel_symmetric():
    nodes = [helper.make_node('Resize', ['x', '', 'scales'], ['lin'], mode='linear',
                              coordinate_transformation_mode='half_pixel_symmetric'),
             helper.make_node('Resize', ['x', '', '', 'sizes'], ['near'], mode='nearest',
                              coordinate_transformation_mode='half_pixel_symmetric')]
    return model(19, nodes, [vi('x', F, [1, 1, 4, 5])], [vi('lin', F, None), vi('near', F, None)],
                 [const('scales', np.array([1, 1, 1.7, 0.6], np.float32)), const('sizes', np.array([1, 1, 7, 3], np.int64))]), [rand(1, 1, 4, 5)]


@case
def dft20_stft17_windows():
    """torch.stft / torch.fft as exported at opset 20: DFT with axis and dft_length as inputs
    (onesided, inverse of a complex input), STFT with a Hann window built by HannWindow."""
    nodes = [helper.make_node('DFT', ['x', 'len', 'axis'], ['spec'], onesided=1),
             helper.make_node('DFT', ['xc', '', 'axis'], ['back'], inverse=1),
             helper.make_node('HannWindow', ['wsize'], ['hann']),
             helper.make_node('HammingWindow', ['wsize'], ['hamming'], periodic=0),
             helper.make_node('BlackmanWindow', ['wsize'], ['blackman']),
             helper.make_node('STFT', ['x', 'step', 'hann'], ['stft'], onesided=1)]
    return model(20, nodes, [vi('x', F, [2, 16, 1]), vi('xc', F, [1, 6, 2])],
                 [vi(o, F, None) for o in ('spec', 'back', 'hann', 'hamming', 'blackman', 'stft')],
                 [const('len', np.array(12, np.int64)), const('axis', np.array(1, np.int64)),
                  const('wsize', np.array(8, np.int64)), const('step', np.array(3, np.int64))]), [rand(2, 16, 1), rand(1, 6, 2)]


@case
def reduce20_bool():
    nodes = [helper.make_node('ReduceMax', ['x', 'axes'], ['any'], keepdims=0),
             helper.make_node('ReduceMin', ['x', 'axes'], ['all'], keepdims=1)]
    x = np.array([[[1, 0, 0], [0, 0, 0]], [[1, 1, 1], [0, 1, 1]]], bool)
    return model(20, nodes, [vi('x', TensorProto.BOOL, [2, 2, 3])], [vi('any', TensorProto.BOOL, None), vi('all', TensorProto.BOOL, None)],
                 [const('axes', np.array([2], np.int64))]), [x]


@case
def gelu20():
    nodes = [helper.make_node('Gelu', ['x'], ['exact']), helper.make_node('Gelu', ['x'], ['tanh'], approximate='tanh')]
    return model(20, nodes, [vi('x', F, [3, 4])], [vi('exact', F, None), vi('tanh', F, None)]), [rand(3, 4)]


@case
def quantize21_output_dtype():
    nodes = [helper.make_node('QuantizeLinear', ['x', 'scale'], ['q'], output_dtype=TensorProto.INT8),
             helper.make_node('DequantizeLinear', ['q', 'scale'], ['y'])]
    return model(21, nodes, [vi('x', F, [2, 5])], [vi('q', TensorProto.INT8, None), vi('y', F, None)],
                 [const('scale', np.array(0.02, np.float32))]), [rand(2, 5)]


@case
def recurrent18_lstm_in_if():
    """An opset-18 recurrent model as exporters write it: Split with num_outputs, an LSTM inside
    an If, and ReduceMean with axes as input. x [seq=5, batch=1, 8]."""
    H, I = 6, 4
    W = (rng.rand(1, 4 * H, I).astype(np.float32) - 0.5)
    R = (rng.rand(1, 4 * H, H).astype(np.float32) - 0.5)
    B = (rng.rand(1, 8 * H).astype(np.float32) - 0.5) * 0.2
    W2 = (rng.rand(1, 4 * H, I).astype(np.float32) - 0.5)

    def branch(name, w):
        lstm = helper.make_node('LSTM', ['xa', name + '_W', name + '_R', name + '_B'], [name + '_y', name + '_h', ''], hidden_size=H)
        sq = helper.make_node('Squeeze', [name + '_y', 'ax1'], [name + '_out'])
        return helper.make_graph([lstm, sq], name, [], [vi(name + '_out', F, None)],
                                 initializer=[const(name + '_W', w), const(name + '_R', R), const(name + '_B', B)])
    nodes = [helper.make_node('Split', ['x'], ['xa', 'xb'], axis=2, num_outputs=2),
             helper.make_node('ReduceSum', ['xb'], ['s'], keepdims=0),
             helper.make_node('Greater', ['s', 'zero'], ['cond']),
             helper.make_node('If', ['cond'], ['h'], then_branch=branch('then', W), else_branch=branch('else', W2)),
             helper.make_node('ReduceMean', ['h', 'axes'], ['y'], keepdims=1)]
    return model(18, nodes, [vi('x', F, ['seq', 1, 2 * I])], [vi('y', F, ['seq', 1, 1])],
                 [const('zero', np.array(0, np.float32)), const('axes', np.array([-1], np.int64)),
                  const('ax1', np.array([1], np.int64))]), [rand(5, 1, 2 * I)]


def build(name):
    m, inputs = CASES[name]()
    d = os.path.join(here, name)
    shutil.rmtree(d, ignore_errors=True)
    data = os.path.join(d, 'test_data_set_0')
    os.makedirs(data)
    open(os.path.join(d, 'model.onnx'), 'wb').write(m.SerializeToString())
    for k, (v, arr) in enumerate(zip(m.graph.input, inputs)):
        open(os.path.join(data, 'input_%d.pb' % k), 'wb').write(numpy_helper.from_array(arr, v.name).SerializeToString())
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run(['node', os.path.join(shared, 'peer/ort_run.js'), os.path.join(d, 'model.onnx'),
                        '--input-dir', data, '--dump-outputs', tmp, '--iters', '1', '--warmup', '0', '--quiet'],
                       check=True, stdout=subprocess.DEVNULL)
        for f in sorted(os.listdir(tmp)):
            if f.startswith('output_') and f.endswith('.pb'):
                shutil.copy(os.path.join(tmp, f), os.path.join(data, f))


def build_quantized(bin_dir):
    """ORT's output on the recurrent model after our model_editor --mode to_scan and
    model_quantizer --only_for_scan (tools from bin_dir): the int8 reference of opset18_21_test."""
    d = os.path.join(here, 'recurrent18_lstm_in_if')
    data = os.path.join(d, 'test_data_set_0')
    with tempfile.TemporaryDirectory() as tmp:
        scan, int8, out = (os.path.join(tmp, f) for f in ('scan.onnx', 'int8.onnx', 'out'))
        subprocess.run([os.path.join(bin_dir, 'model_editor'), '--input', os.path.join(d, 'model.onnx'), '--output', scan,
                        '--mode', 'to_scan'], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([os.path.join(bin_dir, 'model_quantizer'), '--input', scan, '--output', int8, '--only_for_scan'],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run(['node', os.path.join(shared, 'peer/ort_run.js'), int8, '--input-dir', data, '--dump-outputs', out,
                        '--iters', '1', '--warmup', '0', '--quiet'], check=True, stdout=subprocess.DEVNULL)
        shutil.copy(os.path.join(out, 'output_0.pb'), os.path.join(d, 'ort_quantized_output_0.pb'))


if __name__ == '__main__':
    args = sys.argv[1:]
    if args[:1] == ['--quantized']:  # --quantized BUILD_BIN_DIR
        build_quantized(args[1])
        sys.exit(0)
    for name in args or CASES:
        build(name)
        print(name)
