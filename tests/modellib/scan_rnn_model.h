// To_scan RNN models for runtime tests: bench::MakeRnnModel's LSTM/GRU/RNN, rewritten by the
// editor's to_scan and optionally quantized with --only_for_scan, as users prepare them. For
// tests that link nuphar_benchmark, nuphar_editor and nuphar_quantizer.
#pragma once

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include "benchmark/rnn_model_gen.h"
#include "editor/editor.h"
#include "quantizer/quantizer.h"

namespace nuphar::testing {

inline onnx::ModelProto MakeScanRnnModel(const bench::RnnModelSpec& spec, bool int8_only_for_scan) {
  auto model = bench::MakeRnnModel(spec);
  EXPECT_TRUE(model.ok()) << model.message();
  editor::EditorOptions eo;
  eo.log = [](const std::string&) {};
  Status s = editor::RunEditor("to_scan", &*model, eo);
  EXPECT_TRUE(s.ok()) << s.message();
  if (int8_only_for_scan) {
    quant::QuantizeOptions qo;
    qo.only_for_scan = true;
    auto r = quant::Quantize(&*model, qo);
    EXPECT_TRUE(r.ok()) << r.message();
  }
  return *model;
}

}  // namespace nuphar::testing
