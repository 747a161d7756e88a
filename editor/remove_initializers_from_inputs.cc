// Mode remove_initializers_from_inputs (spec §2.6, E6).
//
// Before:  graph inputs [x, w1, w2], initializers [w1, w2]          (IR < 4 style)
// After:   graph inputs [x], initializers [w1, w2]; ir_version raised to 4 if lower
// Kept:    names in --remain_inputs; main-graph inputs that only share a name with a *body*
//          initializer; subgraph inputs (never touched).
#include <onnx/onnx_pb.h>

#include <unordered_set>

#include "editor/passes.h"

namespace nuphar::editor {
namespace {

class RemoveInitializersFromInputsPass final : public GraphPass {
 public:
  explicit RemoveInitializersFromInputsPass(const EditorOptions& options)
      : remain_(options.remain_inputs.begin(), options.remain_inputs.end()) {}
  std::string Name() const override { return "remove_initializers_from_inputs"; }
  std::vector<std::string> TargetOpTypes() const override { return {}; }
  Expected<Effect> Rewrite(RewriteContext&, const onnx::NodeProto&) override { return Effect::Kept(""); }

  Status Begin(onnx::ModelProto& model) override {
    if (model.ir_version() < 4) model.set_ir_version(4);
    std::unordered_set<std::string> initializers;
    for (const auto& t : model.graph().initializer()) initializers.insert(t.name());
    auto* inputs = model.mutable_graph()->mutable_input();
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
    for (auto& vi : *inputs)
      if (!initializers.count(vi.name()) || remain_.count(vi.name())) kept.Add()->Swap(&vi);
    inputs->Swap(&kept);
    return Status::OK();
  }

 private:
  std::unordered_set<std::string> remain_;
};

}  // namespace

std::unique_ptr<GraphPass> CreateRemoveInitializersFromInputsPass(const EditorOptions& options) {
  return std::make_unique<RemoveInitializersFromInputsPass>(options);
}

}  // namespace nuphar::editor
