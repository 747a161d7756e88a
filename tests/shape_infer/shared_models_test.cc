// Issue 4 acceptance 3: the shared models, before and after `model_editor --mode to_scan`, infer
// completely (every value of every graph has an element type and a shape with no unknown dim),
// and the dims are the symbolic ones the spec derives (Conv: floor((d + pads - k) / s) + 1).
// silero_vad_v3.1 used to stop at Conv_37: its reflect-Pad's pads come from PyTorch's
// Reshape([-1, 2]) -> Slice(step -1) -> Transpose chain, which needs N-D Slice value tracking.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cctype>
#include <filesystem>
#include <string>
#include <vector>

#include "editor/editor.h"
#include "graph/model_io.h"
#include "shape_infer/shape_infer.h"

namespace nuphar::testing {
namespace {

namespace fs = std::filesystem;

std::string ModelPath(const std::string& file) { return std::string(NUPHAR_SHARED_DIR) + "/models/" + file; }

// "graph/name" of every value_info/output in `g` and its bodies whose type or shape is incomplete.
void CollectIncomplete(const onnx::GraphProto& g, const std::string& prefix, std::vector<std::string>* bad) {
  auto check = [&](const onnx::ValueInfoProto& vi) {
    const auto& t = vi.type();
    bool ok = t.has_tensor_type() && t.tensor_type().elem_type() != 0 && t.tensor_type().has_shape();
    if (ok)
      for (const auto& d : t.tensor_type().shape().dim()) ok = ok && (d.has_dim_value() || !d.dim_param().empty());
    if (!ok) bad->push_back(prefix + vi.name());
  };
  for (const auto& vi : g.value_info()) check(vi);
  for (const auto& vi : g.output()) check(vi);
  for (const auto& n : g.node())
    for (const auto& a : n.attribute())
      if (a.has_g()) CollectIncomplete(a.g(), prefix + n.name() + "." + a.name() + "/", bad);
}

std::string DimsOf(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.value_info())
    if (vi.name() == name) {
      std::string s;
      for (const auto& d : vi.type().tensor_type().shape().dim())
        s += (s.empty() ? "" : ",") + (d.has_dim_value() ? std::to_string(d.dim_value()) : d.dim_param());
      return s;
    }
  return "<missing>";
}

// Nodes of `op_type` in `g` and its bodies.
int CountOps(const onnx::GraphProto& g, const std::string& op_type) {
  int n = 0;
  for (const auto& node : g.node()) {
    n += node.op_type() == op_type;
    for (const auto& a : node.attribute())
      if (a.has_g()) n += CountOps(a.g(), op_type);
  }
  return n;
}

// Loads a shared model, optionally runs to_scan, infers with auto_merge (as model_editor does).
onnx::ModelProto Infer(const std::string& file, bool to_scan) {
  onnx::ModelProto model;
  Status load = LoadModel(ModelPath(file), &model);
  EXPECT_TRUE(load.ok()) << load.message();
  if (to_scan) {
    Status s = editor::RunEditor("to_scan", &model, editor::EditorOptions{});
    EXPECT_TRUE(s.ok()) << s.message();
  }
  ShapeInferOptions options;
  options.auto_merge = true;
  auto r = InferShapes(&model, options);
  EXPECT_TRUE(r.ok()) << r.message();
  if (r.ok()) {
    EXPECT_EQ(r->outcome, InferOutcome::kComplete) << file << ": first incomplete node " << r->first_incomplete_node;
  }
  std::vector<std::string> bad;
  CollectIncomplete(model.graph(), "", &bad);
  EXPECT_TRUE(bad.empty()) << file << (to_scan ? " (to_scan)" : "") << ": " << bad.size()
                           << " incomplete values, first " << (bad.empty() ? "" : bad.front());
  return model;
}

TEST(SharedModels, SileroV31InfersThroughThePadConvPrologue) {
  onnx::ModelProto m = Infer("silero_vad_v3.1.onnx", /*to_scan=*/false);
  // input [1, sequence] -> reflect Pad by 128 each side -> Squeeze -> Conv(k 256, stride 64).
  EXPECT_EQ(DimsOf(m.graph(), "152"), "1,1,1,sequence + 256");
  EXPECT_EQ(DimsOf(m.graph(), "158"), "1,1,sequence + 256");  // If with a constant condition
  EXPECT_EQ(DimsOf(m.graph(), "162"), "1,258,floor(sequence/64) + 1");
}

// Issue 11: the Paddle CRNN (PP-OCRv4 recognizer). Reshape -1 divides by products of symbolic
// dims; no dim may keep a division by a sum ("/(D0*X + D0)"): common factors cancel.
TEST(SharedModels, PaddleOcrReshapesCancelCommonFactors) {
  if (!fs::exists(ModelPath("ch_PP-OCRv4_rec_infer.onnx"))) GTEST_SKIP() << "missing ch_PP-OCRv4_rec_infer.onnx";
  onnx::ModelProto m = Infer("ch_PP-OCRv4_rec_infer.onnx", /*to_scan=*/false);
  const std::string w = "floor(floor(floor(p2o.DynamicDimension.1/2 - 1/2)/2)/2 - 1/2) + 1";
  EXPECT_EQ(DimsOf(m.graph(), "flatten_14.tmp_0"), "p2o.DynamicDimension.0,120," + w);
  EXPECT_EQ(DimsOf(m.graph(), "reshape2_26.tmp_0"), "p2o.DynamicDimension.0," + w + ",120");
  for (const auto& vi : m.graph().value_info())
    for (const auto& d : vi.type().tensor_type().shape().dim())
      EXPECT_EQ(d.dim_param().find("/("), std::string::npos) << vi.name() << ": " << d.dim_param();
}

class SharedModelsAfterToScan : public ::testing::TestWithParam<const char*> {};

TEST_P(SharedModelsAfterToScan, EveryValueHasACompleteShape) {
  if (!fs::exists(ModelPath(GetParam()))) GTEST_SKIP() << "missing " << ModelPath(GetParam());
  Infer(GetParam(), /*to_scan=*/false);
  onnx::ModelProto scanned = Infer(GetParam(), /*to_scan=*/true);
  // Every shared model has LSTM/GRU nodes; to_scan must have replaced them by Scans.
  for (const char* rnn : {"LSTM", "GRU", "RNN"}) EXPECT_EQ(CountOps(scanned.graph(), rnn), 0) << rnn;
  EXPECT_GT(CountOps(scanned.graph(), "Scan"), 0);
}

TEST(SharedModels, SileroV31ToScanKeepsTheSymbolicFrameCount) {
  onnx::ModelProto m = Infer("silero_vad_v3.1.onnx", /*to_scan=*/true);
  EXPECT_EQ(DimsOf(m.graph(), "162"), "1,258,floor(sequence/64) + 1");
}

INSTANTIATE_TEST_SUITE_P(Models, SharedModelsAfterToScan,
                         ::testing::Values("silero_vad_v3.1.onnx", "silero_vad_openvino_16k.onnx", "dtln_model_1.onnx",
                                           "gtcrn_simple.onnx"),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

}  // namespace
}  // namespace nuphar::testing
