//===- Explain.h - What a compilation decided, and why ----------*- C++ -*-===//
//
// The record `strata explain` prints and the Python package's explain()
// returns (docs/explain.md): read back from a module at the fused stage (the
// strata.* attributes the partitioner put on each kernel function), so the
// explanation is the compiled result's own record, not a second opinion.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_EXPLAIN_H
#define STRATA_COMPILER_EXPLAIN_H

#include "strata/Compiler/Compiler.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/JSON.h"

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace strata {

/// One kernel's recorded decisions.
struct ExplainedKernel {
  std::string name;
  /// "codegen" or "library".
  std::string kind;
  /// The name's kind prefix (poi, red, per, mm, conv, attn, lib).
  std::string category;
  std::string library;
  std::string reason;
  /// strata.layouts: the buffer layouts chosen around a library call.
  std::string layouts;
  /// strata.storage: the types of its operands and results under
  /// --precision.
  std::string storage;
  std::vector<std::string> nodes, fusedBecause, notFused;
  mlir::DictionaryAttr attrs, tile;
  /// strata.accumulates: the operand a library call adds its result onto.
  std::optional<int64_t> accumulates;
};

/// Everything about a compilation at the fused stage.
struct Explanation {
  /// The entry function's inputs, "x f32[1, 3, 224, 224]".
  std::vector<std::string> inputs;
  /// In execution order.
  std::vector<ExplainedKernel> kernels;
  /// Ops left outside every kernel (views of other buffers), by node.
  std::vector<std::string> views;
  /// strata-lower-precision's record ("bf16", "f16"); empty for f32.
  std::string precision;
  /// The target's one-line description of its code (GPU targets), and the
  /// same as fields.
  std::string code;
  std::vector<std::pair<std::string, std::string>> codeFields;
  /// Summary counts: kernels by category, library calls by library, the
  /// ONNX nodes inside kernels, generated kernels split into row blocks.
  std::map<std::string, int> byCategory, byLibrary;
  size_t nodesInKernels = 0, splitKernels = 0, libraryCalls = 0;
};

/// Reads the explanation of `module`, compiled to the fused stage with
/// `options`. Fails, with a diagnostic, when it has no entry function.
mlir::FailureOr<Explanation> explainFusedModule(mlir::ModuleOp module,
                                                const CompileOptions &options);

/// The JSON of `strata explain --json` (docs/explain.md) for the model at
/// `model` compiled with `options`.
llvm::json::Value explanationJson(const Explanation &explanation,
                                  llvm::StringRef model,
                                  const CompileOptions &options);

/// An attribute value as explain prints it: strings bare, integer arrays in
/// brackets, floats as %g.
std::string explainAttrText(mlir::Attribute attr);

} // namespace strata

#endif // STRATA_COMPILER_EXPLAIN_H
