//===- OnnxImporter.cpp - ONNX model file to an mp module -----------------===//

#include "mp/Import/OnnxImporter.h"
#include "GraphImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/defs/parser.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <fcntl.h>
#include <set>
#include <unistd.h>

using namespace mlir;

namespace mp {
namespace {
using namespace import;

/// Oldest and newest default-domain opsets whose semantics mp handles.
constexpr int64_t kMinOnnxOpset = 7;
constexpr int64_t kMaxOnnxOpset = 27;
/// com.microsoft contrib ops have a single version.
constexpr int64_t kMaxMicrosoftOpset = 1;

LogicalResult parseModel(StringRef path, onnx::ModelProto &model,
                         Location loc) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(loc) << "cannot open model file '" << path
                          << "': " << buffer.getError().message();
  StringRef ext = llvm::sys::path::extension(path);
  if (ext == ".onnxtext" || ext == ".onnxtxt") {
    std::string text = (*buffer)->getBuffer().str();
    try {
      onnx::OnnxParser parser(text.c_str());
      onnx::Common::Status status = parser.Parse(model);
      if (!status.IsOK())
        return emitError(loc) << "cannot parse ONNX text: "
                              << status.ErrorMessage();
    } catch (const std::exception &e) {
      return emitError(loc) << "cannot parse ONNX text: " << e.what();
    }
    return success();
  }
  uint64_t size = (*buffer)->getBufferSize();
  buffer->reset(); // Read through a small stream buffer instead.
  int fd = ::open(path.str().c_str(), O_RDONLY);
  if (fd < 0)
    return emitError(loc) << "cannot open model file '" << path << "'";
  bool ok;
  {
    google::protobuf::io::FileInputStream file(fd, /*block_size=*/1 << 20);
    google::protobuf::io::CodedInputStream stream(&file);
    // Protobuf's default limit is far below large models' sizes; the format
    // itself caps a message at 2 GiB (bigger models use external data).
    stream.SetTotalBytesLimit(std::numeric_limits<int>::max());
    ok = size > 0 && model.ParseFromCodedStream(&stream) &&
         stream.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!ok)
    return emitError(loc) << "'" << path << "' is not a valid ONNX model "
                          << "(malformed or truncated protobuf, " << size
                          << " bytes)";
  return success();
}

LogicalResult collectOpsets(const onnx::ModelProto &model, Location loc,
                            std::map<std::string, int64_t> &opsets) {
  for (const auto &imp : model.opset_import())
    opsets[normalizeDomain(imp.domain()).str()] = imp.version();
  auto it = opsets.find("");
  if (it == opsets.end()) {
    // IR version 3+ requires an explicit import; older files meant opset 1.
    return emitError(loc) << "the model imports no default-domain (ai.onnx) "
                          << "opset";
  }
  if (it->second < kMinOnnxOpset || it->second > kMaxOnnxOpset)
    return emitError(loc) << "ai.onnx opset " << it->second
                          << " is not supported (mp handles opsets "
                          << kMinOnnxOpset << " to " << kMaxOnnxOpset << ")";
  auto ms = opsets.find("com.microsoft");
  if (ms != opsets.end() && ms->second > kMaxMicrosoftOpset)
    return emitError(loc) << "com.microsoft opset " << ms->second
                          << " is not supported (mp handles opset 1)";
  return success();
}

/// Dims named by `dim_param`, as an array attribute ("" for other dims).
ArrayAttr dimParams(Builder &b, const onnx::TypeProto &type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape())
    return {};
  SmallVector<Attribute> names;
  bool any = false;
  for (const auto &d : type.tensor_type().shape().dim()) {
    any |= d.has_dim_param();
    names.push_back(b.getStringAttr(d.has_dim_param() ? d.dim_param() : ""));
  }
  return any ? b.getArrayAttr(names) : ArrayAttr();
}

/// The `mp.name` and `mp.dims` attributes of graph inputs or outputs, all at
/// once: set one by one, each argument would rebuild (and the context keep)
/// the array of every argument's attributes, quadratic in their number.
SmallVector<DictionaryAttr>
nameAttrs(Builder &b, ArrayRef<const onnx::ValueInfoProto *> values) {
  SmallVector<DictionaryAttr> attrs;
  for (const onnx::ValueInfoProto *v : values) {
    SmallVector<NamedAttribute, 2> named = {
        b.getNamedAttr("mp.name", b.getStringAttr(v->name()))};
    if (ArrayAttr dims = dimParams(b, v->type()))
      named.push_back(b.getNamedAttr("mp.dims", dims));
    attrs.push_back(b.getDictionaryAttr(named));
  }
  return attrs;
}

/// Verifies `module`, re-emitting each error prefixed with the ONNX node it
/// comes from (the location alone prints as the file).
LogicalResult verifyNamingNodes(ModuleOp module) {
  std::vector<std::pair<Location, std::string>> errors;
  LogicalResult result = success();
  {
    ScopedDiagnosticHandler capture(module.getContext(), [&](Diagnostic &d) {
      if (d.getSeverity() == DiagnosticSeverity::Error)
        errors.push_back({d.getLocation(), d.str()});
      return success();
    });
    result = verify(module);
  }
  for (auto &[loc, message] : errors) {
    std::string node;
    loc->walk([&](Location l) {
      if (auto name = dyn_cast<NameLoc>(l)) {
        node = name.getName().str();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    std::string type;
    if (auto fused = dyn_cast<FusedLoc>(loc))
      if (auto t = dyn_cast_if_present<StringAttr>(fused.getMetadata()))
        type = " (" + t.str() + ")";
    if (node.empty())
      emitError(loc) << message;
    else
      emitError(loc) << "node '" << node << "'" << type << ": " << message;
  }
  return result;
}

/// True when importing `graph` needs its input shapes: it (or a nested
/// graph) has an If whose branches declare outputs of different ranks or
/// element types, or a Loop or Scan, which mp unrolls.
bool importNeedsInputShapes(const onnx::GraphProto &graph) {
  for (const onnx::NodeProto &node : graph.node()) {
    if (node.domain().empty() &&
        (node.op_type() == "Loop" || node.op_type() == "Scan"))
      return true;
    const onnx::GraphProto *branches[2] = {nullptr, nullptr};
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g() && importNeedsInputShapes(a.g()))
        return true;
      if (node.op_type() == "If" && a.name() == "then_branch")
        branches[0] = &a.g();
      if (node.op_type() == "If" && a.name() == "else_branch")
        branches[1] = &a.g();
    }
    if (branches[0] && branches[1] &&
        branchesDeclareDifferentTypes(*branches[0], *branches[1]))
      return true;
  }
  return false;
}

OwningOpRef<ModuleOp> importModel(onnx::ModelProto &model, StringRef path,
                                  MLIRContext *ctx,
                                  const ImportOptions &options) {
  Location loc = FileLineColLoc::get(ctx, path, 0, 0);
  if (!model.has_graph())
    return emitError(loc) << "the model has no graph", nullptr;
  std::map<std::string, int64_t> opsets;
  if (failed(collectOpsets(model, loc, opsets)))
    return nullptr;

  TensorSource source;
  source.baseDir = llvm::sys::path::parent_path(path).str();
  source.resourceThresholdBytes = options.resourceThresholdBytes;
  GraphImporter graph(ctx, path.str(), opsets, source);
  onnx::GraphProto &g = *model.mutable_graph();
  if (failed(graph.checkSupported(g)))
    return nullptr;

  OpBuilder b(ctx);
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  (*module)->setAttr("mp.ir_version", b.getI64IntegerAttr(model.ir_version()));
  SmallVector<NamedAttribute> opsetAttrs;
  for (auto &[domain, version] : opsets)
    opsetAttrs.push_back(b.getNamedAttr(domain.empty() ? "ai.onnx" : domain,
                                        b.getI64IntegerAttr(version)));
  (*module)->setAttr("mp.opsets", b.getDictionaryAttr(opsetAttrs));
  if (!model.producer_name().empty())
    (*module)->setAttr("mp.producer",
                       b.getStringAttr(model.producer_name() + " " +
                                       model.producer_version()));

  // Graph inputs that are also initializers are weights (IR >= 4).
  llvm::StringSet<> initializers;
  for (const auto &init : g.initializer())
    initializers.insert(init.name());
  SmallVector<Type> argTypes;
  SmallVector<const onnx::ValueInfoProto *> args;
  bool pinInputs = importNeedsInputShapes(g);
  if (pinInputs && options.inputShapes.empty() && options.needsInputShapes) {
    *options.needsInputShapes = true;
    return nullptr;
  }
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (initializers.contains(in.name()) ||
        options.constantInputs.count(in.name()))
      continue;
    FailureOr<RankedTensorType> type = convertValueType(
        in.type(), graph.fileLoc(in.name()), "graph input '" + in.name() + "'");
    if (failed(type))
      return nullptr;
    auto pin = options.inputShapes.find(in.name());
    if (pinInputs && pin != options.inputShapes.end()) {
      auto pinned = RankedTensorType::get(pin->second, type->getElementType());
      if (failed(verifyCompatibleShape(*type, pinned)))
        return emitError(graph.fileLoc(in.name()))
                   << "graph input '" << in.name() << "' of type " << *type
                   << " cannot take the shape " << pinned,
               nullptr;
      type = pinned;
    }
    argTypes.push_back(*type);
    args.push_back(&in);
  }

  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, options.functionName,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  graph.pushScope();
  for (auto [i, in] : llvm::enumerate(args))
    graph.bind(in->name(), entry->getArgument(i));
  func.setAllArgAttrs(nameAttrs(b, args));
  b.setInsertionPointToStart(entry);
  for (const auto &entry : options.constantInputs)
    if (llvm::none_of(g.input(), [&](const onnx::ValueInfoProto &in) {
          return in.name() == entry.getKey();
        }))
      return emitError(loc) << "the model has no input named '"
                            << entry.getKey() << "'",
             nullptr;
  for (const onnx::ValueInfoProto &in : g.input()) {
    auto it = options.constantInputs.find(in.name());
    if (it == options.constantInputs.end() || initializers.contains(in.name()))
      continue;
    FailureOr<RankedTensorType> type = convertValueType(
        in.type(), graph.fileLoc(in.name()), "graph input '" + in.name() + "'");
    if (failed(type))
      return nullptr;
    DenseElementsAttr value = it->second;
    if (value.getElementType() != type->getElementType() ||
        failed(verifyCompatibleShape(value.getType(), *type)))
      return emitError(graph.fileLoc(in.name()))
                 << "graph input '" << in.name() << "' is " << *type
                 << "; the value given for it is " << value.getType(),
             nullptr;
    graph.bind(in.name(),
               ConstantOp::create(b, graph.fileLoc(in.name()),
                                  cast<ElementsAttr>(value)));
  }
  if (failed(graph.importBody(g, b)))
    return nullptr;

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &out : g.output()) {
    Location outLoc = graph.fileLoc(out.name());
    Value v = graph.lookup(out.name());
    if (!v)
      return emitError(outLoc) << "graph output '" << out.name()
                               << "' is not produced by any node",
             nullptr;
    if (sequenceElements(v))
      return emitError(outLoc) << "graph output '" << out.name()
                               << "' is a sequence; mp's outputs are tensors",
             nullptr;
    // A declared output type must agree with what mp computed.
    if (out.has_type() && out.type().has_tensor_type() &&
        out.type().tensor_type().elem_type() != 0) {
      Type declared = convertElementType(ctx, out.type().tensor_type().elem_type());
      if (declared && declared != elementTypeOf(v))
        return emitError(outLoc)
                   << "graph output '" << out.name() << "' is declared "
                   << onnxTypeName(out.type().tensor_type().elem_type())
                   << " but its producer computes " << v.getType(),
               nullptr;
    }
    if (out.has_type() && out.type().has_tensor_type() &&
        out.type().tensor_type().has_shape()) {
      SmallVector<int64_t> dims;
      for (const auto &d : out.type().tensor_type().shape().dim())
        dims.push_back(d.has_dim_value() ? d.dim_value() : ShapedType::kDynamic);
      if (failed(verifyCompatibleShape(dims, shapeOf(v))))
        return emitError(outLoc) << "graph output '" << out.name()
                                 << "' is declared with shape ["
                                 << llvm::make_range(dims.begin(), dims.end())
                                 << "] but mp infers " << v.getType(),
               nullptr;
    }
    results.push_back(v);
  }
  func::ReturnOp::create(b, loc, results);
  if (failed(eraseSequences(func)))
    return nullptr;
  func.setType(b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  SmallVector<const onnx::ValueInfoProto *> outs;
  for (const onnx::ValueInfoProto &out : g.output())
    outs.push_back(&out);
  func.setAllResultAttrs(nameAttrs(b, outs));
  if (failed(verifyNamingNodes(*module)))
    return nullptr;
  return module;
}

} // namespace

bool isOnnxFile(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".onnx" || ext == ".onnxtext" || ext == ".onnxtxt";
}

OwningOpRef<ModuleOp> importOnnxFile(StringRef path, MLIRContext *context,
                                     const ImportOptions &options) {
  context->loadDialect<MpDialect, func::FuncDialect>();
  onnx::ModelProto model;
  if (failed(parseModel(path, model, FileLineColLoc::get(context, path, 0, 0))))
    return nullptr;
  return importModel(model, path, context, options);
}

LogicalResult readOnnxSignature(StringRef path, MLIRContext *context,
                                std::vector<GraphValueInfo> &inputs,
                                std::vector<GraphValueInfo> &outputs) {
  onnx::ModelProto model;
  Location loc = FileLineColLoc::get(context, path, 0, 0);
  if (failed(parseModel(path, model, loc)))
    return failure();
  if (!model.has_graph())
    return emitError(loc) << "the model has no graph";
  const onnx::GraphProto &g = model.graph();
  llvm::StringSet<> initializers;
  for (const auto &init : g.initializer())
    initializers.insert(init.name());
  for (const onnx::ValueInfoProto &in : g.input()) {
    if (initializers.contains(in.name()))
      continue;
    FailureOr<RankedTensorType> type = convertValueType(
        in.type(), loc, "graph input '" + in.name() + "'");
    if (failed(type))
      return failure();
    inputs.push_back({in.name(), *type});
  }
  // Outputs need not declare a type; the import infers it.
  for (const onnx::ValueInfoProto &out : g.output()) {
    GraphValueInfo info{out.name(), {}};
    if (out.type().has_tensor_type() && out.type().tensor_type().has_shape()) {
      const auto &tt = out.type().tensor_type();
      SmallVector<int64_t> dims;
      for (const auto &d : tt.shape().dim())
        dims.push_back(d.has_dim_value() ? d.dim_value() : ShapedType::kDynamic);
      if (Type elt = convertElementType(context, tt.elem_type()))
        info.type = RankedTensorType::get(dims, elt);
    }
    outputs.push_back(info);
  }
  return success();
}

/// Adds the external data locations of every tensor in `g` and its
/// subgraphs to `locations`.
static void collectExternalData(const onnx::GraphProto &g,
                                std::set<std::string> &locations) {
  auto tensor = [&](const onnx::TensorProto &t) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL)
      return;
    for (const auto &kv : t.external_data())
      if (kv.key() == "location")
        locations.insert(kv.value());
  };
  for (const auto &t : g.initializer())
    tensor(t);
  for (const auto &s : g.sparse_initializer()) {
    tensor(s.values());
    tensor(s.indices());
  }
  for (const auto &node : g.node())
    for (const auto &a : node.attribute()) {
      if (a.has_t())
        tensor(a.t());
      for (const auto &t : a.tensors())
        tensor(t);
      if (a.has_g())
        collectExternalData(a.g(), locations);
      for (const auto &sub : a.graphs())
        collectExternalData(sub, locations);
    }
}

LogicalResult listExternalDataFiles(StringRef path, MLIRContext *context,
                                    std::vector<std::string> &files) {
  onnx::ModelProto model;
  if (failed(parseModel(path, model, FileLineColLoc::get(context, path, 0, 0))))
    return failure();
  std::set<std::string> locations;
  collectExternalData(model.graph(), locations);
  for (const std::string &location : locations) {
    llvm::SmallString<256> file(llvm::sys::path::parent_path(path));
    llvm::sys::path::append(file, location);
    files.push_back(std::string(file));
  }
  return success();
}

void printSupportedOnnxOps(llvm::raw_ostream &os) {
  for (const auto &[key, entry] : import::OpTable::get().entries()) {
    os << (key.first.empty() ? "ai.onnx" : key.first) << " " << key.second
       << " ";
    llvm::interleave(entry.sinceVersions, os, ",");
    os << "\n";
  }
}

} // namespace mp
