//===- GpuToRocdl.cpp - the rocm target's gpu lowering ----------*- C++ -*-===//
//
// strata-gpu-to-rocdl, the rocm target's counterpart of strata-gpu-to-nvvm:
//
//  - math functions become arithmetic: MLIR's expansions (tanh, pow, ...)
//    and polynomial approximations (exp, log, erf, ...), f16 and bf16
//    computed in f32. What is left (sqrt, fabs, floor, fma, ...) the LLVM
//    conversions turn into intrinsics that the AMDGPU backend lowers to
//    instructions. ROCm's device libraries (ocml) would be the alternative;
//    Debian's are older than the GPUs strata targets;
//  - gpu dialect ops (ids, barriers, shuffles) become ROCDL.
//
// and strata-rocdl-kernels, after the conversions to the LLVM dialect:
// each mapped kernel body (strata.max_threads) becomes an AMDGPU kernel
// (rocdl.kernel) whose workgroups have at most that many threads
// (rocdl.max_flat_work_group_size).
//
//===----------------------------------------------------------------------===//

#include "ROCm/RocmTarget.h"

#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Conversion/GPUToROCDL/GPUToROCDLPass.h"
#include "mlir/Conversion/GPUToROCDL/Runtimes.h"
#include "mlir/Conversion/LLVMCommon/LoweringOptions.h"
#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/AMDGPU/Utils/Chipset.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DECL
#define GEN_PASS_DEF_GPUTOROCDLPASS
#define GEN_PASS_DEF_ROCDLKERNELSPASS
#define GEN_PASS_REGISTRATION
#include "ROCm/Passes.h.inc"
} // namespace strata

using namespace mlir;
namespace kernel = strata::kernel;

namespace {

struct GpuToRocdlPass : strata::impl::GpuToRocdlPassBase<GpuToRocdlPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    FailureOr<amdgpu::Chipset> chip = amdgpu::Chipset::parse(chipset);
    if (failed(chip)) {
      getOperation().emitError("strata-gpu-to-rocdl: '")
          << chipset << "' is not an AMD GPU (gfx942, gfx1100, ...)";
      return signalPassFailure();
    }
    // Every math function in arithmetic, f16 and bf16 through f32.
    RewritePatternSet math(context);
    math::populateExpansionPatterns(math);
    auto all = [](StringRef) { return true; };
    populateMathF32ExpansionPatterns(math, all);
    populateMathPolynomialApproximationPatterns(math, all);
    if (failed(applyPatternsGreedily(getOperation(), std::move(math))))
      return signalPassFailure();

    LowerToLLVMOptions options(context);
    options.useBarePtrCallConv = true;
    LLVMTypeConverter converter(context, options);
    RewritePatternSet patterns(context);
    populateGpuToROCDLConversionPatterns(converter, patterns,
                                         gpu::amd::Runtime::HIP, *chip);
    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect, ROCDL::ROCDLDialect>();
    target.addIllegalDialect<gpu::GPUDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

/// After the conversions to the LLVM dialect: each mapped body an AMDGPU
/// kernel (rocdl.kernel, which ROCDL allows on llvm.func only) whose
/// workgroups have at most the mapping's threads.
struct RocdlKernelsPass : strata::impl::RocdlKernelsPassBase<RocdlKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    MLIRContext *context = &getContext();
    Builder b(context);
    getOperation().walk([&](LLVM::LLVMFuncOp body) {
      auto threads = kernel::get<kernel::MaxThreads>(body);
      if (!threads)
        return;
      ROCDL::ROCDLDialect::KernelAttrHelper(context).setAttr(body,
                                                             b.getUnitAttr());
      ROCDL::ROCDLDialect::MaxFlatWorkGroupSizeAttrHelper(context).setAttr(
          body, b.getI32IntegerAttr(threads.getInt()));
      body->removeAttr(kernel::name<kernel::MaxThreads>());
    });
  }
};

} // namespace

void strata::registerRocmPasses() {
  static bool done = [] {
    registerGpuToRocdlPass();
    registerRocdlKernelsPass();
    return true;
  }();
  (void)done;
}
