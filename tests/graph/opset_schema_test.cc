// The opset 18-21 schema table: which version is in force, which libonnx may still infer, and
// the refusal of opsets above 21.
#include "graph/opset_schema.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

namespace nuphar {
namespace {

TEST(OpsetSchema, NewerRowsOverrideLibOnnxFrom18) {
  EXPECT_EQ(FindNewerSignature("Split", 17), nullptr);  // libonnx's Split-13 is right
  const OpSignature* split = FindNewerSignature("Split", 21);
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->since_version, 18);
  EXPECT_EQ(split->max_outputs, kVariadic);
  const OpSignature* reduce = FindNewerSignature("ReduceMax", 21);
  ASSERT_NE(reduce, nullptr);
  EXPECT_EQ(reduce->since_version, 20);
  EXPECT_EQ(reduce->max_inputs, 2);  // axes as input since 18
  EXPECT_EQ(FindNewerSignature("Relu", 21), nullptr);
}

TEST(OpsetSchema, SinceVersionSpansLibOnnxAndTheTable) {
  EXPECT_EQ(OpSinceVersion("Pad", 11), 11);
  EXPECT_EQ(OpSinceVersion("Pad", 17), 13);
  EXPECT_EQ(OpSinceVersion("Pad", 18), 18);
  EXPECT_EQ(OpSinceVersion("Pad", 20), 19);
  EXPECT_EQ(OpSinceVersion("Pad", 21), 21);
  EXPECT_EQ(OpSinceVersion("Mish", 17), 0);  // unknown to libonnx 1.12
  EXPECT_EQ(OpSinceVersion("Mish", 18), 18);
}

TEST(OpsetSchema, LibOnnxInfersOnlyTypeOnlyChanges) {
  EXPECT_TRUE(LibOnnxInfersOp("Transpose", 21));   // new types only
  EXPECT_TRUE(LibOnnxInfersOp("ReduceMax", 17));
  EXPECT_FALSE(LibOnnxInfersOp("ReduceMax", 20));  // the 20 row is types-only, 18 changed the signature
  EXPECT_FALSE(LibOnnxInfersOp("Split", 18));
  EXPECT_FALSE(LibOnnxInfersOp("Mish", 18));
  EXPECT_TRUE(LibOnnxInfersOp("Relu", 21));
}

TEST(OpsetSchema, OpsetsAbove21AreRefusedByName) {
  onnx::ModelProto m;
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(21);
  m.add_opset_import()->set_domain("com.microsoft");
  m.mutable_opset_import(1)->set_version(99);  // other domains are not checked
  EXPECT_TRUE(CheckOpsetKnown(m, "m.onnx").ok());
  op->set_version(22);
  Status st = CheckOpsetKnown(m, "m.onnx");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("m.onnx"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("imports ONNX opset 22; nuphar-cpp knows opsets up to 21"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace nuphar
