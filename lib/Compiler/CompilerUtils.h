//===- CompilerUtils.h - helpers shared by the compile stages ---*- C++ -*-===//
#ifndef STRATA_LIB_COMPILER_COMPILERUTILS_H
#define STRATA_LIB_COMPILER_COMPILERUTILS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

#include "strata/Compiler/Compiler.h"

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace strata {

/// `v`'s type when it is a ranked tensor of static shape, else null.
inline mlir::RankedTensorType staticTensorType(mlir::Value v) {
  auto type = llvm::dyn_cast<mlir::RankedTensorType>(v.getType());
  return type && type.hasStaticShape() ? type : mlir::RankedTensorType();
}

/// Erases the graph ops that computed `v` and that nothing reads any more,
/// and so on up their operands (a rewrite's leftovers: the passes before the
/// partitioner run no dead-code elimination). True if it erased any.
bool eraseDeadDefs(mlir::Value v);

/// The function strata runs: the public func.func (the importer makes one).
mlir::func::FuncOp getEntryFunction(mlir::ModuleOp module);

/// `v` viewed with `shape` (a graph.reshape to a constant shape), built at
/// `b`'s insertion point.
mlir::Value viewAs(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                   llvm::ArrayRef<int64_t> shape);

/// The ONNX name of the entry function's result `index` (`graph.name`), or
/// "output<N>" when it has none (getArgumentName: Compiler.h).
std::string getResultName(mlir::func::FuncOp func, unsigned index);

/// The axes of a reduce_* op (its `axes` attribute, made non-negative and
/// sorted) when they all come before its input's last axis: a column
/// reduction, as over the points of [N, P, C]. Empty for any other op.
llvm::SmallVector<int64_t> columnReductionAxes(mlir::Operation *op);

/// Ops whose result is their operand's bytes under another static shape
/// (reshape, flatten, squeeze, unsqueeze, identity): the partitioner leaves
/// them outside kernels and the plan makes them buffer views.
bool isViewOp(mlir::Operation *op);

/// The channels-last order of a rank-`rank` image batch, as logical
/// dimensions: [0, 2, ..., rank - 1, 1] (a transpose's perm from NCHW to
/// NHWC; invertPermutationVector gives the way back).
inline llvm::SmallVector<int64_t> channelsLastOrder(int64_t rank) {
  llvm::SmallVector<int64_t> order = {0};
  for (int64_t dim = 2; dim < rank; ++dim)
    order.push_back(dim);
  order.push_back(1);
  return order;
}

/// The ONNX node an op came from (its NameLoc), or "" when unknown.
std::string getNodeName(mlir::Operation *op);

/// "ONNX node 'X'", or "'graph.op'" for an op of no node: how error
/// messages name an op.
std::string describeNode(mlir::Operation *op);

/// How MLIR prints `type` ("tensor<?x4xf32>"), for messages.
std::string typeString(mlir::Type type);

/// The value of every element of a splat constant of a float type (of an
/// integer type), or nullopt when `v` is none (Library.cpp).
std::optional<double> splatFloatConstant(mlir::Value v);
std::optional<int64_t> splatIntConstant(mlir::Value v);

/// The halves of specializeShapes (Compiler.h) around the graph pipeline:
/// gives the entry function's arguments the bound shapes, and checks that
/// every value is static afterwards.
mlir::LogicalResult bindInputShapes(mlir::ModuleOp module,
                                    const CompileOptions &options);
mlir::LogicalResult verifyStaticShapes(mlir::ModuleOp module,
                                       const CompileOptions &options);
/// Substitutes `options.inputValues` for the inputs that values the graph
/// stage could not make static depend on (a Range's limit, a Loop's trip
/// count), marking each such argument `strata.required_value`. `changed`
/// says whether any was; the graph stage must then run again.
mlir::LogicalResult specializeInputValues(mlir::ModuleOp module,
                                          const CompileOptions &options,
                                          bool &changed);

/// The nested module that holds the generated kernels from the kernel stage
/// on (`module @kernels`), or null.
mlir::ModuleOp getKernelsModule(mlir::ModuleOp module);

/// Every dump's directory: options.dumpDir, else $STRATA_DUMP_DIR, else "".
std::string getDumpDirectory(const CompileOptions &options);

/// Writes text to <dir>/<relative path>, creating directories; warns on
/// failure (a dump never fails a compilation).
void writeDumpFile(const std::string &dir, llvm::StringRef relativePath,
                   llvm::function_ref<void(llvm::raw_ostream &)> write);

/// Writes <dump dir>/index.json and index.md: each kernel of `module` (at
/// the fused stage or later) with its ONNX nodes, its decision attributes
/// and the files dumped for it.
void writeDumpIndex(const CompileOptions &options, mlir::ModuleOp module);

/// A compile's progress: under -v, each stage's time as it ends ("strata:
/// kernel stage: 31 ms (58 ms in all)"); without -v, once the compile has
/// taken a second, a line on stderr saying what it is doing, kept current
/// on a terminal ($STRATA_PROGRESS: 0 never, 1 one line per step even when
/// stderr is not a terminal; $STRATA_PROGRESS_AFTER_MS moves the second).
/// One per compile, made on the compiling thread (compileModule makes it;
/// runStages makes one when called alone); the steps find it there.
class CompileProgress {
public:
  explicit CompileProgress(const CompileOptions &options);
  ~CompileProgress();
  CompileProgress(const CompileProgress &) = delete;
  CompileProgress &operator=(const CompileProgress &) = delete;

  /// Whether this thread has a compile in progress.
  static bool active();
  /// The compile on this thread starts `activity` ("kernel stage", "object
  /// stage: LLVM on 12 generated kernels"), a step of its own that end()
  /// times unless `timed` is false (a part of the step begun before).
  static void begin(const std::string &activity, bool timed = true);
  /// The step begun last ends: with `verbose`, "strata: <what>: N ms (M ms
  /// in all)".
  static void end(llvm::StringRef what, bool verbose);

private:
  struct State;
  std::unique_ptr<State> state;
  CompileProgress *outer;
};

/// "12 generated kernels" (kernels with strata.kind = "codegen") of a module
/// at the fused stage or later, for progress messages.
std::string generatedKernelsText(mlir::ModuleOp module);

/// An external tool that reads one file and writes another.
struct ExternalToolRun {
  /// For messages and file names ("ld.lld", "ptxas").
  std::string name;
  std::string program;
  std::string inputName, outputName;
  /// The command line after the program, given the two paths.
  std::function<std::vector<std::string>(llvm::StringRef input,
                                         llvm::StringRef output)>
      arguments;
  /// What failed, for the error ("linking the kernels failed").
  std::string failure;
  /// Given the tool's log when it fails: what to do about it, appended to
  /// the error when not empty.
  std::function<std::string(llvm::StringRef log)> hint;
};

/// Writes `input` to a file in a fresh temporary directory, runs the tool,
/// and reads its output file into `output`; the tool's log is the error
/// message when it fails. The directory is removed in any case.
mlir::LogicalResult runExternalTool(mlir::Operation *anchor,
                                    const ExternalToolRun &run,
                                    llvm::StringRef input,
                                    std::vector<uint8_t> &output);

/// Fails, naming the first op that remains, unless every op of `kernels`
/// is in the LLVM dialect or the target's intrinsic dialect (`intrinsics`,
/// "nvvm" or "rocdl"): the object stages start from the llvm stage.
mlir::LogicalResult verifyLoweredToLlvm(mlir::ModuleOp kernels,
                                        llvm::StringRef intrinsics);

/// Puts each `llvm.loop_annotation` that scf-to-cf carried to a loop's
/// back edge as a discardable attribute (cf-to-llvm leaves it so) into the
/// branch's own loop_annotation, which the translation to LLVM IR reads as
/// the loop's !llvm.loop metadata.
void attachLoopAnnotations(mlir::ModuleOp kernels);

/// `llvm.loop.unroll.disable` as an `llvm.loop_annotation`, for an scf.for
/// that LLVM must not unroll (attachLoopAnnotations carries it to the
/// loop's back edge).
mlir::Attribute noUnrollAnnotation(mlir::MLIRContext *context);

/// LLVM's linker: ld.lld-22, ld.lld on the PATH, or LLVM 22's own; and the
/// error when there is none.
std::optional<std::string> findLdLld();
inline constexpr const char *kNoLdLld =
    "cannot find the linker ld.lld (install the Debian package lld-22)";

} // namespace strata

#endif // STRATA_LIB_COMPILER_COMPILERUTILS_H
