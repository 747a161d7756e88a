// Checking wrappers around libonnx inference functions (graph/onnx_infer_guard.h).
#include "graph/onnx_infer_guard.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nuphar {
namespace {

// axis in [-rank, rank] of input 0 when its shape is known (rank is where libonnx's loop ends).
void CheckLayerNormAxis(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 1 || !onnx::hasInputShape(ctx, 0)) return;
  const int64_t rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const onnx::AttributeProto* a = ctx.getAttribute("axis");
  const int64_t axis = a ? a->i() : -1;
  if (axis < -rank || axis > rank)
    fail_shape_inference("axis ", axis, " is out of range for an input of rank ", rank);
}

// Conv-like ops: libonnx's convPoolShapeInference reads the kernel shape from the weight's
// dims and walks the input's spatial dims with it, assuming equal ranks.
void CheckConvRanks(onnx::InferenceContext& ctx, size_t weight_index) {
  if (ctx.getNumInputs() <= weight_index || !onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, weight_index))
    return;
  const int x_rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const int w_rank = ctx.getInputType(weight_index)->tensor_type().shape().dim_size();
  if (x_rank < 2 || w_rank != x_rank)
    fail_shape_inference("the input has rank ", x_rank, " and the weight rank ", w_rank, "; both must be equal and >= 2");
}

// Ops whose output rank is the length of a 1-D shape input: when that input's values are not
// known, libonnx still adds one unknown dim per declared element (ConstantOfShape declared
// [2^40] grew past 2 GiB in small allocations; fuzz_graph_tools). No tensor has that rank.
constexpr int64_t kMaxShapeInputLength = 64;

void CheckShapeInputLength(onnx::InferenceContext& ctx, size_t shape_index) {
  if (ctx.getNumInputs() <= shape_index || !onnx::hasInputShape(ctx, shape_index)) return;
  const auto& shape = ctx.getInputType(shape_index)->tensor_type().shape();
  for (const auto& dim : shape.dim())
    if (dim.has_dim_value() && (dim.dim_value() < 0 || dim.dim_value() > kMaxShapeInputLength))
      fail_shape_inference("the shape input (input ", shape_index, ") is declared with ", dim.dim_value(),
                           " elements; an output rank must be 0..", kMaxShapeInputLength);
}

// Control flow: libonnx dereferences its graph attributes and Scan's num_scan_inputs without
// checking they exist (fuzz_session_create: a Scan without num_scan_inputs, SEGV in
// ScanInferenceFunction during function expansion).
void CheckGraphAttribute(onnx::InferenceContext& ctx, const char* name) {
  const onnx::AttributeProto* a = ctx.getAttribute(name);
  if (a == nullptr || !a->has_g()) fail_shape_inference("the graph attribute '", name, "' is missing");
}

void CheckScanAttributes(onnx::InferenceContext& ctx) {
  CheckGraphAttribute(ctx, "body");
  const onnx::AttributeProto* n = ctx.getAttribute("num_scan_inputs");
  if (n == nullptr || n->i() < 1 || n->i() > static_cast<int64_t>(ctx.getNumInputs()))
    fail_shape_inference("num_scan_inputs is missing or outside 1..", ctx.getNumInputs());
}

// DepthToSpace and SpaceToDepth divide dims by blocksize * blocksize (or multiply by it): a blocksize
// that is a multiple of 2^32 squares to 0 in int64 and libonnx divides by zero (fuzz_graph_tools:
// blocksize 2^62, SIGFPE). No real block is wider than a dim of a 2^31-element tensor.
constexpr int64_t kMaxBlocksize = int64_t{1} << 31;

void CheckBlocksize(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("blocksize");
  const int64_t blocksize = a ? a->i() : 0;
  if (blocksize < 1 || blocksize >= kMaxBlocksize)
    fail_shape_inference("blocksize ", blocksize, " is outside 1..", kMaxBlocksize - 1);
}

// Conv and pool ops (libonnx's convPoolShapeInference) divide the spatial extent by each stride
// without checking it, and with auto_pad SAME_* and no pads they find the residual by subtracting
// the stride from the input dim one step at a time: stride 0 divides by zero, a declared dim of 2^40
// with stride 2 loops 2^39 times. Strides must be >= 1 and that loop short.
constexpr int64_t kMaxSamePadSteps = int64_t{1} << 24;

void CheckConvPoolStrides(onnx::InferenceContext& ctx) {
  std::vector<int64_t> strides;
  if (const onnx::AttributeProto* a = ctx.getAttribute("strides")) strides.assign(a->ints().begin(), a->ints().end());
  for (int64_t s : strides)
    if (s < 1) fail_shape_inference("stride ", s, " is not positive");
  const onnx::AttributeProto* auto_pad = ctx.getAttribute("auto_pad");
  if (auto_pad == nullptr || auto_pad->s() == "VALID" || auto_pad->s() == "NOTSET" || ctx.getAttribute("pads") ||
      ctx.getNumInputs() < 1 || !onnx::hasInputShape(ctx, 0))
    return;
  const auto& shape = ctx.getInputType(0)->tensor_type().shape();
  for (size_t i = 0; i < strides.size() && 2 + static_cast<int>(i) < shape.dim_size(); ++i) {
    const auto& dim = shape.dim(2 + static_cast<int>(i));
    if (strides[i] > 1 && dim.has_dim_value() && dim.dim_value() / strides[i] > kMaxSamePadSteps)
      fail_shape_inference("spatial dim ", i, " of ", dim.dim_value(), " over stride ", strides[i],
                           " is past what SAME padding is inferred for (", kMaxSamePadSteps, " strides)");
  }
}

// SplitToSequence with a scalar split (libonnx decides "scalar" from the declared shape of input 1,
// not the initializer's dims) takes the split dim modulo that value: 0 divides by zero and
// INT64_MIN % -1 traps.
void CheckScalarSplit(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() < 2) return;
  const onnx::TensorProto* split = ctx.getInputData(1);
  if (split == nullptr) return;
  std::vector<int64_t> values;
  if (split->data_type() == onnx::TensorProto::INT64) values = onnx::ParseData<int64_t>(split);
  else if (split->data_type() == onnx::TensorProto::INT32) {
    const auto narrow = onnx::ParseData<int32_t>(split);
    values.assign(narrow.begin(), narrow.end());
  }
  const bool scalar = onnx::hasInputShape(ctx, 1) ? ctx.getInputType(1)->tensor_type().shape().dim_size() == 0
                                                  : split->dims_size() == 0;
  if (scalar && !values.empty() && values[0] < 1)
    fail_shape_inference("the scalar split ", values[0], " is not positive");
}

// Some exporters write -1 for an unknown dim, which most inference functions pass through; these
// multiply or index with it (Reshape's input product, GatherND's last index dim).
void CheckNoNegativeDims(onnx::InferenceContext& ctx, size_t index) {
  if (ctx.getNumInputs() <= index || !onnx::hasInputShape(ctx, index)) return;
  for (const auto& dim : ctx.getInputType(index)->tensor_type().shape().dim())
    if (dim.has_dim_value() && dim.dim_value() < 0)
      fail_shape_inference("input ", index, " is declared with the negative dim ", dim.dim_value());
}

// Reshape with a -1 divides the input's dim product by the target's: both are int64 products that
// libonnx lets wrap, and INT64_MIN / -1 traps. Every known factor on both sides must keep its
// product under 2^62 (no tensor holds that many elements).
constexpr int64_t kMaxElements = int64_t{1} << 62;

bool ProductFits(int64_t* product, int64_t factor) {
  if (factor <= 0) return true;  // 0, -1 and unknown dims are libonnx's to judge
  if (*product > kMaxElements / factor) return false;
  *product *= factor;
  return true;
}

void CheckReshapeProducts(onnx::InferenceContext& ctx) {
  CheckShapeInputLength(ctx, 1);
  CheckNoNegativeDims(ctx, 0);
  std::vector<int64_t> input_dims;  // -1 where unknown
  int64_t product = 1;
  if (ctx.getNumInputs() >= 1 && onnx::hasInputShape(ctx, 0))
    for (const auto& dim : ctx.getInputType(0)->tensor_type().shape().dim()) {
      input_dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
      if (dim.has_dim_value() && !ProductFits(&product, dim.dim_value()))
        fail_shape_inference("the input's dims multiply past ", kMaxElements, " elements");
    }
  const onnx::TensorProto* target = ctx.getInputData(1);
  if (target == nullptr || target->data_type() != onnx::TensorProto::INT64) return;
  const onnx::AttributeProto* allowzero = ctx.getAttribute("allowzero");
  const bool copies_zeros = allowzero == nullptr || allowzero->i() == 0;
  product = 1;
  const std::vector<int64_t> values = onnx::ParseData<int64_t>(target);
  for (size_t i = 0; i < values.size(); ++i) {
    // A 0 copies the input's dim there, which libonnx multiplies in too.
    const int64_t factor = values[i] == 0 && copies_zeros && i < input_dims.size() ? input_dims[i] : values[i];
    if (!ProductFits(&product, factor))
      fail_shape_inference("the target shape multiplies past ", kMaxElements, " elements");
  }
}

// Einsum without "->" counts each left-hand label in a 26-entry array indexed by label - 'a'
// (libonnx 1.12): an upper-case label or any other character writes outside it, on the stack.
void CheckEinsumLabels(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("equation");
  if (a == nullptr || a->s().find("->") != std::string::npos) return;
  for (char c : a->s())
    if (!(c >= 'a' && c <= 'z') && c != ',' && c != '.' && c != ' ')
      fail_shape_inference("an equation without '->' with the label '", std::string(1, c),
                           "' (only a-z are inferred)");
}

// GatherND: libonnx checks batch_dims + the indices' last dim against the data rank from above
// only, then reads data dims from that index: a negative batch_dims reads before the first dim.
void CheckGatherNdBatchDims(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("batch_dims");
  if (a != nullptr && (a->i() < 0 || a->i() > 64)) fail_shape_inference("batch_dims ", a->i(), " is outside 0..64");
}

// Inputs whose dims libonnx reads by position without checking the rank first (Gemm-1..6,
// RNN-1/GRU-1..3/LSTM-1 read dims 0 and 1, STFT-17 dims 0 and 1 of the signal).
void CheckInputRankAtLeast(onnx::InferenceContext& ctx, size_t index, int min_rank) {
  if (ctx.getNumInputs() <= index || !onnx::hasInputShape(ctx, index)) return;
  const int rank = ctx.getInputType(index)->tensor_type().shape().dim_size();
  if (rank < min_rank) fail_shape_inference("input ", index, " has rank ", rank, "; at least ", min_rank, " is needed");
}

// MaxUnpool without output_shape reads dim 1 of input I once X's shape is known, whether or not
// I has a shape.
void CheckMaxUnpoolIndices(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() != 2 || !onnx::hasInputShape(ctx, 0)) return;
  if (!onnx::hasInputShape(ctx, 1) || ctx.getInputType(1)->tensor_type().shape().dim_size() < 2)
    fail_shape_inference("input I has no shape of rank 2 or more");
}

// MaxRoiPool reads pooled_shape[0] and [1] after checking only that it has rank - 2 entries.
void CheckPooledShape(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("pooled_shape");
  if (a != nullptr && a->ints_size() != 2) fail_shape_inference("pooled_shape has ", a->ints_size(), " entries, not 2");
}

// Every op: libonnx 1.12's ParseData sizes its vector by raw_data's length rounded down to whole
// elements and then copies every byte (a length that is not a multiple of the element size
// overflows the heap or writes through null), and TopK, Range and the window ops read element 0
// of whatever it returns. So each constant input's data must be what its dims say.
constexpr int64_t kMaxConstantElements = int64_t{1} << 40;

size_t ElementBytes(int32_t type) {
  switch (type) {
    case onnx::TensorProto::FLOAT: case onnx::TensorProto::INT32: case onnx::TensorProto::UINT32: return 4;
    case onnx::TensorProto::DOUBLE: case onnx::TensorProto::INT64: case onnx::TensorProto::UINT64:
    case onnx::TensorProto::COMPLEX64: return 8;
    case onnx::TensorProto::COMPLEX128: return 16;
    case onnx::TensorProto::INT16: case onnx::TensorProto::UINT16: case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16: return 2;
    case onnx::TensorProto::INT8: case onnx::TensorProto::UINT8: case onnx::TensorProto::BOOL: return 1;
    default: return 0;  // strings and unknown types: no raw data
  }
}

// The typed field's entry count for `count` elements of the tensor's type, and that field's size.
std::pair<int64_t, int64_t> TypedEntries(const onnx::TensorProto& t, int64_t count) {
  switch (t.data_type()) {
    case onnx::TensorProto::FLOAT: return {count, t.float_data_size()};
    case onnx::TensorProto::COMPLEX64: return {2 * count, t.float_data_size()};
    case onnx::TensorProto::DOUBLE: return {count, t.double_data_size()};
    case onnx::TensorProto::COMPLEX128: return {2 * count, t.double_data_size()};
    case onnx::TensorProto::INT64: return {count, t.int64_data_size()};
    case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: return {count, t.uint64_data_size()};
    case onnx::TensorProto::STRING: return {count, t.string_data_size()};
    default: return {count, t.int32_data_size()};  // the 8/16/32-bit integers, bool, float16, bfloat16
  }
}

// A floating tensor of more than 64 elements with no data at all is a weight whose payload the
// caller left out (the runtime's copy for inference does, Session::Create). libonnx reads float data
// only of scalars (Range) and per-axis scales (Resize, Upsample: at most 64 entries).
bool WeightLeftOut(const onnx::TensorProto& t, int64_t count) {
  const int32_t type = t.data_type();
  const bool floating = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
                        type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  return floating && count > 64 && !t.has_raw_data() && t.float_data_size() == 0 && t.double_data_size() == 0 &&
         t.int32_data_size() == 0;
}

void CheckEveryInput(onnx::InferenceContext& ctx) {
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TensorProto* t = ctx.getInputData(i);
    if (t == nullptr || (t->has_data_location() && t->data_location() == onnx::TensorProto::EXTERNAL)) continue;
    int64_t count = 1;
    for (int64_t d : t->dims()) {
      if (d < 0 || (d > 0 && count > kMaxConstantElements / d))
        fail_shape_inference("the constant input ", i, " has dims that are negative or multiply past 2^40");
      count *= d;
    }
    if (WeightLeftOut(*t, count)) continue;
    if (t->has_raw_data()) {
      const size_t bytes = ElementBytes(t->data_type());
      if (bytes == 0 || t->raw_data().size() != static_cast<size_t>(count) * bytes)
        fail_shape_inference("the constant input ", i, " has ", t->raw_data().size(), " bytes of raw data for ", count,
                             " elements of type ", t->data_type());
    } else if (const auto [want, have] = TypedEntries(*t, count); want != have) {
      fail_shape_inference("the constant input ", i, " has ", have, " data entries for ", count, " elements");
    }
  }
}

// The checks for (domain, op type) besides CheckEveryInput, or null when the op needs none.
using Check = void (*)(onnx::InferenceContext&);
Check CheckFor(const std::string& key) {
  if (key == "LayerNormalization") return CheckLayerNormAxis;
  if (key == "ConvTranspose") return [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 1); };
  if (key == "Conv" || key == "ConvInteger") return [](onnx::InferenceContext& ctx) {
    CheckConvRanks(ctx, 1);
    CheckConvPoolStrides(ctx);
  };
  if (key == "QLinearConv") return [](onnx::InferenceContext& ctx) {
    CheckConvRanks(ctx, 3);
    CheckConvPoolStrides(ctx);
  };
  if (key == "MaxPool" || key == "AveragePool" || key == "LpPool") return CheckConvPoolStrides;
  if (key == "ConstantOfShape") return [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 0); };
  if (key == "Expand") return [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 1); };
  if (key == "Reshape") return CheckReshapeProducts;
  if (key == "DepthToSpace" || key == "SpaceToDepth") return CheckBlocksize;
  if (key == "SplitToSequence") return CheckScalarSplit;
  if (key == "Einsum") return CheckEinsumLabels;
  if (key == "GatherND") return [](onnx::InferenceContext& ctx) {
    CheckGatherNdBatchDims(ctx);
    CheckNoNegativeDims(ctx, 1);
  };
  if (key == "Gemm") return [](onnx::InferenceContext& ctx) {
    CheckInputRankAtLeast(ctx, 0, 2);
    CheckInputRankAtLeast(ctx, 1, 2);
  };
  if (key == "RNN" || key == "GRU" || key == "LSTM" || key == "STFT")
    return [](onnx::InferenceContext& ctx) { CheckInputRankAtLeast(ctx, 0, 2); };
  if (key == "MaxUnpool") return CheckMaxUnpoolIndices;
  if (key == "MaxRoiPool") return CheckPooledShape;
  if (key == "Scan") return CheckScanAttributes;
  if (key == "Loop") return [](onnx::InferenceContext& ctx) { CheckGraphAttribute(ctx, "body"); };
  if (key == "If") return [](onnx::InferenceContext& ctx) {
    CheckGraphAttribute(ctx, "then_branch");
    CheckGraphAttribute(ctx, "else_branch");
  };
  return nullptr;
}

class Registry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (!schema || !schema->has_type_and_shape_inference_function()) return schema;
    std::lock_guard<std::mutex> lock(mu_);
    auto& guarded = guarded_[schema];
    if (!guarded) {
      const bool onnx_domain = domain.empty() || domain == "ai.onnx";
      const Check check = onnx_domain ? CheckFor(key) : nullptr;
      guarded = std::make_unique<onnx::OpSchema>(*schema);
      guarded->TypeAndShapeInferenceFunction(
          [check, inner = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& ctx) {
            CheckEveryInput(ctx);
            if (check) check(ctx);
            inner(ctx);
          });
    }
    return guarded.get();
  }

 private:
  mutable std::mutex mu_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

}  // namespace

const onnx::ISchemaRegistry* GuardedSchemaRegistry() {
  static const Registry* registry = new Registry();  // never destroyed: schemas outlive callers
  return registry;
}

}  // namespace nuphar
