//===- GpuLowering.cpp - the cuda target's stage pipelines ------*- C++ -*-===//
//
// The gpu and llvm stages for --target=cuda (Gpu.h), and the pass that
// lowers what only GPU kernels contain:
//
//   strata-gpu-to-nvvm   gpu dialect ops (thread and block ids, barriers,
//                        shuffles) to NVVM intrinsics, and math functions to
//                        calls of CUDA's libdevice (__nv_expf, ...), which
//                        the object stage links. The CPU's libm calls do not
//                        exist on the GPU.
//
// Everything else is upstream's: the same bufferization as the cpu stage,
// and the usual conversions to the LLVM dialect with the bare-pointer
// calling convention (one pointer per buffer: the CUDA executor's ABI).
//
//===----------------------------------------------------------------------===//

#include "FloatMinMax.h"
#include "Gpu.h"
#include "Passes.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_GPUTONVVMPASS
#include "Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;

/// Whether --cpu leaves the GPU to strata: the H100/H200.
static bool nativeGpu(const strata::CompileOptions &options) {
  return options.cpu.empty() || options.cpu == "native";
}

std::string strata::gpuArchitecture(const CompileOptions &options) {
  return nativeGpu(options) ? "sm_90a" : options.cpu;
}

std::string strata::gpuPortableArchitecture(const CompileOptions &options) {
  return nativeGpu(options) ? "sm_90" : "";
}

strata::GpuArchitectures
strata::gpuCodeArchitectures(mlir::ModuleOp module,
                             const CompileOptions &options) {
  std::string arch = gpuArchitecture(options);
  std::string portable = gpuPortableArchitecture(options);
  if (portable.empty())
    return {arch, arch};
  if (gpuHasWgmmaForms(module))
    return {arch, portable};
  return {portable, portable};
}

std::vector<strata::PassEntry>
strata::gpuStagePipeline(const TargetFacts &facts) {
  auto nested = [](std::string name, std::string opts = "") {
    return strata::PassEntry{std::move(name), std::move(opts), true};
  };
  // Bufferized and deallocated as for the CPU, then mapped: the mapping
  // turns the body's temporaries into slices of shared or scratch memory
  // and drops their deallocations (the deallocation passes must run before
  // it: they refuse gpu ops, whose memory effects they do not know). Buffers
  // allocated inside loops or branches stay allocations. The linalg ops the
  // mapping left (inside such code) become loops.
  // Pointwise kernels of several ops become one all-parallel op first, while
  // they are still on tensors (GpuPullFusion.cpp).
  std::vector<strata::PassEntry> entries = {
      strata::PassEntry{"strata-gpu-window-indices", "", false},
      strata::PassEntry{"strata-gpu-pull-fusion", "", false}};
  std::vector<strata::PassEntry> bufferize = strata::bufferizationPasses();
  entries.insert(entries.end(), bufferize.begin(), bufferize.end());
  entries.insert(
      entries.end(),
      {nested("canonicalize"), nested("strata-copy-to-linalg"),
       // Dynamic shared memory as far as the GPU allows it; wgmma where the
       // GPU has it.
       strata::PassEntry{
           "strata-gpu-map",
           "dynamic-shared-limit=" + std::to_string(facts.dynamicSharedLimit) +
               " block-shared-limit=" + std::to_string(facts.blockSharedLimit) +
               (facts.wgmma ? " wgmma=true" : "") +
               (facts.gridDependency ? " grid-dependency=true" : ""),
           false},
       nested("convert-linalg-to-loops"), nested("canonicalize")});
  return entries;
}

std::vector<strata::PassEntry>
strata::gpuLlvmPipeline(const CompileOptions &options) {
  (void)options;
  auto nested = [](std::string name, std::string opts = "") {
    return strata::PassEntry{std::move(name), std::move(opts), true};
  };
  // strata-gpu-to-nvvm comes before the math and arith conversions so that
  // math functions become libdevice calls, not LLVM intrinsics that the
  // NVPTX backend would turn into calls of libm functions.
  // cse first: the mapping's lanes each compute what they share (a grouped
  // convolution's input times its padding test), and strata-gpu-to-nvvm's
  // ExactHalfProducts asks whether a factor is shared.
  std::vector<strata::PassEntry> entries = {nested("lower-affine"),
                                            nested("convert-scf-to-cf"),
                                            nested("cse"),
                                            nested("strata-gpu-to-nvvm"),
                                            nested("convert-math-to-funcs"),
                                            nested("convert-math-to-llvm"),
                                            nested("arith-expand"),
                                            nested("expand-strided-metadata"),
                                            nested("lower-affine"),
                                            nested("convert-vector-to-llvm")};
  std::vector<strata::PassEntry> tail = strata::llvmConversionTail();
  entries.insert(entries.end(), tail.begin(), tail.end());
  return entries;
}

namespace {

/// Math ops that libdevice implements (float operands only: integer ones
/// such as math.absi and math.ipowi are lowered by the generic passes).
bool isLibdeviceMath(Operation *op) {
  if (!isa<math::AbsFOp, math::AcosOp, math::AcoshOp, math::AsinOp,
           math::AsinhOp, math::AtanOp, math::Atan2Op, math::AtanhOp,
           math::CbrtOp, math::CeilOp, math::CosOp, math::CoshOp, math::ErfOp,
           math::ErfcOp, math::ExpOp, math::Exp2Op, math::ExpM1Op,
           math::FloorOp, math::LogOp, math::Log10Op, math::Log1pOp,
           math::Log2Op, math::PowFOp, math::RoundOp, math::RoundEvenOp,
           math::RsqrtOp, math::SinOp, math::SinhOp, math::SqrtOp, math::TanOp,
           math::TanhOp, arith::RemFOp>(op))
    return false;
  return llvm::all_of(op->getResultTypes(), [](Type type) {
    return isa<FloatType>(getElementTypeOrSelf(type));
  });
}

/// An f32 math.exp2 marked `afn` (approximate functions) as ex2.approx.ftz:
/// one MUFU.EX2, which flushes a subnormal result to zero, where libdevice's
/// exp2f keeps subnormals at the cost of a compare and two multiplies. Only
/// code that does not need subnormal results marks its exp2 so (the bf16
/// GELU, whose exponent is shifted out of their range).
struct ApproxExp2ToNvvm : OpRewritePattern<math::Exp2Op> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::Exp2Op op,
                                PatternRewriter &rewriter) const override {
    if (!op.getType().isF32() ||
        !arith::bitEnumContainsAll(op.getFastmath(), arith::FastMathFlags::afn))
      return failure();
    rewriter.replaceOp(
        op, LLVM::CallIntrinsicOp::create(
                rewriter, op.getLoc(), op.getType(),
                rewriter.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"),
                ValueRange{op.getOperand()})
                .getResults());
    return success();
  }
};

/// A half-precision product widened to f32 only to be added to f32 (a
/// convolution's or a product's term added to its f32 accumulator,
/// GraphToLinalg's reductions) is computed in f32 from the widened factors
/// when one factor is shared by several products (a grouped convolution's
/// input, which the output channels a thread computes all multiply): the
/// product of two f16 or two bf16 values is exact in f32, so the sum only
/// loses the rounding of each term to 16 bits, and the shared factor is
/// widened once, each term a conversion of its own factor and one FFMA
/// (the kernels contract, GpuCodegen.cpp) instead of a 16-bit multiply, a
/// conversion and an add. Where neither factor is shared (a depthwise
/// convolution's lanes, each its own channel's input and weight), the form
/// stays: it would widen both factors of every term, two conversions where
/// the 16-bit product needs one, and ConvNeXt-T's 7x7 depthwise sums took
/// 10% longer so (bench/RESULTS.md, 2026-12-07).
struct ExactHalfProducts : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp ext,
                                PatternRewriter &rewriter) const override {
    auto mul = ext.getIn().getDefiningOp<arith::MulFOp>();
    Type wide = getElementTypeOrSelf(ext.getType());
    Type narrow = getElementTypeOrSelf(ext.getIn().getType());
    if (!mul || !wide.isF32() || !(narrow.isF16() || narrow.isBF16()) ||
        ext->use_empty() || !llvm::all_of(ext->getUsers(), [](Operation *user) {
          return isa<arith::AddFOp>(user);
        }))
      return failure();
    // Shared: read by another product too (or by the widening a product
    // rewritten before this one left).
    if (mul.getLhs().hasOneUse() && mul.getRhs().hasOneUse())
      return failure();
    Location loc = ext.getLoc();
    Value lhs =
        arith::ExtFOp::create(rewriter, loc, ext.getType(), mul.getLhs());
    Value rhs =
        arith::ExtFOp::create(rewriter, loc, ext.getType(), mul.getRhs());
    rewriter.replaceOpWithNewOp<arith::MulFOp>(ext, lhs, rhs,
                                               mul.getFastmathAttr());
    return success();
  }
};

struct GpuToNvvmPass : strata::impl::GpuToNvvmPassBase<GpuToNvvmPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    {
      RewritePatternSet exact(context);
      exact.add<ExactHalfProducts>(context);
      if (failed(applyPatternsGreedily(getOperation(), std::move(exact))))
        return signalPassFailure();
    }
    // The mapping's block size as PTX's .maxntid, which ptxas keeps the
    // registers within.
    getOperation().walk([](func::FuncOp body) {
      if (auto threads = kernel::get<kernel::MaxThreads>(body)) {
        body->setAttr("nvvm.maxntid",
                      DenseI32ArrayAttr::get(
                          body.getContext(),
                          {static_cast<int32_t>(threads.getInt()), 1, 1}));
        body->removeAttr(kernel::name<kernel::MaxThreads>());
      }
    });
    LowerToLLVMOptions options(context);
    options.useBarePtrCallConv = true;
    LLVMTypeConverter converter(context, options);
    configureGpuToNVVMTypeConverter(converter);
    RewritePatternSet patterns(context);
    populateGpuToNVVMConversionPatterns(converter, patterns);
    populateLibDeviceConversionPatterns(converter, patterns);
    strata::populateFloatMinMaxToLlvmPatterns(patterns);
    // Before libdevice's exp2f, which would otherwise take these.
    patterns.add<ApproxExp2ToNvvm>(context, /*benefit=*/2);
    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect>();
    target.addIllegalDialect<gpu::GPUDialect>();
    target.addDynamicallyLegalOp<arith::MaxNumFOp, arith::MinNumFOp,
                                 arith::MaximumFOp, arith::MinimumFOp>(
        [](Operation *op) {
          return !strata::isLlvmFloat(op->getResult(0).getType());
        });
    target.markUnknownOpDynamicallyLegal(
        [](Operation *op) { return !isLibdeviceMath(op); });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void strata::registerGpuPasses() {
  static bool done = [] {
    registerGpuPullFusionPass();
    registerGpuWindowIndicesPass();
    registerGpuMapPass();
    registerGpuToNvvmPass();
    return true;
  }();
  (void)done;
}
