// diagnostics: library warnings reach the sink of the calling thread, nest, and can be captured.
#include "graph/diagnostics.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <thread>

#include "graph/error.h"
#include "graph/pass.h"

namespace nuphar {
namespace {

// Keeps every Relu and warns about it, as a pass that refuses a node under a keep-flag does.
class WarnOnRelu final : public GraphPass {
 public:
  std::string Name() const override { return "warn_on_relu"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Relu"}; }
  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    ctx.Warn("kept '" + node.name() + "'");
    return Effect::Kept("warned");
  }
};

onnx::ModelProto OneRelu() {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(13);
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->set_name("r");
  n->add_input("x");
  n->add_output("y");
  return m;
}

TEST(Diagnostics, PassWarningGoesThroughTheSink) {
  auto m = OneRelu();
  WarnOnRelu pass;
  DiagnosticCapture capture;
  auto stats = RunPass(m, pass);  // no PassRunOptions::log: the diagnostics sink receives it
  ASSERT_TRUE(stats.ok()) << stats.message();
  ASSERT_EQ(capture.lines().size(), 1u);
  EXPECT_EQ(capture.lines()[0].severity, Severity::kWarning);
  EXPECT_EQ(capture.lines()[0].text, "warning: kept 'r'");
}

TEST(Diagnostics, ScopedSinksNestAndOtherThreadsUseTheDefault) {
  std::vector<std::string> outer, inner, fallback;
  DiagnosticSink previous = SetDefaultDiagnosticSink([&](Severity, const std::string& l) { fallback.push_back(l); });
  {
    ScopedDiagnosticSink a([&](Severity, const std::string& l) { outer.push_back(l); });
    ReportDiagnostic(Severity::kNote, "one");
    {
      ScopedDiagnosticSink b([&](Severity, const std::string& l) { inner.push_back(l); });
      ReportDiagnostic(Severity::kWarning, "two");
      std::thread([] { ReportDiagnostic(Severity::kWarning, "other thread"); }).join();
    }
    ReportDiagnostic(Severity::kNote, "three");
  }
  ReportDiagnostic(Severity::kNote, "four");
  SetDefaultDiagnosticSink(std::move(previous));
  EXPECT_EQ(outer, (std::vector<std::string>{"one", "three"}));
  EXPECT_EQ(inner, (std::vector<std::string>{"two"}));
  EXPECT_EQ(fallback, (std::vector<std::string>{"other thread", "four"}));
}

TEST(DiagnosticsDeathTest, ExpectedFromOkStatusIsABug) {
  EXPECT_DEATH({ Expected<int> e(Status::OK()); (void)e; }, "built from an OK Status");
}

}  // namespace
}  // namespace nuphar
