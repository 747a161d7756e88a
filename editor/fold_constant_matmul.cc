// opt_inproj, first step: MatMul of two constants folded into one initializer (§2.4 step 2, B7).
//
// Before:  Y = MatMul(U, V)            U [M, K], V [K, N] float32 constants (e.g. fused-SVD factors)
// After:   Y = initializer U·V        (a graph output Y stays a graph output: Identity(Y_folded) -> Y)
//          U and V are removed once nothing else reads them, subgraphs included.
// Skipped: operands that are not constant, not float32, or not both rank 2.
#include <onnx/onnx_pb.h>

#include "editor/passes.h"
#include "graph/const_fold.h"
#include "graph/tensor_data.h"

namespace nuphar::editor {
namespace {

class FoldConstantMatMulPass final : public GraphPass {
 public:
  std::string Name() const override { return "fold_constant_matmul"; }
  std::vector<std::string> TargetOpTypes() const override { return {"MatMul"}; }

  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    auto u = FoldConstant(ctx.scope(), node.input(0));
    auto v = FoldConstant(ctx.scope(), node.input(1));
    if (!u.ok() || !v.ok()) return Effect::Kept("an operand is not constant");
    const auto& ut = u->tensor();
    const auto& vt = v->tensor();
    if (ut.data_type() != onnx::TensorProto::FLOAT || vt.data_type() != onnx::TensorProto::FLOAT ||
        ut.dims_size() != 2 || vt.dims_size() != 2 || ut.dims(1) != vt.dims(0))
      return Effect::Kept("only float32 rank-2 constant MatMuls are folded");
    NUPHAR_ASSIGN_OR_RETURN(auto a, ReadTensor<float>(ut));
    NUPHAR_ASSIGN_OR_RETURN(auto b, ReadTensor<float>(vt));
    const int64_t M = ut.dims(0), K = ut.dims(1), N = vt.dims(1);
    // The product's size is not bounded by the operands' (K may be 0): a hostile file could ask
    // for M x N floats.
    if (M < 0 || N < 0 || (N > 0 && M > (int64_t{1} << 28) / N)) return Effect::Kept("the folded product would be too large");
    std::vector<float> c(static_cast<size_t>(M * N), 0.f);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < K; ++k) {
        const float aik = a[i * K + k];
        for (int64_t j = 0; j < N; ++j) c[i * N + j] += aik * b[k * N + j];
      }
    const std::string& y = node.output(0);
    bool is_graph_output = false;
    for (const auto& o : ctx.scope().graph->output()) is_graph_output |= o.name() == y;
    NodeBuilder& builder = ctx.builder();
    if (is_graph_output) {
      builder.Op("Identity", {builder.Const<float>({M, N}, c, y + "_folded")}, y);
    } else {
      onnx::TensorProto t = MakeTensor<float>(y, {M, N}, c);
      *ctx.scope().graph->add_initializer() = std::move(t);
    }
    ctx.MarkMaybeDead(node.input(0));
    ctx.MarkMaybeDead(node.input(1));
    return Effect::Replaced();
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateFoldConstantMatMulPass(const EditorOptions&) {
  return std::make_unique<FoldConstantMatMulPass>();
}

}  // namespace nuphar::editor
