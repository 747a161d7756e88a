// libFuzzer target: the graph tools on a model. Byte 0 picks the tool: each model_editor mode,
// symbolic shape inference (plain, strict, auto_merge), the quantizer (default, --only_for_scan,
// symm16 preset); the rest is the model. Every outcome but an error value or a result is a bug.
#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>

#include "editor/editor.h"
#include "quantizer/quantizer.h"
#include "shape_infer/shape_infer.h"
#include "tests/fuzz/model_mutator.h"

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  // Keep the tool byte; mutate the model behind it structurally.
  if (size < 2) return size;
  return 1 + nuphar::fuzz::MutateModel(data + 1, size - 1, max_size - 1, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  onnx::ModelProto model;
  if (!model.ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;
  const auto& modes = nuphar::editor::EditorModes();
  const int tool = data[0] % (static_cast<int>(modes.size()) + 6);
  if (tool < static_cast<int>(modes.size())) {
    nuphar::editor::EditorOptions options;
    options.log = [](const std::string&) {};
    (void)nuphar::editor::RunEditor(modes[static_cast<size_t>(tool)].name, &model, options).ok();
    return 0;
  }
  switch (tool - static_cast<int>(modes.size())) {
    case 0:
    case 1:
    case 2: {
      nuphar::ShapeInferOptions options;
      options.strict = tool % 3 == 1;
      options.auto_merge = tool % 3 == 2;
      (void)nuphar::InferShapes(&model, options).ok();
      break;
    }
    default: {
      nuphar::quant::QuantizeOptions options;
      options.only_for_scan = tool % 3 == 1;
      (void)nuphar::quant::Quantize(&model, options).ok();
      break;
    }
  }
  return 0;
}
