// Kernel IR of a product partition (product_ir.h).
#include "runtime/jit/product_ir.h"

#include <onnx/onnx_pb.h>

#include "runtime/core/graph_rewrite.h"
#include "runtime/core/op_kernel.h"
#include "runtime/fusion/matmul_bias_fusion.h"
#include "runtime/kernels/conv/conv.h"

namespace nuphar::jit {

std::string ProductIR::ToText() const {
  return op + " x rank " + std::to_string(rank) + " -> nuphar_jit_product_f32 (weights packed at load)";
}

bool HasProductGenerator(const std::string& domain, const std::string& op_type) {
  if (domain == kFusedDomain) return op_type == kFusedConvOp || op_type == kMatMulAddBiasOp;
  return (domain.empty() || domain == "ai.onnx") && (op_type == "MatMul" || op_type == "ConvTranspose");
}

Expected<ProductIR> BuildProductIR(const onnx::NodeProto& node, int64_t rank) {
  if (!HasProductGenerator(node.domain(), node.op_type())) return Diag::Node(node, "jit: not a product the generator takes");
  if (node.output_size() != 1 || node.output(0).empty()) return Diag::Node(node, "jit: a product without one output");
  if (rank < 1 || rank > ProductCall::kMaxRank)
    return Diag::Node(node, "jit: input 0 of rank " + std::to_string(rank) + " (the product call takes 1 to " +
                                std::to_string(ProductCall::kMaxRank) + ")");
  ProductIR ir;
  ir.op = node.op_type();
  ir.rank = rank;
  ir.node = node.name();
  return ir;
}

bool IsProductPartition(const onnx::GraphProto& body) {
  return body.node_size() == 1 && HasProductGenerator(body.node(0).domain(), body.node(0).op_type());
}

}  // namespace nuphar::jit
