//===- Decisions.cpp - forced decisions from a JSON file --------*- C++ -*-===//
//
// See Decisions.h. Names resolve to ops through their locations, so one
// name can stand for several ops (a node the importer expanded) and one op
// for several names (a pattern the graph layer fused: any of its nodes names
// it).
//
//===----------------------------------------------------------------------===//

#include "Decisions.h"

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>

using namespace mlir;
namespace json = llvm::json;
using strata::Decisions;
namespace graph = strata::graph;

static void collectNames(Location loc, SmallVectorImpl<std::string> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.push_back(name.getName().str());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      collectNames(inner, names);
}

SmallVector<std::string> strata::getNodeNames(Operation *op) {
  SmallVector<std::string> names;
  collectNames(op->getLoc(), names);
  // A fused location may name a node twice.
  SmallVector<std::string> unique;
  for (std::string &name : names)
    if (!llvm::is_contained(unique, name))
      unique.push_back(std::move(name));
  return unique;
}

std::string strata::describeOp(Operation *op) {
  SmallVector<std::string> names = getNodeNames(op);
  if (names.empty())
    return op->getName().getStringRef().str();
  if (names.size() == 1)
    return names.front();
  // A pattern the graph layer fused: its first node and what it became.
  return names.front() + " (+" + std::to_string(names.size() - 1) +
         " nodes: " + op->getName().getStringRef().str() + ")";
}

/// How every error about a decisions file begins ("decisions file 'PATH':
/// ..."), which isError recognizes.
static constexpr llvm::StringLiteral kErrorPrefix = "decisions file '";

InFlightDiagnostic Decisions::error(Operation *at, const Twine &entry) const {
  InFlightDiagnostic diag = at->emitError();
  diag << kErrorPrefix << path << "': " << entry.str() << ": ";
  return diag;
}

bool Decisions::isError(StringRef message) {
  return message.starts_with(kErrorPrefix);
}

/// A node list's entries in the file's order: "library[10]: ..." after
/// "library[9]: ...".
static SmallVector<std::pair<Operation *, std::string>>
inFileOrder(const DenseMap<Operation *, std::string> &map) {
  SmallVector<std::pair<Operation *, std::string>> list(map.begin(), map.end());
  auto key = [](const std::string &entry) {
    std::string index = entry.substr(0, entry.find(':'));
    return std::make_pair(index.size(), index);
  };
  llvm::sort(list,
             [&](auto &a, auto &b) { return key(a.second) < key(b.second); });
  return list;
}

/// An object's keys in sorted order, so that the first error reported does
/// not depend on the hash map's.
static SmallVector<std::string> sortedKeys(const json::Object &object) {
  SmallVector<std::string> keys;
  for (const auto &member : object)
    keys.push_back(member.first.str());
  llvm::sort(keys);
  return keys;
}

namespace {
/// Reads one decisions file; each method reports its own errors.
class Reader {
public:
  Reader(Decisions &decisions, Operation *at) : decisions(decisions), at(at) {}

  /// The ops a node name stands for, or an error naming `entry`.
  FailureOr<ArrayRef<Operation *>> resolve(const json::Value &value,
                                           const std::string &entry) {
    std::optional<StringRef> name = value.getAsString();
    if (!name) {
      decisions.error(at, entry) << "expected a node name (a string)";
      return failure();
    }
    auto it = byName.find(*name);
    if (it == byName.end() && byName.empty()) {
      decisions.error(at, entry)
          << "no node named '" << *name
          << "': the model's ops carry no node names (IR printed without "
             "locations loses them: use strata import --print-locations, "
             "strata-opt --mlir-print-debuginfo)";
      return failure();
    }
    if (it == byName.end()) {
      decisions.error(at, entry)
          << "no node named '" << *name
          << "' in the model (after the graph stage: nodes folded into "
             "constants or removed have no kernel)";
      return failure();
    }
    if (llvm::all_of(it->second, [](Operation *op) {
          return isa<graph::ConstantOp>(op);
        })) {
      decisions.error(at, entry)
          << "node '" << *name
          << "' is a constant (computed at compile time, in no kernel)";
      return failure();
    }
    return ArrayRef<Operation *>(it->second);
  }

  void index(func::FuncOp entry) {
    entry.walk([&](Operation *op) {
      if (op->getParentOp() != entry.getOperation())
        return;
      for (const std::string &name : strata::getNodeNames(op))
        byName[name].push_back(op);
    });
  }

  /// A list of node names (`key`: "library" or "codegen").
  LogicalResult readNodeList(const json::Value &value, StringRef key,
                             DenseMap<Operation *, std::string> &into) {
    const json::Array *list = value.getAsArray();
    if (!list)
      return decisions.error(at, key) << "expected a list of node names";
    for (auto [i, item] : llvm::enumerate(*list)) {
      std::string entry = (key + "[" + Twine(i) + "]").str();
      FailureOr<ArrayRef<Operation *>> ops = resolve(item, entry);
      if (failed(ops))
        return failure();
      for (Operation *op : *ops)
        if (!isa<graph::ConstantOp>(op))
          into[op] = entry + ": '" + item.getAsString()->str() + "'";
    }
    return success();
  }

  Decisions &decisions;
  Operation *at;
  llvm::StringMap<SmallVector<Operation *>> byName;
};
} // namespace

FailureOr<Decisions> Decisions::load(StringRef path, func::FuncOp entry) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    Operation *at = entry->getParentOfType<ModuleOp>();
    (at ? at : entry.getOperation())->emitError()
        << kErrorPrefix << path
        << "': cannot read it: " << buffer.getError().message();
    return failure();
  }
  return parse((*buffer)->getBuffer(), path, entry);
}

FailureOr<Decisions> Decisions::parse(StringRef text, StringRef path,
                                      func::FuncOp entry) {
  Decisions decisions;
  decisions.path = path.str();
  Operation *at = entry->getParentOfType<ModuleOp>();
  if (!at)
    at = entry;
  decisions.at = at;
  llvm::Expected<json::Value> parsed = json::parse(text);
  if (!parsed) {
    at->emitError() << kErrorPrefix << path << "': malformed JSON: "
                    << llvm::toString(parsed.takeError());
    return failure();
  }
  const json::Object *root = parsed->getAsObject();
  if (!root) {
    at->emitError() << kErrorPrefix << path
                    << "': expected a JSON object with the keys \"apart\", "
                       "\"library\", \"codegen\", \"tile\", \"algorithm\"";
    return failure();
  }

  Reader reader(decisions, at);
  reader.index(entry);

  for (const std::string &key : sortedKeys(*root)) {
    if (key != "apart" && key != "library" && key != "codegen" &&
        key != "tile" && key != "algorithm" && key != "comment")
      return decisions.error(at, "\"" + key + "\"")
             << "unknown key (expected \"apart\", \"library\", \"codegen\", "
                "\"tile\", \"algorithm\" or \"comment\")";
  }

  if (const json::Value *apart = root->get("apart")) {
    const json::Array *list = apart->getAsArray();
    if (!list)
      return decisions.error(at, "apart")
             << "expected a list of lists of node names, e.g. [[\"Add_1\", "
                "\"Mul_2\"]]";
    for (auto [i, group] : llvm::enumerate(*list)) {
      std::string entry = "apart[" + std::to_string(i) + "]";
      const json::Array *names = group.getAsArray();
      if (!names || names->size() < 2)
        return decisions.error(at, entry)
               << "expected a list of at least two node names";
      SmallVector<std::pair<Operation *, std::string>> ops;
      for (auto [j, name] : llvm::enumerate(*names)) {
        FailureOr<ArrayRef<Operation *>> resolved =
            reader.resolve(name, entry + "[" + std::to_string(j) + "]");
        if (failed(resolved))
          return failure();
        for (Operation *op : *resolved)
          ops.push_back({op, name.getAsString()->str()});
      }
      // Every pair of the list's nodes is kept apart.
      for (size_t a = 0; a < ops.size(); ++a)
        for (size_t b = a + 1; b < ops.size(); ++b) {
          if (ops[a].second == ops[b].second)
            continue;
          if (ops[a].first == ops[b].first)
            return decisions.error(at, entry)
                   << "'" << ops[a].second << "' and '" << ops[b].second
                   << "' are one op (" << ops[a].first->getName().getStringRef()
                   << ", fused by the graph layer); they cannot be kept apart";
          decisions.apart.push_back(
              {ops[a].first, ops[b].first, ops[a].second, ops[b].second});
        }
    }
  }

  if (const json::Value *library = root->get("library"))
    if (failed(reader.readNodeList(*library, "library", decisions.library)))
      return failure();
  if (const json::Value *codegen = root->get("codegen"))
    if (failed(reader.readNodeList(*codegen, "codegen", decisions.codegen)))
      return failure();

  // A node forced both ways, in the file's order, so that the first error
  // reported is the first bad entry.
  for (auto &[op, entry] : inFileOrder(decisions.library))
    if (decisions.codegen.count(op))
      return decisions.error(at, entry)
             << "also forced to generated code by "
             << decisions.codegen.lookup(op) << "; choose one";

  if (const json::Value *tile = root->get("tile")) {
    const json::Object *byNode = tile->getAsObject();
    if (!byNode)
      return decisions.error(at, "tile")
             << "expected an object of node name -> {\"rows_per_block\": N}";
    for (const std::string &node : sortedKeys(*byNode)) {
      std::string entry = "tile[\"" + node + "\"]";
      const json::Object *config = byNode->getObject(node);
      if (!config)
        return decisions.error(at, entry)
               << "expected an object such as {\"rows_per_block\": 16}";
      for (const auto &member : *config)
        if (member.first != "rows_per_block")
          return decisions.error(at, entry + "." + member.first.str())
                 << "unknown tile parameter (expected \"rows_per_block\")";
      std::optional<int64_t> rows = config->getInteger("rows_per_block");
      if (!rows || *rows < 1)
        return decisions.error(at, entry + ".rows_per_block")
               << "expected a positive integer";
      FailureOr<ArrayRef<Operation *>> ops =
          reader.resolve(json::Value(node), entry);
      if (failed(ops))
        return failure();
      for (Operation *op : *ops)
        if (!isa<graph::ConstantOp>(op))
          decisions.tiles[op] = Tile{*rows, node};
    }
  }

  if (const json::Value *algorithm = root->get("algorithm")) {
    const json::Object *byNode = algorithm->getAsObject();
    if (!byNode)
      return decisions.error(at, "algorithm")
             << "expected an object of node name -> \"direct\", "
                "\"winograd\", \"timed\", \"cudnn\" or \"gemm\"";
    for (const std::string &node : sortedKeys(*byNode)) {
      std::string entry = "algorithm[\"" + node + "\"]";
      std::optional<StringRef> name = byNode->getString(node);
      if (!name || (*name != "direct" && *name != "winograd" &&
                    *name != "timed" && *name != "cudnn" && *name != "gemm"))
        return decisions.error(at, entry)
               << "expected \"direct\", \"winograd\" or \"timed\" (a CPU "
                  "convolution's oneDNN kernel), \"cudnn\" or \"gemm\" (a "
                  "GPU convolution's form)";
      FailureOr<ArrayRef<Operation *>> ops =
          reader.resolve(json::Value(node), entry);
      if (failed(ops))
        return failure();
      Algorithm chosen{name->str(), entry};
      if (chosen.gpuForm())
        decisions.gpuForms.push_back(chosen);
      for (Operation *op : *ops) {
        if (isa<graph::ConstantOp>(op))
          continue;
        if (isa<graph::ConvOp, graph::ConvChannelsLastOp>(op)) {
          decisions.algorithms[op] = chosen;
          continue;
        }
        // A GPU form's node is a convolution until strata-conv-to-gemm
        // rewrites it (into products and gathers that keep its name);
        // that pass checks it, the partitioner only reads the choice.
        if (chosen.gpuForm()) {
          decisions.otherForms.emplace_back(op, chosen);
          continue;
        }
        return decisions.error(at, entry)
               << "'" << node << "' is not a convolution ("
               << op->getName().getStringRef()
               << "); algorithms are chosen for Conv nodes";
      }
    }
  }
  return decisions;
}

const Decisions::Algorithm *Decisions::firstGpuForm() const {
  return gpuForms.empty() ? nullptr : &gpuForms.front();
}

const Decisions::Algorithm *Decisions::algorithmFor(Operation *op) const {
  auto it = algorithms.find(op);
  return it == algorithms.end() ? nullptr : &it->second;
}

std::string Decisions::forcedLibrary(Operation *op) const {
  auto it = library.find(op);
  return it == library.end() ? "" : it->second;
}

std::string Decisions::forcedCodegen(Operation *op) const {
  auto it = codegen.find(op);
  return it == codegen.end() ? "" : it->second;
}

std::string Decisions::apartReason(ArrayRef<Operation *> group,
                                   Operation *op) const {
  for (const Apart &pair : apart) {
    if (pair.a == op && llvm::is_contained(group, pair.b))
      return "kept apart from " + pair.nameB + " by the decisions file";
    if (pair.b == op && llvm::is_contained(group, pair.a))
      return "kept apart from " + pair.nameA + " by the decisions file";
  }
  return "";
}

FailureOr<std::optional<Decisions::Tile>>
Decisions::tileFor(ArrayRef<Operation *> ops, Operation *at) const {
  std::optional<Tile> found;
  for (Operation *op : ops) {
    auto it = tiles.find(op);
    if (it == tiles.end())
      continue;
    if (found && found->rowsPerBlock != it->second.rowsPerBlock)
      return error(at, "tile[\"" + it->second.node + "\"]")
             << "'" << it->second.node << "' and '" << found->node
             << "' are in the same kernel but ask for different rows per "
                "block ("
             << it->second.rowsPerBlock << " and " << found->rowsPerBlock
             << ")";
    if (!found)
      found = it->second;
  }
  return found;
}

SmallVector<std::pair<Operation *, std::string>> Decisions::tiledOps() const {
  SmallVector<std::pair<Operation *, std::string>> ops;
  for (const auto &[op, tile] : tiles)
    ops.push_back({op, tile.node});
  return ops;
}

LogicalResult
Decisions::checkForced(function_ref<bool(Operation *)> libraryTakes,
                       function_ref<bool(Operation *)> generatorTakes) const {
  for (auto &[op, entry] : inFileOrder(library))
    if (!libraryTakes(op))
      return error(at, entry)
             << "no library kernel can take this node ("
             << op->getName().getStringRef()
             << "); library calls exist for MatMul and Gemm (dnnl.matmul) and "
                "Conv (dnnl.conv)";
  for (auto &[op, entry] : inFileOrder(codegen))
    if (!generatorTakes(op))
      return error(at, entry)
             << "this node (" << op->getName().getStringRef()
             << ") has no generated implementation with its types";
  return success();
}
