//===- Layouts.cpp - channels-last buffers around oneDNN steps --*- C++ -*-===//
//
// The module's activations are row-major ([N, C, H, W]), but oneDNN's fast
// convolutions (brgconv, brdgmm for depthwise) work channels-last, so a
// dnnl.conv step whose buffers are row-major transposes its input in and
// its output out: about 40% of a small MobileNet's time, and most of
// DenseNet's, whose BatchNorm + ReLU before every convolution is a
// generated kernel between a concat and a convolution.
//
// strata-channels-last (fused stage) chooses, buffer by buffer, which
// buffers are channels-last. A buffer is when
//
//   - its producer can write it so: a dnnl.conv, dnnl.pool or dnnl.concat
//     step (its first output), or a generated kernel;
//   - every reader can read it so: a dnnl.conv step (as X or as the
//     residual `sum`), a dnnl.pool step (as X), a dnnl.concat step (any
//     input), or a generated kernel;
//   - at least one of them is a oneDNN step (between generated kernels the
//     layout gains nothing);
//   - it is not a result of the model, nor read through a view;
//
// where a generated kernel takes part only if its body is elementwise (a
// BatchNorm + ReLU, a residual add, a squeeze-and-excitation scale). Its
// row split is then redone: a block of rows over [N, C] is not contiguous
// channels-last; a split over the layout's own rows [N, H] is (below).
//
// The choice is recorded on both ends: on oneDNN steps as step attributes
// (`dst_layout`, `src_layout`, `sum_layout`, `src_layout_<i>` =
// "channels_last", in strata.attrs), which the runtime's kernels turn into
// channels-last memory descriptors (runtime/lib/kernels, activationDesc); on
// generated kernels as the positions of their channels-last operands and
// results (strata.channels_last_args, strata.channels_last_results); and,
// for people, in words in strata.layouts. The buffer has the same size
// either way, so the memory plan is unchanged.
//
// strata-apply-layouts (first pass of the cpu stage) makes the generated
// kernels keep that promise. Their signatures stay logical ([N, C, H, W]),
// and the body reads the bytes of a channels-last argument through a view
// of the physical shape [N, H, W, C]: a linalg.generic that reads the
// argument reads that view with its indexing map permuted (no copy), any
// other reader gets a linalg.transpose of it. A channels-last result is
// computed into such a view of its buffer by the generic that produces it
// (or transposed into it). A generic that writes or reads a channels-last
// buffer then has its loops interchanged so that the innermost loop walks
// the channels: the accesses stay contiguous and vectorize.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"
#include "RowParallel.h"

#include "strata/Conversion/GraphToLinalg.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace strata {
#define GEN_PASS_DEF_CHANNELSLASTPASS
#define GEN_PASS_DEF_APPLYLAYOUTSPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;
namespace graph = strata::graph;

namespace {

//===----------------------------------------------------------------------===//
// strata-channels-last: the choice
//===----------------------------------------------------------------------===//

/// Whether a buffer of `type` may be channels-last: an image batch
/// [N, C, spatial...] of 1 to 3 spatial dimensions.
bool isImageBatch(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() >= 3 && tensor.getRank() <= 5 &&
         tensor.hasStaticShape();
}

/// The library kernel a call runs ("dnnl.conv", ...), or "".
StringRef libraryOf(func::FuncOp callee) {
  auto library = callee ? kernel::get<kernel::Library>(callee) : nullptr;
  return library ? library.getValue() : "";
}

/// Whether `callee` is a generated kernel that can read and write
/// channels-last buffers at no cost: its body is elementwise (numpy
/// broadcasting, inference BatchNorm), so that every op lowers to a
/// linalg.generic whose indexing maps strata-apply-layouts permutes. (Other
/// bodies would be correct too, through transposes, but no faster than the
/// oneDNN step's own conversion.) A split over [N, C] rows is redone afterwards
/// (splitChannelsLastRows, dropSplitOverChannels).
bool isLayoutFreeCodegen(func::FuncOp callee) {
  if (!callee || !kernel::isCodegen(callee) ||
      kernel::has<kernel::Template>(callee) || callee.isExternal())
    return false;
  WalkResult walk = callee.getBody().walk([](Operation *op) {
    if (isa<func::ReturnOp, graph::ConstantOp, graph::BatchNormOp>(op) ||
        strata::isLowerableElementwise(op))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !walk.wasInterrupted();
}

/// Whether the oneDNN step `library` may write its result channels-last.
bool writesChannelsLast(StringRef library) {
  return library == "dnnl.conv" || library == "dnnl.pool" ||
         library == "dnnl.concat";
}

/// The attribute naming how a oneDNN call reads `operand` ("src_layout",
/// "sum_layout", a concat's "src_layout_<i>"), or "" when it cannot read it
/// channels-last.
std::string readerAttr(func::CallOp call, StringRef library, unsigned operand) {
  if (library == "dnnl.pool")
    return operand == 0 ? "src_layout" : "";
  if (library == "dnnl.concat")
    return "src_layout_" + std::to_string(operand);
  if (library != "dnnl.conv")
    return "";
  if (operand == 0)
    return "src_layout";
  // The sum is the fourth input, or the third when it is not a rank-1 bias
  // (the runtime kernel tells them apart the same way).
  unsigned count = call.getNumOperands();
  bool isSum = (count == 4 && operand == 3) ||
               (count == 3 && operand == 2 &&
                cast<ShapedType>(call.getOperand(2).getType()).getRank() != 1);
  return isSum ? "sum_layout" : "";
}

void setLibraryLayout(func::FuncOp callee, StringRef key) {
  NamedAttrList attrs;
  if (auto existing = kernel::get<kernel::LibraryAttrs>(callee))
    attrs.append(existing.getValue());
  attrs.set(key, StringAttr::get(callee.getContext(), "channels_last"));
  kernel::set<kernel::LibraryAttrs>(callee,
                                    attrs.getDictionary(callee.getContext()));
}

/// Adds `position` to the sorted positions attribute `H` of `callee`.
template <typename H> void addPosition(func::FuncOp callee, int64_t position) {
  SmallVector<int64_t> positions;
  if (auto existing = kernel::get<H>(callee))
    positions.assign(existing.asArrayRef().begin(),
                     existing.asArrayRef().end());
  if (llvm::is_contained(positions, position))
    return;
  positions.push_back(position);
  llvm::sort(positions);
  kernel::set<H>(callee,
                 DenseI64ArrayAttr::get(callee.getContext(), positions));
}

/// Appends `sentence` to the kernel's strata.layouts.
void explainLayout(func::FuncOp callee, const std::string &sentence) {
  std::string text = kernel::text<kernel::Layouts>(callee).str();
  if (llvm::StringRef(text).contains(sentence))
    return;
  text += (text.empty() ? "" : "; ") + sentence;
  kernel::set<kernel::Layouts>(callee,
                               StringAttr::get(callee.getContext(), text));
}

/// Whether a value of `type`, broadcast numpy-style against an image batch
/// of rank `rank`, is read whole by every block of channels-last rows: it
/// has size 1 (or no dimension) at the batch's dimensions 0 and 2.
bool wholeForEveryRow(Type type, int64_t rank) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return !isa<ShapedType>(type);
  int64_t offset = rank - tensor.getRank();
  for (int64_t dim : {int64_t(0), int64_t(2)}) {
    int64_t position = dim - offset;
    if (position >= 0 && position < tensor.getRank() &&
        tensor.getDimSize(position) != 1)
      return false;
  }
  return true;
}

/// Whether `value` has the rows of the image batch `image`: its rank and its
/// extents at dimensions 0 and 2 (N and the first spatial one).
bool hasImageRows(Value value, RankedTensorType image) {
  auto tensor = dyn_cast<RankedTensorType>(value.getType());
  return tensor && tensor.getRank() == image.getRank() &&
         tensor.getDimSize(0) == image.getDimSize(0) &&
         tensor.getDimSize(2) == image.getDimSize(2);
}

/// Splits a generated kernel whose image operands are all channels-last
/// over the rows of that layout, [N, first spatial dimension] (a row is the
/// rest: W x C for an [N, C, H, W] batch): each block is then contiguous in
/// every buffer. This is what splits a batch-1 BatchNorm + ReLU, whose
/// per-channel constants keep the row analysis of leading dimensions
/// (RowParallel.h) from splitting it over [N, C]. The block is that
/// analysis's heuristic: the fewest rows, dividing the spatial dimension,
/// that hold kMinBlockElements elements.
bool splitChannelsLastRows(func::FuncOp callee) {
  auto resultPositions = kernel::get<kernel::ChannelsLastResults>(callee);
  if (!resultPositions || callee.getNumResults() == 0 || callee.isExternal())
    return false;
  auto image = dyn_cast<RankedTensorType>(callee.getResultTypes()[0]);
  if (!image || !isImageBatch(image))
    return false;
  int64_t rank = image.getRank();
  // Every result channels-last and of the batch's shape.
  if (static_cast<int64_t>(resultPositions.size()) !=
      static_cast<int64_t>(callee.getNumResults()))
    return false;
  for (Type type : callee.getResultTypes())
    if (type != image)
      return false;
  // Every argument channels-last with the batch's shape, or read whole
  // (in either layout: a [N, C, 1, 1] gate is the same bytes both ways).
  auto argPositions = kernel::get<kernel::ChannelsLastArgs>(callee);
  for (auto [position, type] : llvm::enumerate(callee.getArgumentTypes())) {
    bool last =
        argPositions && llvm::is_contained(argPositions.asArrayRef(), position);
    if (!wholeForEveryRow(type, rank) && !(last && type == image))
      return false;
  }
  // Every value of the body has the rows, or is read whole (constants that
  // only a BatchNorm reads are per channel).
  WalkResult walk = callee.getBody().walk([&](Operation *op) {
    if (auto constant = dyn_cast<graph::ConstantOp>(op)) {
      bool perChannel = llvm::all_of(constant->getUses(), [](OpOperand &use) {
        return isa<graph::BatchNormOp>(use.getOwner()) &&
               use.getOperandNumber() >= 1;
      });
      return perChannel || wholeForEveryRow(constant.getType(), rank)
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    for (Value result : op->getResults())
      if (!hasImageRows(result, image) &&
          !wholeForEveryRow(result.getType(), rank) &&
          !isa<graph::BatchNormOp>(op)) // its running mean and variance
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return false;

  int64_t spatial = image.getDimSize(2);
  int64_t rows = image.getDimSize(0) * spatial;
  int64_t rowElements = image.getNumElements() / rows;
  int64_t block = rows;
  for (int64_t d = 1; d <= spatial && d < rows; ++d)
    if (spatial % d == 0 && d * rowElements >= strata::kMinBlockElements) {
      block = d;
      break;
    }
  if (block == rows)
    return false;
  MLIRContext *context = callee.getContext();
  auto i64 = IntegerType::get(context, 64);
  kernel::set<kernel::ParallelRows>(callee, IntegerAttr::get(i64, rows));
  kernel::set<kernel::ParallelBlock>(callee, IntegerAttr::get(i64, block));
  callee->removeAttr(kernel::name<kernel::ParallelDims>());
  kernel::set<kernel::ChannelsLastRows>(callee, UnitAttr::get(context));
  NamedAttrList tile;
  tile.set("rows", IntegerAttr::get(i64, rows));
  tile.set("rows_per_block", IntegerAttr::get(i64, block));
  tile.set("blocks", IntegerAttr::get(i64, rows / block));
  tile.set(
      "source",
      StringAttr::get(
          context, "channels-last rows: [N, dimension 2] of its channels-last "
                   "buffers, the fewest rows per block that hold at least " +
                       std::to_string(strata::kMinBlockElements) +
                       " elements, at " + std::to_string(rowElements) +
                       " per row"));
  kernel::set<kernel::Tile>(callee, tile.getDictionary(context));
  return true;
}

/// A channels-last kernel that does not split over the layout's rows keeps
/// a split over dimension 0 (whole images, contiguous in either layout) and
/// loses one over more dimensions ([N, C] rows are not contiguous
/// channels-last): it runs whole.
void dropSplitOverChannels(func::FuncOp callee) {
  auto dims = kernel::get<kernel::ParallelDims>(callee);
  if (!dims || dims.getInt() <= 1)
    return;
  for (StringRef name : {kernel::name<kernel::ParallelRows>(),
                         kernel::name<kernel::ParallelBlock>(),
                         kernel::name<kernel::ParallelDims>()})
    callee->removeAttr(name);
  MLIRContext *context = callee.getContext();
  NamedAttrList tile;
  tile.set(
      "source",
      StringAttr::get(context, "no split: its rows over dimensions 0 to " +
                                   std::to_string(dims.getInt() - 1) +
                                   " are not contiguous in its channels-last "
                                   "buffers, and they do not split over [N, "
                                   "dimension 2]"));
  kernel::set<kernel::Tile>(callee, tile.getDictionary(context));
}

struct ChannelsLastPass : strata::impl::ChannelsLastPassBase<ChannelsLastPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp entry = strata::getEntryFunction(module);
    if (!entry)
      return;
    SymbolTable symbols(module);
    auto calleeOf = [&](func::CallOp call) {
      return symbols.lookup<func::FuncOp>(call.getCallee());
    };
    entry.walk([&](func::CallOp producer) {
      func::FuncOp producerFn = calleeOf(producer);
      StringRef producerLibrary = libraryOf(producerFn);
      bool producerIsLibrary = writesChannelsLast(producerLibrary);
      if (producerIsLibrary ? producer.getNumResults() != 1
                            : !isLayoutFreeCodegen(producerFn))
        return;
      for (OpResult buffer : producer.getResults())
        decide(buffer, producerFn, producerIsLibrary, calleeOf);
    });
    for (auto callee : module.getOps<func::FuncOp>())
      if ((kernel::has<kernel::ChannelsLastArgs>(callee) ||
           kernel::has<kernel::ChannelsLastResults>(callee)) &&
          !splitChannelsLastRows(callee))
        dropSplitOverChannels(callee);
  }

  template <typename CalleeOf>
  void decide(OpResult buffer, func::FuncOp producerFn, bool producerIsLibrary,
              CalleeOf calleeOf) {
    if (!isImageBatch(buffer.getType()) || buffer.use_empty())
      return;
    struct Reader {
      func::CallOp call;
      unsigned operand;
      std::string libraryKey; // "" for a generated kernel
    };
    SmallVector<Reader> readers;
    bool anyLibrary = producerIsLibrary;
    for (OpOperand &use : buffer.getUses()) {
      auto reader = dyn_cast<func::CallOp>(use.getOwner());
      if (!reader)
        return; // a view, the model's result, ...
      func::FuncOp readerFn = calleeOf(reader);
      unsigned operand = use.getOperandNumber();
      if (isLayoutFreeCodegen(readerFn)) {
        readers.push_back({reader, operand, ""});
        continue;
      }
      std::string key = readerAttr(reader, libraryOf(readerFn), operand);
      if (key.empty())
        return; // a library step that reads row-major only
      readers.push_back({reader, operand, key});
      anyLibrary = true;
    }
    if (!anyLibrary)
      return;
    if (producerIsLibrary) {
      setLibraryLayout(producerFn, "dst_layout");
      explainLayout(producerFn, "output channels-last: every reader is a "
                                "oneDNN step or a generated kernel (no "
                                "conversion)");
    } else {
      addPosition<kernel::ChannelsLastResults>(producerFn,
                                               buffer.getResultNumber());
      explainLayout(producerFn,
                    "writes result " +
                        std::to_string(buffer.getResultNumber()) +
                        " channels-last for the oneDNN steps that read it");
    }
    // Who writes the buffer channels-last, for the generated readers'
    // reasons: oneDNN, or a generated kernel doing so for oneDNN's readers.
    std::string writer =
        producerIsLibrary
            ? std::string("as oneDNN writes it")
            : "as " + producerFn.getSymName().str() +
                  " writes it for the oneDNN steps that also read it";
    for (const Reader &reader : readers) {
      func::FuncOp readerFn = calleeOf(reader.call);
      if (!reader.libraryKey.empty()) {
        setLibraryLayout(readerFn, reader.libraryKey);
        continue;
      }
      addPosition<kernel::ChannelsLastArgs>(readerFn, reader.operand);
      explainLayout(readerFn, "reads operand " +
                                  std::to_string(reader.operand) +
                                  " channels-last, " + writer);
    }
  }
};

//===----------------------------------------------------------------------===//
// strata-apply-layouts: generated kernels read and write what was chosen
//===----------------------------------------------------------------------===//

RankedTensorType physicalType(RankedTensorType logical) {
  SmallVector<int64_t> shape;
  for (int64_t dim : strata::channelsLastOrder(logical.getRank()))
    shape.push_back(logical.getDimSize(dim));
  return logical.clone(shape);
}

/// `value`'s elements in their row-major order, as a tensor of `type` (the
/// same number of elements): a collapse to one dimension and an expand,
/// which bufferize to views.
Value reinterpret(OpBuilder &b, Location loc, Value value,
                  RankedTensorType type) {
  auto from = cast<RankedTensorType>(value.getType());
  ReassociationIndices all;
  for (int64_t dim = 0; dim < from.getRank(); ++dim)
    all.push_back(dim);
  auto flat =
      RankedTensorType::get({from.getNumElements()}, from.getElementType());
  Value line = tensor::CollapseShapeOp::create(
      b, loc, flat, value, ArrayRef<ReassociationIndices>{all});
  ReassociationIndices to;
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    to.push_back(dim);
  return tensor::ExpandShapeOp::create(b, loc, type, line,
                                       ArrayRef<ReassociationIndices>{to});
}

/// `map` reading the channels-last view instead of the logical tensor.
AffineMap permuteResults(AffineMap map) {
  SmallVector<AffineExpr> results;
  for (int64_t dim : strata::channelsLastOrder(map.getNumResults()))
    results.push_back(map.getResult(dim));
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

/// Interchanges `generic`'s loops so that the operand `operand` (whose
/// indexing map is a permutation of all loops) is walked in its own order.
void walkInOrderOf(RewriterBase &rewriter, linalg::GenericOp &generic,
                   OpOperand &operand) {
  AffineMap map = generic.getMatchingIndexingMap(&operand);
  if (!map.isPermutation() || map.isIdentity())
    return;
  SmallVector<unsigned> interchange;
  for (AffineExpr expr : map.getResults())
    interchange.push_back(cast<AffineDimExpr>(expr).getPosition());
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::GenericOp> result =
      linalg::interchangeGenericOp(rewriter, generic, interchange);
  if (succeeded(result))
    generic = *result;
}

/// Makes the body of `kernel` read its arguments at `args` and write its
/// results at `results` channels-last.
LogicalResult applyLayouts(func::FuncOp kernel, ArrayRef<int64_t> args,
                           ArrayRef<int64_t> results) {
  IRRewriter rewriter(kernel.getContext());
  Block &body = kernel.getBody().front();
  // Generics whose loops should follow a channels-last operand, and which.
  SmallVector<std::pair<linalg::GenericOp, unsigned>> reorder;

  for (int64_t position : args) {
    BlockArgument arg = body.getArgument(position);
    auto logical = dyn_cast<RankedTensorType>(arg.getType());
    if (!logical || !isImageBatch(logical))
      return kernel.emitError("internal error: channels-last argument ")
             << position << " is not an image batch";
    rewriter.setInsertionPointToStart(&body);
    Value physical =
        reinterpret(rewriter, kernel.getLoc(), arg, physicalType(logical));
    Operation *viewOp = physical.getDefiningOp();
    Operation *flatOp = viewOp->getOperand(0).getDefiningOp();
    Value transposed;
    for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
      Operation *user = use.getOwner();
      if (user == flatOp)
        continue;
      auto generic = dyn_cast<linalg::GenericOp>(user);
      if (generic && generic.isDpsInput(&use)) {
        SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
        unsigned index = use.getOperandNumber();
        maps[index] = permuteResults(maps[index]);
        rewriter.modifyOpInPlace(generic, [&] {
          use.set(physical);
          generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
        });
        reorder.push_back({generic, index});
        continue;
      }
      if (!transposed) {
        rewriter.setInsertionPointAfter(viewOp);
        SmallVector<int64_t> toLogical = invertPermutationVector(
            strata::channelsLastOrder(logical.getRank()));
        Value init = tensor::EmptyOp::create(rewriter, kernel.getLoc(),
                                             logical.getShape(),
                                             logical.getElementType());
        transposed = linalg::TransposeOp::create(rewriter, kernel.getLoc(),
                                                 physical, init, toLogical)
                         ->getResult(0);
      }
      rewriter.modifyOpInPlace(user, [&] { use.set(transposed); });
    }
  }

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (int64_t position : results) {
    Value value = ret.getOperand(position);
    auto logical = dyn_cast<RankedTensorType>(value.getType());
    if (!logical || !isImageBatch(logical))
      return kernel.emitError("internal error: channels-last result ")
             << position << " is not an image batch";
    RankedTensorType physical = physicalType(logical);
    Location loc = value.getLoc();
    auto generic = value.getDefiningOp<linalg::GenericOp>();
    if (generic && value.hasOneUse()) {
      // The generic computes into a channels-last view of a logical buffer:
      // bufferized, the buffer becomes the kernel's out-parameter.
      auto result = cast<OpResult>(value);
      OpOperand *init = generic.getDpsInitOperand(result.getResultNumber());
      if (generic.payloadUsesValueFromOperand(init))
        return kernel.emitError("internal error: channels-last result ")
               << position << " is computed in place of a value it reads";
      rewriter.setInsertionPoint(generic);
      Value buffer = tensor::EmptyOp::create(rewriter, loc, logical.getShape(),
                                             logical.getElementType());
      Value view = reinterpret(rewriter, loc, buffer, physical);
      SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
      unsigned index = init->getOperandNumber();
      maps[index] = permuteResults(maps[index]);
      SmallVector<Type> types(generic.getResultTypes());
      types[result.getResultNumber()] = physical;
      SmallVector<Value> inits(generic.getDpsInits());
      inits[result.getResultNumber()] = view;
      auto replacement = linalg::GenericOp::create(
          rewriter, generic.getLoc(), types, generic.getDpsInputs(), inits,
          maps, generic.getIteratorTypesArray());
      replacement->setDiscardableAttrs(generic->getDiscardableAttrDictionary());
      rewriter.inlineRegionBefore(generic.getRegion(), replacement.getRegion(),
                                  replacement.getRegion().begin());
      for (OpResult old : generic->getResults())
        if (old != result)
          rewriter.replaceAllUsesWith(
              old, replacement->getResult(old.getResultNumber()));
      // Loops already follow a channels-last input? Keep one order: the
      // result's, which is written once per element.
      llvm::erase_if(reorder,
                     [&](auto &entry) { return entry.first == generic; });
      rewriter.setInsertionPoint(ret);
      Value logicalValue = reinterpret(
          rewriter, loc, replacement->getResult(result.getResultNumber()),
          logical);
      rewriter.modifyOpInPlace(ret,
                               [&] { ret.setOperand(position, logicalValue); });
      Value oldInit = init->get();
      rewriter.eraseOp(generic);
      if (auto empty = oldInit.getDefiningOp<tensor::EmptyOp>();
          empty && empty->use_empty())
        rewriter.eraseOp(empty);
      reorder.push_back({replacement, index});
      continue;
    }
    rewriter.setInsertionPoint(ret);
    Value init = tensor::EmptyOp::create(rewriter, loc, physical.getShape(),
                                         physical.getElementType());
    Value computed = linalg::TransposeOp::create(
                         rewriter, loc, value, init,
                         strata::channelsLastOrder(logical.getRank()))
                         ->getResult(0);
    Value logicalValue = reinterpret(rewriter, loc, computed, logical);
    rewriter.modifyOpInPlace(ret,
                             [&] { ret.setOperand(position, logicalValue); });
  }

  // A generic takes the loop order of its first channels-last operand among
  // its results, else its inputs.
  llvm::SmallPtrSet<Operation *, 8> done;
  for (bool results : {true, false})
    for (auto [generic, index] : reorder) {
      if (done.contains(generic) ||
          generic.isDpsInit(&generic->getOpOperand(index)) != results)
        continue;
      done.insert(generic);
      linalg::GenericOp current = generic;
      walkInOrderOf(rewriter, current, current->getOpOperand(index));
    }
  return success();
}

struct ApplyLayoutsPass : strata::impl::ApplyLayoutsPassBase<ApplyLayoutsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp kernels = strata::getKernelsModule(module);
    if (!kernels)
      return;
    SymbolTable definitions(kernels);
    for (auto declaration : module.getOps<func::FuncOp>()) {
      auto args = kernel::get<kernel::ChannelsLastArgs>(declaration);
      auto results = kernel::get<kernel::ChannelsLastResults>(declaration);
      if (!args && !results)
        continue;
      auto definition =
          definitions.lookup<func::FuncOp>(declaration.getSymName());
      if (!definition || definition.isExternal()) {
        declaration.emitError("internal error: the kernel's channels-last "
                              "operands have no body to apply them to");
        return signalPassFailure();
      }
      if (failed(applyLayouts(
              definition, args ? args.asArrayRef() : ArrayRef<int64_t>(),
              results ? results.asArrayRef() : ArrayRef<int64_t>())))
        return signalPassFailure();
    }
  }
};

} // namespace

SmallVector<int64_t> strata::applyChannelsLastRows(func::FuncOp kernel,
                                                   int64_t block) {
  auto image = cast<RankedTensorType>(kernel.getResultTypes()[0]);
  int64_t rows = image.getDimSize(0) * image.getDimSize(2);
  Block &body = kernel.getBody().front();
  auto shrink = [&](Value value) {
    if (!hasImageRows(value, image))
      return;
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape[0] = 1;
    shape[2] = block;
    value.setType(type.clone(shape));
  };
  SmallVector<int64_t> strides;
  auto stride = [&](Value value) -> int64_t {
    if (!hasImageRows(value, image))
      return 0;
    auto type = cast<RankedTensorType>(value.getType());
    return block * (type.getNumElements() / rows) *
           strata::rowElementBytes(type.getElementType());
  };
  for (BlockArgument arg : body.getArguments())
    strides.push_back(stride(arg));
  for (Value result : body.getTerminator()->getOperands())
    strides.push_back(stride(result));
  for (BlockArgument arg : body.getArguments())
    shrink(arg);
  body.walk([&](Operation *op) {
    for (Value result : op->getResults())
      shrink(result);
  });
  kernel.setType(FunctionType::get(kernel.getContext(), body.getArgumentTypes(),
                                   body.getTerminator()->getOperandTypes()));
  return strides;
}
