//===- strata-opt.cpp - strata's MLIR optimizer driver ----------*- C++ -*-===//

#include "strata/InitAll.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  strata::registerAllDialects(registry);
  strata::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "strata optimizer driver\n", registry));
}
