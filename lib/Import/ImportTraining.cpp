//===- ImportTraining.cpp - training ONNX ops -------------------------*- C++ -*-===//

#include "NodeImporter.h"

using namespace mlir;
using namespace strata;
using namespace strata::onnx_import;

void strata::onnx_import::registerTrainingConverters(ConverterRegistry &r) {}
