//===- import.cpp - fuzz target: ONNX bytes, imported and lowered -*- C++
//-*-===//
//
// A model's bytes through what `strata import` and the compiler's graph
// stage do with them: ONNX's parser (protobuf, or the textual syntax for
// inputs that start like an `.onnxtxt` file), checker, version converter
// and shape inference, strata's importer, the verifier, the graph dialect's
// pipeline (strata-graph-pipeline: shape propagation, If/Loop/Scan
// lowering, decomposition, shape inference, CSE) and the printer. Errors are
// diagnostics; anything else (a sanitizer report, an uncaught exception, a
// signal) is a finding. The rest of the graph stage (binding input shapes,
// specialization on values) lives in lib/Compiler, which this build leaves
// out (docs/testing.md, "Fuzzing").
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphDialect.h"
#include "strata/Dialect/Graph/Transforms/Passes.h"
#include "strata/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  // A fresh context per input: nothing one input uniques (types,
  // attributes, constants) outlives it, so memory stays bounded and a
  // finding replays alone.
  mlir::DialectRegistry registry;
  strata::registerImportDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });

  strata::OnnxSource source;
  source.bytes = bytes;
  source.name = "fuzz.onnx";
  // No folder: external data is refused, never read from the fuzzer's
  // working directory.
  source.dataDir = "";
  source.text = bytes.starts_with("<") || bytes.starts_with("#");
  mlir::OwningOpRef<mlir::ModuleOp> module =
      strata::importOnnx(context, source, strata::ImportOptions());
  if (!module)
    return 0;

  mlir::PassManager pm(&context);
  strata::graph::buildGraphPipeline(pm);
  if (mlir::failed(pm.run(*module)))
    return 0;
  if (mlir::failed(mlir::verify(*module)))
    return 0;
  llvm::raw_null_ostream null;
  module->print(null);
  return 0;
}
