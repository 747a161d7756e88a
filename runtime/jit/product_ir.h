// Kernel IR of a product partition (spec runtime.md §8.1: products are partition anchors): one
// FusedConv, ConvTranspose, MatMul by a constant float [K, N] matrix or MatMulAddBias node (its
// other inputs constants), whose generated
// entry function calls the product's core through the runtime ABI (jit_runtime_abi.h
// nuphar_jit_product_f32) with the state the reference kernel made at load: its weights packed
// once, its constant bias and epilogue. Nothing is packed or copied again.
//
// # Dims
// Input 0's dims are arguments of every call (a symbolic dim such as OCR's width or silero's
// 'sequence' is resolved per Run, never baked); the product checks them (ProductCall::
// prepare) and the kernel runs the reference when they do not fit.
//
// # Epilogue
// FusedConv's bias and epilogue steps, ConvTranspose's bias and MatMulAddBias's bias stay inside
// the called core: they run on each panel of the product while it is in L1 (conv/driver.cc), as
// the fill col2im adds onto (nn_conv.cc) or in the packed GEMM's store (nn_matmul.cc); a second
// pass in generated code would read the output again.
// Results are therefore the reference kernel's own bits.
#pragma once

#include <cstdint>
#include <string>

#include "graph/error.h"

namespace onnx {
class GraphProto;
class NodeProto;
}  // namespace onnx

namespace nuphar::jit {

struct ProductIR {
  std::string op;     ///< FusedConv, ConvTranspose, MatMul or MatMulAddBias
  int64_t rank = 0;   ///< input 0's declared rank
  std::string node;   ///< the ONNX node (dumps, reports)

  /// One line, e.g. "FusedConv x rank 4 -> nuphar_jit_product_f32 (packed at load)"; the
  /// codegen_dump_lower output. The generated code is the same for every product (the product
  /// comes in as an argument), so identical kernels of a session share one function.
  std::string ToText() const;
};

/// Whether `op_type` in `domain` is a product the generator anchors (the partitioner's filter;
/// its other checks are the operands': input 0 variable float, every other input a constant).
bool HasProductGenerator(const std::string& domain, const std::string& op_type);

/// The IR of product node `node` whose input 0 has declared rank `rank`; a Diag naming the node
/// when the generator cannot take it (no output, an unknown rank or one above ProductCall's).
Expected<ProductIR> BuildProductIR(const onnx::NodeProto& node, int64_t rank);

/// Whether a partition body is a product kernel's (exactly one node with a product generator).
bool IsProductPartition(const onnx::GraphProto& body);

}  // namespace nuphar::jit
