// MatMul family (spec §3.6) and Einsum (upstream, §3.3).
//   MatMul: broadcast(lhs[:-2], rhs[:-2]) + [lhs[-2], rhs[-1]]; 1-D operands drop their dim;
//   the reduce dims must agree (otherwise a merge is suggested).
#include <onnx/onnx_pb.h>

#include <map>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

Status MatMulShape(NodeContext& ctx, int32_t elem) {
  auto a = ctx.InputShape(0), b = ctx.InputShape(1);
  if (!a || !b || a->empty() || b->empty()) return Status::OK();
  SymShape out;
  SymDim ka = a->back(), kb = b->size() == 1 ? (*b)[0] : (*b)[b->size() - 2];
  if (a->size() == 1 && b->size() == 1) {
  } else if (a->size() == 1) {
    out.assign(b->begin(), b->end() - 2);
    out.push_back(b->back());
  } else if (b->size() == 1) {
    out.assign(a->begin(), a->end() - 1);
  } else {
    out = ctx.Broadcast(SymShape(a->begin(), a->end() - 2), SymShape(b->begin(), b->end() - 2));
    out.push_back((*a)[a->size() - 2]);
    out.push_back(b->back());
  }
  if (ka && kb && *ka != *kb) ctx.SuggestMerge({*ka, *kb});
  ctx.SetOutput(0, elem, out);
  return Status::OK();
}

Status HandleMatMul(NodeContext& ctx) { return MatMulShape(ctx, ctx.InputElemType(0)); }
Status HandleMatMulInteger16(NodeContext& ctx) { return MatMulShape(ctx, onnx::TensorProto::INT32); }

// Einsum: letters map to the first input dim carrying them; "..." dims broadcast.
Status HandleEinsum(NodeContext& ctx) {
  std::string eq;
  for (char c : ctx.AttrString("equation", ""))
    if (c != ' ') eq += c;
  std::string lhs = eq, rhs;
  bool explicit_out = false;
  if (auto arrow = eq.find("->"); arrow != std::string::npos) {
    lhs = eq.substr(0, arrow);
    rhs = eq.substr(arrow + 2);
    explicit_out = true;
  }
  std::vector<std::string> terms;
  for (size_t start = 0;;) {
    size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.NumInputs()) return ctx.Error("Einsum equation does not match the input count");
  std::map<char, SymDim> letter_dim;
  std::map<char, int> letter_count;
  SymShape ellipsis;
  for (size_t i = 0; i < terms.size(); ++i) {
    auto shape = ctx.InputShape(i);
    if (!shape) return Status::OK();
    const std::string& term = terms[i];
    size_t dots = term.find("...");
    size_t letters = term.size() - (dots == std::string::npos ? 0 : 3);
    if (letters > shape->size()) return ctx.Error("Einsum term '" + term + "' longer than its input rank");
    size_t ell_rank = shape->size() - letters;
    size_t axis = 0;
    for (size_t c = 0; c < term.size(); ++c) {
      if (dots != std::string::npos && c == dots) {
        ellipsis = ctx.Broadcast(ellipsis, SymShape(shape->begin() + axis, shape->begin() + axis + ell_rank));
        axis += ell_rank;
        c += 2;
        continue;
      }
      if (!letter_dim.count(term[c]) || !letter_dim[term[c]] ||
          (letter_dim[term[c]] && *letter_dim[term[c]] == sym::Expr(1)))
        letter_dim[term[c]] = (*shape)[axis];
      ++letter_count[term[c]];
      ++axis;
    }
  }
  SymShape out;
  if (explicit_out) {
    for (size_t c = 0; c < rhs.size(); ++c) {
      if (rhs.compare(c, 3, "...") == 0) {
        out.insert(out.end(), ellipsis.begin(), ellipsis.end());
        c += 2;
      } else {
        out.push_back(letter_dim[rhs[c]]);
      }
    }
  } else {
    out = ellipsis;
    for (const auto& [letter, count] : letter_count)
      if (count == 1) out.push_back(letter_dim[letter]);
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

}  // namespace

void RegisterMatMulHandlers(HandlerTable& t) {
  t.Add("", "MatMul", HandleMatMul);
  t.Add("com.microsoft", "MatMulInteger16", HandleMatMulInteger16);
  t.Add("", "Einsum", HandleEinsum);
}

}  // namespace nuphar::shape_infer
