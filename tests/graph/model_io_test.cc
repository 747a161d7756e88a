// Model I/O: round trips, external data, atomic writes and clear errors for bad files.
#include "graph/model_io.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "graph/tensor_data.h"

namespace nuphar {
namespace {

namespace fs = std::filesystem;

class ModelIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nuphar_model_io_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static onnx::ModelProto ModelWithWeight(int64_t n) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("g");
    std::vector<float> w(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i) * 0.5f;
    *g->add_initializer() = MakeTensor<float>("w", {n}, w);
    *g->add_initializer() = MakeTensor<int64_t>("small", {2}, {7, 8});
    return m;
  }
  fs::path dir_;
};

TEST_F(ModelIoTest, RoundTrip) {
  const std::string path = (dir_ / "m.onnx").string();
  ASSERT_TRUE(SaveModel(ModelWithWeight(10), path).ok());
  onnx::ModelProto back;
  ASSERT_TRUE(LoadModel(path, &back).ok());
  auto w = ReadTensor<float>(back.graph().initializer(0));
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)[9], 4.5f);
  // No temporary file is left behind.
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir_)) ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(ModelIoTest, ExternalDataRoundTrip) {
  const std::string path = (dir_ / "ext.onnx").string();
  SaveOptions opts;
  opts.save_as_external_data = true;
  opts.external_threshold_bytes = 64;
  ASSERT_TRUE(SaveModel(ModelWithWeight(1000), path, opts).ok());
  ASSERT_TRUE(fs::exists(dir_ / "ext.onnx.data"));
  EXPECT_LT(fs::file_size(path), 1000u);  // the weight went to the side file

  onnx::ModelProto raw;
  LoadOptions no_ext;
  no_ext.load_external_data = false;
  ASSERT_TRUE(LoadModel(path, &raw, no_ext).ok());
  EXPECT_EQ(raw.graph().initializer(0).data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(raw.graph().initializer(1).data_location(), onnx::TensorProto::DEFAULT);  // under the threshold

  onnx::ModelProto back;
  ASSERT_TRUE(LoadModel(path, &back).ok());
  auto w = ReadTensor<float>(back.graph().initializer(0));
  ASSERT_TRUE(w.ok()) << w.message();
  EXPECT_EQ(w->size(), 1000u);
  EXPECT_EQ((*w)[999], 499.5f);
}

TEST_F(ModelIoTest, MissingSideFileIsAnError) {
  const std::string path = (dir_ / "ext.onnx").string();
  SaveOptions opts;
  opts.save_as_external_data = true;
  ASSERT_TRUE(SaveModel(ModelWithWeight(1000), path, opts).ok());
  fs::remove(dir_ / "ext.onnx.data");
  onnx::ModelProto back;
  Status s = LoadModel(path, &back);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("ext.onnx.data"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("'w'"), std::string::npos) << s.message();
}

TEST_F(ModelIoTest, TruncatedAndForeignFiles) {
  const std::string path = (dir_ / "m.onnx").string();
  ASSERT_TRUE(SaveModel(ModelWithWeight(100), path).ok());
  auto bytes = ReadFile(path);
  ASSERT_TRUE(bytes.ok());
  onnx::ModelProto m;
  Status truncated = LoadModelFromBytes(bytes->data(), bytes->size() - 7, &m, "cut.onnx");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.message().find("cut.onnx"), std::string::npos);

  const std::string text = "just some text";
  EXPECT_FALSE(LoadModelFromBytes(text.data(), text.size(), &m, "t.onnx").ok());
  EXPECT_FALSE(LoadModelFromBytes(text.data(), 0, &m, "empty.onnx").ok());
  Status missing = LoadModel((dir_ / "absent.onnx").string(), &m);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("does not exist"), std::string::npos);
}

TEST_F(ModelIoTest, SaveIntoMissingDirectoryFailsCleanly) {
  Status s = SaveModel(ModelWithWeight(4), (dir_ / "no" / "such" / "m.onnx").string());
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("output directory does not exist"), std::string::npos);
}

TEST(TensorDataTest, TypedFieldsAndRawDataAgree) {
  onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(static_cast<int32_t>(DType::kInt8));
  t.add_dims(3);
  for (int v : {-128, 0, 127}) t.add_int32_data(v);
  auto typed = ReadTensor<int8_t>(t);
  ASSERT_TRUE(typed.ok());
  EXPECT_EQ((*typed)[0], -128);
  auto as64 = ReadTensorAsInt64(t);
  ASSERT_TRUE(as64.ok());
  EXPECT_EQ((*as64)[2], 127);
  EXPECT_FALSE(ReadTensor<float>(t).ok());  // wrong type is an error, not a reinterpretation

  t.add_int32_data(5);  // 4 values for 3 dims
  EXPECT_FALSE(TensorBytes(t).ok());
}

// A typed field that stores the element type itself is read in place (no copy into `storage`);
// one that needs converting (int8 in int32_data) is packed there. Both give the same bytes as
// raw_data would, and a count that disagrees with the dims is refused either way.
TEST(TensorDataTest, TypedFieldOfTheElementTypeIsViewedInPlace) {
  onnx::TensorProto f;
  f.set_name("f");
  f.set_data_type(static_cast<int32_t>(DType::kFloat));
  f.add_dims(2);
  f.add_dims(2);
  for (float v : {1.5f, -2.0f, 0.0f, 3.25f}) f.add_float_data(v);
  std::string storage;
  auto view = TensorBytesView(f, &storage);
  ASSERT_TRUE(view.ok()) << view.message();
  EXPECT_TRUE(storage.empty());
  EXPECT_EQ(static_cast<const void*>(view->data()), static_cast<const void*>(f.float_data().data()));
  const float want[4] = {1.5f, -2.0f, 0.0f, 3.25f};
  ASSERT_EQ(view->size(), sizeof(want));
  EXPECT_EQ(std::memcmp(view->data(), want, sizeof(want)), 0);
  auto owned = TensorBytes(f);
  ASSERT_TRUE(owned.ok());
  EXPECT_EQ(*owned, std::string(reinterpret_cast<const char*>(want), sizeof(want)));
  f.add_float_data(9.0f);  // 5 values for 4 elements
  EXPECT_FALSE(TensorBytesView(f, &storage).ok());
  EXPECT_FALSE(TensorBytes(f).ok());

  onnx::TensorProto q;
  q.set_name("q");
  q.set_data_type(static_cast<int32_t>(DType::kInt8));
  q.add_dims(2);
  for (int v : {-3, 7}) q.add_int32_data(v);
  auto packed = TensorBytesView(q, &storage);
  ASSERT_TRUE(packed.ok());
  EXPECT_EQ(std::string(*packed), std::string("\xfd\x07", 2));
  EXPECT_EQ(static_cast<const void*>(packed->data()), static_cast<const void*>(storage.data()));
  auto owned_q = TensorBytes(q);
  ASSERT_TRUE(owned_q.ok());
  EXPECT_EQ(*owned_q, std::string("\xfd\x07", 2));
}

TEST(TensorDataTest, HalfConversionsRoundToNearestEven) {
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f)), 1.0f);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);             // overflow to inf
  EXPECT_EQ(HalfToFloat(0x0001), 5.9604645e-08f);   // smallest subnormal
  EXPECT_EQ(FloatToHalf(1.0f + 1.0f / 2048), 0x3c00);  // tie rounds to even
}

}  // namespace
}  // namespace nuphar
