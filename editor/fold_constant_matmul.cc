// placeholder
#include <onnx/onnx_pb.h>
#include "editor/passes.h"
namespace nuphar::editor {
namespace {
class FoldConstantMatMulPass final : public GraphPass {
 public:
  std::string Name() const override { return "fold_constant_matmul"; }
  std::vector<std::string> TargetOpTypes() const override { return {"MatMul"}; }
  Expected<Effect> Rewrite(RewriteContext&, const onnx::NodeProto&) override { return Effect::Kept("todo"); }
};
}  // namespace
std::unique_ptr<GraphPass> CreateFoldConstantMatMulPass(const EditorOptions&) { return std::make_unique<FoldConstantMatMulPass>(); }
}  // namespace nuphar::editor
