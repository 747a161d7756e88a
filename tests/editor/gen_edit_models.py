#!/usr/bin/python3
"""Models on which opt_inproj, gemm_to_matmul and remove_initializers_from_inputs change something
(issue 3 acceptance 6), for ort_compare.py. usage: gen_edit_models.py OUT_DIR
Writes <mode>__<case>.onnx; all use X [T=4, B=2, I=3] with symbolic dim seq (pass --dims seq=4).
"""
import os, sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

I, HD, N, B = 3, 5, 5, 2
rng = np.random.RandomState(1)


def f32(*shape):
    return (rng.rand(*shape) - 0.5).astype(np.float32)


def scan_model(order, concat_also_output=False, opset=11, axes_attr=False):
    w = numpy_helper.from_array(f32(I + HD, N), 'Wc')
    cat_in = ['x_t', 'h'] if order == 'xh' else ['h', 'x_t']
    nodes = [helper.make_node('Concat', cat_in, ['c'], axis=-1),
             helper.make_node('MatMul', ['c', 'Wc'], ['mm']),
             helper.make_node('Tanh', ['mm'], ['h_new']),
             helper.make_node('Identity', ['h_new'], ['y'])]
    outs = [helper.make_tensor_value_info('h_new', TensorProto.FLOAT, [B, HD]),
            helper.make_tensor_value_info('y', TensorProto.FLOAT, [B, HD])]
    if concat_also_output:
        nodes.append(helper.make_node('Identity', ['c'], ['c_out']))
        outs.append(helper.make_tensor_value_info('c_out', TensorProto.FLOAT, [B, I + HD]))
    body = helper.make_graph(nodes, 'body',
                             [helper.make_tensor_value_info('h', TensorProto.FLOAT, [B, HD]),
                              helper.make_tensor_value_info('x_t', TensorProto.FLOAT, [B, I])], outs)
    attrs = dict(body=body, num_scan_inputs=1)
    if axes_attr:
        attrs.update(scan_input_axes=[0], scan_output_axes=[0] * (len(outs) - 1))
    scan_outs = ['h_last', 'Y'] + (['C'] if concat_also_output else [])
    g = helper.make_graph(
        [helper.make_node('Scan', ['h0', 'X'], scan_outs, name='scan0', **attrs)], 'g',
        [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['seq', B, I])],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in scan_outs],
        [w, numpy_helper.from_array(f32(B, HD), 'h0')])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', opset)])


def fold_model():
    u, v = numpy_helper.from_array(f32(I, 2), 'U'), numpy_helper.from_array(f32(2, 4), 'V')
    g = helper.make_graph([helper.make_node('MatMul', ['U', 'V'], ['UV']),
                           helper.make_node('MatMul', ['X', 'UV'], ['Y'])], 'g',
                          [helper.make_tensor_value_info('X', TensorProto.FLOAT, ['seq', B, I])],
                          [helper.make_tensor_value_info('Y', TensorProto.FLOAT, None)], [u, v])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 11)])


def gemm_model(alpha, beta, ta, tb, with_c, in_loop=False, shared=False):
    a_shape = [I, B] if ta else [B, I]
    wb = numpy_helper.from_array(f32(*([4, I] if tb else [I, 4])), 'Wg')
    c = numpy_helper.from_array(f32(4), 'Cg')
    gemm = helper.make_node('Gemm', ['A', 'Wg'] + (['Cg'] if with_c else []), ['Y'], name='gemm0',
                            alpha=alpha, beta=beta, transA=ta, transB=tb)
    inits = [wb, c]
    nodes = [gemm]
    outs = [helper.make_tensor_value_info('Y', TensorProto.FLOAT, None)]
    if shared:  # another node reads the original weight (B18)
        nodes.append(helper.make_node('Identity', ['Wg'], ['W_copy']))
        outs.append(helper.make_tensor_value_info('W_copy', TensorProto.FLOAT, None))
    if in_loop:  # the Gemm inside an If branch
        then_g = helper.make_graph(nodes, 'then', [], outs)
        else_g = helper.make_graph([helper.make_node(n.op_type, n.input, n.output, name=n.name + '_e', **{
            a.name: helper.get_attribute_value(a) for a in n.attribute}) for n in nodes], 'else', [], outs)
        # the else branch reuses the names, so rename its outputs
        for n in else_g.node:
            n.output[0] = n.output[0] + '_e'
        for o in else_g.output:
            o.name = o.name + '_e'
        nodes = [helper.make_node('If', ['flag'], [o.name for o in outs], then_branch=then_g, else_branch=else_g)]
        inits.append(numpy_helper.from_array(np.array(True), 'flag'))
    g = helper.make_graph(nodes, 'g', [helper.make_tensor_value_info('A', TensorProto.FLOAT, a_shape)], outs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)])


def remove_inputs_model():
    m = fold_model()
    m.ir_version = 3
    for t in m.graph.initializer:
        m.graph.input.append(helper.make_tensor_value_info(t.name, TensorProto.FLOAT, list(t.dims)))
    return m


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    models = {
        'opt_inproj__xh': scan_model('xh'), 'opt_inproj__hx': scan_model('hx'),
        'opt_inproj__concat_kept': scan_model('xh', concat_also_output=True),
        'opt_inproj__axes_attr': scan_model('hx', axes_attr=True), 'opt_inproj__fold': fold_model(),
        'remove_initializers_from_inputs__ir3': remove_inputs_model(),
    }
    for alpha, beta, ta, tb, with_c in [(1., 1., 0, 0, True), (0.5, 2., 1, 1, True), (1., 0., 0, 1, True),
                                        (2., 1., 1, 0, False)]:
        models[f'gemm_to_matmul__a{alpha}_b{beta}_t{ta}{tb}_c{int(with_c)}'] = gemm_model(alpha, beta, ta, tb, with_c)
    models['gemm_to_matmul__in_if'] = gemm_model(1., 1., 0, 1, True, in_loop=True)
    models['gemm_to_matmul__shared_weight'] = gemm_model(1., 1., 0, 1, True, shared=True)
    for name, m in models.items():
        onnx.save(m, os.path.join(out, name + '.onnx'))
    print(len(models), 'models in', out)


if __name__ == '__main__':
    main()
