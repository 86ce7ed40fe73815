//===- Driver.h - shared pieces of the strata commands ----------*- C++ -*-===//
#ifndef STRATA_TOOLS_STRATA_DRIVER_H
#define STRATA_TOOLS_STRATA_DRIVER_H

#include "strata/Compiler/Compiler.h"
#include "strata/Runtime/Runtime.h"
#include "strata/TensorIO/TensorIO.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace strata::driver {

/// Prints diagnostics as "<file>: error: <message> (at node 'x')", or
/// "<file>:<line>:<col>: error: <message>" for errors in a source file.
void installDiagnosticPrinter(mlir::MLIRContext &context, llvm::StringRef file);

/// A fresh context with everything the compile path needs.
std::unique_ptr<mlir::MLIRContext> makeContext(llvm::StringRef file);

/// What the compile options on the command line say: the compiler's own
/// options (one object from the command line to the passes, which read it
/// from the module's #strata.compile, and to the cache key), and what only
/// the tool decides.
struct CompileFlags {
  /// The input shapes here are those given on the command line; a compile
  /// takes them completed per model (toCompileOptions).
  CompileOptions options;
  /// Reuse compiled modules from the compile cache (see compileOnnx).
  bool useCache = false;
  /// Say why the cache hit or missed (on stderr).
  bool explainCache = false;
  /// The stage the input is at: Import for an ONNX model (or an .mlir file
  /// as the importer writes it), a later IR stage for an .mlir file.
  Stage from = Stage::Import;
};

/// The values of a small numeric tensor (at most
/// CompileOptions::kMaxValueElements elements), when each converts to double
/// and back unchanged (so that the compiled constant is exactly the input);
/// none otherwise.
std::optional<std::vector<double>> smallInputValues(const tio::HostTensor &t);

/// Parses "name=v0,v1,..."; "" on success, else why.
std::string parseValueBinding(const std::string &text, std::string &name,
                              std::vector<double> &values);

/// The compiler's options for `flags` and input shapes `shapes`, with what
/// the environment sets (readCompileEnvironment).
CompileOptions
toCompileOptions(const CompileFlags &flags,
                 const std::map<std::string, std::vector<int64_t>> &shapes);

/// The compile cache's directory: $STRATA_CACHE_DIR, else
/// $XDG_CACHE_HOME/strata, else ~/.cache/strata.
std::string cacheDirectory();

/// "1.5 GiB", "312 KiB", "17 bytes", for messages.
std::string humanBytes(uint64_t bytes);

/// The compile cache's size limit in bytes: $STRATA_CACHE_MAX_SIZE (bytes,
/// or a number with K, M, G or T; 0 means no limit), else 5 GiB. A value
/// that is not a size gives the default and a message in `problem`.
uint64_t cacheSizeLimit(std::string *problem = nullptr);

/// Marks a cache entry as used now (its manifest's modification time).
void touchCacheEntry(const std::string &manifestPath);

/// Evicts the least recently used entries of the cache directory `dir`
/// until it is under cacheSizeLimit(), never the entry `keepKey` (just
/// written); also removes writers' temporary files older than an hour.
/// `verbose` reports what was evicted.
void enforceCacheLimit(const std::string &dir, const std::string &keepKey,
                       bool verbose);

/// `strata cache stats|clear` (CacheStore.cpp).
llvm::cl::SubCommand &cacheCommand();
int runCacheCommand();

/// Compiles without the cache (CompileCache.cpp calls it on a miss).
bool compileUncached(const std::string &path, const CompileFlags &flags,
                     const std::map<std::string, std::vector<int64_t>> &shapes,
                     std::vector<uint8_t> &bytes);

/// Parses "name=2,3,4" (or "name=" for a scalar); "" on success, else why.
std::string parseShapeBinding(const std::string &text, std::string &name,
                              std::vector<int64_t> &shape);

/// The declared inputs of a model, with dynamic dimensions as -1.
struct InputInfo {
  std::string name;
  rt::DType dtype = rt::DType::F32;
  std::vector<int64_t> shape;
  /// "" for a tensor; "sequence" or "optional" for an ONNX sequence or
  /// optional input (dtype and shape then mean nothing), which a compiled
  /// module takes as the tensors it holds, named `s[0]`, `o[0]`, ...
  /// (tio::flattenValue).
  std::string container;
};

/// The compile path's input: an ONNX model imported (from == Import and a
/// path not ending in .mlir), else an MLIR file at stage `from`, parsed with
/// the compile path's dialects. Errors are printed; returns null then.
mlir::OwningOpRef<mlir::ModuleOp> loadSource(mlir::MLIRContext &context,
                                             const std::string &path,
                                             Stage from,
                                             bool allowNewerOpset = false);

/// Compiles `path` (an ONNX model, or an MLIR file at stage flags.from) for
/// input shapes `shapes` (by input name). Errors are printed; returns null
/// then.
///
/// With flags.useCache, the module is first looked up in the compile cache
/// (docs/cli.md), keyed by a SHA-256 of the input file's bytes, the shapes,
/// the target, the CPU, the options that change the output (libraries, the
/// precision, the decisions file's content, the stage compiled from),
/// strata's version and binary, the module format, STRATA_LLVM_OPTIONS and
/// the loaded plugins.
/// Next to each entry (KEY.strata) a manifest (KEY.json) records those parts
/// and the module's size and SHA-256. Nothing but the input file's bytes is
/// read before the lookup, so a hit creates no MLIR context. An entry whose
/// manifest or module does not check out (unreadable, truncated, corrupted,
/// from another format version) is reported, recompiled and replaced; a
/// compiled module is written to temporary files and renamed, so readers
/// never see half a file.
std::shared_ptr<const rt::Module>
compileOnnx(const std::string &path, const CompileFlags &flags,
            const std::map<std::string, std::vector<int64_t>> &shapes);

/// The same, returning the module file's bytes.
bool compileOnnxBytes(const std::string &path, const CompileFlags &flags,
                      const std::map<std::string, std::vector<int64_t>> &shapes,
                      std::vector<uint8_t> &bytes);

/// The model's declared inputs (imports it; errors printed, false). A
/// sequence or optional input is listed with its `container` set.
bool readModelInputs(const std::string &path, std::vector<InputInfo> &inputs,
                     bool allowNewerOpset = false);

/// Conversions between the tensor file library and the runtime.
rt::Tensor toRuntime(const tio::HostTensor &tensor);
tio::HostTensor toHost(const rt::Tensor &tensor);

/// Whether `path` names a compiled module (".strata") rather than a model.
bool isModuleFile(llvm::StringRef path);
/// Whether `path` names an MLIR file (".mlir").
bool isMlirFile(llvm::StringRef path);

/// --precision (compile, run, bench, conformance, explain): "fp32", "fp16"
/// or "bf16"; the command line refuses other values.
std::string precisionFlag();

/// The `conformance` subcommand (shared by the files that add options to
/// it, hence a function: see Conformance.cpp).
llvm::cl::SubCommand &conformanceCommand();

/// Runs the compile/run/bench/conformance command the command line chose;
/// -1 when it chose none of them.
int dispatchCommands();

} // namespace strata::driver

#endif // STRATA_TOOLS_STRATA_DRIVER_H
