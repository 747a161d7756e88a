// report.html: the benchmark results as one self-contained page (inline CSS and SVG; no script,
// no fonts or images from the network), so the file can be mailed or attached as it is.
//
// # What the page shows
//   - latency per configuration for every engine measured (grouped bars, top-n average ms);
//   - speed-up bars against the float RNN ops (ours, and ORT's when measured), a line at 1x;
//   - the int8 output error against float (max and mean absolute error, log scale);
//   - the numbers as a table, the machine (CPU, ISA tier) and the command line.
// Axis labels name only the fields that vary across configurations; the rest is in the subtitle.
#include "benchmark/rnn_benchmark.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>


namespace nuphar::bench {
namespace {

const char* const kEngineColor[kEngineCount] = {"#4e79a7", "#59a14f", "#e15759", "#9c755f", "#b07aa1", "#f28e2b"};

std::string Esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o += c;
    }
  }
  return o;
}

std::string F(double v, const char* fmt = "%.3f") {
  if (std::isnan(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

struct Series {
  std::string name, color;
  std::vector<double> values;  ///< NaN = not measured
};

// Round step for about 5 ticks over [0, max].
double NiceStep(double max) {
  const double raw = max / 5;
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

// A grouped vertical bar chart: one group per category, one bar per series. `log_scale` spaces
// decades evenly (for errors); `ref_line` > 0 draws a dashed line at that value (1x speed-up).
std::string BarChart(const std::string& id, const std::string& title, const std::string& unit,
                     const std::vector<std::string>& categories, const std::vector<Series>& series, bool log_scale,
                     double ref_line, const char* value_fmt) {
  double vmax = 0, vmin = INFINITY;
  for (const auto& s : series)
    for (double v : s.values)
      if (!std::isnan(v) && v > 0) {
        vmax = std::max(vmax, v);
        vmin = std::min(vmin, v);
      }
  if (ref_line > 0) vmax = std::max(vmax, ref_line);
  if (vmax <= 0) vmax = 1;
  const int nseries = static_cast<int>(series.size());
  const int bar_w = 16, left = 70, top = 40, plot_h = 260, bottom = 50;
  size_t longest_label = 0, longest_name = 0;
  for (const auto& c : categories) longest_label = std::max(longest_label, c.size());
  for (const auto& s : series) longest_name = std::max(longest_name, s.name.size());
  const int group_w = std::max(nseries * bar_w + 24, static_cast<int>(longest_label) * 7 + 12);
  const int gap = group_w - nseries * bar_w;
  const int width = std::max(640, left + static_cast<int>(categories.size()) * group_w + 20);
  // Legend: as many columns as fit the longest series name (about 7 px per character at 12 px).
  const int legend_w = static_cast<int>(longest_name) * 7 + 36;
  const int legend_cols = std::max(1, (width - left) / legend_w);
  const int height = top + plot_h + bottom + 22 * ((nseries + legend_cols - 1) / legend_cols);
  double lo = 0, hi = vmax;
  if (log_scale) {
    lo = std::floor(std::log10(std::isinf(vmin) ? vmax / 10 : vmin));
    hi = std::ceil(std::log10(vmax));
    if (hi <= lo) hi = lo + 1;
  } else {
    const double step = NiceStep(vmax);
    hi = std::ceil(vmax / step) * step;
  }
  auto y_of = [&](double v) {
    const double f = log_scale ? (std::log10(v) - lo) / (hi - lo) : v / hi;
    return top + plot_h - std::clamp(f, 0.0, 1.0) * plot_h;
  };
  std::ostringstream o;
  o << "<svg id=\"" << id << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << width << " " << height << "\" role=\"img\" aria-label=\"" << Esc(title) << "\">\n";
  o << "<text x=\"" << left << "\" y=\"22\" class=\"ct\">" << Esc(title) << "</text>\n";
  // grid and y ticks
  std::vector<double> ticks;
  if (log_scale) {
    for (double e = lo; e <= hi + 1e-9; e += 1) ticks.push_back(std::pow(10.0, e));
  } else {
    const double step = NiceStep(vmax);
    for (double t = 0; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  }
  for (double t : ticks) {
    const double y = log_scale ? y_of(t) : top + plot_h - t / hi * plot_h;
    char label[32];
    std::snprintf(label, sizeof(label), log_scale ? "%.0e" : "%g", t);
    o << "<line x1=\"" << left << "\" x2=\"" << width - 10 << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" class=\"grid\"/><text x=\"" << left - 6 << "\" y=\"" << y + 4 << "\" class=\"yt\">" << label << "</text>\n";
  }
  o << "<text transform=\"translate(14," << top + plot_h / 2 << ") rotate(-90)\" class=\"yl\">" << Esc(unit)
    << "</text>\n";
  for (size_t c = 0; c < categories.size(); ++c) {
    const int gx = left + static_cast<int>(c) * group_w + gap / 2;
    for (int s = 0; s < nseries; ++s) {
      const double v = series[s].values[c];
      if (std::isnan(v) || (log_scale && v <= 0)) continue;
      const double y = y_of(v);
      const double base = log_scale ? top + plot_h : y_of(0);
      o << "<rect x=\"" << gx + s * bar_w << "\" y=\"" << y << "\" width=\"" << bar_w - 2 << "\" height=\""
        << std::max(1.0, base - y) << "\" fill=\"" << series[s].color << "\"><title>" << Esc(categories[c]) << " · "
        << Esc(series[s].name) << ": " << F(v, value_fmt) << "</title></rect>\n";
    }
    o << "<text x=\"" << gx + nseries * bar_w / 2 << "\" y=\"" << top + plot_h + 16 << "\" class=\"xt\">"
      << Esc(categories[c]) << "</text>\n";
  }
  if (ref_line > 0) {
    const double y = y_of(ref_line);
    o << "<line x1=\"" << left << "\" x2=\"" << width - 10 << "\" y1=\"" << y << "\" y2=\"" << y
      << "\" class=\"ref\"/>\n";
  }
  o << "<line x1=\"" << left << "\" x2=\"" << left << "\" y1=\"" << top << "\" y2=\"" << top + plot_h
    << "\" class=\"axis\"/><line x1=\"" << left << "\" x2=\"" << width - 10 << "\" y1=\"" << top + plot_h
    << "\" y2=\"" << top + plot_h << "\" class=\"axis\"/>\n";
  for (int s = 0; s < nseries; ++s) {
    const int lx = left + (s % legend_cols) * legend_w, ly = top + plot_h + 44 + (s / legend_cols) * 22;
    o << "<rect x=\"" << lx << "\" y=\"" << ly - 11 << "\" width=\"14\" height=\"14\" fill=\"" << series[s].color
      << "\"/><text x=\"" << lx + 20 << "\" y=\"" << ly << "\" class=\"lg\">" << Esc(series[s].name) << "</text>\n";
  }
  o << "</svg>\n";
  return o.str();
}

// Axis labels from the fields that differ between configurations; `common` gets the rest.
std::vector<std::string> CategoryLabels(const std::vector<BenchResult>& results, std::string* common) {
  struct Field {
    const char* prefix;
    std::string (*get)(const BenchConfig&);
  };
  static const Field fields[] = {
      {"", [](const BenchConfig& c) { return c.rnn_type; }},
      {"i", [](const BenchConfig& c) { return std::to_string(c.input_dim); }},
      {"h", [](const BenchConfig& c) { return std::to_string(c.hidden_dim); }},
      {"l", [](const BenchConfig& c) { return std::to_string(c.layers); }},
      {"s", [](const BenchConfig& c) { return std::to_string(c.seq_len); }},
      {"b", [](const BenchConfig& c) { return std::to_string(c.batch_size); }},
      {"t", [](const BenchConfig& c) { return std::to_string(c.num_threads); }},
      {"", [](const BenchConfig& c) { return std::string(c.bidirectional ? "bi" : "uni"); }},
      {"", [](const BenchConfig& c) { return std::string(c.linear_before_reset ? "lbr" : "no-lbr"); }},
  };
  std::vector<std::string> labels(results.size());
  common->clear();
  for (const Field& f : fields) {
    bool varies = false;
    for (const auto& r : results) varies |= f.get(r.config) != f.get(results.front().config);
    auto append = [&](std::string& to, const BenchConfig& c) {
      if (!to.empty()) to += ' ';
      to += f.prefix;
      to += f.get(c);
    };
    for (size_t i = 0; i < results.size(); ++i)
      if (varies) append(labels[i], results[i].config);
    if (!varies && !results.empty() && f.get(results.front().config) != "no-lbr") append(*common, results.front().config);
  }
  for (size_t i = 0; i < labels.size(); ++i)
    if (labels[i].empty()) labels[i] = results[i].config.Label();  // one configuration: its full name
  return labels;
}

}  // namespace

std::string ReportHtml(const std::vector<BenchResult>& results, const MachineInfo& machine, const std::string& command) {
  std::string common;
  const std::vector<std::string> cats = CategoryLabels(results, &common);
  const size_t n = results.size();

  std::vector<Series> latency;
  for (int e = 0; e < kEngineCount; ++e) {
    Series s{EngineName(static_cast<Engine>(e)), kEngineColor[e], std::vector<double>(n, NAN)};
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      s.values[i] = results[i].timing[e].top_n_avg_ms;
      any |= results[i].timing[e].measured();
    }
    if (any) latency.push_back(std::move(s));
  }
  std::vector<Series> speedup = {
      {"nuphar float Scan vs nuphar float RNN", kEngineColor[1], {}},
      {"nuphar int8 Scan vs nuphar float RNN", kEngineColor[2], {}},
  };
  bool ort = false;
  for (const auto& r : results) ort |= r.at(Engine::kOrtRnn).measured();
  if (ort) speedup.push_back({"nuphar int8 Scan vs ORT float RNN", kEngineColor[5], {}});
  std::vector<Series> error = {{"int8 max abs error", "#e15759", {}}, {"int8 mean abs error", "#ff9d9a", {}}};
  for (const auto& r : results) {
    speedup[0].values.push_back(r.Speedup(Engine::kRnn, Engine::kScan));
    speedup[1].values.push_back(r.Speedup(Engine::kRnn, Engine::kInt8));
    if (ort) speedup[2].values.push_back(r.Speedup(Engine::kOrtRnn, Engine::kInt8));
    error[0].values.push_back(r.int8_max_abs);
    error[1].values.push_back(r.int8_mean_abs);
  }

  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>nuphar rnn_benchmark: "
    << Esc(common) << "</title>\n<style>\n"
    << "body{font-family:sans-serif;margin:24px;color:#222;background:#fff}h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
    << "p.meta{color:#555;font-size:13px}code{background:#f3f3f3;padding:1px 4px}\n"
    << "table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:3px 6px;text-align:right}\n"
    << "th{background:#f3f3f3}td:first-child{text-align:left}\n"
    << "svg .ct{font-size:14px;font-weight:bold}svg .yt{font-size:11px;text-anchor:end}svg .xt{font-size:11px;text-anchor:middle}\n"
    << "svg .yl{font-size:12px;text-anchor:middle}svg .lg{font-size:12px}svg .grid{stroke:#e4e4e4}\n"
    << "svg .axis{stroke:#333}svg .ref{stroke:#333;stroke-dasharray:5 4}\n</style></head><body>\n";
  o << "<h1>RNN benchmark: " << Esc(common) << "</h1>\n";
  o << "<p class=\"meta\">" << Esc(machine.cpu) << ", ISA tier <b>" << Esc(machine.isa_tier) << "</b>, " << machine.cores
    << " logical cores; " << Esc(machine.date_utc) << ".<br>Command: <code>" << Esc(command)
    << "</code><br>Latency is the mean of the fastest runs (the original's top-n average) of interleaved runs of "
       "our three models (nuphar_num_threads = num_threads); ONNX Runtime ran in its own process with num_threads "
       "intra-op threads. Compare ratios, not absolute times across runs.</p>\n";
  if (results.empty()) o << "<p>No results.</p>\n";
  else {
    o << "<h2>Latency per configuration</h2>\n"
      << BarChart("latency", "Latency (ms, lower is better)", "ms", cats, latency, false, 0, "%.3f ms");
    o << "<h2>Speed-up against the float RNN ops</h2>\n"
      << BarChart("speedup", "Speed-up (x, higher is better; dashed line = 1x)", "x", cats, speedup, false, 1.0, "%.2fx");
    o << "<h2>int8 output error against float</h2>\n"
      << BarChart("error", "Absolute error of the int8 model's output (log scale)", "abs error", cats, error, true, 0,
                  "%.3g");
    o << "<h2>Numbers</h2>\n<table><tr><th>configuration</th>";
    for (const auto& s : latency) o << "<th>" << Esc(s.name) << " ms</th>";
    o << "<th>float Scan x</th><th>int8 x</th><th>int8 max abs err</th><th>int8 mean abs err</th>"
         "<th>Scan max abs err</th><th>|output| max</th></tr>\n";
    for (size_t i = 0; i < n; ++i) {
      const auto& r = results[i];
      o << "<tr><td>" << Esc(r.config.Label()) << "</td>";
      for (const auto& s : latency) o << "<td>" << F(s.values[i]) << "</td>";
      o << "<td>" << F(r.Speedup(Engine::kRnn, Engine::kScan), "%.2f") << "</td><td>"
        << F(r.Speedup(Engine::kRnn, Engine::kInt8), "%.2f") << "</td><td>" << F(r.int8_max_abs, "%.3g") << "</td><td>"
        << F(r.int8_mean_abs, "%.3g") << "</td><td>" << F(r.scan_max_abs, "%.3g") << "</td><td>"
        << F(r.output_absmax, "%.3g") << "</td></tr>\n";
    }
    o << "</table>\n";
    for (const auto& r : results)
      if (!r.ort_note.empty()) {
        o << "<p class=\"meta\">ONNX Runtime: " << Esc(r.ort_note) << "</p>\n";
        break;
      }
  }
  o << "</body></html>\n";
  return o.str();
}

}  // namespace nuphar::bench
