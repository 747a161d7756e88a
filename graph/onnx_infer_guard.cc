// Checking wrappers around libonnx inference functions (graph/onnx_infer_guard.h).
#include "graph/onnx_infer_guard.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>
#include <onnx/defs/tensor_proto_util.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <utility>
#include <vector>

#include "graph/tensor_data.h"

namespace nuphar {
namespace {

// The declared shape of tensor input `index`, or null (absent, untyped, no shape, or not a dense
// tensor: libonnx's hasInputShape is also true for sequences and sparse tensors, whose
// tensor_type().shape() is then an empty default).
const onnx::TensorShapeProto* TensorShape(onnx::InferenceContext& ctx, size_t index) {
  if (ctx.getNumInputs() <= index) return nullptr;
  const onnx::TypeProto* t = ctx.getInputType(index);
  if (t == nullptr || !t->has_tensor_type() || !t->tensor_type().has_shape()) return nullptr;
  return &t->tensor_type().shape();
}

// ---- Constant input data --------------------------------------------------------------------
// libonnx 1.12's ParseData sizes its vector by raw_data's length rounded down to whole elements and
// then copies every byte (a length that is not whole elements overflows the heap, or writes through
// null), and TopK, Range and the window ops read element 0 of whatever it returns. So libonnx sees
// a constant input's data only when its payload is what its dims say; otherwise the input is a
// value without data, as if it were computed (PayloadMatchesDims, graph/tensor_data.h). That also
// covers weights whose payload the caller left out (Session::Create, GraphPlan's copy for
// rewrites): their types and shapes still infer.

// The context libonnx's inference functions (and the checks below) see: the caller's, with each
// constant input's data withheld unless PayloadMatchesDims. Data propagation functions are not
// wrapped; every caller runs with enable_data_propagation off.
class PayloadCheckedContext final : public onnx::InferenceContext {
 public:
  explicit PayloadCheckedContext(onnx::InferenceContext& inner) : inner_(inner) {}
  const onnx::AttributeProto* getAttribute(const std::string& name) const override { return inner_.getAttribute(name); }
  size_t getNumInputs() const override { return inner_.getNumInputs(); }
  const onnx::TypeProto* getInputType(size_t index) const override { return inner_.getInputType(index); }
  const onnx::TensorProto* getInputData(size_t index) const override {
    const onnx::TensorProto* t = inner_.getInputData(index);
    if (t == nullptr || (t->has_data_location() && t->data_location() == onnx::TensorProto::EXTERNAL)) return t;
    return PayloadMatchesDims(*t) ? t : nullptr;
  }
  size_t getNumOutputs() const override { return inner_.getNumOutputs(); }
  onnx::TypeProto* getOutputType(size_t index) override { return inner_.getOutputType(index); }
  onnx::GraphInferencer* getGraphAttributeInferencer(const std::string& name) override {
    return inner_.getGraphAttributeInferencer(name);
  }
  const onnx::SparseTensorProto* getInputSparseData(size_t index) const override {
    return inner_.getInputSparseData(index);
  }
  const onnx::TensorShapeProto* getSymbolicInput(size_t index) const override { return inner_.getSymbolicInput(index); }

 private:
  onnx::InferenceContext& inner_;
};

std::vector<int64_t> IntData(const onnx::TensorProto& t) {
  if (t.data_type() == onnx::TensorProto::INT64) return onnx::ParseData<int64_t>(&t);
  if (t.data_type() != onnx::TensorProto::INT32) return {};
  const auto narrow = onnx::ParseData<int32_t>(&t);
  return {narrow.begin(), narrow.end()};
}

// ---- Per-op checks (each refuses the node: libonnx would crash, trap or hang on it) ----------

// LayerNormalization-17: axis in [-rank, rank] of input 0 (rank is where libonnx's loop ends); it
// normalizes axis without a range check and writes dims before the shape's first one.
void CheckLayerNormAxis(onnx::InferenceContext& ctx) {
  const onnx::TensorShapeProto* shape = TensorShape(ctx, 0);
  if (shape == nullptr) return;
  const int64_t rank = shape->dim_size();
  const onnx::AttributeProto* a = ctx.getAttribute("axis");
  const int64_t axis = a ? a->i() : -1;
  if (axis < -rank || axis > rank) fail_shape_inference("axis ", axis, " is out of range for an input of rank ", rank);
}

// Conv-like ops: libonnx's convPoolShapeInference reads the kernel shape from the weight's
// dims and walks the input's spatial dims with it, assuming equal ranks.
void CheckConvRanks(onnx::InferenceContext& ctx, size_t weight_index) {
  const onnx::TensorShapeProto* x = TensorShape(ctx, 0);
  const onnx::TensorShapeProto* w = TensorShape(ctx, weight_index);
  if (x == nullptr || w == nullptr) return;
  if (x->dim_size() < 2 || w->dim_size() != x->dim_size())
    fail_shape_inference("the input has rank ", x->dim_size(), " and the weight rank ", w->dim_size(),
                         "; both must be equal and >= 2");
}

// Conv and pool ops (convPoolShapeInference and its older twin) divide the spatial extent by each
// stride without checking it: stride 0 divides by zero. With any auto_pad but VALID and no pads
// (NOTSET included) they find the residual by subtracting the stride from the input dim one step
// at a time: a declared dim of 2^40 with stride 2 loops 2^39 times. 2^27 steps (~0.05 s) is past
// an hour of 48 kHz audio at stride 2.
constexpr int64_t kMaxSamePadSteps = int64_t{1} << 27;

void CheckConvPoolStrides(onnx::InferenceContext& ctx) {
  std::vector<int64_t> strides;
  if (const onnx::AttributeProto* a = ctx.getAttribute("strides")) strides.assign(a->ints().begin(), a->ints().end());
  for (int64_t s : strides)
    if (s < 1) fail_shape_inference("stride ", s, " is not positive");
  const onnx::AttributeProto* auto_pad = ctx.getAttribute("auto_pad");
  const onnx::TensorShapeProto* shape = TensorShape(ctx, 0);
  if (auto_pad == nullptr || auto_pad->s() == "VALID" || ctx.getAttribute("pads") || shape == nullptr) return;
  for (size_t i = 0; i < strides.size() && 2 + static_cast<int>(i) < shape->dim_size(); ++i) {
    const auto& dim = shape->dim(2 + static_cast<int>(i));
    if (strides[i] > 1 && dim.has_dim_value() && dim.dim_value() / strides[i] > kMaxSamePadSteps)
      fail_shape_inference("spatial dim ", i, " of ", dim.dim_value(), " over stride ", strides[i],
                           " is past what padding is inferred for (", kMaxSamePadSteps, " strides)");
  }
}

// Ops whose output rank is the length of a 1-D shape input: when that input's values are not
// known, libonnx still adds one unknown dim per declared element (ConstantOfShape declared
// [2^40] grew past 2 GiB in small allocations; fuzz_graph_tools). No tensor has that rank.
constexpr int64_t kMaxShapeInputLength = 64;

void CheckShapeInputLength(onnx::InferenceContext& ctx, size_t shape_index) {
  const onnx::TensorShapeProto* shape = TensorShape(ctx, shape_index);
  if (shape == nullptr) return;
  for (const auto& dim : shape->dim())
    if (dim.has_dim_value() && (dim.dim_value() < 0 || dim.dim_value() > kMaxShapeInputLength))
      fail_shape_inference("the shape input (input ", shape_index, ") is declared with ", dim.dim_value(),
                           " elements; an output rank must be 0..", kMaxShapeInputLength);
}

// Reshape with a -1 divides the product of the input's dims by the target's (copied zeros
// included), both int64 products that libonnx lets wrap, and INT64_MIN / -1 traps. A declared -1
// (some exporters' unknown dim) is a legal factor there, so the check bounds magnitudes: with
// every |product| at most 2^62 neither side can be INT64_MIN.
constexpr int64_t kMaxElements = int64_t{1} << 62;

bool MagnitudeFits(int64_t* product, int64_t factor) {
  if (factor == 0) return true;
  if (factor == INT64_MIN) return false;
  const int64_t m = std::abs(factor);
  if (*product > kMaxElements / m) return false;
  *product *= m;
  return true;
}

void CheckReshapeProducts(onnx::InferenceContext& ctx) {
  CheckShapeInputLength(ctx, 1);
  std::vector<int64_t> input_dims;  // 0 where unknown (multiplies nothing in)
  int64_t product = 1;
  if (const onnx::TensorShapeProto* shape = TensorShape(ctx, 0))
    for (const auto& dim : shape->dim()) {
      input_dims.push_back(dim.has_dim_value() ? dim.dim_value() : 0);
      if (!MagnitudeFits(&product, input_dims.back()))
        fail_shape_inference("the input's dims multiply past ", kMaxElements, " elements");
    }
  const onnx::TensorProto* target = ctx.getInputData(1);
  if (target == nullptr) return;
  const onnx::AttributeProto* allowzero = ctx.getAttribute("allowzero");
  const bool copies_zeros = allowzero == nullptr || allowzero->i() == 0;
  const std::vector<int64_t> values = IntData(*target);
  product = 1;
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t factor = values[i] == 0 && copies_zeros && i < input_dims.size() ? input_dims[i] : values[i];
    if (!MagnitudeFits(&product, factor))
      fail_shape_inference("the target shape multiplies past ", kMaxElements, " elements");
  }
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

// SplitToSequence with a scalar split (libonnx decides "scalar" from the declared type of input 1,
// not the initializer's dims) takes the split dim modulo that value: 0 divides by zero and
// INT64_MIN % -1 traps.
void CheckScalarSplit(onnx::InferenceContext& ctx) {
  const onnx::TensorProto* split = ctx.getInputData(1);
  if (split == nullptr) return;
  const onnx::TensorShapeProto* declared = TensorShape(ctx, 1);
  const bool scalar = declared ? declared->dim_size() == 0 : split->dims_size() == 0;
  const std::vector<int64_t> values = IntData(*split);
  if (scalar && !values.empty() && values[0] < 1) fail_shape_inference("the scalar split ", values[0], " is not positive");
}

// Einsum without "->" (after libonnx removes the spaces) counts each left-hand label in a
// 26-entry array indexed by label - 'a' once every input has a shape: an upper-case label or any
// other character writes outside it, on the stack.
void CheckEinsumLabels(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("equation");
  if (a == nullptr) return;
  std::string equation = a->s();
  equation.erase(std::remove(equation.begin(), equation.end(), ' '), equation.end());
  if (equation.find("->") != std::string::npos) return;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i)
    if (TensorShape(ctx, i) == nullptr) return;  // libonnx returns before counting
  for (char c : equation)
    if (!(c >= 'a' && c <= 'z') && c != ',' && c != '.')
      fail_shape_inference("an equation without '->' with the label '", std::string(1, c), "' (only a-z are inferred)");
}

// GatherND checks batch_dims + the indices' last dim against the data rank from above only, then
// reads data dims from that index: a negative sum reads before the first dim.
void CheckGatherNdIndex(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("batch_dims");
  if (a != nullptr && (a->i() < 0 || a->i() > 64)) fail_shape_inference("batch_dims ", a->i(), " is outside 0..64");
  const onnx::TensorShapeProto* indices = TensorShape(ctx, 1);
  if (indices == nullptr || indices->dim_size() == 0) return;
  const auto& last = indices->dim(indices->dim_size() - 1);
  if (last.has_dim_value() && last.dim_value() < 0)
    fail_shape_inference("the indices' last dim is declared ", last.dim_value());
}

// Inputs whose dims 0 and 1 libonnx reads without checking the rank first: Gemm-1..6 (A and B),
// RNN-1, GRU-1..3, LSTM-1 (X) and STFT-17 (the signal). Every version is checked: the newer ones
// refuse such inputs themselves.
void CheckRankAtLeastTwo(onnx::InferenceContext& ctx, size_t index) {
  const onnx::TensorShapeProto* shape = TensorShape(ctx, index);
  if (shape != nullptr && shape->dim_size() < 2)
    fail_shape_inference("input ", index, " has rank ", shape->dim_size(), "; at least 2 is needed");
}
void CheckInput0RankAtLeastTwo(onnx::InferenceContext& ctx) { CheckRankAtLeastTwo(ctx, 0); }

// MaxUnpool without output_shape reads dim 1 of input I once X's shape is known, whether or not
// I has a shape.
void CheckMaxUnpoolIndices(onnx::InferenceContext& ctx) {
  if (ctx.getNumInputs() != 2 || TensorShape(ctx, 0) == nullptr) return;
  const onnx::TensorShapeProto* indices = TensorShape(ctx, 1);
  if (indices == nullptr || indices->dim_size() < 2) fail_shape_inference("input I has no shape of rank 2 or more");
}

// MaxRoiPool reads pooled_shape[0] and [1] after checking only that it has rank - 2 entries.
void CheckPooledShape(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* a = ctx.getAttribute("pooled_shape");
  if (a != nullptr && a->ints_size() != 2) fail_shape_inference("pooled_shape has ", a->ints_size(), " entries, not 2");
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

// The checks of each ONNX-domain op (all its versions), in the order they run.
using Check = void (*)(onnx::InferenceContext&);
const std::multimap<std::string, Check>& ChecksByOp() {
  static const auto* table = new std::multimap<std::string, Check>{
      {"LayerNormalization", CheckLayerNormAxis},
      {"Conv", [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 1); }},
      {"Conv", CheckConvPoolStrides},
      {"ConvInteger", [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 1); }},
      {"ConvInteger", CheckConvPoolStrides},
      {"ConvTranspose", [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 1); }},
      {"QLinearConv", [](onnx::InferenceContext& ctx) { CheckConvRanks(ctx, 3); }},
      {"QLinearConv", CheckConvPoolStrides},
      {"MaxPool", CheckConvPoolStrides},
      {"AveragePool", CheckConvPoolStrides},
      {"LpPool", CheckConvPoolStrides},
      {"ConstantOfShape", [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 0); }},
      {"Expand", [](onnx::InferenceContext& ctx) { CheckShapeInputLength(ctx, 1); }},
      {"Reshape", CheckReshapeProducts},
      {"DepthToSpace", CheckBlocksize},
      {"SpaceToDepth", CheckBlocksize},
      {"SplitToSequence", CheckScalarSplit},
      {"Einsum", CheckEinsumLabels},
      {"GatherND", CheckGatherNdIndex},
      {"Gemm", CheckInput0RankAtLeastTwo},
      {"Gemm", [](onnx::InferenceContext& ctx) { CheckRankAtLeastTwo(ctx, 1); }},
      {"RNN", CheckInput0RankAtLeastTwo},
      {"GRU", CheckInput0RankAtLeastTwo},
      {"LSTM", CheckInput0RankAtLeastTwo},
      {"STFT", CheckInput0RankAtLeastTwo},
      {"MaxUnpool", CheckMaxUnpoolIndices},
      {"MaxRoiPool", CheckPooledShape},
      {"Scan", CheckScanAttributes},
      {"Loop", [](onnx::InferenceContext& ctx) { CheckGraphAttribute(ctx, "body"); }},
      {"If", [](onnx::InferenceContext& ctx) { CheckGraphAttribute(ctx, "then_branch"); }},
      {"If", [](onnx::InferenceContext& ctx) { CheckGraphAttribute(ctx, "else_branch"); }},
  };
  return *table;
}

// Copies of the schemas, made on first use: the same schema with an inference function that runs
// the checks and then libonnx's own on a PayloadCheckedContext. A hit takes the shared lock only.
class Registry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (!schema || !schema->has_type_and_shape_inference_function()) return schema;
    {
      std::shared_lock<std::shared_mutex> lock(mu_);
      if (auto it = guarded_.find(schema); it != guarded_.end()) return it->second.get();
    }
    std::vector<Check> checks;
    if (domain.empty() || domain == "ai.onnx") {
      auto [begin, end] = ChecksByOp().equal_range(key);
      for (auto it = begin; it != end; ++it) checks.push_back(it->second);
    }
    auto guarded = std::make_unique<onnx::OpSchema>(*schema);
    guarded->SetDoc("");  // only the inference function is read from the copy
    guarded->TypeAndShapeInferenceFunction(
        [checks = std::move(checks), inner = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& ctx) {
          PayloadCheckedContext checked(ctx);
          for (Check check : checks) check(checked);
          inner(checked);
        });
    std::unique_lock<std::shared_mutex> lock(mu_);
    auto& slot = guarded_[schema];
    if (!slot) slot = std::move(guarded);  // another thread may have made it meanwhile
    return slot.get();
  }

 private:
  mutable std::shared_mutex mu_;
  mutable std::map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> guarded_;
};

}  // namespace

const onnx::ISchemaRegistry* GuardedSchemaRegistry() {
  static const Registry* registry = new Registry();  // never destroyed: schemas outlive callers
  return registry;
}

}  // namespace nuphar
