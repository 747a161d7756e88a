// Mode opt_inproj: hoist the input part of MatMul(Concat(x_t, h), W) out of Scan bodies (§2.4, E6).
//
// Before:  Scan(states..., X)  body: c = Concat(x_t, h, axis=-1); y = MatMul(c, W)   W [I + Hd, N]
// After:   Xp = MatMul(X, Wx)  (outer, one GEMM over the whole sequence)          Wx = W[:I]
//          Scan(states..., Xp) body: y = Add(xp_t, MatMul(h, Wh))                  Wh = W[I:]
//          For Concat(h, x_t) the rows split the other way: Wh = W[:Hd], Wx = W[Hd:] (B8b).
//          Every Scan attribute is kept (B8c).
// Skipped: a Concat that is not of one scan input and one other body input on the last axis, no
//          MatMul reading it with a constant rank-2 float W, a symbolic input size (B17), a
//          scan input scanned along its last axis, or other readers of the Concat or x_t (the
//          pattern is then left whole, B8a).
#include <onnx/onnx_pb.h>

#include "editor/passes.h"
#include "graph/const_fold.h"
#include "graph/tensor_data.h"

namespace nuphar::editor {
namespace {

struct Candidate {
  int concat = -1, matmul = -1;  ///< body node indices
  int scan_input = -1;           ///< index among the Scan's scan inputs
  bool x_first = true;
  std::string h;
  int64_t input_size = 0;
};

class OptInprojPass final : public GraphPass {
 public:
  std::string Name() const override { return "opt_inproj"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Scan"}; }

  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    const auto* body_attr = FindAttr(node, "body");
    if (!body_attr) return Diag::Node(node, "Scan without body");
    const onnx::GraphProto& body = body_attr->g();
    const int num_scan = static_cast<int>(AttrInt(node, "num_scan_inputs", 0));
    const int num_states = body.input_size() - num_scan;
    GraphScope body_scope{const_cast<onnx::GraphProto*>(&body), &ctx.scope(), ctx.scope().path + "/" + node.name()};
    std::string why = "no MatMul(Concat(x_t, h), W) in the body";
    Candidate cand = Find(body, body_scope, num_states, node, &why);
    if (cand.concat < 0) return Effect::Kept(why);

    const onnx::NodeProto& mm = body.node(cand.matmul);
    auto w = FoldConstant(body_scope, mm.input(1));
    NUPHAR_ASSIGN_OR_RETURN(auto wv, ReadTensor<float>(w->tensor()));
    const int64_t rows = w->tensor().dims(0), n = w->tensor().dims(1), hd = rows - cand.input_size;
    const int64_t x_row0 = cand.x_first ? 0 : hd, h_row0 = cand.x_first ? cand.input_size : 0;
    auto rows_of = [&](int64_t r0, int64_t count) {
      return std::vector<float>(wv.begin() + r0 * n, wv.begin() + (r0 + count) * n);
    };

    NodeBuilder& outer = ctx.builder();
    outer.set_prefix("opt_inproj_");
    const int outer_input = static_cast<int>(node.input_size()) - num_scan + cand.scan_input;
    std::string wx = outer.Const<float>({cand.input_size, n}, rows_of(x_row0, cand.input_size));
    auto& proj = outer.Add("MatMul", {node.input(outer_input), wx});
    proj.set_doc_string(mm.doc_string());

    onnx::GraphProto new_body = body;
    NodeBuilder inner(&new_body, &ctx.names(), outer.opset(), "opt_inproj_sg_" + node.name() + "_");
    google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
    nodes.Swap(new_body.mutable_node());
    const std::string concat_out = body.node(cand.concat).output(0);
    const std::string x_body = body.input(num_states + cand.scan_input).name();
    for (int i = 0; i < nodes.size(); ++i) {
      if (i == cand.concat) continue;
      if (i != cand.matmul) {
        new_body.add_node()->Swap(nodes.Mutable(i));
        continue;
      }
      std::string wh = inner.Const<float>({hd, n}, rows_of(h_row0, hd));
      inner.Op("Add", {x_body, inner.Op("MatMul", {cand.h, wh})}, mm.output(0));
    }
    auto* x_dims = new_body.mutable_input(num_states + cand.scan_input)->mutable_type()->mutable_tensor_type()->mutable_shape();
    x_dims->mutable_dim(x_dims->dim_size() - 1)->set_dim_value(n);
    auto* vis = new_body.mutable_value_info();
    for (int i = vis->size() - 1; i >= 0; --i)
      if (vis->Get(i).name() == concat_out) vis->DeleteSubrange(i, 1);

    std::vector<std::string> inputs(node.input().begin(), node.input().end());
    inputs[outer_input] = proj.output(0);
    auto& scan = outer.Add("Scan", inputs, std::vector<std::string>(node.output().begin(), node.output().end()));
    scan.set_name(node.name());
    scan.set_doc_string(node.doc_string());
    for (const auto& a : node.attribute()) {
      if (a.name() == "body") SetAttr(scan, "body", std::move(new_body));
      else *scan.add_attribute() = a;
    }
    ctx.MarkMaybeDead(mm.input(1));
    return Effect::Replaced();
  }

 private:
  static int CountReads(const onnx::GraphProto& g, const std::string& name) {
    int count = 0;
    for (const auto& n : g.node())
      for (const auto& i : n.input()) count += i == name;
    for (const auto& o : g.output()) count += o.name() == name;
    return count;
  }

  static Candidate Find(const onnx::GraphProto& body, const GraphScope& body_scope, int num_states,
                        const onnx::NodeProto& scan, std::string* why) {
    std::vector<int64_t> axes;
    if (const auto* a = FindAttr(scan, "scan_input_axes")) axes.assign(a->ints().begin(), a->ints().end());
    auto body_input = [&](const std::string& name) {
      for (int i = 0; i < body.input_size(); ++i)
        if (body.input(i).name() == name) return i;
      return -1;
    };
    std::vector<bool> projected(body.input_size(), false);
    for (int c = 0; c < body.node_size(); ++c) {
      const auto& concat = body.node(c);
      if (concat.op_type() != "Concat" || concat.input_size() != 2) continue;
      const int a = body_input(concat.input(0)), b = body_input(concat.input(1));
      if (a < 0 || b < 0 || (a >= num_states) == (b >= num_states)) continue;
      const bool x_first = a >= num_states;
      const int x = x_first ? a : b;
      if (projected[x]) continue;
      auto dims = StaticDims(body.input(x));
      if (!dims.ok() || dims->empty()) continue;
      const int64_t rank = static_cast<int64_t>(dims->size());
      int64_t axis = AttrInt(concat, "axis", 0);
      if (axis < 0) axis += rank;
      if (axis != rank - 1) continue;
      const int k = x - num_states;
      const int64_t scan_axis = k < static_cast<int>(axes.size()) ? axes[k] : 0;
      if (scan_axis == rank || scan_axis == -1) {  // the outer input has rank + 1 dims
        *why = "scan input is scanned along its feature axis";
        continue;
      }
      const int64_t input_size = dims->back();
      if (input_size <= 0) {
        *why = "the input size of '" + body.input(x).name() + "' is not static";
        continue;
      }
      // x_t changes meaning (it becomes the projected slice), so nothing else may read it or the Concat.
      if (CountReads(body, concat.output(0)) != 1 || CountReads(body, concat.input(x_first ? 0 : 1)) != 1) {
        *why = "the Concat or x_t has other readers; kept as is";
        continue;
      }
      for (int m = 0; m < body.node_size(); ++m) {
        const auto& mm = body.node(m);
        if (mm.op_type() != "MatMul" || mm.input(0) != concat.output(0)) continue;
        auto w = FoldConstant(body_scope, mm.input(1));
        if (!w.ok() || w->tensor().data_type() != onnx::TensorProto::FLOAT || w->tensor().dims_size() != 2 ||
            w->tensor().dims(0) <= input_size) {
          *why = "the MatMul weight is not a constant float [I + H, N] matrix";
          continue;
        }
        projected[x] = true;
        return {c, m, k, x_first, concat.input(x_first ? 1 : 0), input_size};
      }
    }
    return {};
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateOptInprojPass(const EditorOptions&) { return std::make_unique<OptInprojPass>(); }

}  // namespace nuphar::editor
