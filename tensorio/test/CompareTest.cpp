//===- CompareTest.cpp - allClose semantics ---------------------*- C++ -*-===//
//
// The edge cases the conformance runner depends on: NaN and infinities, the
// exact rtol/atol boundary, exact integer and bool comparison (64-bit values
// that double cannot tell apart), type and shape mismatches, and the worst
// element and summary a failure reports.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>
#include <limits>

using namespace strata::tio;
using namespace strata::tio::test;

namespace {
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

HostTensor f32(std::vector<float> values) {
  return tensorOf(ElementType::F32, {static_cast<int64_t>(values.size())},
                  values);
}

TEST(AllClose, EqualTensorsPass) {
  CompareResult r = allClose(f32({1, 2, 3}), f32({1, 2, 3}), 1e-3, 1e-5);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.numElements, 3);
  EXPECT_EQ(r.numMismatches, 0);
  EXPECT_EQ(r.maxAbsError, 0);
  EXPECT_EQ(r.summary().rfind("PASSED: 3 elements", 0), 0u) << r.summary();
}

TEST(AllClose, NaNMatchesOnlyNaN) {
  EXPECT_TRUE(allClose(f32({kNaN, 1}), f32({kNaN, 1}), 0, 0).passed);
  CompareResult r = allClose(f32({kNaN, 1}), f32({0, 1}), 1, 1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.numMismatches, 1);
  EXPECT_EQ(r.worstIndex, 0);
  EXPECT_EQ(r.worstActual, "nan");
  EXPECT_FALSE(allClose(f32({1}), f32({kNaN}), 1e9, 1e9).passed);
}

TEST(AllClose, InfinitiesMustMatchExactly) {
  EXPECT_TRUE(allClose(f32({kInf, -kInf}), f32({kInf, -kInf}), 0, 0).passed);
  EXPECT_FALSE(allClose(f32({kInf}), f32({-kInf}), 1e9, 1e9).passed);
  // No tolerance makes a finite value equal to an infinity.
  EXPECT_FALSE(allClose(f32({3.4e38f}), f32({kInf}), 1e9, 1e9).passed);
  EXPECT_FALSE(allClose(f32({kInf}), f32({1}), 1e9, 1e9).passed);
  // Max errors only cover finite pairs.
  CompareResult r = allClose(f32({kInf, 1.5}), f32({kInf, 1}), 1, 1);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.maxAbsError, 0.5);
  EXPECT_EQ(r.maxRelError, 0.5);
}

TEST(AllClose, ToleranceBoundaryIsInclusive) {
  // Values exact in binary: |a - e| = 0.5 = atol + rtol * |e| = 0.25 + 0.125*2.
  EXPECT_TRUE(allClose(f32({2.5f}), f32({2}), 0.125, 0.25).passed);
  EXPECT_FALSE(allClose(f32({2.5f}), f32({2}), 0.125, 0.24).passed);
  EXPECT_FALSE(allClose(f32({2.5f}), f32({2}), 0.12, 0.25).passed);
  // rtol scales with the expected value, not the actual one (numpy).
  EXPECT_TRUE(allClose(f32({0}), f32({8}), 1, 0).passed);
  EXPECT_FALSE(allClose(f32({8}), f32({0}), 1, 0).passed);
  // atol alone around zero.
  EXPECT_TRUE(allClose(f32({-1e-7f}), f32({0}), 0, 1e-6).passed);
}

TEST(AllClose, IntegersAreExact) {
  HostTensor a = tensorOf<int32_t>(ElementType::I32, {3}, {1, 2, 3});
  HostTensor b = tensorOf<int32_t>(ElementType::I32, {3}, {1, 2, 4});
  CompareResult r = allClose(a, b, 1, 1); // tolerances do not apply
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.numMismatches, 1);
  EXPECT_EQ(r.worstIndex, 2);
  EXPECT_EQ(r.worstActual, "3");
  EXPECT_EQ(r.worstExpected, "4");
  // 2^53 and 2^53 + 1 are the same double but different int64s.
  int64_t big = int64_t(1) << 53;
  EXPECT_FALSE(allClose(tensorOf<int64_t>(ElementType::I64, {1}, {big}),
                        tensorOf<int64_t>(ElementType::I64, {1}, {big + 1}), 0,
                        0)
                   .passed);
  uint64_t umax = std::numeric_limits<uint64_t>::max();
  CompareResult u =
      allClose(tensorOf<uint64_t>(ElementType::U64, {1}, {umax}),
               tensorOf<uint64_t>(ElementType::U64, {1}, {umax - 1}), 0, 0);
  EXPECT_FALSE(u.passed);
  EXPECT_EQ(u.worstActual, "18446744073709551615");
  HostTensor t = tensorOf<uint8_t>(ElementType::Bool, {2}, {1, 0});
  HostTensor f = tensorOf<uint8_t>(ElementType::Bool, {2}, {1, 1});
  EXPECT_TRUE(allClose(t, t, 0, 0).passed);
  CompareResult br = allClose(t, f, 1, 1);
  EXPECT_FALSE(br.passed);
  EXPECT_EQ(br.worstActual, "false");
  EXPECT_EQ(br.worstExpected, "true");
}

TEST(AllClose, HalfPrecisionComparesWidenedValues) {
  // 1.0 and the next f16 (1 + 2^-10) in binary16 bits.
  HostTensor a = tensorOf<uint16_t>(ElementType::F16, {1}, {0x3c00});
  HostTensor b = tensorOf<uint16_t>(ElementType::F16, {1}, {0x3c01});
  EXPECT_FALSE(allClose(a, b, 0, 0).passed);
  EXPECT_TRUE(allClose(a, b, 1e-3, 0).passed);
  HostTensor nanA = tensorOf<uint16_t>(ElementType::BF16, {1}, {0x7fc0});
  HostTensor nanB = tensorOf<uint16_t>(ElementType::BF16, {1}, {0x7fc1});
  EXPECT_TRUE(allClose(nanA, nanB, 0, 0).passed);
}

TEST(AllClose, TypeAndShapeMismatchesFail) {
  CompareResult type =
      allClose(f32({1}), tensorOf<double>(ElementType::F64, {1}, {1.0}), 1, 1);
  EXPECT_FALSE(type.passed);
  EXPECT_EQ(type.message, "element type mismatch: actual f32, expected f64");
  EXPECT_EQ(type.summary(),
            "FAILED: element type mismatch: actual f32, expected f64");
  HostTensor a = tensorOf<float>(ElementType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  HostTensor b = tensorOf<float>(ElementType::F32, {3, 2}, {1, 2, 3, 4, 5, 6});
  CompareResult shape = allClose(a, b, 1, 1);
  EXPECT_FALSE(shape.passed);
  EXPECT_EQ(shape.message, "shape mismatch: actual [2, 3], expected [3, 2]");
  // A scalar is not a one-element vector.
  EXPECT_FALSE(
      allClose(tensorOf<float>(ElementType::F32, {}, {1}), f32({1}), 1, 1)
          .passed);
  HostTensor broken = a;
  broken.bytes.resize(3);
  EXPECT_NE(allClose(broken, a, 1, 1).message.find("holds 3"),
            std::string::npos);
}

TEST(AllClose, ReportsWorstElementAndSummary) {
  HostTensor a =
      tensorOf<float>(ElementType::F32, {2, 3}, {1, 2, 3, 4.5f, 5, 6.25f});
  HostTensor e = tensorOf<float>(ElementType::F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  CompareResult r = allClose(a, e, 0, 0.1);
  EXPECT_FALSE(r.passed);
  EXPECT_EQ(r.numMismatches, 2);
  EXPECT_EQ(r.worstIndex, 3);
  EXPECT_EQ(r.worstCoords, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(r.worstActual, "4.5");
  EXPECT_EQ(r.worstExpected, "4");
  EXPECT_EQ(r.maxAbsError, 0.5);
  EXPECT_EQ(r.maxRelError, 0.125);
  EXPECT_EQ(r.summary(),
            "FAILED: 2 of 6 elements differ; worst at [1, 0]: actual 4.5, "
            "expected 4 (max abs err 0.5, max rel err 0.125; rtol 0, atol "
            "0.1)");
  // A NaN mismatch outranks any finite one.
  CompareResult n = allClose(f32({100, kNaN}), f32({0, 1}), 0, 0);
  EXPECT_EQ(n.worstIndex, 1);
  // With everything passing, the worst is the closest to its tolerance.
  CompareResult p = allClose(f32({1, 2.05f, 3}), f32({1, 2, 3}), 0, 0.1);
  EXPECT_TRUE(p.passed);
  EXPECT_EQ(p.worstIndex, 1);
}

TEST(AllClose, EmptyAndScalarTensors) {
  HostTensor empty = tensorOf<float>(ElementType::F32, {0, 3}, {});
  CompareResult r = allClose(empty, empty, 0, 0);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.numElements, 0);
  EXPECT_EQ(r.worstIndex, -1);
  HostTensor s1 = tensorOf<float>(ElementType::F32, {}, {1});
  HostTensor s2 = tensorOf<float>(ElementType::F32, {}, {2});
  CompareResult s = allClose(s1, s2, 0, 0);
  EXPECT_FALSE(s.passed);
  EXPECT_TRUE(s.worstCoords.empty());
  EXPECT_NE(s.summary().find("worst at []"), std::string::npos);
}

} // namespace
