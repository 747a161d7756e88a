#!/usr/bin/python3
"""The malformed-model corpus (issue 14): hand-made bad models and files, each run through every
tool that takes a model, each with the exit code and message fragment it must give.

    /usr/bin/python3 tests/malformed/malformed_test.py BIN_DIR WORK_DIR [CASE...]

The cases are generated here (python3-onnx and hand-written protobuf wire bytes) rather than
checked in: the 2^40-element and 1 GiB tensors are declared sizes, never real data. For every
case and tool it asserts: the exit code, a fragment of the message, no signal, no hang (30 s),
and that nothing but the expected output is left in the (fresh) output folder. Prints one line
per failure and a summary; exits 1 on any failure.
"""
import os
import shutil
import subprocess
import sys

import onnx
from onnx import TensorProto, helper

EDITOR_MODES = ["to_scan", "loop_to_scan", "opt_inproj", "gemm_to_matmul", "remove_initializers_from_inputs"]
TOOLS = ["editor:" + m for m in EDITOR_MODES] + ["shape", "quant", "perf"]
F = TensorProto.FLOAT
I64 = TensorProto.INT64


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8, domains=(), name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    opsets = [helper.make_opsetid("", opset)] if opset is not None else []
    opsets += [helper.make_opsetid(d, v) for d, v in domains]
    return helper.make_model(graph, opset_imports=opsets, ir_version=ir)


def vi(name, elem=F, shape=(2, 3)):
    return helper.make_tensor_value_info(name, elem, list(shape))


def relu_model(**kw):
    return model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y")], **kw)


def body(inputs, outputs, nodes):
    return helper.make_graph(nodes, "body", inputs, outputs)


# ---- wire bytes, for what python-protobuf refuses to build (10,000 nested graphs) --------------

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):  # length-delimited field
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def nested_if_bytes(depth):
    """A model whose If's then-branch holds an If ... `depth` levels deep (python-protobuf's
    recursion limit refuses to serialize it, so the graphs are wrapped as wire bytes)."""
    out_vi = helper.make_tensor_value_info("o", TensorProto.BOOL, []).SerializeToString()
    leaf = helper.make_graph([helper.make_node("Identity", ["c"], ["o"])], "leaf", [],
                             [helper.make_tensor_value_info("o", TensorProto.BOOL, [])]).SerializeToString()
    graph, node = leaf, b""
    for _ in range(depth):
        then_attr = field(1, b"then_branch") + varint(20 << 3) + varint(5) + field(6, graph)  # name, type=GRAPH, g
        else_attr = field(1, b"else_branch") + varint(20 << 3) + varint(5) + field(6, leaf)
        node = field(1, b"c") + field(2, b"o") + field(4, b"If") + field(5, then_attr) + field(5, else_attr)
        graph = field(1, node) + field(2, b"nested") + field(12, out_vi)  # node, name, output
    head = model([], [helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                 [helper.make_tensor_value_info("o", TensorProto.BOOL, [])]).SerializeToString()
    return head + field(7, field(1, node))  # a second `graph` field merges: it adds the node


def tensor(name, dims, elem=F, vals=None, raw=None):
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(dims)
    if raw is not None:
        t.raw_data = raw
    elif vals is not None:
        (t.float_data if elem == F else t.int64_data).extend(vals)
    return t


def external(name, dims, location, offset=None, length=None):
    t = tensor(name, dims)
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def add_w_model(w):
    return model([helper.make_node("Add", ["x", w.name], ["y"], name="add")], [vi("x")], [vi("y")], inits=[w])


def scan_model(body_graph, num_scan_inputs=1, state_in=("s0",)):
    node = helper.make_node("Scan", list(state_in) + ["xs"], ["s", "ys"], name="scan", body=body_graph,
                            num_scan_inputs=num_scan_inputs)
    return model([node], [vi("s0", shape=(3,)), vi("xs", shape=(4, 3))], [vi("s", shape=(3,)), vi("ys", shape=(4, 3))])


def good_scan_body():
    return body([vi("si", shape=(3,)), vi("xi", shape=(3,))], [vi("so", shape=(3,)), vi("yo", shape=(3,))],
                [helper.make_node("Add", ["si", "xi"], ["so"]), helper.make_node("Identity", ["so"], ["yo"])])


def loop_model(trip, body_graph):
    m_init = tensor("M", [], I64, vals=[trip])
    c_init = tensor("cond", [], TensorProto.BOOL, raw=b"\x01")
    node = helper.make_node("Loop", ["M", "cond", "v0"], ["v"], name="loop", body=body_graph)
    return model([node], [vi("v0", shape=(3,))], [vi("v", shape=(3,))], inits=[m_init, c_init])


def good_loop_body():
    return body([helper.make_tensor_value_info("i", I64, []), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                 vi("vi", shape=(3,))],
                [helper.make_tensor_value_info("co", TensorProto.BOOL, []), vi("vo", shape=(3,))],
                [helper.make_node("Identity", ["c"], ["co"]), helper.make_node("Relu", ["vi"], ["vo"])])


def if_model(then_g, else_g):
    node = helper.make_node("If", ["c"], ["y"], name="if", then_branch=then_g, else_branch=else_g)
    return model([node], [helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [vi("y")],
                 inits=[tensor("k", [2, 3], vals=[1] * 6)])


def branch(out_names):
    return body([], [vi(n) for n in out_names], [helper.make_node("Identity", ["k"], [n]) for n in out_names])


# ---- the cases ----------------------------------------------------------------------------------
# Each case: name -> (bytes or ModelProto, extra files {relative path: bytes}, expectations,
# extra perf_test arguments). Expectations map a tool ("editor:MODE", "shape", "quant", "perf"), else its
# family ("editor"), else "*", to (exit code, message fragment).

LOAD = (1, "not a valid ONNX model")
INCOMPLETE = (1, "Incomplete symbolic shape inference")  # model_editor runs shape inference last
NOTHING = (3, "quantized nothing")


def passes(perf, **tools):
    """A model whose flaw is in an op's semantics (types, attribute values, shapes): the graph
    tools rewrite or annotate what they understand and pass the rest through, as the original
    Python tools do; the runtime refuses it with `perf`. `tools` overrides single tools."""
    expect = {"editor": (0, "Done!"), "shape": (0, "Done!"), "quant": NOTHING, "perf": perf}
    expect.update({k.replace("__", ":"): v for k, v in tools.items()})
    return expect


def cases():
    good = relu_model().SerializeToString()
    c = {}

    def add(name, data, expect, files=None, perf_args=()):
        c[name] = (data, files or {}, expect, list(perf_args))

    # ---- not a model at all
    add("truncated", good[: len(good) // 2], {"*": LOAD})
    add("empty_file", b"", {"*": (1, "file is empty")})
    add("not_a_model_text", b"hello, I am not a model\n", {"*": LOAD})
    add("random_bytes", bytes((i * 37 + 11) % 256 for i in range(4096)), {"*": LOAD})
    add("tensor_not_model", tensor("t", [2], vals=[1, 2]).SerializeToString(), {"*": LOAD})
    m = onnx.ModelProto()
    m.ir_version = 8
    add("no_graph", m, {"*": (1, "has no graph")})
    m = relu_model()
    m.ir_version = 0
    add("no_ir_version", m, {"*": (1, "ir_version is missing")})
    add("nested_10000_if", nested_if_bytes(10000), {"*": (1, "nested deeper than about 30 levels")})
    # Within protobuf's limit, above the runtime's nesting budget (nuphar_max_subgraph_depth 16).
    add("nested_20_if", nested_if_bytes(20), {"editor": (0, "Done!"), "shape": (0, "Done!"), "quant": NOTHING,
                                              "perf": (1, "levels deep, above nuphar_max_subgraph_depth (16)")})

    # ---- broken graph structure
    add("cycle", model([helper.make_node("Relu", ["b"], ["a"], name="n_a"), helper.make_node("Relu", ["a"], ["b"], name="n_b")],
                       [vi("x")], [vi("b")]), {"*": (1, "cycle")})
    add("self_loop", model([helper.make_node("Add", ["x", "y"], ["y"], name="self")], [vi("x")], [vi("y")]),
        {"*": (1, "cycle")})
    add("dangling_input", model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add")], [vi("x")], [vi("y")]),
        {"*": (1, "nowhere")})
    add("dangling_output", model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x")], [vi("y"), vi("ghost")]),
        {"*": (1, "ghost")})
    add("duplicate_node_output", model([helper.make_node("Relu", ["x"], ["y"], name="r1"),
                                        helper.make_node("Sigmoid", ["x"], ["y"], name="r2")], [vi("x")], [vi("y")]),
        {"*": (1, "'y'")})
    add("duplicate_initializer", add_w_model(tensor("w", [2, 3], vals=[1] * 6)).SerializeToString()
        + field(7, field(5, tensor("w", [2, 3], vals=[2] * 6).SerializeToString())), {"*": (1, "'w'")})
    # Tolerated, not refused: the original model_editor lists its zero-state inputs twice.
    add("duplicate_input", model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x"), vi("x")], [vi("y")]),
        passes((0, "median_ms")))
    add("node_without_op_type", model([helper.make_node("", ["x"], ["y"], name="blank")], [vi("x")], [vi("y")]),
        {"*": (1, "blank")})

    # ---- types and shapes
    add("wrong_dtype_add", model([helper.make_node("Add", ["x", "i"], ["y"], name="add")],
                                 [vi("x"), vi("i", I64)], [vi("y")]), passes((1, "node 'add' (Add): input types differ: float and int64")))
    add("undefined_dtype_input", model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                       [vi("x", TensorProto.UNDEFINED)], [vi("y")]),
        {"editor": (1, "first lost at node relu"), "shape": (3, "relu"), "quant": NOTHING,
         "perf": (1, "input 'x' has type undefined")})
    add("string_to_relu", model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                [vi("x", TensorProto.STRING)], [vi("y", TensorProto.STRING)]),
        passes((1, "value 'y' has type string, which the runtime does not support")))
    add("negative_dim", model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", shape=(-5, 3))], [vi("y", shape=(-5, 3))]),
        {"*": (1, "-5")})
    add("dim_2p40", model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", shape=(1 << 40,))],
                          [vi("y", shape=(1 << 40,))]), passes((1, "is too large to generate")))
    add("dims_product_overflow", model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                       [vi("x", shape=(1 << 32, 1 << 32))], [vi("y", shape=(1 << 32, 1 << 32))]),
        passes((1, "is too large to generate")))
    add("initializer_size_mismatch", add_w_model(tensor("w", [4, 4], vals=[1, 2, 3])), {"*": (1, "'w'")})
    add("raw_data_size_mismatch", add_w_model(tensor("w", [2, 3], raw=b"12345")), {"*": (1, "'w'")})
    add("initializer_declared_1gib", add_w_model(tensor("w", [1 << 28])), {"*": (1, "'w'")})
    add("initializer_declared_2p40", add_w_model(tensor("w", [1 << 20, 1 << 20])), {"*": (1, "'w'")})
    # 2 GiB of zeros folded at load time: above the 1 GiB default of nuphar_max_tensor_bytes.
    add("constant_of_shape_2gib", model([helper.make_node("ConstantOfShape", ["shape"], ["big"], name="fill"),
                                         helper.make_node("Add", ["x", "big"], ["y"], name="add")],
                                        [vi("x")], [vi("y")], inits=[tensor("shape", [2], I64, vals=[1 << 28, 2])]),
        {"editor": INCOMPLETE, "shape": (3, "add"), "quant": NOTHING,
         "perf": (1, "node 'fill' (ConstantOfShape): needs a tensor of 2147483648 bytes, above nuphar_max_tensor_bytes")})
    add("reshape_to_nonsense", model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape")],
                                     [vi("x")], [vi("y")], inits=[tensor("shape", [2], I64, vals=[-1, -1])]),
        passes((1, "node 'reshape' (Reshape): shape [-1,-1] has more than one -1")))
    add("matmul_k_mismatch", model([helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], [vi("x")], [vi("y", shape=(2, 4))],
                                   inits=[tensor("w", [5, 4], vals=[0.5] * 20)]),
        passes((1, "MatMul inner dimensions differ: A [2,3], B [5,4]"), quant=(0, "Done!")))
    add("transpose_perm_float", model([helper.make_node("Transpose", ["x"], ["y"], name="tr", perm=[1.0, 0.0])],
                                      [vi("x")], [vi("y", shape=(3, 2))]),
        {"*": (1, "node 'tr' (Transpose): attribute 'perm' has type FLOATS, the op expects INTS")})
    add("lstm_bad_weight_shape", model([helper.make_node("LSTM", ["X", "W", "R"], ["Y"], name="lstm", hidden_size=4)],
                                       [vi("X", shape=(5, 1, 3))], [vi("Y", shape=(5, 1, 1, 4))],
                                       inits=[tensor("W", [1, 7, 3], vals=[0.1] * 21), tensor("R", [1, 16, 4], vals=[0.1] * 64)]),
        passes((1, "W has shape [1,7,3], expected dim 1 = 4 x hidden_size 4"), editor__to_scan=(1, "lstm")))

    # ---- external data
    add("external_data_dotdot", add_w_model(external("w", [2, 3], "../outside.bin")), {"*": (1, "outside the model's folder")})
    add("external_data_absolute", add_w_model(external("w", [2, 3], "/etc/passwd")), {"*": (1, "outside the model's folder")})
    add("external_data_missing", add_w_model(external("w", [2, 3], "missing.bin")), {"*": (1, "is missing")})
    add("external_data_past_end", add_w_model(external("w", [2, 3], "w.bin", offset=16, length=24)), {"*": (1, "lies outside the file")},
        files={"w.bin": bytes(24)})
    add("external_data_bad_offset", add_w_model(external("w", [2, 3], "w.bin", offset="abc")),
        {"*": (1, "not a non-negative integer")}, files={"w.bin": bytes(24)})
    add("external_data_directory", add_w_model(external("w", [2, 3], "sub")), {"*": (1, "is missing or not a file")},
        files={"sub/keep": b""})

    # ---- opsets and domains
    add("opset_0", relu_model(opset=0), {"*": (1, "opset")})
    add("no_default_opset", relu_model(opset=None, domains=[("com.example", 1)]),
        {"editor": (0, "Done!"), "editor:opt_inproj": (1, "needs a default-domain ONNX opset of 7"),
         "editor:remove_initializers_from_inputs": (1, "needs a default-domain ONNX opset of 7"),
         "shape": (1, "opset 7 and above"), "quant": NOTHING, "perf": (1, "the model imports no ONNX opset")})
    add("unknown_domain", model([helper.make_node("Relu", ["x"], ["y"], name="relu", domain="com.example.unknown")],
                                [vi("x")], [vi("y")], domains=[("com.example.unknown", 1)]),
        {"editor": (1, "first lost at node relu"), "shape": (3, "first at node relu"), "quant": NOTHING,
         "perf": (1, "unsupported op 'Relu' in domain 'com.example.unknown'")})
    add("future_opset", relu_model(opset=99), {"*": (1, "99")})
    add("unknown_op", model([helper.make_node("Frobnicate", ["x"], ["y"], name="frob")], [vi("x")], [vi("y")]),
        {"editor": (1, "first lost at node frob"), "shape": (3, "Frobnicate"), "quant": NOTHING,
         "perf": (1, "node 'frob' (Frobnicate): unsupported op 'Frobnicate'")})

    # ---- control flow with wrong bodies
    bad_scan = body([vi("si", shape=(3,))], [vi("so", shape=(3,)), vi("yo", shape=(3,))],
                    [helper.make_node("Identity", ["si"], ["so"]), helper.make_node("Identity", ["si"], ["yo"])])
    add("scan_body_too_few_inputs", scan_model(bad_scan), {"*": (1, "scan"), "quant": NOTHING,
                                                          "perf": (1, "body has 1 inputs, expected 2")})
    add("scan_num_scan_inputs_wrong", scan_model(good_scan_body(), num_scan_inputs=3), {"*": (1, "scan"), "quant": NOTHING})
    add("scan_without_body", model([helper.make_node("Scan", ["s0", "xs"], ["s", "ys"], name="scan", num_scan_inputs=1)],
                                   [vi("s0", shape=(3,)), vi("xs", shape=(4, 3))], [vi("s", shape=(3,)), vi("ys", shape=(4, 3))]),
        {"*": (1, "scan"), "quant": NOTHING})
    add("loop_body_wrong_signature", loop_model(3, body([vi("vi", shape=(3,))], [vi("vo", shape=(3,))],
                                                        [helper.make_node("Relu", ["vi"], ["vo"])])),
        {"*": (1, "loop"), "quant": NOTHING, "perf": (1, "body has 1 inputs, expected 3")})
    add("loop_trip_count_2p62", loop_model(1 << 62, good_loop_body()),
        passes((1, "trip count M = 4611686018427387904 is above nuphar_max_loop_iterations"),
               editor__loop_to_scan=(1, "loop")))
    # No trip count and a condition that stays true: stopped by the iteration budget, here set
    # low through the settings string so the case stays fast (the default is 10 million).
    forever = loop_model(1, good_loop_body())
    forever.graph.node[0].input[0] = ""
    add("loop_condition_never_false", forever,
        passes((1, "still running after nuphar_max_loop_iterations (1000) iterations"),
               editor__loop_to_scan=(1, "loop")),
        perf_args=["--settings", "nuphar_max_loop_iterations:1000"])
    add("if_branch_output_count", if_model(branch(["a"]), branch(["b", "c"])),
        passes((1, "node 'if' (If): else_branch has 2 outputs, the node has 1")))
    add("if_without_else", model([helper.make_node("If", ["c"], ["y"], name="if", then_branch=branch(["a"]))],
                                 [helper.make_tensor_value_info("c", TensorProto.BOOL, [])], [vi("y")],
                                 inits=[tensor("k", [2, 3], vals=[1] * 6)]),
        {"*": (1, "if"), "quant": NOTHING, "perf": (1, "If needs a 'else_branch' graph attribute")})
    return c


def expectation(expect, tool):
    return expect.get(tool) or expect.get(tool.split(":")[0]) or expect.get("*")


def command(bin_dir, tool, model_path, out_path, perf_args):
    if tool.startswith("editor:"):
        return [f"{bin_dir}/model_editor", "--input", model_path, "--output", out_path, "--mode", tool.split(":")[1]]
    if tool == "shape":
        return [f"{bin_dir}/symbolic_shape_infer", "--input", model_path, "--output", out_path]
    if tool == "quant":
        return [f"{bin_dir}/model_quantizer", "--input", model_path, "--output", out_path]
    return [f"{bin_dir}/perf_test", "-r", "1", "--warmup", "0"] + perf_args + [model_path]


def main():
    bin_dir, work = sys.argv[1], sys.argv[2]
    only = set(sys.argv[3:])
    shutil.rmtree(work, ignore_errors=True)
    all_cases = cases()
    failures, runs = [], 0
    for name, (data, files, expect, perf_args) in sorted(all_cases.items()):
        if only and name not in only:
            continue
        case_dir = os.path.join(work, name)
        os.makedirs(os.path.join(case_dir, "model"))
        model_path = os.path.join(case_dir, "model", "model.onnx")
        with open(model_path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.SerializeToString())
        for rel, content in files.items():
            p = os.path.join(case_dir, "model", rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as f:
                f.write(content)
        for tool in TOOLS:
            out_dir = os.path.join(case_dir, "out_" + tool.replace(":", "_"))
            os.makedirs(out_dir)
            out_path = os.path.join(out_dir, "out.onnx")
            want_code, want_text = expectation(expect, tool)
            runs += 1
            try:
                p = subprocess.run(command(bin_dir, tool, model_path, out_path, perf_args), capture_output=True, text=True,
                                   errors="replace", timeout=30)
                code, text = p.returncode, p.stdout + p.stderr
            except subprocess.TimeoutExpired:
                failures.append(f"{name} {tool}: hang (over 30 s)")
                continue
            left = sorted(os.listdir(out_dir))
            problems = []
            if code < 0:
                problems.append(f"killed by signal {-code}")
            elif code != want_code:
                problems.append(f"exit {code}, expected {want_code}")
            if want_text not in text:
                problems.append(f"message lacks {want_text!r}")
            if left not in ([], ["out.onnx"]) or (code != 0 and left):
                problems.append(f"left behind: {left}")
            if problems:
                last = [l for l in text.strip().splitlines() if l.strip()][-1:] or [""]
                failures.append(f"{name} {tool}: {'; '.join(problems)} | {last[0][:300]}")
    for f in failures:
        print("FAIL", f)
    print(f"malformed corpus: {len([n for n in all_cases if not only or n in only])} cases, {runs} runs, "
          f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
