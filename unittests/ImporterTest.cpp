//===- ImporterTest.cpp - the ONNX importer's C++ API -----------*- C++ -*-===//
//
// Imports models through strata::importOnnxFile and checks the produced IR
// and the diagnostics a caller receives.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"
#include "strata/Import/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <fstream>

using namespace mlir;

namespace {

/// Writes `text` to a temporary .onnxtxt file, removed on destruction.
class TempModel {
public:
  explicit TempModel(llvm::StringRef text) {
    llvm::SmallString<128> path;
    llvm::sys::fs::createTemporaryFile("strata-test", "onnxtxt", path);
    file = std::string(path);
    std::ofstream(file) << text.str();
  }
  ~TempModel() { llvm::sys::fs::remove(file); }
  const std::string &path() const { return file; }

private:
  std::string file;
};

struct Imported {
  OwningOpRef<ModuleOp> module;
  std::vector<std::string> errors;
};

Imported import(MLIRContext &context, llvm::StringRef path) {
  Imported result;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      result.errors.push_back(diag.str());
    return success();
  });
  result.module = strata::importOnnxFile(context, path, {});
  return result;
}

TEST(Importer, BuildsOneFunctionWithNamedArguments) {
  TempModel model(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[N, 4] x, float[4, 2] w) => (float[N, 2] y) {
  t = MatMul(x, w)
  y = Relu(t)
})");
  MLIRContext context;
  Imported result = import(context, model.path());
  ASSERT_TRUE(result.module) << (result.errors.empty() ? "" : result.errors[0]);
  auto func = result.module->lookupSymbol<func::FuncOp>("main");
  ASSERT_TRUE(func);
  EXPECT_EQ(func.getNumArguments(), 2u);
  EXPECT_EQ(func.getArgAttrOfType<StringAttr>(0, "graph.name").getValue(), "x");
  auto dims = func.getArgAttrOfType<ArrayAttr>(0, "graph.dim_params");
  ASSERT_TRUE(dims);
  EXPECT_EQ(cast<StringAttr>(dims[0]).getValue(), "N");
  auto resultType = cast<RankedTensorType>(func.getResultTypes()[0]);
  EXPECT_TRUE(resultType.isDynamicDim(0));
  EXPECT_EQ(resultType.getDimSize(1), 2);
  int matmuls = 0;
  func.walk([&](strata::graph::MatMulOp) { ++matmuls; });
  EXPECT_EQ(matmuls, 1);
}

TEST(Importer, ReportsEveryUnsupportedNode) {
  TempModel model(R"(<ir_version: 8, opset_import: ["" : 17, "x.y" : 1]>
g (float[2] a) => (float[2] b, float[2] c) {
  b = x.y.First(a)
  c = x.y.Second(a)
})");
  MLIRContext context;
  Imported result = import(context, model.path());
  EXPECT_FALSE(result.module);
  ASSERT_EQ(result.errors.size(), 2u);
  EXPECT_NE(result.errors[0].find("x.y.First"), std::string::npos);
  EXPECT_NE(result.errors[1].find("x.y.Second"), std::string::npos);
}

TEST(Importer, ImportsConformanceModel) {
  MLIRContext context;
  Imported result = import(context, STRATA_TEST_DATA_DIR
                           "/node/test_gemm_default_matrix_bias/model.onnx");
  ASSERT_TRUE(result.module);
  int gemms = 0;
  result.module->walk([&](strata::graph::GemmOp) { ++gemms; });
  EXPECT_EQ(gemms, 1);
}

TEST(Importer, RejectsMissingFile) {
  MLIRContext context;
  Imported result = import(context, "/nonexistent/model.onnx");
  EXPECT_FALSE(result.module);
  ASSERT_EQ(result.errors.size(), 1u);
  EXPECT_NE(result.errors[0].find("cannot read"), std::string::npos);
}

} // namespace
