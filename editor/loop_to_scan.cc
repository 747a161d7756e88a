// placeholder
#include <onnx/onnx_pb.h>
#include "editor/passes.h"
namespace nuphar::editor {
namespace {
class LoopToScanPass final : public GraphPass {
 public:
  std::string Name() const override { return "loop_to_scan"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Loop"}; }
  Expected<Effect> Rewrite(RewriteContext&, const onnx::NodeProto&) override { return Effect::Kept("todo"); }
};
}  // namespace
std::unique_ptr<GraphPass> CreateLoopToScanPass(const EditorOptions&) { return std::make_unique<LoopToScanPass>(); }
}  // namespace nuphar::editor
