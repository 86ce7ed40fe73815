//===- LlvmBackend.h - LLVM's optimizer and code emission -------*- C++ -*-===//
//
// The part of the object stage the cpu and cuda targets share: whether LLVM
// knows a processor, LLVM's O3 for a target machine, and emitting a module as
// an object file or as assembly (PTX for NVPTX).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_LIB_COMPILER_LLVMBACKEND_H
#define STRATA_LIB_COMPILER_LLVMBACKEND_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CodeGen.h"

#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace strata {

/// Whether LLVM's target for `triple` (registered) knows the processor `cpu`;
/// `error` says why not when the triple has no target.
bool llvmKnowsProcessor(llvm::StringRef triple, llvm::StringRef cpu,
                        std::string &error);

/// Lets every floating-point instruction of `module` contract multiplies and
/// adds into FMAs and, with `reassociate`, reassociate; NaN and infinity
/// semantics stay strict. Each target says why it asks for what it does.
void allowFloatContraction(llvm::Module &module, bool reassociate);

/// Runs LLVM's O3 pipeline for `machine` on `module`, loop unrolling on.
void optimizeLlvmModule(llvm::Module &module, llvm::TargetMachine &machine);

/// Appends `module` as `fileType` to `out`; false when the target machine
/// cannot emit that kind of file.
bool emitLlvmModule(llvm::Module &module, llvm::TargetMachine &machine,
                    llvm::CodeGenFileType fileType,
                    llvm::SmallVectorImpl<char> &out);

} // namespace strata

#endif // STRATA_LIB_COMPILER_LLVMBACKEND_H
