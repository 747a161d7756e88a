#!/usr/bin/python3
"""Writes the demo's default model: one unidirectional LSTM (input 40, hidden 128) over a
symbolic sequence, batch 1, opset 11, with fixed-seed weights. Uses Debian's python3-onnx."""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main():
    p = argparse.ArgumentParser()
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--input_dim", type=int, default=40)
    p.add_argument("--hidden_dim", type=int, default=128)
    a = p.parse_args()
    rng = np.random.RandomState(0)
    i, h = a.input_dim, a.hidden_dim
    bound = 1.0 / np.sqrt(h)
    w = rng.uniform(-bound, bound, (1, 4 * h, i)).astype(np.float32)
    r = rng.uniform(-bound, bound, (1, 4 * h, h)).astype(np.float32)
    b = rng.uniform(-bound, bound, (1, 8 * h)).astype(np.float32)
    lstm = helper.make_node("LSTM", ["input", "W", "R", "B"], ["Y", "Y_h"], name="lstm", hidden_size=h)
    graph = helper.make_graph(
        [lstm], "demo_lstm",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["seq", 1, i])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["seq", 1, 1, h]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [1, 1, h])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"), numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], producer_name="nuphar-cpp demo")
    model.ir_version = 7
    onnx.checker.check_model(model, full_check=True)
    onnx.save(model, a.output)


if __name__ == "__main__":
    main()
