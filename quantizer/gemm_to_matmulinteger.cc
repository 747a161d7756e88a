// Gemm front-end of the quantization pass (spec Q2): the gemm_to_matmul rewrite (§2.5 with the
// E6 fixes) fused with the quantization of the resulting MatMul.
//
// Before:  Y = Gemm(A, B[, C])  alpha, beta, transA, transB
// After:   A' = Mul(<gemm>_Const_alpha, A)            if alpha != 1
//          A' = A_trans (main-graph initializer) or Transpose(A')   if transA
//          AB = quantized MatMul(A', B')  (prefix <gemm>MatMul_<n>; B' = B or B^T as `<B>_trans_*`)
//          Y  = Add(AB, Mul(<gemm>_Const_beta, C))    if C is given and beta != 0 (Mul if beta != 1)
// Refused: B not a rank-2 float32 initializer (after transB), or a consumer of B that is not a
//          MatMul/Gemm input B -> the Gemm stays unchanged, with a note.
// The qcfg key is the Gemm's output name.
#include "quantizer/matmul_quantizer.h"

#include "graph/tensor_data.h"

namespace nuphar::quant {
Expected<bool> MatMulQuantizer::QuantizeGemm(const onnx::NodeProto& node, const GraphScope& scope,
                                             NodeBuilder& emit, InputTable* inputs) {
  if (node.input_size() < 2 || node.output_size() != 1) {
    Skip(node, scope, "unexpected number of inputs or outputs");
    return false;
  }
  const float alpha = AttrFloat(node, "alpha", 1.0f);
  const float beta = AttrFloat(node, "beta", 1.0f);
  const bool trans_a = AttrInt(node, "transA", 0) != 0;
  const bool trans_b = AttrInt(node, "transB", 0) != 0;
  const std::string& b_name = node.input(1);
  const bool has_c = node.input_size() >= 3 && !node.input(2).empty() && beta != 0.0f;

  NUPHAR_ASSIGN_OR_RETURN(const WeightChoice w, ChooseWeight(node, scope, b_name, "B", trans_b, /*float_input=*/""));
  if (!w.weight) return false;

  emit.set_prefix(node.name());
  std::string a = node.input(0);
  if (alpha != 1.0f) {
    const std::string alpha_name = names_->Fixed(node.name() + "_Const_alpha");
    *scope.graph->add_initializer() = MakeTensor<float>(alpha_name, {}, std::vector<float>{alpha});
    a = emit.Op("Mul", {alpha_name, a});
  }
  if (trans_a) {
    const WeightRef a_init = FindInitializer(scope, a);
    auto mapped = transposed_inputs_.find(GraphKey(a_init.graph, a));
    if (a_init.tensor && mapped != transposed_inputs_.end()) {
      a = mapped->second;
    } else if (a_init.tensor && a_init.tensor->dims_size() == 2 && a_init.tensor->data_type() == onnx::TensorProto::FLOAT) {
      auto values = ReadTensor<float>(*a_init.tensor);
      if (!values.ok()) return values.status().WithNode(node);
      const int64_t rows = a_init.tensor->dims(0), cols = a_init.tensor->dims(1);
      std::vector<float> tr(values->size());
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) tr[c * rows + r] = (*values)[r * cols + c];
      }
      const std::string a_trans = names_->Fixed(a + "_trans");
      *model_->mutable_graph()->add_initializer() = MakeTensor<float>(a_trans, {cols, rows}, tr);
      transposed_inputs_[GraphKey(a_init.graph, a)] = a_trans;
      removable_.emplace_back(a_init.graph, a);
      a = a_trans;
    } else {
      a = emit.Op("Transpose", {a});
    }
  }

  const std::string matmul_name = emit.names().NodeName(emit.prefix(), "MatMul");
  const std::string product = has_c ? matmul_name : node.output(0);
  EmitQuantized(emit, matmul_name, a, *w.weight, w.cfg, product, inputs);
  if (has_c) {
    emit.set_prefix(node.name());
    std::string c = node.input(2);
    if (beta != 1.0f) {
      const std::string beta_name = names_->Fixed(node.name() + "_Const_beta");
      *scope.graph->add_initializer() = MakeTensor<float>(beta_name, {}, std::vector<float>{beta});
      c = emit.Op("Mul", {beta_name, c});
    }
    emit.Op("Add", {product, c}, {}, node.output(0));
  }
  RecordQuantized(node, scope, b_name, *w.weight, w.cfg, w.reused);
  return true;
}

}  // namespace nuphar::quant
