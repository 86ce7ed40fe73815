//===- Branches.h - skipping the branch a run does not take -----*- C++ -*-===//
//
// A run-time If is a flat list of steps: host.guard steps pass values into
// each branch, host.merge steps take the results of the branch that ran
// (docs/runtime.md, "Run-time branches"). Both executors (the CPU session
// and the CUDA executor's host steps) skip steps the same way, with one
// flag per buffer that a run clears when it starts.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_RUNTIME_LIB_BRANCHES_H
#define STRATA_RUNTIME_LIB_BRANCHES_H

#include "strata/Runtime/Runtime.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace strata::rt::detail {

/// Whether step `index` of `m` belongs to a branch this run does not take:
/// a guard whose condition (read through `view`) is not its `expect`, or a
/// step reading a buffer marked in `skipped` (a merge reads its condition
/// and the input the condition chooses). Marks the outputs of a skipped
/// step. Throws Error for a guard whose condition is not one value.
inline bool
skipsBranchStep(const Module &m, size_t index, std::vector<uint8_t> &skipped,
                const std::function<const TensorView &(uint32_t)> &view) {
  const Step &step = m.steps()[index];
  bool library = step.kind == StepKind::Library;
  auto truth = [&](uint32_t id) {
    const TensorView &cond = view(id);
    if (cond.numElements() != 1)
      throw Error("strata module '" + m.name() + "': " + step.describe(index) +
                  ": the condition of a run-time If must hold one value, "
                  "got " +
                  dtypeName(cond.dtype) + shapeToString(cond.shape));
    return *static_cast<const uint8_t *>(cond.data) != 0;
  };
  bool skip = false;
  if (library && step.name == "host.merge" && step.inputs.size() == 3) {
    uint32_t cond = step.inputs[0];
    skip = skipped[cond] || skipped[step.inputs[truth(cond) ? 1 : 2]];
  } else {
    for (uint32_t id : step.inputs)
      skip = skip || skipped[id];
    if (!skip && library && step.name == "host.guard" && !step.inputs.empty()) {
      bool expect = true;
      for (const Attribute &a : step.attributes)
        if (a.key == "expect" && a.ints.size() == 1)
          expect = a.ints[0] != 0;
      skip = truth(step.inputs[0]) != expect;
    }
  }
  if (skip)
    for (uint32_t id : step.outputs)
      skipped[id] = 1;
  return skip;
}

} // namespace strata::rt::detail

#endif // STRATA_RUNTIME_LIB_BRANCHES_H
