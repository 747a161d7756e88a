// Mode gemm_to_matmul: Gemm in every graph (If branches and nested bodies too) -> MatMul (§2.5, E6).
//
// Before:  Y = Gemm(A, B, C?)  alpha, beta, transA, transB
// After:   A' = alpha != 1 ? Mul(<gemm>_Const_alpha, A) : A
//          A'' = transA ? (A' initializer ? <A>_trans initializer : Transpose(A')) : A'   (same for B)
//          Y = MatMul(A'', B'')                         no C, empty C name, or beta == 0
//          Y = Add(MatMul(A'', B''), beta != 1 ? Mul(<gemm>_Const_beta, C) : C)
//          The original A/B initializer is removed only when nothing else reads it (B18).
// Refused: nothing; every Gemm has a MatMul form.
#include <onnx/onnx_pb.h>

#include <map>

#include "editor/passes.h"
#include "graph/const_fold.h"
#include "graph/tensor_data.h"

namespace nuphar::editor {
namespace {

class GemmToMatMulPass final : public GraphPass {
 public:
  std::string Name() const override { return "gemm_to_matmul"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Gemm"}; }
  int64_t MinOpset() const override { return 9; }

  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    NodeBuilder& b = ctx.builder();
    b.set_prefix(node.name());
    const float alpha = AttrFloat(node, "alpha", 1.f), beta = AttrFloat(node, "beta", 1.f);
    std::string a = node.input(0), bm = node.input(1);
    if (alpha != 1.f) a = b.Op("Mul", {b.Const<float>({}, {alpha}, node.name() + "_Const_alpha"), a});
    NUPHAR_ASSIGN_OR_RETURN(a, Transposed(ctx, a, AttrInt(node, "transA", 0) != 0));
    NUPHAR_ASSIGN_OR_RETURN(bm, Transposed(ctx, bm, AttrInt(node, "transB", 0) != 0));
    const std::string& y = node.output(0);
    const bool has_c = node.input_size() > 2 && !node.input(2).empty() && beta != 0.f;
    if (!has_c) {
      b.Op("MatMul", {a, bm}, y);
      return Effect::Replaced();
    }
    std::string ab = b.Op("MatMul", {a, bm});
    std::string c = node.input(2);
    if (beta != 1.f) c = b.Op("Mul", {b.Const<float>({}, {beta}, node.name() + "_Const_beta"), c});
    b.Op("Add", {ab, c}, y);
    return Effect::Replaced();
  }

 private:
  // Aᵀ: a new main-graph initializer "<A>_trans" when A is an initializer (made once per name),
  // otherwise a Transpose node.
  Expected<std::string> Transposed(RewriteContext& ctx, const std::string& name, bool transpose) {
    if (!transpose) return name;
    if (auto it = transposed_.find(name); it != transposed_.end()) return it->second;
    const onnx::TensorProto* init = ctx.scope().FindInitializer(name);
    if (!init || init->dims_size() != 2) return ctx.builder().Op("Transpose", {name});
    NUPHAR_ASSIGN_OR_RETURN(std::string bytes, TensorBytes(*init));
    const int64_t rows = init->dims(0), cols = init->dims(1);
    const size_t es = DTypeSize(static_cast<DType>(init->data_type()));
    std::string out(bytes.size(), '\0');
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) out.replace((j * rows + i) * es, es, bytes, (i * cols + j) * es, es);
    onnx::TensorProto t = MakeTensor("", static_cast<DType>(init->data_type()), {cols, rows}, out.data(), out.size());
    NodeBuilder main_builder(ctx.scope().Main().graph, &ctx.names(), ctx.builder().opset());
    std::string trans = main_builder.Const(std::move(t), name + "_trans");
    ctx.MarkMaybeDead(name);
    transposed_[name] = trans;
    return trans;
  }

  std::map<std::string, std::string> transposed_;
};

}  // namespace

std::unique_ptr<GraphPass> CreateGemmToMatMulPass(const EditorOptions&) { return std::make_unique<GemmToMatMulPass>(); }

}  // namespace nuphar::editor
