// The ModelProto mutator (model_mutator.h).
#include "tests/fuzz/model_mutator.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace nuphar::fuzz {

namespace {

using Rng = std::minstd_rand;

int Pick(Rng& rng, int n) { return n <= 0 ? 0 : static_cast<int>(rng() % static_cast<unsigned>(n)); }

// Values at the edges of every integer field's meaning.
int64_t InterestingInt(Rng& rng) {
  static const int64_t kValues[] = {0, 1, -1, 2, 3, 4, 7, 8, 16, 64, 127, 128, 255, 256, 1 << 20, -2, -128,
                                    INT32_MAX, INT32_MIN, int64_t{1} << 40, int64_t{1} << 62, INT64_MAX, INT64_MIN};
  return kValues[Pick(rng, sizeof(kValues) / sizeof(kValues[0]))];
}

const char* InterestingOp(Rng& rng) {
  static const char* kOps[] = {"LSTM", "GRU", "RNN", "Scan", "Loop", "If", "MatMul", "MatMulInteger", "Gemm",
                               "Reshape", "Transpose", "Concat", "Split", "Slice", "Gather", "Conv", "Add",
                               "Identity", "Cast", "Squeeze", "Unsqueeze", "Shape", "ConstantOfShape", "Expand",
                               "DynamicQuantizeLinear", "Softmax", "ReduceSum", "Pad", "Resize", "NoSuchOp"};
  return kOps[Pick(rng, sizeof(kOps) / sizeof(kOps[0]))];
}

/// Every graph of the model (main graph and nested bodies), to pick one uniformly.
void CollectGraphs(onnx::GraphProto* g, std::vector<onnx::GraphProto*>& out, int depth = 0) {
  out.push_back(g);
  if (depth > 8) return;
  for (auto& n : *g->mutable_node())
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) CollectGraphs(a.mutable_g(), out, depth + 1);
      for (auto& sg : *a.mutable_graphs()) CollectGraphs(&sg, out, depth + 1);
    }
}

/// A value name that exists in the graph (or a fresh one).
std::string SomeName(Rng& rng, const onnx::GraphProto& g) {
  std::vector<const std::string*> names;
  for (const auto& i : g.input()) names.push_back(&i.name());
  for (const auto& t : g.initializer()) names.push_back(&t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(&o);
  if (names.empty() || Pick(rng, 8) == 0) return "fuzz_" + std::to_string(Pick(rng, 4));
  return *names[static_cast<size_t>(Pick(rng, static_cast<int>(names.size())))];
}

void MutateShape(Rng& rng, onnx::TensorShapeProto* shape) {
  switch (Pick(rng, 4)) {
    case 0:
      if (shape->dim_size() > 0) shape->mutable_dim(Pick(rng, shape->dim_size()))->set_dim_value(InterestingInt(rng));
      break;
    case 1:
      if (shape->dim_size() > 0) shape->mutable_dim(Pick(rng, shape->dim_size()))->set_dim_param("fuzz_sym");
      break;
    case 2: shape->add_dim()->set_dim_value(InterestingInt(rng)); break;
    default:
      if (shape->dim_size() > 0) shape->mutable_dim()->RemoveLast();
  }
}

void MutateGraph(Rng& rng, onnx::GraphProto* g, onnx::ModelProto* model) {
  const int nodes = g->node_size();
  switch (Pick(rng, 14)) {
    case 0:  // op type
      if (nodes > 0) g->mutable_node(Pick(rng, nodes))->set_op_type(InterestingOp(rng));
      break;
    case 1: {  // an int attribute
      if (nodes == 0) break;
      auto* n = g->mutable_node(Pick(rng, nodes));
      if (n->attribute_size() == 0) break;
      auto* a = n->mutable_attribute(Pick(rng, n->attribute_size()));
      if (a->ints_size() > 0) a->set_ints(Pick(rng, a->ints_size()), InterestingInt(rng));
      else a->set_i(InterestingInt(rng));
      break;
    }
    case 2: {  // attribute type or removal
      if (nodes == 0) break;
      auto* n = g->mutable_node(Pick(rng, nodes));
      if (n->attribute_size() == 0) break;
      if (Pick(rng, 2)) n->mutable_attribute()->DeleteSubrange(Pick(rng, n->attribute_size()), 1);
      else n->mutable_attribute(Pick(rng, n->attribute_size()))->set_type(
          static_cast<onnx::AttributeProto::AttributeType>(Pick(rng, 14)));
      break;
    }
    case 3: {  // a node input (dangling, cyclic, empty or another value)
      if (nodes == 0) break;
      auto* n = g->mutable_node(Pick(rng, nodes));
      if (n->input_size() == 0 || Pick(rng, 4) == 0) n->add_input(SomeName(rng, *g));
      else n->set_input(Pick(rng, n->input_size()), Pick(rng, 6) == 0 ? "" : SomeName(rng, *g));
      break;
    }
    case 4:  // drop a node
      if (nodes > 0) g->mutable_node()->DeleteSubrange(Pick(rng, nodes), 1);
      break;
    case 5:  // duplicate a node (duplicate output names)
      if (nodes > 0) *g->add_node() = g->node(Pick(rng, nodes));
      break;
    case 6: {  // initializer dims
      if (g->initializer_size() == 0) break;
      auto* t = g->mutable_initializer(Pick(rng, g->initializer_size()));
      if (t->dims_size() > 0 && Pick(rng, 3)) t->set_dims(Pick(rng, t->dims_size()), InterestingInt(rng));
      else t->add_dims(InterestingInt(rng));
      break;
    }
    case 7: {  // initializer dtype or payload size
      if (g->initializer_size() == 0) break;
      auto* t = g->mutable_initializer(Pick(rng, g->initializer_size()));
      if (Pick(rng, 2)) {
        t->set_data_type(Pick(rng, 18));
      } else if (t->has_raw_data() && !t->raw_data().empty()) {
        t->mutable_raw_data()->resize(static_cast<size_t>(Pick(rng, static_cast<int>(t->raw_data().size()) * 2 + 1)));
      } else if (t->float_data_size() > 0) {
        t->mutable_float_data()->Truncate(Pick(rng, t->float_data_size()));
      }
      break;
    }
    case 8: {  // a graph input's shape or type
      if (g->input_size() == 0) break;
      auto* tt = g->mutable_input(Pick(rng, g->input_size()))->mutable_type();
      if (Pick(rng, 3) == 0) tt->clear_tensor_type();
      else if (Pick(rng, 2)) tt->mutable_tensor_type()->set_elem_type(Pick(rng, 18));
      else MutateShape(rng, tt->mutable_tensor_type()->mutable_shape());
      break;
    }
    case 9:  // a graph output removed or renamed
      if (g->output_size() > 0) g->mutable_output(Pick(rng, g->output_size()))->set_name(SomeName(rng, *g));
      break;
    case 10: {  // a value_info with a contradicting type
      auto* vi = g->add_value_info();
      vi->set_name(SomeName(rng, *g));
      vi->mutable_type()->mutable_tensor_type()->set_elem_type(Pick(rng, 18));
      MutateShape(rng, vi->mutable_type()->mutable_tensor_type()->mutable_shape());
      break;
    }
    case 11:  // opset
      if (model->opset_import_size() > 0) model->mutable_opset_import(0)->set_version(Pick(rng, 2) ? InterestingInt(rng) : Pick(rng, 25));
      break;
    case 12: {  // a node's output renamed onto an existing value
      if (nodes == 0) break;
      auto* n = g->mutable_node(Pick(rng, nodes));
      if (n->output_size() > 0) n->set_output(Pick(rng, n->output_size()), SomeName(rng, *g));
      break;
    }
    default: {  // external data reference
      if (g->initializer_size() == 0) break;
      auto* t = g->mutable_initializer(Pick(rng, g->initializer_size()));
      t->set_data_location(onnx::TensorProto::EXTERNAL);
      auto* e = t->add_external_data();
      e->set_key("location");
      static const char* kPaths[] = {"../../etc/passwd", "/etc/hostname", "missing.bin", "", "weights.bin"};
      e->set_value(kPaths[Pick(rng, 5)]);
      break;
    }
  }
}

}  // namespace

size_t MutateModel(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto model;
  if (Pick(rng, 8) == 0 || !model.ParseFromArray(data, static_cast<int>(size))) return LLVMFuzzerMutate(data, size, max_size);
  const int rounds = 1 + Pick(rng, 3);
  for (int r = 0; r < rounds; ++r) {
    // Collected again each round: a mutation may delete a node and with it the subgraphs it held.
    std::vector<onnx::GraphProto*> graphs;
    CollectGraphs(model.mutable_graph(), graphs);
    MutateGraph(rng, graphs[static_cast<size_t>(Pick(rng, static_cast<int>(graphs.size())))], &model);
  }
  std::string out;
  if (!model.SerializeToString(&out) || out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace nuphar::fuzz
