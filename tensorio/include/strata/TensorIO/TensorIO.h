//===- TensorIO.h - Host tensors, tensor files, allClose --------*- C++ -*-===//
//
// The tools-side tensor I/O library: a self-contained host tensor type, the
// .npy and ONNX TensorProto (.pb) file formats, ONNX sequences and optionals
// (SequenceProto and OptionalProto files, a model's signature, and their
// flattening into named tensors), numpy-style allClose comparison, discovery
// of ONNX conformance test cases, and the JSON report that the conformance
// runner writes. Nothing here depends on LLVM or MLIR, so
// the runtime-side tools can link it; the ONNX protobuf types stay out of this
// header so that users do not need the ONNX include paths.
//
// Every failure on user-supplied input (a missing, truncated or malformed
// file) is reported as a TensorIOError whose message names the file.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_TENSORIO_TENSORIO_H
#define STRATA_TENSORIO_TENSORIO_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace strata::tio {

//===----------------------------------------------------------------------===//
// Element types and host tensors
//===----------------------------------------------------------------------===//

/// The element types a HostTensor can hold.
enum class ElementType : uint8_t {
  F32,
  F64,
  F16,
  BF16,
  Bool,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  /// Strings (ONNX STRING), held in HostTensor::strings, not in bytes.
  String,
};

/// Every element type held as bytes, in declaration order (for tests and
/// iteration); String, which is not bytes, is left out.
const std::vector<ElementType> &allElementTypes();

/// The short name of a type: "f32", "bf16", "bool", "i64", ...
const char *elementTypeName(ElementType type);

/// The inverse of elementTypeName; std::nullopt for an unknown name.
std::optional<ElementType> parseElementType(std::string_view name);

/// The size of one element in bytes (bool is one byte, 0 or 1). Throws
/// TensorIOError for String, whose elements have no fixed size.
size_t elementSize(ElementType type);

/// True for f16, bf16, f32 and f64.
bool isFloatingPoint(ElementType type);

/// The error raised for bad input files and invalid tensors.
class TensorIOError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A dense, row-major (C order), little-endian tensor in host memory. A
/// tensor of strings keeps its elements in `strings` (row-major; `bytes` is
/// then empty).
struct HostTensor {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<std::string> strings;

  /// The product of the dimensions (1 for a 0-d tensor). Throws
  /// TensorIOError on a negative dimension or on overflow.
  int64_t numElements() const;

  /// Throws TensorIOError unless bytes.size() == numElements() * element
  /// size (for strings: unless there is one string per element and no
  /// bytes).
  void validate() const;

  /// The element at flat index \p i (< numElements(), on a validated
  /// tensor) converted to double (f16 and bf16 are
  /// widened exactly; 64-bit integers may round). Throws for strings.
  double elementAsDouble(size_t i) const;

  /// The element at flat index \p i (as above) as exact text ("1.5", "-3",
  /// "true"; a string in double quotes with C escapes).
  std::string elementToString(size_t i) const;

  /// "f32[3x4x5]" ("f32[]" for a 0-d tensor).
  std::string describe() const;
};

/// Builds a tensor of \p type and \p shape from a typed array; the byte size
/// must match (checked).
HostTensor makeTensor(ElementType type, std::vector<int64_t> shape,
                      const void *data, size_t sizeInBytes);

/// Builds a tensor of strings; one string per element (checked).
HostTensor makeStringTensor(std::vector<int64_t> shape,
                            std::vector<std::string> strings);

/// Returns \p tensor with its element type changed to \p type without
/// touching the bytes (e.g. u16 read from .npy back to bf16). Both types must
/// have the same element size.
HostTensor bitcast(HostTensor tensor, ElementType type);

/// IEEE binary16 bits to float (exact, including subnormals, inf and NaN).
float halfToFloat(uint16_t bits);
/// bfloat16 bits to float (exact).
float bfloat16ToFloat(uint16_t bits);

//===----------------------------------------------------------------------===//
// .npy files
//===----------------------------------------------------------------------===//

/// Reads a .npy file (format 1.0, 2.0 or 3.0, C order, little-endian or
/// byte-order-free dtype). numpy's fixed-width unicode ('<U8') and byte
/// string ('|S8') arrays become tensors of strings (UTF-8; trailing NULs
/// removed). Throws TensorIOError naming \p path on anything else (object
/// arrays, which need pickle, included).
HostTensor readNpy(const std::string &path);

/// Parses .npy bytes; \p what names the source in error messages.
HostTensor parseNpy(const uint8_t *data, size_t size, const std::string &what);

/// Writes a .npy file in format 1.0 with exactly the header numpy's np.save
/// writes. bf16 has no numpy dtype, so it is written as its raw bits with
/// dtype '<u2' (readNpy gives it back as u16; bitcast to bf16). Strings are
/// written as numpy's '<U<n>' (they must be valid UTF-8).
void writeNpy(const std::string &path, const HostTensor &tensor);

/// The bytes writeNpy writes.
std::vector<uint8_t> encodeNpy(const HostTensor &tensor);

//===----------------------------------------------------------------------===//
// ONNX TensorProto files
//===----------------------------------------------------------------------===//

/// A tensor with the name it carries in its file.
struct NamedTensor {
  std::string name;
  HostTensor tensor;
};

/// Reads a serialized onnx.TensorProto (.pb, as in the ONNX test data). Data
/// may be in raw_data or in the typed fields (float_data, int32_data,
/// int64_data, double_data, uint64_data; f16/bf16/bool/small integers live in
/// int32_data; strings in string_data). Complex, external-data and
/// segmented tensors are refused with a TensorIOError naming \p path.
NamedTensor readTensorProto(const std::string &path);

/// Parses TensorProto bytes; \p what names the source in error messages.
NamedTensor parseTensorProto(const uint8_t *data, size_t size,
                             const std::string &what);

/// Writes \p tensor as a TensorProto with its data in raw_data (as
/// onnx.numpy_helper.from_array does; strings in string_data).
void writeTensorProto(const std::string &path, const HostTensor &tensor,
                      const std::string &name = "");

/// The bytes writeTensorProto writes.
std::string encodeTensorProto(const HostTensor &tensor,
                              const std::string &name = "");

//===----------------------------------------------------------------------===//
// Comparison
//===----------------------------------------------------------------------===//

/// The outcome of allClose.
struct CompareResult {
  bool passed = false;
  /// Why the comparison could not be done elementwise (type or shape
  /// mismatch); empty otherwise.
  std::string message;
  int64_t numElements = 0;
  int64_t numMismatches = 0;
  /// The element that failed worst (largest excess over its tolerance; NaN
  /// and inf mismatches rank first), or when all pass the one closest to its
  /// tolerance. -1 when there are no elements or no elementwise comparison.
  int64_t worstIndex = -1;
  std::vector<int64_t> worstCoords;
  std::string worstActual, worstExpected;
  /// Over the element pairs that are both finite; the relative error of a
  /// nonzero difference from an expected 0 is inf.
  double maxAbsError = 0;
  double maxRelError = 0;
  /// The tolerances used, for the summary.
  double rtol = 0, atol = 0;

  /// One line, e.g. "FAILED: 3 of 60 elements differ; worst at [1, 2, 0]:
  /// actual 1.5, expected 1.25 (max abs err 0.25, max rel err 0.2; rtol
  /// 0.001, atol 1e-07)".
  std::string summary() const;
};

/// numpy.allclose semantics, elementwise |a - e| <= atol + rtol * |e|, with
/// NaN equal only to NaN (as ONNX's backend test runner accepts) and
/// infinities matching only the same infinity. Integer, bool and string
/// tensors are compared exactly. Type or shape mismatches give a failed result.
CompareResult allClose(const HostTensor &actual, const HostTensor &expected,
                       double rtol, double atol);

//===----------------------------------------------------------------------===//
// Sequences and optionals
//===----------------------------------------------------------------------===//

/// An ONNX value: a tensor, a sequence of values or an optional value (maps
/// and sparse tensors are not supported).
struct HostValue {
  enum class Kind { Tensor, Sequence, Optional };
  Kind kind = Kind::Tensor;
  /// Kind::Tensor: the tensor.
  HostTensor tensor;
  /// Kind::Sequence: its elements; Kind::Optional: none (empty) or the one
  /// value it holds.
  std::vector<HostValue> elements;

  static HostValue fromTensor(HostTensor tensor);
  static HostValue sequence(std::vector<HostValue> elements);
  /// An empty optional.
  static HostValue optional();
  /// An optional holding \p value.
  static HostValue optional(HostValue value);

  /// "f32[3x4]", "seq[i64[4], i64[3]]", "opt[]", "opt[seq[i32[4]]]" (a long
  /// sequence lists its first 8 elements and its length).
  std::string describe() const;
};

/// "tensor", "sequence", "optional".
const char *valueKindName(HostValue::Kind kind);

/// The structure of a declared value: a tensor, or a sequence or optional of
/// `element[0]` (exactly one entry for those, none for a tensor). The tensor
/// element type and shape are not kept.
struct ValueType {
  HostValue::Kind kind = HostValue::Kind::Tensor;
  std::vector<ValueType> element;

  static ValueType tensor();
  static ValueType sequenceOf(ValueType element);
  static ValueType optionalOf(ValueType element);

  /// "tensor", "seq<tensor>", "opt<seq<tensor>>".
  std::string describe() const;
  bool operator==(const ValueType &other) const;
  bool operator!=(const ValueType &other) const { return !(*this == other); }
};

/// A model's graph inputs (initializers left out: models before IR version
/// 4 list them as inputs too) and outputs, by name in declaration order.
struct ModelSignature {
  std::vector<std::pair<std::string, ValueType>> inputs, outputs;
};

/// Reads the signature of the ONNX model (onnx.ModelProto) at \p modelPath.
/// Throws TensorIOError naming the file when it cannot be read or parsed,
/// or when an input or output is a map, a sparse tensor or has no type.
ModelSignature readModelSignature(const std::string &modelPath);

/// Reads a .pb file holding a value of \p type: an onnx.TensorProto for a
/// tensor (as readTensorProto), an onnx.SequenceProto for a sequence
/// (tensor_values, sequence_values or optional_values as its elem_type
/// says) or an onnx.OptionalProto for an optional (elem_type UNDEFINED:
/// empty). A malformed or truncated file, an element of another kind than
/// \p type declares, maps and sparse tensors are TensorIOErrors naming
/// \p path. The protobuf encodings overlap (an OptionalProto holding a
/// tensor has the bytes of a SequenceProto of one tensor), so the kind is
/// taken from \p type, not guessed from the file; what is checked is that
/// the file agrees with it.
HostValue readValueProto(const std::string &path, const ValueType &type);

/// Parses the bytes of such a file; \p what names the source in errors.
HostValue parseValueProto(const uint8_t *data, size_t size,
                          const ValueType &type, const std::string &what);

/// Flattens \p value, named \p name, into the tensors ("leaves") a compiled
/// module takes, appended to \p leaves, and adds its entries to the
/// compile-time \p bindings (name -> dims):
///  - a tensor `x` is the leaf `x`; bindings[x] = its shape;
///  - a sequence `s` of N values: bindings[s] = {N}, then each element i
///    flattened under the name `s[i]` (an empty sequence has no leaves);
///  - an optional `o`: bindings[o] = {0} when empty, else {1} and the value
///    it holds flattened under `o[0]`.
/// So a sequence of two sequences of tensors has the leaves `s[0][0]`,
/// `s[0][1]`, `s[1][0]`, ... Throws TensorIOError for an optional holding
/// more than one value.
void flattenValue(const std::string &name, const HostValue &value,
                  std::vector<std::pair<std::string, HostTensor>> &leaves,
                  std::map<std::string, std::vector<int64_t>> &bindings);

/// The inverse of flattenValue for a value of \p type named \p name, whose
/// leaves \p lookup gives by name (null when there is no such leaf): a
/// tensor is lookup(name) (a TensorIOError when missing); a sequence
/// collects the elements `name[0]`, `name[1]`, ... up to the first that has
/// no leaves; an optional holds a value exactly when `name[0]` has leaves.
/// Leaves cannot say everything flattening dropped: an element with no
/// leaves (an empty sequence or optional) ends a sequence, and an optional
/// holding an empty sequence or an empty optional comes back as an empty
/// optional.
HostValue assembleValue(
    const std::string &name, const ValueType &type,
    const std::function<const HostTensor *(const std::string &)> &lookup);

/// allClose of two values: their kinds, the lengths of sequences and the
/// presence of optionals must match, then each tensor is compared by the
/// tensor allClose.
/// A failure about an element keeps that element's counts and worst element
/// and names it in `message` ("element 2: 3 of 60 elements differ; ..."),
/// so that summary() says "FAILED: element 2: ..."; the element's path
/// follows the leaf names (element 1.0 is the leaf `y[1][0]` of output y).
/// When all pass, the counts and errors are over all elements.
CompareResult allClose(const HostValue &actual, const HostValue &expected,
                       double rtol, double atol);

//===----------------------------------------------------------------------===//
// Conformance test cases
//===----------------------------------------------------------------------===//

/// One test_data_set_N folder of a case.
struct TestDataSet {
  std::string dir;
  /// input_K.pb and output_K.pb paths, in numeric K order.
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
};

/// One conformance case: a directory holding model.onnx and data sets.
struct TestCase {
  /// The case directory's name, e.g. "test_add".
  std::string name;
  /// The name of the directory holding the case, e.g. "node".
  std::string suite;
  std::string dir;
  std::string modelPath;
  /// In numeric N order.
  std::vector<TestDataSet> dataSets;
};

/// Finds the cases in \p dirs. Each entry is either a case directory (it
/// holds model.onnx) or a suite directory whose subdirectories with a
/// model.onnx are cases (sorted by name; subdirectories without one are
/// skipped). A missing directory, a directory with no case, or a data set
/// whose input_K/output_K numbering has a gap throws TensorIOError.
std::vector<TestCase> findCases(const std::vector<std::string> &dirs);

//===----------------------------------------------------------------------===//
// JSON report
//===----------------------------------------------------------------------===//

enum class CaseStatus { Passed, Failed, Error, ExpectedFailure };

/// "passed", "failed", "error", "expected-failure".
const char *caseStatusName(CaseStatus status);

/// The result of one case, as the conformance runner reports it.
struct CaseResult {
  std::string name;
  CaseStatus status = CaseStatus::Error;
  std::string message;
  double seconds = 0;
};

/// \p text as a JSON string literal (with quotes). Control characters are
/// escaped and invalid UTF-8 bytes become U+FFFD, so the output is always
/// valid JSON.
std::string jsonQuote(std::string_view text);

/// The report document: {"summary": {counts per status, "total"}, "cases":
/// [{"name", "status", "message", "time"}...]}.
std::string formatJsonReport(const std::vector<CaseResult> &results);

/// Writes formatJsonReport(results) to \p path.
void writeJsonReport(const std::string &path,
                     const std::vector<CaseResult> &results);

//===----------------------------------------------------------------------===//
// Fault injection for tests
//===----------------------------------------------------------------------===//

namespace testing {
/// Arms one allocation failure in the readers (docs/testing.md, "Failure
/// injection"), as strata::rt::testing::failAllocationAfter does in the
/// runtime: the next `n` allocations succeed, the one after fails as if the
/// memory were exhausted (a TensorIOError naming the file and what the
/// memory was for), and the hook disarms itself. Counted are the file
/// buffer of readNpy/readTensorProto and the data and string tables of
/// parseNpy/parseTensorProto.
void failAllocationAfter(uint64_t n);
/// Disarms a failure that has not happened yet; true when one was pending.
bool clearAllocationFailure();
} // namespace testing

} // namespace strata::tio

#endif // STRATA_TENSORIO_TENSORIO_H
