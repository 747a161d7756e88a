// The C API (include/nuphar/nuphar_c_api.h) through libnuphar.so: sessions, both run forms,
// the errors a caller can make, the graph tools on files, concurrent runs. Runs under
// ASan+UBSan in scripts/test.sh. Models: the shared silero_vad_v5 and an LSTM written by
// ../shared/peer/make_rnn_model.py (ctest fixture api_lstm_model).
#include "nuphar/nuphar_c_api.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "nuphar/nuphar_cxx_api.h"
#include "tests/api/c_api_smoke.h"

namespace {

const std::string kSilero = std::string(NUPHAR_SHARED_DIR) + "/models/silero_vad_v5.onnx";
const std::string kDir = NUPHAR_API_TEST_DIR;
const std::string kLstm = kDir + "/lstm.onnx";  // bidirectional LSTM, input "input" [seq, 1, 16]

// Owns a status; empty = OK.
struct StatusPtr {
  explicit StatusPtr(NupharStatus* s) : s(s) {}
  ~StatusPtr() { nuphar_status_release(s); }
  NupharCode code() const { return nuphar_status_code(s); }
  std::string message() const { return nuphar_status_message(s); }
  NupharStatus* s;
};

#define EXPECT_NUPHAR_OK(call)           \
  do {                                   \
    StatusPtr st_(call);                 \
    EXPECT_EQ(st_.s, nullptr) << st_.message(); \
  } while (0)

struct SessionPtr {
  ~SessionPtr() { nuphar_session_release(s); }
  NupharSession* s = nullptr;
};

struct Feed {
  std::string name;
  NupharDType dtype;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;
  NupharTensorView View() const {
    return {name.c_str(), dtype, shape.data(), shape.size(), bytes.data(), bytes.size()};
  }
};

Feed FloatFeed(const std::string& name, std::vector<int64_t> shape, uint32_t seed) {
  size_t n = 1;
  for (auto d : shape) n *= static_cast<size_t>(d);
  std::vector<float> v(n);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (auto& x : v) x = dist(rng);
  Feed f{name, NUPHAR_FLOAT, std::move(shape), {}};
  f.bytes.resize(n * sizeof(float));
  std::memcpy(f.bytes.data(), v.data(), f.bytes.size());
  return f;
}

std::vector<Feed> SileroFeeds(uint32_t seed) {
  Feed sr{"sr", NUPHAR_INT64, {}, std::vector<unsigned char>(8)};
  const int64_t rate = 16000;
  std::memcpy(sr.bytes.data(), &rate, 8);
  return {FloatFeed("input", {1, 512}, seed), FloatFeed("state", {2, 1, 128}, seed + 1), sr};
}

std::vector<NupharTensorView> Views(const std::vector<Feed>& feeds) {
  std::vector<NupharTensorView> v;
  for (const auto& f : feeds) v.push_back(f.View());
  return v;
}

// Runs with library-allocated outputs and returns their bytes.
std::vector<std::vector<unsigned char>> RunBytes(const NupharSession* s, const std::vector<Feed>& feeds) {
  auto views = Views(feeds);
  const size_t n = nuphar_session_output_count(s);
  std::vector<NupharValue*> out(n, nullptr);
  StatusPtr st(nuphar_session_run(s, views.data(), views.size(), nullptr, n, out.data()));
  EXPECT_EQ(st.s, nullptr) << st.message();
  std::vector<std::vector<unsigned char>> bytes;
  for (NupharValue* v : out) {
    if (!v) continue;
    auto* p = static_cast<const unsigned char*>(nuphar_value_data(v));
    bytes.emplace_back(p, p + nuphar_value_bytes(v));
    nuphar_value_release(v);
  }
  return bytes;
}

TEST(CApi, VersionAndDTypes) {
  EXPECT_STREQ(nuphar_version(), "0.1.0");
  EXPECT_EQ(nuphar_dtype_size(NUPHAR_FLOAT), 4u);
  EXPECT_EQ(nuphar_dtype_size(NUPHAR_STRING), 0u);
  EXPECT_STREQ(nuphar_dtype_name(NUPHAR_INT64), "int64");
  EXPECT_STREQ(nuphar_dtype_name(static_cast<NupharDType>(99)), "undefined");
  EXPECT_EQ(nuphar_status_code(nullptr), NUPHAR_OK);
  EXPECT_STREQ(nuphar_status_message(nullptr), "OK");
  nuphar_status_release(nullptr);
  nuphar_session_release(nullptr);
  nuphar_value_release(nullptr);
}

TEST(CApi, CreateErrorsNameTheFile) {
  SessionPtr s;
  StatusPtr st(nuphar_session_create("/nonexistent/model.onnx", "", &s.s));
  EXPECT_EQ(st.code(), NUPHAR_FAIL);
  EXPECT_NE(st.message().find("/nonexistent/model.onnx"), std::string::npos) << st.message();
  EXPECT_EQ(s.s, nullptr);

  const char garbage[] = "not a model";
  StatusPtr bytes(nuphar_session_create_from_bytes(garbage, sizeof garbage, nullptr, &s.s));
  EXPECT_EQ(bytes.code(), NUPHAR_FAIL);
  EXPECT_EQ(s.s, nullptr);

  StatusPtr null_path(nuphar_session_create(nullptr, "", &s.s));
  EXPECT_EQ(null_path.code(), NUPHAR_INVALID_ARGUMENT);

  StatusPtr bad_settings(nuphar_session_create(kSilero.c_str(), "nuphar_num_threads:abc", &s.s));
  EXPECT_NE(bad_settings.code(), NUPHAR_OK);
  EXPECT_EQ(s.s, nullptr);
}

TEST(CApi, InfoListsNamesTypesAndSymbolicDims) {
  SessionPtr s;
  EXPECT_NUPHAR_OK(nuphar_session_create(kSilero.c_str(), "", &s.s));
  ASSERT_NE(s.s, nullptr);
  ASSERT_EQ(nuphar_session_input_count(s.s), 3u);
  ASSERT_EQ(nuphar_session_output_count(s.s), 2u);
  NupharValueInfo info;
  EXPECT_NUPHAR_OK(nuphar_session_input_info(s.s, 1, &info));
  EXPECT_STREQ(info.name, "state");
  EXPECT_EQ(info.dtype, NUPHAR_FLOAT);
  ASSERT_EQ(info.rank, 3u);
  EXPECT_EQ(info.dims[0], 2);
  EXPECT_EQ(info.dims[1], -1);
  EXPECT_EQ(info.dims[2], 128);
  EXPECT_STREQ(info.dim_params[0], "");
  EXPECT_NUPHAR_OK(nuphar_session_input_info(s.s, 2, &info));
  EXPECT_EQ(info.dtype, NUPHAR_INT64);
  EXPECT_EQ(info.rank, 0u);
  EXPECT_NUPHAR_OK(nuphar_session_output_info(s.s, 0, &info));
  EXPECT_STREQ(info.name, "output");
  StatusPtr out_of_range(nuphar_session_output_info(s.s, 2, &info));
  EXPECT_EQ(out_of_range.code(), NUPHAR_INVALID_ARGUMENT);
  EXPECT_NE(out_of_range.message().find("out of range"), std::string::npos);

  // Named symbols come through as dim_params.
  SessionPtr lstm;
  EXPECT_NUPHAR_OK(nuphar_session_create(kLstm.c_str(), "", &lstm.s));
  ASSERT_NE(lstm.s, nullptr);
  EXPECT_NUPHAR_OK(nuphar_session_input_info(lstm.s, 0, &info));
  ASSERT_EQ(info.rank, 3u);
  EXPECT_EQ(info.dims[0], -1);
  EXPECT_STREQ(info.dim_params[0], "seq");
}

TEST(CApi, RunAndRunIntoGiveTheSameBytes) {
  SessionPtr s;
  EXPECT_NUPHAR_OK(nuphar_session_create(kSilero.c_str(), "", &s.s));
  ASSERT_NE(s.s, nullptr);
  auto feeds = SileroFeeds(1);
  auto allocated = RunBytes(s.s, feeds);
  ASSERT_EQ(allocated.size(), 2u);
  EXPECT_EQ(allocated[0].size(), 4u);  // output [1, 1] float

  // Caller-owned buffers, by name and in reverse order; first too small, then grown.
  auto views = Views(feeds);
  const char* names[] = {"stateN", "output"};
  std::vector<unsigned char> b0(16), b1(4);
  NupharOutputBuffer out[2] = {};
  out[0].data = b0.data();
  out[0].capacity_bytes = b0.size();
  out[1].data = b1.data();
  out[1].capacity_bytes = b1.size();
  {
    StatusPtr st(nuphar_session_run_into(s.s, views.data(), views.size(), names, 2, out));
    EXPECT_EQ(st.code(), NUPHAR_INVALID_ARGUMENT);
    EXPECT_NE(st.message().find("'stateN' needs 1024 bytes"), std::string::npos) << st.message();
  }
  EXPECT_EQ(out[0].data_bytes, 1024u);
  b0.resize(out[0].data_bytes);
  out[0].data = b0.data();
  out[0].capacity_bytes = b0.size();
  EXPECT_NUPHAR_OK(nuphar_session_run_into(s.s, views.data(), views.size(), names, 2, out));
  EXPECT_EQ(out[0].rank, 3u);
  EXPECT_EQ(out[0].shape[2], 128);
  EXPECT_EQ(out[0].dtype, NUPHAR_FLOAT);
  EXPECT_EQ(b0, allocated[1]);
  EXPECT_EQ(b1, allocated[0]);
}

TEST(CApi, FeedErrorsAreClear) {
  SessionPtr s;
  EXPECT_NUPHAR_OK(nuphar_session_create(kSilero.c_str(), "", &s.s));
  ASSERT_NE(s.s, nullptr);
  NupharValue* out[2] = {nullptr, nullptr};
  auto run = [&](std::vector<Feed> feeds) {
    auto views = Views(feeds);
    return std::make_unique<StatusPtr>(nuphar_session_run(s.s, views.data(), views.size(), nullptr, 2, out));
  };

  auto feeds = SileroFeeds(2);
  feeds[0].dtype = NUPHAR_DOUBLE;  // 2048 bytes = 256 doubles
  feeds[0].shape = {1, 256};
  auto wrong_type = run(feeds);
  EXPECT_NE(wrong_type->code(), NUPHAR_OK);
  EXPECT_NE(wrong_type->message().find("input 'input' has type double, the model expects float"), std::string::npos)
      << wrong_type->message();

  feeds = SileroFeeds(2);
  feeds[0].name = "audio";
  auto wrong_name = run(feeds);
  EXPECT_NE(wrong_name->message().find("'audio' is not an input of the model"), std::string::npos)
      << wrong_name->message();

  feeds = SileroFeeds(2);
  feeds[1].shape = {2, 128};
  feeds[1].bytes.resize(2 * 128 * 4);
  auto wrong_rank = run(feeds);
  EXPECT_NE(wrong_rank->message().find("input 'state' has rank 2"), std::string::npos) << wrong_rank->message();

  feeds = SileroFeeds(2);
  feeds.pop_back();
  auto missing = run(feeds);
  EXPECT_NE(missing->message().find("missing input 'sr'"), std::string::npos) << missing->message();

  feeds = SileroFeeds(2);
  feeds[0].bytes.resize(10);
  auto short_data = run(feeds);
  EXPECT_EQ(short_data->code(), NUPHAR_INVALID_ARGUMENT);
  EXPECT_NE(short_data->message().find("data_bytes is 10"), std::string::npos) << short_data->message();

  feeds = SileroFeeds(2);
  feeds[0].shape = {1, -512};
  auto negative = run(feeds);
  EXPECT_EQ(negative->code(), NUPHAR_INVALID_ARGUMENT);

  const auto good = SileroFeeds(2);
  auto views = Views(good);
  StatusPtr null_session(nuphar_session_run(nullptr, views.data(), views.size(), nullptr, 2, out));
  EXPECT_EQ(null_session.code(), NUPHAR_INVALID_ARGUMENT);
  StatusPtr wrong_count(nuphar_session_run(s.s, views.data(), views.size(), nullptr, 1, out));
  EXPECT_EQ(wrong_count.code(), NUPHAR_INVALID_ARGUMENT);
  const char* unknown[] = {"nope"};
  StatusPtr unknown_output(nuphar_session_run(s.s, views.data(), views.size(), unknown, 1, out));
  EXPECT_NE(unknown_output.message().find("nope"), std::string::npos) << unknown_output.message();
  EXPECT_EQ(out[0], nullptr);  // nothing written on error
}

TEST(CApi, ConcurrentRunsOnOneSession) {
  SessionPtr s;
  EXPECT_NUPHAR_OK(nuphar_session_create(kSilero.c_str(), "", &s.s));
  ASSERT_NE(s.s, nullptr);
  std::vector<std::vector<Feed>> feeds;
  std::vector<std::vector<std::vector<unsigned char>>> expected;
  for (uint32_t t = 0; t < 2; ++t) {
    feeds.push_back(SileroFeeds(10 + t));
    expected.push_back(RunBytes(s.s, feeds.back()));
  }
  std::vector<int> mismatches(2, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i)
        if (RunBytes(s.s, feeds[t]) != expected[t]) ++mismatches[t];
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches[0], 0);
  EXPECT_EQ(mismatches[1], 0);
}

TEST(CApi, CallableFromC99) {
  char message[512] = {0};
  EXPECT_EQ(nuphar_c_smoke(kSilero.c_str(), message, sizeof message), 0) << message;
  EXPECT_STREQ(message, "output rank 2, float, 4 bytes");
}

bool Exists(const std::string& path) { return std::ifstream(path).good(); }

std::vector<float> RunLstm(const std::string& model, const Feed& x) {
  nuphar::cxx::Session session(model);
  auto outputs = session.Run({nuphar::cxx::Input(x.name, x.dtype, x.shape, x.bytes.data(), x.bytes.size())});
  const float* y = outputs[0].Data<float>();
  return std::vector<float>(y, y + outputs[0].bytes() / sizeof(float));
}

TEST(CApi, GraphToolsOnFiles) {
  const std::string scan = kDir + "/c_api_lstm_scan.onnx", si = kDir + "/c_api_lstm_si.onnx",
                    int8 = kDir + "/c_api_lstm_int8.onnx";
  std::remove(scan.c_str());
  EXPECT_NUPHAR_OK(nuphar_model_editor(kLstm.c_str(), scan.c_str(), "to_scan", nullptr, 0));
  const char* si_options[] = {"auto_merge", "int_max=100000", "verbose=0"};
  EXPECT_NUPHAR_OK(nuphar_symbolic_shape_infer(scan.c_str(), si.c_str(), si_options, 3));
  const char* q_options[] = {"only_for_scan", "default_qcfg=asymm8_param0_input1"};
  EXPECT_NUPHAR_OK(nuphar_model_quantizer(si.c_str(), int8.c_str(), q_options, 2));
  EXPECT_NUPHAR_OK(nuphar_symbolic_shape_infer(int8.c_str(), nullptr, nullptr, 0));

  // The rewritten models compute what the LSTM computes (int8 within quantization error).
  Feed x = FloatFeed("input", {5, 1, 16}, 3);
  auto ref = RunLstm(kLstm, x), got_scan = RunLstm(scan, x), got_int8 = RunLstm(int8, x);
  ASSERT_EQ(ref.size(), got_scan.size());
  ASSERT_EQ(ref.size(), got_int8.size());
  for (size_t i = 0; i < ref.size(); ++i) {
    EXPECT_NEAR(ref[i], got_scan[i], 1e-5) << i;
    EXPECT_NEAR(ref[i], got_int8[i], 5e-2) << i;
  }
}

TEST(CApi, GraphToolErrors) {
  const std::string out = kDir + "/c_api_tool_error.onnx";
  std::remove(out.c_str());
  const char* bad[] = {"auto_merge", "no_such_option", "int_max=abc"};
  StatusPtr bad_options(nuphar_symbolic_shape_infer(kLstm.c_str(), out.c_str(), bad, 3));
  EXPECT_EQ(bad_options.code(), NUPHAR_INVALID_ARGUMENT);
  EXPECT_NE(bad_options.message().find("unknown option(s) no_such_option"), std::string::npos)
      << bad_options.message();
  EXPECT_NE(bad_options.message().find("int_max takes an integer, not 'abc'"), std::string::npos)
      << bad_options.message();

  StatusPtr bad_mode(nuphar_model_editor(kLstm.c_str(), out.c_str(), "to_jit", nullptr, 0));
  EXPECT_EQ(bad_mode.code(), NUPHAR_INVALID_ARGUMENT);
  EXPECT_NE(bad_mode.message().find("unknown mode 'to_jit'"), std::string::npos) << bad_mode.message();

  StatusPtr missing(nuphar_model_quantizer("/nonexistent/in.onnx", out.c_str(), nullptr, 0));
  EXPECT_EQ(missing.code(), NUPHAR_FAIL);
  EXPECT_NE(missing.message().find("/nonexistent/in.onnx"), std::string::npos) << missing.message();

  const char* preset[] = {"default_qcfg=int4"};
  StatusPtr bad_preset(nuphar_model_quantizer(kLstm.c_str(), out.c_str(), preset, 1));
  EXPECT_EQ(bad_preset.code(), NUPHAR_INVALID_ARGUMENT);
  EXPECT_FALSE(Exists(out));  // nothing written on any error

  // The C++ wrapper turns the status into an exception carrying the same text.
  try {
    nuphar::cxx::ModelEditor(kLstm, out, "to_jit");
    ADD_FAILURE() << "no exception";
  } catch (const nuphar::cxx::Error& e) {
    EXPECT_EQ(e.code(), NUPHAR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("unknown mode"), std::string::npos);
  }
}

}  // namespace
