//===- decisions.cpp - fuzz target: a --decisions file ----------*- C++ -*-===//
//
// A decisions file's text (docs/explain.md) read against a small graph whose
// ops carry node names, as the partitioner reads it (Decisions::parse, then
// checkForced), and every query the partitioner makes of what it read.
// Errors are diagnostics; anything else is a finding. The partitioner's own
// tests of what a library or generated kernel can take are stood in for by
// op kinds here: they look at ops, not at the file.
//
//===----------------------------------------------------------------------===//

#include "Decisions.h"

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <cstdint>
#include <cstdlib>

namespace {
// Node names as the importer writes them, a constant (which no entry may
// name), and an op fused from two nodes (which "apart" may not split).
const char *const kGraph = R"mlir(
func.func @main(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
  %c = graph.constant dense<1.0> : tensor<16xf32> loc("Constant_0")
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32> loc("MatMul_1")
  %a = graph.add %m, %c : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32> loc("Add_2")
  %r = graph.relu %a : (tensor<4x16xf32>) -> tensor<4x16xf32> loc(fused["Relu_3", "Max_4"])
  %s = graph.softmax %r : (tensor<4x16xf32>) -> tensor<4x16xf32> loc("Softmax_5")
  %y = graph.mul %s, %r : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32> loc("Mul_6")
  return %y : tensor<4x16xf32>
}
)mlir";

struct Graph {
  Graph() : context(registry(), mlir::MLIRContext::Threading::DISABLED) {
    module = mlir::parseSourceString<mlir::ModuleOp>(kGraph, &context);
    if (!module)
      std::abort(); // the harness's own graph must parse
    entry = *module->getOps<mlir::func::FuncOp>().begin();
  }
  static mlir::DialectRegistry registry() {
    mlir::DialectRegistry r;
    r.insert<strata::graph::GraphDialect, mlir::func::FuncDialect>();
    return r;
  }
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp entry;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Graph *graph = new Graph();
  mlir::ScopedDiagnosticHandler quiet(
      &graph->context, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  mlir::FailureOr<strata::Decisions> decisions =
      strata::Decisions::parse(text, "fuzz.json", graph->entry);
  if (mlir::failed(decisions))
    return 0;
  auto isProduct = [](mlir::Operation *op) {
    return mlir::isa<strata::graph::MatMulOp>(op);
  };
  auto isComputed = [](mlir::Operation *op) {
    return !mlir::isa<strata::graph::ConstantOp>(op);
  };
  if (mlir::failed(decisions->checkForced(isProduct, isComputed)))
    return 0;
  llvm::SmallVector<mlir::Operation *> ops;
  for (mlir::Operation &op : graph->entry.getBody().front())
    ops.push_back(&op);
  for (mlir::Operation *op : ops) {
    (void)decisions->forcedLibrary(op);
    (void)decisions->forcedCodegen(op);
    (void)decisions->apartReason(ops, op);
    (void)strata::describeOp(op);
  }
  (void)decisions->tileFor(ops, graph->entry);
  (void)decisions->tiledOps();
  return 0;
}
