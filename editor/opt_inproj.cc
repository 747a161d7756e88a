// placeholder
#include <onnx/onnx_pb.h>
#include "editor/passes.h"
namespace nuphar::editor {
namespace {
class OptInprojPass final : public GraphPass {
 public:
  std::string Name() const override { return "opt_inproj"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Scan"}; }
  Expected<Effect> Rewrite(RewriteContext&, const onnx::NodeProto&) override { return Effect::Kept("todo"); }
};
}  // namespace
std::unique_ptr<GraphPass> CreateOptInprojPass(const EditorOptions&) { return std::make_unique<OptInprojPass>(); }
}  // namespace nuphar::editor
