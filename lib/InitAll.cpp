//===- InitAll.cpp - register strata's dialects and passes ------*- C++ -*-===//

#include "strata/InitAll.h"

#include "strata/Conversion/Passes.h"
#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"
#include "strata/Dialect/Kernel/IR/KernelDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void strata::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<graph::GraphDialect, kernel::KernelDialect,
                  mlir::func::FuncDialect, mlir::arith::ArithDialect,
                  mlir::bufferization::BufferizationDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::memref::MemRefDialect, mlir::tensor::TensorDialect>();
  // The kernel layer's decisions are attributes on func.func ops: with the
  // kernel dialect loaded whenever func is, every context that holds
  // kernels verifies them, whatever parsed or built the IR.
  registry.addExtension(
      +[](mlir::MLIRContext *context, mlir::func::FuncDialect *) {
        context->getOrLoadDialect<kernel::KernelDialect>();
      });
}

void strata::registerAllPasses() {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  graph::registerGraphPipelines();
  registerStrataConversionPasses();
}
