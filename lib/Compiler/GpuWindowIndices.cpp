//===- GpuWindowIndices.cpp - windows' indices computed, not loaded ------===//
//
// strata-conv-to-gemm reads a convolution's or pooling's windows with a
// gather whose index is a constant [P, KK] (the input point of each output
// point and kernel offset, over the flattened spatial axes), and zeroes the
// padding with a constant 0/1 mask [P, KK, 1] (a max pooling: an i1
// condition). On the GPU a depthwise convolution is one reduction kernel in
// which each thread sums its output point's KK taps: every tap loaded its
// 8-byte index and its mask besides the input and the weight, two of the
// four loads, and they are the same for all channels.
//
// ConvToGemm marks those constants with the windows they describe
// (`strata.windows`: kind, input and output extents, kernel, strides,
// dilations, pads). This pass, the gpu stage's first, finds each marked
// constant passed to a generated kernel and, where the kernel's
// linalg.generic reads it as an input indexed by two of its loops (the
// output point and the offset), or by one loop per kernel dimension for
// the offset (a depthwise convolution's and a pooling's windows, whose sum
// runs one loop per kernel dimension), computes the value from those loops'
// indices instead: the output point's and the offset's coordinates, the
// input position at * stride - pad + offset * dilation, and whether it lies
// inside the input, in 32-bit arithmetic (a division by a constant is then
// a multiply and a shift; 64-bit division is emulated on the GPU, and a
// first version computing in 64 bits was slower than the loads). The input
// then has no reader and is erased from the op (linalg's unused-operand
// cleanup), so the kernel never loads it. Windows whose positions or flat
// index could pass 2^31 keep their loads.
//
//===----------------------------------------------------------------------===//

#include "CompilerUtils.h"
#include "Passes.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_GPUWINDOWINDICESPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;

namespace {

/// A `strata.windows` description (ConvToGemm.cpp, windowsAttr).
struct WindowSpec {
  std::string kind; // "index", "mask" or "inside"
  SmallVector<int64_t> in, out, kernel, strides, dilations, pads;

  static std::optional<WindowSpec> parse(DictionaryAttr dict) {
    WindowSpec w;
    auto kind = dict.getAs<StringAttr>("kind");
    if (!kind)
      return std::nullopt;
    w.kind = kind.getValue().str();
    auto ints = [&](StringRef key, SmallVectorImpl<int64_t> &into) {
      auto array = dict.getAs<DenseI64ArrayAttr>(key);
      if (!array)
        return false;
      into.assign(array.asArrayRef().begin(), array.asArrayRef().end());
      return true;
    };
    if (!ints("input", w.in) || !ints("output", w.out) ||
        !ints("kernel", w.kernel) || !ints("strides", w.strides) ||
        !ints("dilations", w.dilations) || !ints("pads", w.pads))
      return std::nullopt;
    size_t spatial = w.in.size();
    if (spatial == 0 || w.out.size() != spatial || w.kernel.size() != spatial ||
        w.strides.size() != spatial || w.dilations.size() != spatial ||
        w.pads.size() != 2 * spatial ||
        (w.kind != "index" && w.kind != "mask" && w.kind != "inside") ||
        !w.fitsInt32())
      return std::nullopt;
    return w;
  }

  /// Whether every position and flat index fits in 32 bits, where the
  /// arithmetic is done (64-bit division on a GPU is a long emulated
  /// sequence; by a constant in 32 bits it is a multiply and a shift).
  bool fitsInt32() const {
    int64_t flat = 1;
    for (size_t i = 0; i < in.size(); ++i) {
      int64_t reach = out[i] * strides[i] + kernel[i] * dilations[i];
      if (reach > INT32_MAX || pads[i] > INT32_MAX)
        return false;
      flat *= in[i];
      if (flat > INT32_MAX)
        return false;
    }
    return true;
  }

  /// The value at (point, offset), built at `b`'s insertion point, of
  /// `type` (i64 for an index, the mask's float type, i1 for inside).
  /// `offset` is the flat kernel offset, or its coordinates, one per kernel
  /// dimension (windows whose offsets keep an axis each).
  Value build(OpBuilder &b, Location loc, Value point, ValueRange offset,
              Type type) const {
    Type i32 = b.getI32Type();
    auto c = [&](int64_t v) {
      return arith::ConstantIntOp::create(b, loc, i32, v).getResult();
    };
    // Row-major coordinates of the output point and of the offset.
    size_t spatial = in.size();
    SmallVector<Value> at(spatial), off(spatial);
    bool split = offset.size() == spatial && spatial > 1;
    Value restP = arith::IndexCastUIOp::create(b, loc, i32, point);
    Value restK =
        split ? Value() : arith::IndexCastUIOp::create(b, loc, i32, offset[0]);
    for (size_t i = spatial; i-- > 0;) {
      at[i] = arith::RemUIOp::create(b, loc, restP, c(out[i]));
      restP = arith::DivUIOp::create(b, loc, restP, c(out[i]));
      if (split) {
        off[i] = arith::IndexCastUIOp::create(b, loc, i32, offset[i]);
        continue;
      }
      off[i] = arith::RemUIOp::create(b, loc, restK, c(kernel[i]));
      restK = arith::DivUIOp::create(b, loc, restK, c(kernel[i]));
    }
    Value inside, flat = c(0);
    for (size_t i = 0; i < spatial; ++i) {
      // at * stride - pad + offset * dilation, signed.
      Value pos = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, at[i], c(strides[i])),
          arith::MulIOp::create(b, loc, off[i], c(dilations[i])));
      pos = arith::SubIOp::create(b, loc, pos, c(pads[i]));
      Value low =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, pos, c(0));
      Value high = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, pos,
                                         c(in[i]));
      Value both = arith::AndIOp::create(b, loc, low, high);
      inside = inside ? arith::AndIOp::create(b, loc, inside, both) : both;
      flat = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, flat, c(in[i])), pos);
    }
    if (kind == "inside")
      return inside;
    if (kind == "index") {
      Value index = arith::SelectOp::create(b, loc, inside, flat, c(0));
      return arith::ExtUIOp::create(b, loc, type, index);
    }
    auto floatType = cast<FloatType>(type);
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, 1));
    Value zero =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, 0));
    return arith::SelectOp::create(b, loc, inside, one, zero);
  }
};

/// Replaces the reads of `arg` (a kernel argument holding `windows`) by
/// generic ops that take it as an input indexed by (point, offset[, 0]), or
/// by (point, offset_0, .., offset_k-1[, 0]) where the windows keep an axis
/// per kernel dimension (ConvToGemm's splitOffsets); returns how many it
/// replaced.
int computeInPlaceOfLoads(BlockArgument arg, const WindowSpec &windows) {
  int replaced = 0;
  size_t spatial = windows.in.size();
  for (OpOperand &use : llvm::make_early_inc_range(arg.getUses())) {
    auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!generic || !generic.isDpsInput(&use))
      continue;
    AffineMap map = generic.getMatchingIndexingMap(&use);
    auto type = cast<RankedTensorType>(arg.getType());
    // The leading results are loops, each its own; the rest are zeros.
    ArrayRef<AffineExpr> results = map.getResults();
    size_t loops = 0;
    while (loops < results.size() && isa<AffineDimExpr>(results[loops]))
      ++loops;
    bool shaped = loops == 2 || (loops == 1 + spatial &&
                                 type.getShape().slice(1, spatial) ==
                                     ArrayRef<int64_t>(windows.kernel));
    if (map.getNumResults() != type.getRank() || !shaped ||
        llvm::any_of(results.drop_front(loops), [](AffineExpr e) {
          auto constant = dyn_cast<AffineConstantExpr>(e);
          return !constant || constant.getValue() != 0;
        }))
      continue;
    Block &body = generic.getRegion().front();
    BlockArgument in = body.getArgument(use.getOperandNumber());
    OpBuilder b(&body, body.begin());
    Location loc = generic.getLoc();
    SmallVector<Value> index;
    for (AffineExpr e : results.take_front(loops))
      index.push_back(linalg::IndexOp::create(
          b, loc, cast<AffineDimExpr>(e).getPosition()));
    in.replaceAllUsesWith(windows.build(b, loc, index.front(),
                                        ArrayRef<Value>(index).drop_front(),
                                        type.getElementType()));
    ++replaced;
  }
  return replaced;
}

struct GpuWindowIndicesPass
    : strata::impl::GpuWindowIndicesPassBase<GpuWindowIndicesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    ModuleOp kernels = strata::getKernelsModule(module);
    if (!kernels)
      return;
    llvm::SmallPtrSet<Operation *, 8> changed;
    module.walk([&](func::CallOp call) {
      if (call->getParentOfType<ModuleOp>() != module)
        return;
      auto decl = module.lookupSymbol<func::FuncOp>(call.getCallee());
      auto body = kernels.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!decl || !body || body.isDeclaration())
        return;
      auto kind = kernel::get<kernel::Kind>(decl);
      if (!kind || kind.getValue() != "codegen")
        return;
      for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
        Operation *def = operand.getDefiningOp();
        DictionaryAttr dict =
            def ? kernel::get<kernel::Windows>(def) : DictionaryAttr();
        std::optional<WindowSpec> windows =
            dict ? WindowSpec::parse(dict) : std::nullopt;
        // A kernel split into row blocks sees a block of the constant, and
        // its loops count within the block: only whole ones are rewritten.
        if (!windows || i >= body.getNumArguments() ||
            body.getArgument(i).getType() != operand.getType() ||
            computeInPlaceOfLoads(body.getArgument(i), *windows) == 0)
          continue;
        changed.insert(body);
        std::string note = "its windows' index and padding computed from "
                           "the loops, not loaded (strata-gpu-window-"
                           "indices)";
        if (auto earlier = kernel::get<kernel::GpuReason>(decl)) {
          if (earlier.getValue().contains(note))
            continue;
          note = earlier.getValue().str() + "; " + note;
        }
        kernel::set<kernel::GpuReason>(decl,
                                       StringAttr::get(&getContext(), note));
      }
    });
    // The inputs nothing reads any more leave the generic ops.
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (Operation *body : changed)
      if (failed(applyPatternsGreedily(body, frozen)))
        return signalPassFailure();
  }
};

} // namespace
