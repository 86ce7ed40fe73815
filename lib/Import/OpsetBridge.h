//===- OpsetBridge.h - newer opsets to the ONNX library's newest -*- C++
//-*-===//

#ifndef STRATA_LIB_IMPORT_OPSETBRIDGE_H
#define STRATA_LIB_IMPORT_OPSETBRIDGE_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <onnx/onnx_pb.h>

#include <string>

namespace strata::onnx_import {

/// The newest default-domain opset whose changes bridgeToOpset knows.
constexpr int64_t kNewestBridgedOpset = 22;

/// Rewrites the default domain's nodes of `model`, written at opset `from`
/// (at most kNewestBridgedOpset), into their forms at opset `to` (17, the
/// newest the ONNX library knows), and stamps the model with `to`. Reports
/// every node it cannot rewrite through `report` (each message names the
/// node) and returns false if there was one. `checkable` is set to false when
/// a node stays that the ONNX library has no schema for (its checker would
/// refuse the model).
bool bridgeToOpset(onnx::ModelProto &model, int64_t from, int64_t to,
                   llvm::function_ref<void(const std::string &)> report,
                   bool &checkable);

} // namespace strata::onnx_import

#endif // STRATA_LIB_IMPORT_OPSETBRIDGE_H
