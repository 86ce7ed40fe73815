//===- Target.cpp - the targets strata compiles for -------------*- C++ -*-===//

#include "strata/Target/Target.h"

#include "CPU/CpuTarget.h"
#include "CUDA/CudaTarget.h"
#include "ROCm/RocmTarget.h"

using namespace strata;

Target::~Target() = default;

std::vector<PassEntry> Target::beforePartition(const CompileOptions &) const {
  return {};
}

std::vector<PassEntry> Target::afterPartition(const CompileOptions &) const {
  return {};
}

std::string
Target::describeCode(mlir::ModuleOp, const CompileOptions &,
                     std::vector<std::pair<std::string, std::string>> &) const {
  return "";
}

llvm::ArrayRef<const Target *> strata::allTargets() {
  static const CpuTarget cpu;
  static const CudaTarget cuda;
  static const RocmTarget rocm;
  static const Target *const targets[] = {&cpu, &cuda, &rocm};
  return targets;
}

const Target *strata::lookupTarget(llvm::StringRef name) {
  for (const Target *target : allTargets())
    if (target->name() == name)
      return target;
  return nullptr;
}

const Target *strata::lookupTarget(const CompileOptions &options) {
  return lookupTarget(options.target);
}

std::string strata::targetNameList() {
  std::string list;
  for (const Target *target : allTargets())
    list += (list.empty() ? "" : ", ") + target->name().str();
  return list;
}

std::string strata::unknownTargetMessage(llvm::StringRef name) {
  return "unknown target '" + name.str() +
         "' (this build compiles for: " + targetNameList() + ")";
}

std::string strata::checkTargetOptions(const CompileOptions &options) {
  const Target *target = lookupTarget(options);
  return target ? target->checkOptions(options)
                : unknownTargetMessage(options.target);
}
