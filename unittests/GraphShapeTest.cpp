//===- GraphShapeTest.cpp - graph dialect shape helpers ---------*- C++ -*-===//
//
// The broadcasting and type-join rules every graph op's verifier and shape
// inference rely on, checked against numpy's documented rules.
//
//===----------------------------------------------------------------------===//

#include "strata/Dialect/Graph/IR/GraphOps.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace strata::graph;
using llvm::SmallVector;

namespace {

constexpr int64_t D = kDynamic;

TEST(Broadcast, NumpyRules) {
  EXPECT_EQ(*broadcastShapes({2, 3}, {3}), (SmallVector<int64_t>{2, 3}));
  EXPECT_EQ(*broadcastShapes({8, 1, 6, 1}, {7, 1, 5}),
            (SmallVector<int64_t>{8, 7, 6, 5}));
  EXPECT_EQ(*broadcastShapes({}, {4, 1}), (SmallVector<int64_t>{4, 1}));
  EXPECT_EQ(*broadcastShapes({0, 3}, {1, 3}), (SmallVector<int64_t>{0, 3}));
  EXPECT_FALSE(broadcastShapes({2, 3}, {4}).has_value());
  EXPECT_FALSE(broadcastShapes({2, 1}, {8, 4, 3}).has_value());
}

TEST(Broadcast, DynamicDimensions) {
  // A dynamic dimension against 1 stays dynamic; against a static size > 1
  // it must be that size at run time.
  EXPECT_EQ(*broadcastShapes({D, 3}, {1, 3}), (SmallVector<int64_t>{D, 3}));
  EXPECT_EQ(*broadcastShapes({D, 3}, {5, 3}), (SmallVector<int64_t>{5, 3}));
  EXPECT_EQ(*broadcastShapes({D}, {D}), (SmallVector<int64_t>{D}));
}

TEST(Axis, Normalize) {
  EXPECT_EQ(*normalizeAxis(-1, 4), 3);
  EXPECT_EQ(*normalizeAxis(0, 4), 0);
  EXPECT_FALSE(normalizeAxis(4, 4).has_value());
  EXPECT_FALSE(normalizeAxis(-5, 4).has_value());
  EXPECT_FALSE(normalizeAxis(0, 0).has_value());
}

TEST(JoinTypes, KeepsTheMostPreciseShape) {
  mlir::MLIRContext context;
  auto f32 = mlir::Float32Type::get(&context);
  auto i32 = mlir::IntegerType::get(&context, 32);
  auto ranked = [&](llvm::ArrayRef<int64_t> shape, mlir::Type element) {
    return mlir::RankedTensorType::get(shape, element);
  };
  auto unranked = mlir::UnrankedTensorType::get(f32);
  EXPECT_EQ(joinTypes(ranked({D, 3}, f32), ranked({2, D}, f32)),
            ranked({2, 3}, f32));
  EXPECT_EQ(joinTypes(unranked, ranked({2, 3}, f32)), ranked({2, 3}, f32));
  EXPECT_FALSE(joinTypes(ranked({2, 3}, f32), ranked({2, 4}, f32)));
  EXPECT_FALSE(joinTypes(ranked({2, 3}, f32), ranked({2, 3}, i32)));
  EXPECT_FALSE(joinTypes(ranked({2, 3}, f32), ranked({2, 3, 1}, f32)));
}

} // namespace
