// Model I/O (graph/model_io.h): parsing with lifted size limits, external data, atomic save.
#include "graph/model_io.h"

#include "graph/model_check.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "graph/opset_schema.h"

namespace nuphar {
namespace {

namespace fs = std::filesystem;

// Calls fn on every TensorProto of the graph: initializers, Constant attributes and subgraphs.
void ForEachTensor(onnx::GraphProto* graph, const std::function<void(onnx::TensorProto*)>& fn) {
  for (auto& t : *graph->mutable_initializer()) fn(&t);
  for (auto& node : *graph->mutable_node()) {
    for (auto& attr : *node.mutable_attribute()) {
      if (attr.has_t()) fn(attr.mutable_t());
      for (auto& t : *attr.mutable_tensors()) fn(&t);
      if (attr.has_g()) ForEachTensor(attr.mutable_g(), fn);
      for (auto& g : *attr.mutable_graphs()) ForEachTensor(&g, fn);
    }
  }
}

// A non-negative decimal integer of external_data, or -1 (std::stoll throws on junk).
int64_t ParseExternalInt(const std::string& text) {
  if (text.empty() || text.size() > 18) return -1;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

Status InlineExternalData(onnx::TensorProto* t, const fs::path& base_dir, const std::string& model_path) {
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& kv : t->external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
    } else if (kv.key() == "offset" || kv.key() == "length") {
      const int64_t v = ParseExternalInt(kv.value());
      if (v < 0)
        return Diag::File(model_path, "tensor '" + t->name() + "': external data " + kv.key() + " '" + kv.value() +
                                          "' is not a non-negative integer");
      (kv.key() == "offset" ? offset : length) = v;
    }
  }
  if (location.empty())
    return Diag::File(model_path, "tensor '" + t->name() + "' is external but has no location");
  // A downloaded model must not read files outside its own folder (ONNX's checker rule too).
  const fs::path rel(location);
  bool escapes = rel.is_absolute() || rel.has_root_name() || rel.has_root_directory();
  for (const auto& part : rel) escapes |= part == "..";
  if (escapes)
    return Diag::File(model_path, "tensor '" + t->name() + "': external data location '" + location +
                                      "' lies outside the model's folder (absolute paths and '..' are refused)");
  fs::path side = base_dir / location;
  std::error_code ec;
  if (!fs::is_regular_file(side, ec))
    return Diag::File(side.string(), "external data file of tensor '" + t->name() + "' is missing or not a file");
  std::ifstream in(side, std::ios::binary);
  if (!in) return Diag::File(side.string(), "external data file of tensor '" + t->name() + "' cannot be opened");
  in.seekg(0, std::ios::end);
  const int64_t file_size = in.tellg();
  if (length < 0) length = file_size - offset;
  if (offset > file_size || length > file_size - offset)
    return Diag::File(side.string(), "external data of tensor '" + t->name() + "' lies outside the file (offset " +
                                         std::to_string(offset) + ", length " + std::to_string(length) + ", size " +
                                         std::to_string(file_size) + ")");
  std::string bytes(static_cast<size_t>(length), '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in) return Diag::File(side.string(), "short read of external data for tensor '" + t->name() + "'");
  t->set_raw_data(std::move(bytes));
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::DEFAULT);
  return Status::OK();
}

Status CheckParsedModel(bool parsed, const onnx::ModelProto& model, const std::string& origin) {
  // protobuf's parser also stops at 100 nested messages (about 30 levels of subgraphs, three
  // messages each): that is the nesting budget of every tool, so a 10,000-deep model fails here.
  if (!parsed)
    return Diag::File(origin, "not a valid ONNX model (protobuf parse failed: truncated, not a ModelProto, or "
                              "subgraphs nested deeper than about 30 levels)");
  if (!model.has_graph()) return Diag::File(origin, "not an ONNX model: the ModelProto has no graph");
  if (model.ir_version() <= 0) return Diag::File(origin, "not an ONNX model: ir_version is missing");
  return CheckOpsetKnown(model, origin);
}

Status ParseModel(const void* data, size_t size, onnx::ModelProto* model, const std::string& origin) {
  if (size == 0) return Diag::File(origin, "file is empty, not an ONNX model");
  google::protobuf::io::ArrayInputStream raw(data, static_cast<int>(std::min<size_t>(size, INT_MAX)));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT_MAX);
  if (size > static_cast<size_t>(INT_MAX))
    return Diag::File(origin, "file is larger than 2 GB; store the weights as external data");
  const bool parsed = model->ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  return CheckParsedModel(parsed, *model, origin);
}

}  // namespace

Expected<std::string> ReadFile(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Diag::File(path, "file does not exist");
  if (fs::is_directory(path, ec)) return Diag::File(path, "is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return Diag::File(path, "cannot be opened for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return Diag::File(path, "read error");
  return ss.str();
}

Status LoadModelFromBytes(const void* data, size_t size, onnx::ModelProto* model, const std::string& origin) {
  NUPHAR_RETURN_IF_ERROR(ParseModel(data, size, model, origin));
  return CheckModelStructure(*model, origin);
}

Status LoadModel(const std::string& path, onnx::ModelProto* model, const LoadOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return Diag::File(path, "file does not exist");
  if (fs::is_directory(path, ec)) return Diag::File(path, "is a directory, not a file");
  const auto size = fs::file_size(path, ec);
  if (ec) return Diag::File(path, "cannot read the file size: " + ec.message());
  if (size == 0) return Diag::File(path, "file is empty, not an ONNX model");
  if (size > static_cast<uintmax_t>(INT_MAX))
    return Diag::File(path, "file is larger than 2 GB; store the weights as external data");
  // Parse straight from the file's pages: mapping it avoids read()'s copy into a buffer (the
  // parse still copies each tensor once into its string). A file that cannot be mapped (a pipe,
  // a special file system) is streamed instead.
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return Diag::File(path, "cannot be opened for reading");
  bool parsed = false, whole = false;
  // Unmapped on return: options.whole_model_bytes sees the bytes after the checks.
  struct Mapping {
    void* bytes;
    size_t size;
    ~Mapping() {
      if (bytes != MAP_FAILED) ::munmap(bytes, size);
    }
  } mapped{::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0), size};
  if (mapped.bytes != MAP_FAILED) {
    ::madvise(mapped.bytes, size, MADV_SEQUENTIAL);
    google::protobuf::io::ArrayInputStream raw(mapped.bytes, static_cast<int>(size));
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    parsed = model->ParseFromCodedStream(&coded);
    whole = coded.ConsumedEntireMessage();
  } else {
    google::protobuf::io::FileInputStream raw(fd, 1 << 20);
    google::protobuf::io::CodedInputStream coded(&raw);
    coded.SetTotalBytesLimit(INT_MAX);
    parsed = model->ParseFromCodedStream(&coded);
    whole = coded.ConsumedEntireMessage();
  }
  ::close(fd);
  NUPHAR_RETURN_IF_ERROR(CheckParsedModel(parsed && whole, *model, path));
  bool external = false;
  Status status;
  const fs::path base_dir = fs::path(path).parent_path();
  ForEachTensor(model->mutable_graph(), [&](onnx::TensorProto* t) {
    if (t->data_location() != onnx::TensorProto::EXTERNAL) return;
    external = true;
    if (status.ok() && options.load_external_data) status = InlineExternalData(t, base_dir, path);
  });
  NUPHAR_RETURN_IF_ERROR(status);
  // Every tool and the runtime load through here, so all refuse a broken graph the same way.
  NUPHAR_RETURN_IF_ERROR(CheckModelStructure(*model, path));
  if (options.whole_model_bytes && mapped.bytes != MAP_FAILED && !external)
    options.whole_model_bytes(std::string_view(static_cast<const char*>(mapped.bytes), size));
  return Status::OK();
}

// Where a write to `path` lands: a symlink is followed to its final target, so the link stays a
// link and the file it names is replaced (what `cp` or an editor would do). Returns the path to
// rename onto, or an error for an empty name, a directory or a symlink loop.
static Expected<fs::path> ResolveOutputPath(const std::string& path) {
  if (path.empty()) return Diag::Msg("no output file given (the output path is empty)");
  fs::path target(path);
  std::error_code ec;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40) return Diag::File(path, "too many levels of symbolic links");
    fs::path next = fs::read_symlink(target, ec);
    if (ec) return Diag::File(path, "cannot read the symbolic link: " + ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  if (fs::is_directory(target, ec)) return Diag::File(path, "is a directory; the output must name a file");
  if (target.has_parent_path() && !fs::is_directory(target.parent_path(), ec))
    return Diag::File(path, "output directory does not exist: " + target.parent_path().string());
  return target;
}

// Creates the target's temporary sibling (same directory, so the rename is atomic), lets
// `write` fill it, and renames it into place; removes the temporary file on any failure, so no
// partial output is ever left behind. An existing output keeps its permission bits; a new one
// gets 0666 less the umask, as open() would give it.
static Status WriteThroughTempFile(const std::string& path, const std::function<bool(int fd)>& write) {
  NUPHAR_ASSIGN_OR_RETURN(const fs::path target, ResolveOutputPath(path));
  std::error_code ec;
  // Unique per write, not only per process: two threads saving one file must not share a temporary.
  static std::atomic<uint64_t> writes{0};
  const std::string tmp = target.string() + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(writes++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return Diag::File(path, std::string("cannot be opened for writing: ") + std::strerror(errno));
  struct stat existing;
  if (::stat(target.c_str(), &existing) == 0) (void)::fchmod(fd, existing.st_mode & 07777);
  bool ok = write(fd);
  ok = (::close(fd) == 0) && ok;
  if (!ok) {
    fs::remove(tmp, ec);
    return Diag::File(path, "write failed (disk full?)");
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return Diag::File(path, "cannot rename the temporary file into place: " + ec.message());
  }
  return Status::OK();
}

Status WriteFileAtomic(const std::string& path, const std::string& bytes) {
  return WriteThroughTempFile(path, [&bytes](int fd) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  });
}

// Serializes straight into the temporary file (no in-memory copy of the bytes), in 4 MB writes:
// protobuf's default 8 KB blocks cost one system call per 8 KB of weights.
static Status WriteModelAtomic(const onnx::ModelProto& model, const std::string& path) {
  return WriteThroughTempFile(path, [&model](int fd) {
    google::protobuf::io::FileOutputStream out(fd, 4 << 20);
    return model.SerializeToZeroCopyStream(&out) && out.Flush();
  });
}

Status SaveModel(const onnx::ModelProto& model_in, const std::string& path, const SaveOptions& options) {
  constexpr size_t kProtobufLimit = (size_t{1} << 31) - 1;
  const bool external = options.save_as_external_data || model_in.ByteSizeLong() > kProtobufLimit;
  if (!external) return WriteModelAtomic(model_in, path);
  // Move large tensors to one side file, then write the (now small) model.
  onnx::ModelProto model = model_in;
  // The side file goes beside the file the model lands in: through a symlink, that is the target.
  NUPHAR_ASSIGN_OR_RETURN(const fs::path target, ResolveOutputPath(path));
  const std::string side_name =
      options.external_file_name.empty() ? target.filename().string() + ".data" : options.external_file_name;
  const fs::path side_path = target.parent_path() / side_name;
  std::string side;
  ForEachTensor(model.mutable_graph(), [&](onnx::TensorProto* t) {
    if (!t->has_raw_data() || static_cast<int64_t>(t->raw_data().size()) < options.external_threshold_bytes) return;
    while (side.size() % 4096 != 0) side.push_back('\0');  // page-align each tensor, as onnx does
    const size_t offset = side.size();
    side += t->raw_data();
    t->clear_raw_data();
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto add = [t](const char* k, const std::string& v) {
      auto* e = t->add_external_data();
      e->set_key(k);
      e->set_value(v);
    };
    add("location", side_name);
    add("offset", std::to_string(offset));
    add("length", std::to_string(side.size() - offset));
  });
  if (model.ByteSizeLong() > kProtobufLimit)
    return Diag::File(path, "model is larger than 2 GB even with its initializers in external data");
  NUPHAR_RETURN_IF_ERROR(WriteFileAtomic(side_path.string(), side));
  return WriteModelAtomic(model, path);
}

}  // namespace nuphar
