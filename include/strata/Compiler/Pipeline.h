//===- Pipeline.h - the compile path's named stages -------------*- C++ -*-===//
//
// The compile path is a fixed list of named stages. The ones that transform
// IR are MLIR pass pipelines over the top-level module, each registered
// (strata-stage-<name>) so that strata-opt can run it alone; the last two
// produce artifacts:
//
//   import   the graph dialect as the ONNX importer wrote it (the source)
//   graph    input shapes bound, graph pipeline (canonicalize, fold, infer
//            shapes), every value static
//   fused    the graph layer's decisions: ops grouped into kernels, each an
//            outlined private function with its decisions as attributes
//   kernel   the generated kernels moved into `module @kernels` (the entry
//            function keeps their declarations, which carry the decisions)
//            and lowered to linalg on tensors, fused
//   cpu      the kernels bufferized to loops over buffers (target cpu)
//   gpu      the kernels mapped to grids of thread blocks (target cuda)
//   llvm     the kernels in the LLVM dialect
//   object   (artifact) the kernels' optimized LLVM IR and shared object
//   module   (artifact) the memory plan and the module file
//
// Each stage is a list of pass entries (a registered pass or pipeline and its
// options). Plugins edit these lists at named points before they are built:
// insert a pipeline before or after a pass or a stage, disable a pass,
// replace a pass, or replace a whole stage (PipelineEdits).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_COMPILER_PIPELINE_H
#define STRATA_COMPILER_PIPELINE_H

#include "strata/Compiler/Compiler.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

#include <functional>

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace strata {

/// The stages in order, first to last.
llvm::ArrayRef<Stage> allStages();
/// "import", "graph", ...
llvm::StringRef stageName(Stage stage);
std::optional<Stage> parseStage(llvm::StringRef name);
/// The stages whose result is MLIR (import through llvm).
bool isIRStage(Stage stage);
/// Whether a compilation for `target` runs `stage` (cpu: Cpu, not Gpu;
/// cuda: Gpu, not Cpu).
bool stageApplies(Stage stage, llvm::StringRef target);
/// "graph, fused, ..." for messages.
std::string stageNameList();

/// One element of a stage's pipeline.
struct PassEntry {
  /// A registered pass or pipeline argument ("canonicalize"), or for entries
  /// a plugin inserted, any textual pipeline element list.
  std::string name;
  /// Its options, without braces ("" for none).
  std::string options;
  /// Runs on the nested `module @kernels` rather than the top-level module.
  bool onKernels = false;
  /// Who put it there: "strata", or the plugin's name.
  std::string origin = "strata";

  /// "name{options}".
  std::string text() const;
};

/// Changes to the stage pipelines, made by plugins (strata/Plugin/Plugin.h)
/// before any pipeline is built. An anchor names a pass ("canonicalize": every
/// occurrence; "kernel/canonicalize": those of one stage) or a stage
/// ("stage:kernel"). Inserted and replacing pipelines are textual pipeline
/// element lists ("cse,my-pass{x=1}") and run where their anchor runs (for a
/// stage anchor: on the top-level module).
class PipelineEdits {
public:
  void insertBefore(llvm::StringRef anchor, llvm::StringRef pipeline,
                    llvm::StringRef origin);
  void insertAfter(llvm::StringRef anchor, llvm::StringRef pipeline,
                   llvm::StringRef origin);
  void disablePass(llvm::StringRef anchor, llvm::StringRef origin);
  void replacePass(llvm::StringRef anchor, llvm::StringRef pipeline,
                   llvm::StringRef origin);
  /// `pipeline` runs on the top-level module instead of the stage's own.
  void replaceStage(Stage stage, llvm::StringRef pipeline,
                    llvm::StringRef origin);

  /// `entries` (stage `stage`'s default list) with the edits applied.
  std::vector<PassEntry> apply(Stage stage,
                               std::vector<PassEntry> entries) const;
  /// Edits whose anchor matched no pass of any stage so far ("origin: what").
  std::vector<std::string> unmatchedEdits() const;
  bool empty() const { return edits.empty(); }
  /// One line per edit, for `strata explain` and -v.
  std::vector<std::string> describe() const;

private:
  enum class Kind { InsertBefore, InsertAfter, Disable, Replace, ReplaceStage };
  struct Edit {
    Kind kind;
    std::string anchor;
    std::string pipeline;
    std::string origin;
    mutable bool matched = false;
  };
  std::vector<Edit> edits;
};

/// The process's edits (what the loaded plugins asked for).
PipelineEdits &getPipelineEdits();

/// Adds a function that registers dialects (or extensions) into every
/// registry the compile path builds (registerCompilerDialects): how plugins
/// bring their dialects.
void addDialectRegistration(std::function<void(mlir::DialectRegistry &)> fn);

/// Calls the functions addDialectRegistration collected.
void applyDialectRegistrations(mlir::DialectRegistry &registry);

/// The kernels' bufferization (on `module @kernels`), which the cpu and
/// gpu stages begin with. `resultsInPlace`: a result returned through a view
/// of a temporary is computed into its out-parameter
/// (strata-results-in-place, before the deallocations are placed).
std::vector<PassEntry> bufferizationPasses(bool resultsInPlace = false);

/// The end of both llvm stages: memrefs, arith, index, functions (with the
/// bare-pointer calling convention the kernel ABIs use) and control flow to
/// the LLVM dialect, then the casts between them reconciled.
std::vector<PassEntry> llvmConversionTail();

/// Stage `stage`'s pass list for `options`, before any edit.
std::vector<PassEntry> defaultStagePipeline(Stage stage,
                                            const CompileOptions &options);
/// The same with the process's edits applied.
std::vector<PassEntry> stagePipeline(Stage stage,
                                     const CompileOptions &options);
/// The options `options` records on the module for the stages' passes, as
/// the IR prints them: `#strata.compile<target = "cuda", ...>`.
std::string compileOptionsText(const CompileOptions &options);

/// The textual pipeline (builtin.module(...)) strata runs for a stage.
std::string stagePipelineText(Stage stage, const CompileOptions &options);

/// Runs the IR stages after `from` up to and including `to` on `module`,
/// which is at stage `from` (Import for a freshly imported model). Dumps
/// each stage's IR when options.dumpDir is set; when a pass fails or
/// crashes, writes MLIR's crash reproducer (options.reproducerDir) and says
/// how to rerun it with strata-opt.
mlir::LogicalResult runStages(mlir::ModuleOp module,
                              const CompileOptions &options, Stage from,
                              Stage to);

/// Removes what an earlier compile dumped into the dump directory of
/// `options` (NN-<stage> files, index.json/md, kernels/, portable-ptx/),
/// so that a dump never mixes two compiles' kernels; other files, and
/// `keep` (a compile's own input), stay.
void clearDumpDirectory(const CompileOptions &options, llvm::StringRef keep);

/// Registers the stages' passes and the strata-stage-<name> pipelines.
void registerStagePipelines();

} // namespace strata

#endif // STRATA_COMPILER_PIPELINE_H
