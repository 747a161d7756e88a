// The graph tools on files for the C API and the Python module (see graph_tools.h).
#include "api/graph_tools.h"

#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <sstream>

#include "quantizer/qcfg_json.h"

namespace nuphar::api {
namespace {

ToolResult Bad(std::string reason) { return {ToolError::kBadOption, Diag::Msg(std::move(reason))}; }
ToolResult Failed(Status s) { return {ToolError::kFailed, std::move(s)}; }

// "name=value" / "name" entries, consumed by typed Bind calls; what is left is unknown.
// Collecting errors instead of stopping at the first lets one message list every bad option.
class OptionSet {
 public:
  OptionSet(const char* tool, const std::vector<std::string>& entries) : tool_(tool) {
    for (const auto& e : entries) {
      auto eq = e.find('=');
      std::string name = e.substr(0, eq);
      while (name.rfind("-", 0) == 0) name.erase(0, 1);  // "--auto_merge" works too
      if (name.empty()) {
        errors_ += " empty option name in '" + e + "';";
        continue;
      }
      values_[name] = eq == std::string::npos ? std::nullopt : std::optional<std::string>(e.substr(eq + 1));
    }
  }

  void Flag(const std::string& name, bool* out) {
    auto v = Take(name);
    if (!v) return;
    if (!*v || **v == "1" || **v == "true" || **v == "True") {
      *out = true;
    } else if (**v == "0" || **v == "false" || **v == "False") {
      *out = false;
    } else {
      errors_ += " " + name + " takes 0/1/true/false, not '" + **v + "';";
    }
  }
  template <class Int>
  void Integer(const std::string& name, Int* out) {
    auto v = Take(name);
    if (!v) return;
    const std::string text = v->value_or("");
    char* end = nullptr;
    long long x = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0') {
      errors_ += " " + name + " takes an integer, not '" + text + "';";
      return;
    }
    *out = static_cast<Int>(x);
  }
  void String(const std::string& name, std::string* out) {
    auto v = Take(name);
    if (!v) return;
    if (!*v) {
      errors_ += " " + name + " needs a value (" + name + "=...);";
      return;
    }
    *out = **v;
  }
  void List(const std::string& name, std::vector<std::string>* out) {
    std::string text;
    String(name, &text);
    std::stringstream ss(text);
    for (std::string item; std::getline(ss, item, ',');)
      if (!item.empty()) out->push_back(item);
  }

  /// Errors for values that did not parse and for names no Bind call asked for.
  std::optional<ToolResult> Finish() {
    std::string unknown;
    for (const auto& [name, value] : values_) unknown += (unknown.empty() ? "" : ", ") + name;
    if (!unknown.empty()) errors_ += " unknown option(s) " + unknown + " (known: " + known_ + ");";
    if (errors_.empty()) return std::nullopt;
    errors_.pop_back();
    return Bad(std::string(tool_) + ":" + errors_);
  }

 private:
  std::optional<std::optional<std::string>> Take(const std::string& name) {
    known_ += (known_.empty() ? "" : ", ") + name;
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    auto v = it->second;
    values_.erase(it);
    return v;
  }

  const char* tool_;
  std::map<std::string, std::optional<std::string>> values_;
  std::string errors_, known_;
};

}  // namespace

std::string ExternalFileName(const std::string& location) {
  return !location.empty() && location.back() != '/' ? location : std::string();
}

ToolResult EditModelFile(const std::string& input, const std::string& output, const std::string& mode,
                         const EditFileOptions& options) {
  bool known_mode = false;
  std::string modes;
  for (const auto& m : editor::EditorModes()) {
    known_mode |= m.name == mode;
    modes += (modes.empty() ? "" : ", ") + m.name;
  }
  if (!known_mode) return Bad("model_editor: unknown mode '" + mode + "' (modes: " + modes + ")");
  auto progress = [&](const char* step) {
    if (options.progress) options.progress(step);
  };

  onnx::ModelProto model;
  if (Status s = LoadModel(input, &model); !s.ok()) return Failed(s);
  progress("edit");
  if (Status s = editor::RunEditor(mode, &model, options.editor); !s.ok()) return Failed(s.WithFile(input));
  if (!options.skip_shape_inference) {
    progress("shape_inference");
    // As the original CLI (E7): auto_merge, and anything left unknown is an error naming the skip flag.
    ShapeInferOptions si;
    si.auto_merge = true;
    auto r = InferShapes(&model, si);
    if (!r.ok()) {
      Status s = r.status();
      s.diag().reason = "shape inference failed: " + s.diag().reason + " (use --skip_shape_inference to skip it)";
      return Failed(s);
    }
    if (r->outcome != InferOutcome::kComplete) {
      std::string what = r->unknown_values.empty() ? r->first_incomplete_node : r->unknown_values[0];
      return {ToolError::kIncomplete, Diag::Msg("Incomplete symbolic shape inference: no shape for '" + what +
                                                "' (use --skip_shape_inference to write the model without it)")};
    }
  }
  progress("save");
  if (Status s = SaveModel(model, output); !s.ok()) return Failed(s);
  return {};
}

ToolResult InferShapesFile(const std::string& input, const std::string& output, const InferFileOptions& options) {
  onnx::ModelProto model;
  if (Status s = LoadModel(input, &model); !s.ok()) return Failed(s);
  if (options.progress) options.progress("shape_inference");
  auto r = InferShapes(&model, options.infer);
  if (!r.ok()) return Failed(r.status().WithFile(input));
  if (r->outcome == InferOutcome::kUnsupportedOpset)
    return {ToolError::kUnsupportedOpset, Diag::Msg("Only support models of onnx opset 7 and above.")};
  if (r->outcome == InferOutcome::kIncomplete) {
    std::string unknown;
    for (const auto& v : r->unknown_values) unknown += " " + v;
    Status s = Diag::Msg("Incomplete symbolic shape inference: first at node " + r->first_incomplete_node +
                         "; values left unknown:" + unknown);
    if (!options.save_partial.empty()) {
      // Still "incomplete" (the tool's exit code); the save error is added to the message.
      if (Status saved = SaveModel(model, options.save_partial, options.save); !saved.ok())
        s.diag().reason += "; the partial model was not saved: " + saved.message();
    }
    return {ToolError::kIncomplete, s};
  }
  if (!output.empty()) {
    if (options.progress) options.progress("save");
    if (Status s = SaveModel(model, output, options.save); !s.ok()) return Failed(s);
  }
  return {};
}

ToolResult QuantizeModelFile(const std::string& input, const std::string& output, const QuantizeFileOptions& options,
                             quant::QuantizeReport* report) {
  if (options.export_qcfg_json && options.qcfg_json.empty())
    return Bad("--qcfg_json must be specified when --export_qcfg_json is used");
  auto preset = quant::PresetConfig(options.default_qcfg);
  if (!preset.ok()) return {ToolError::kBadOption, preset.status()};
  quant::QuantizeOptions qo = options.quantize;
  qo.default_config = *preset;
  if (!options.qcfg_json.empty() && !options.export_qcfg_json) {
    auto text = ReadFile(options.qcfg_json);
    if (!text.ok()) return Failed(text.status());
    auto table = quant::ParseQcfgJson(*text, options.qcfg_json);
    if (!table.ok()) return Failed(table.status());
    qo.node_configs = std::move(*table);
  }

  onnx::ModelProto model;
  if (Status s = LoadModel(input, &model); !s.ok()) return Failed(s);
  auto r = quant::Quantize(&model, qo);
  if (!r.ok()) return Failed(r.status().WithFile(input));
  if (Status s = SaveModel(model, output); !s.ok()) return Failed(s);
  if (options.export_qcfg_json) {
    // After the model, as the original tool writes it.
    if (Status s = WriteFileAtomic(options.qcfg_json, quant::QcfgToJson(r->used_configs)); !s.ok()) return Failed(s);
  }
  if (report) *report = std::move(*r);
  return {};
}

ToolResult EditModelFile(const std::string& input, const std::string& output, const std::string& mode,
                         const std::vector<std::string>& options) {
  EditFileOptions o;
  OptionSet set("model_editor", options);
  set.Flag("keep_unconvertible_loop_ops", &o.editor.keep_unconvertible_loop_ops);
  set.Flag("skip_shape_inference", &o.skip_shape_inference);
  set.List("remain_inputs", &o.editor.remain_inputs);
  set.Flag("zero_state_as_input", &o.editor.zero_state_as_input);
  set.Flag("verbose", &o.editor.verbose);
  if (auto bad = set.Finish()) return *bad;
  return EditModelFile(input, output, mode, o);
}

ToolResult InferShapesFile(const std::string& input, const std::string& output,
                           const std::vector<std::string>& options) {
  InferFileOptions o;
  std::string external_location = "./";
  bool all_tensors_to_one_file = false;  // the only layout written; accepted as the CLI does
  OptionSet set("symbolic_shape_infer", options);
  set.Flag("auto_merge", &o.infer.auto_merge);
  set.Integer("int_max", &o.infer.int_max);
  set.Flag("guess_output_rank", &o.infer.guess_output_rank);
  set.Integer("verbose", &o.infer.verbose);
  set.Flag("strict", &o.infer.strict);
  set.Flag("keep_value_info", &o.infer.keep_value_info);
  set.Flag("save_as_external_data", &o.save.save_as_external_data);
  set.Flag("all_tensors_to_one_file", &all_tensors_to_one_file);
  set.String("external_data_location", &external_location);
  set.Integer("external_data_size_threshold", &o.save.external_threshold_bytes);
  set.String("save_partial", &o.save_partial);
  if (auto bad = set.Finish()) return *bad;
  o.save.external_file_name = ExternalFileName(external_location);
  return InferShapesFile(input, output, o);
}

ToolResult QuantizeModelFile(const std::string& input, const std::string& output,
                             const std::vector<std::string>& options) {
  QuantizeFileOptions o;
  OptionSet set("model_quantizer", options);
  set.Flag("only_for_scan", &o.quantize.only_for_scan);
  set.Flag("share_input_quantization", &o.quantize.share_input_quantization);
  set.String("default_qcfg", &o.default_qcfg);
  set.String("qcfg_json", &o.qcfg_json);
  set.Flag("export_qcfg_json", &o.export_qcfg_json);
  set.Flag("guard_zero_delta", &o.quantize.guard_zero_delta);
  if (auto bad = set.Finish()) return *bad;
  return QuantizeModelFile(input, output, o);
}

}  // namespace nuphar::api
