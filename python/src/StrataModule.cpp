//===- StrataModule.cpp - strata's Python extension (_strata)
//--------------===//
//
// The native half of the `strata` Python package (python/strata): compiling
// an ONNX model with the compiler in this process, and loading and running
// modules with the runtime. The Python half (strata/__init__.py) converts
// inputs (NumPy arrays, DLPack tensors) and adds the torch.compile backend.
//
// Errors: a compile that fails raises strata.CompileError with every
// diagnostic as strata prints it ("model.onnx: error: ... (at node 'x')"),
// one per line; the runtime's errors raise strata.Error with the runtime's
// message. The GIL is released while compiling and running, so other Python
// threads go on (one Session is still used by one thread at a time).
//
//===----------------------------------------------------------------------===//

#include "strata/Compile.h"
#include "strata/Runtime/Cuda.h"
#include "strata/Runtime/Runtime.h"
#include "strata/Version.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <mutex>
#include <optional>

namespace py = pybind11;
using namespace strata;

namespace {

CompileOptions
makeOptions(const std::string &target, const std::string &cpu,
            const std::map<std::string, std::vector<int64_t>> &inputShapes,
            const std::string &precision, bool useLibraries,
            const std::string &decisions, const std::string &dumpDir,
            bool allowNewerOpset) {
  CompileOptions options;
  options.target = target;
  options.cpu = cpu;
  options.inputShapes = inputShapes;
  options.precision = precision;
  options.useLibraries = useLibraries;
  options.decisionsFile = decisions;
  options.dumpDir = dumpDir;
  options.allowNewerOpset = allowNewerOpset;
  readCompileEnvironment(options);
  return options;
}

/// Runs `compile` without the GIL; returns (module bytes, warnings).
template <typename Compile> py::tuple compiled(Compile &&compile) {
  CompileResult result;
  {
    py::gil_scoped_release release;
    result = compile();
  }
  return py::make_tuple(
      py::bytes(reinterpret_cast<const char *>(result.module.data()),
                result.module.size()),
      result.warnings);
}

/// Element types between NumPy and the runtime (bf16 has no NumPy type: its
/// tensors travel as uint16 bits).
rt::DType dtypeOf(const py::array &array) {
  py::dtype t = array.dtype();
  char kind = t.kind();
  ssize_t size = t.itemsize();
  if (kind == 'f' && size == 4)
    return rt::DType::F32;
  if (kind == 'f' && size == 8)
    return rt::DType::F64;
  if (kind == 'f' && size == 2)
    return rt::DType::F16;
  if (kind == 'b')
    return rt::DType::I1;
  if (kind == 'i' && size == 1)
    return rt::DType::I8;
  if (kind == 'i' && size == 2)
    return rt::DType::I16;
  if (kind == 'i' && size == 4)
    return rt::DType::I32;
  if (kind == 'i' && size == 8)
    return rt::DType::I64;
  if (kind == 'u' && size == 1)
    return rt::DType::U8;
  if (kind == 'u' && size == 2)
    return rt::DType::U16;
  if (kind == 'u' && size == 4)
    return rt::DType::U32;
  if (kind == 'u' && size == 8)
    return rt::DType::U64;
  if (kind == 'U' || kind == 'O' || kind == 'S')
    return rt::DType::String;
  throw rt::Error("NumPy arrays of dtype " + std::string(py::str(t)) +
                  " have no strata element type");
}

py::dtype numpyDtype(rt::DType type) {
  switch (type) {
  case rt::DType::F32:
    return py::dtype::of<float>();
  case rt::DType::F64:
    return py::dtype::of<double>();
  case rt::DType::F16:
    return py::dtype("float16");
  case rt::DType::BF16:
  case rt::DType::U16:
    return py::dtype::of<uint16_t>();
  case rt::DType::I1:
    return py::dtype::of<bool>();
  case rt::DType::I8:
    return py::dtype::of<int8_t>();
  case rt::DType::I16:
    return py::dtype::of<int16_t>();
  case rt::DType::I32:
    return py::dtype::of<int32_t>();
  case rt::DType::I64:
    return py::dtype::of<int64_t>();
  case rt::DType::U8:
    return py::dtype::of<uint8_t>();
  case rt::DType::U32:
    return py::dtype::of<uint32_t>();
  case rt::DType::U64:
    return py::dtype::of<uint64_t>();
  case rt::DType::String:
    return py::dtype("O");
  }
  throw rt::Error("unknown element type");
}

/// The element type `array` is taken as for an input of type `want` (the
/// module's): NumPy's own, except that bf16 takes 16-bit integers as its
/// bits (NumPy has no bfloat16).
rt::DType inputType(const py::array &array, rt::DType want) {
  char kind = array.dtype().kind();
  return want == rt::DType::BF16 && (kind == 'u' || kind == 'i') &&
                 array.dtype().itemsize() == 2
             ? rt::DType::BF16
             : dtypeOf(array);
}

/// A tensor holding a copy of `array` in element type `want`, which NumPy's
/// own dtype must match (inputType).
rt::Tensor toTensor(const std::string &name, py::array array, rt::DType want) {
  rt::DType have = inputType(array, want);
  std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
  if (have == rt::DType::String) {
    std::vector<std::string> values;
    for (py::handle item : array.attr("ravel")())
      values.push_back(py::str(item));
    return rt::Tensor::fromStrings(std::move(shape), std::move(values));
  }
  if (have != want)
    throw rt::Error("input '" + name + "' is " + rt::dtypeName(want) +
                    ", but a NumPy array of " +
                    std::string(py::str(array.dtype())) + " was given");
  py::array contiguous = py::array::ensure(array, py::array::c_style);
  rt::Tensor tensor = rt::Tensor::zeros(have, shape);
  if (tensor.byteSize())
    std::memcpy(tensor.rawData(), contiguous.data(), tensor.byteSize());
  return tensor;
}

py::array toArray(const rt::Tensor &tensor) {
  std::vector<ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  if (tensor.dtype() == rt::DType::String) {
    py::array out(py::dtype("O"), shape);
    py::object flat = out.attr("reshape")(-1);
    const auto &strings = tensor.strings();
    for (size_t i = 0; i < strings.size(); ++i)
      flat[py::int_(i)] = py::str(strings[i]);
    return out;
  }
  py::array out(numpyDtype(tensor.dtype()), shape);
  if (tensor.byteSize())
    std::memcpy(out.mutable_data(), tensor.rawData(), tensor.byteSize());
  return out;
}

py::dict signatureDict(const rt::TensorSignature &sig) {
  py::dict d;
  d["name"] = sig.name;
  d["dtype"] = rt::dtypeName(sig.dtype);
  py::list shape;
  for (int64_t dim : sig.shape)
    shape.append(dim < 0 ? py::object(py::none()) : py::object(py::int_(dim)));
  d["shape"] = py::tuple(shape);
  return d;
}

/// The module as Python holds it: the runtime's module and its file bytes
/// (to save it again).
struct PyModule {
  std::shared_ptr<const rt::Module> module;
  std::vector<uint8_t> bytes;
};

struct PySession {
  std::shared_ptr<const rt::Module> module;
  std::unique_ptr<rt::Session> session;

  /// Binds `feeds` (name -> array; every input, each run) and `outs`
  /// (name -> array each output is written into, or None), runs, and
  /// returns the outputs by name. CUDA sessions also take `device_feeds`
  /// (name -> (address, NumPy type string, shape): the caller's device
  /// memory, Session::setInputDevice) and `device_outs` (name -> address,
  /// Session::setOutputDevice), bound for this run only; such outputs are
  /// left out of the result (the caller holds them).
  py::dict run(const py::dict &feeds, const py::object &outs,
               const py::object &deviceFeeds, const py::object &deviceOuts) {
    const auto &inputs = module->inputs();
    // Arrays already laid out as the module reads them (C order, its
    // element type) are read in place for this run (Session::
    // setInputView): `held` keeps them alive, and the bindings are dropped
    // when the run ends, so that no later run reads memory Python may have
    // freed. Others are copied.
    std::vector<py::array> held;
    std::vector<size_t> viewed;
    struct Unbind {
      rt::Session &session;
      std::vector<size_t> &viewed;
      ~Unbind() {
        for (size_t index : viewed)
          session.unsetInput(index);
      }
    } unbind{*session, viewed};
    for (auto item : feeds) {
      std::string name = py::str(item.first);
      size_t index = session->inputIndex(name);
      py::array array = py::array::ensure(item.second);
      if (!array)
        throw rt::Error("input '" + name + "' is not an array");
      rt::DType want = inputs[index].dtype;
      bool inPlace = want != rt::DType::String &&
                     inputType(array, want) == want &&
                     (array.flags() & py::array::c_style);
      if (!inPlace) {
        session->setInput(index, toTensor(name, array, want));
        continue;
      }
      std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
      session->setInputView(index,
                            rt::TensorView{want, std::move(shape),
                                           const_cast<void *>(array.data())});
      held.push_back(std::move(array));
      viewed.push_back(index);
    }
    py::dict onDeviceFeeds =
        deviceFeeds.is_none() ? py::dict()
                              : py::reinterpret_borrow<py::dict>(deviceFeeds);
    for (auto item : onDeviceFeeds) {
      std::string name = py::str(item.first);
      size_t index = session->inputIndex(name);
      auto entry = item.second.cast<py::tuple>();
      if (entry.size() != 3)
        throw rt::Error("device input '" + name +
                        "' must be (address, type string, shape)");
      auto address = entry[0].cast<uint64_t>();
      // The element type as for a host array of that NumPy type.
      py::array probe(py::dtype(entry[1].cast<std::string>()),
                      std::vector<py::ssize_t>{0});
      auto shape = entry[2].cast<std::vector<int64_t>>();
      session->setInputDevice(index, inputType(probe, inputs[index].dtype),
                              shape, address);
      viewed.push_back(index);
    }
    for (const rt::TensorSignature &sig : inputs)
      if (!feeds.contains(sig.name) && !onDeviceFeeds.contains(sig.name))
        throw rt::Error("strata module '" + module->name() + "': input '" +
                        sig.name + "' was not set");
    // Outputs into the caller's arrays (Session::setOutputView), for this
    // run only, like the inputs' views: C-ordered, writeable arrays of the
    // output's element type and shape, which the run fills in place.
    // (A default py::array is an empty array, not a null handle.)
    std::vector<std::optional<py::array>> targets(module->outputs().size());
    std::vector<bool> onDevice(module->outputs().size(), false);
    struct UnbindOutputs {
      rt::Session &session;
      std::vector<std::optional<py::array>> &targets;
      std::vector<bool> &onDevice;
      ~UnbindOutputs() {
        for (size_t i = 0; i < targets.size(); ++i)
          if (targets[i] || onDevice[i])
            session.unsetOutputView(i);
      }
    } unbindOutputs{*session, targets, onDevice};
    if (!deviceOuts.is_none()) {
      for (auto item : py::reinterpret_borrow<py::dict>(deviceOuts)) {
        size_t index = session->outputIndex(py::str(item.first));
        session->setOutputDevice(index, item.second.cast<uint64_t>());
        onDevice[index] = true;
      }
    }
    if (!outs.is_none()) {
      if (!py::isinstance<py::dict>(outs))
        throw rt::Error("out must be a dict of output name -> array");
      for (auto item : py::reinterpret_borrow<py::dict>(outs)) {
        std::string name = py::str(item.first);
        size_t index = session->outputIndex(name);
        const rt::TensorSignature &sig = module->outputs()[index];
        if (!py::isinstance<py::array>(item.second))
          throw rt::Error("out['" + name + "'] is not a NumPy array");
        py::array array = py::reinterpret_borrow<py::array>(item.second);
        std::vector<int64_t> shape(array.shape(), array.shape() + array.ndim());
        if (sig.dtype == rt::DType::String || shape != sig.shape ||
            inputType(array, sig.dtype) != sig.dtype ||
            !(array.flags() & py::array::c_style) || !array.writeable())
          throw rt::Error(
              "out['" + name + "'] must be a writeable, C-ordered array of " +
              rt::dtypeName(sig.dtype) + rt::shapeToString(sig.shape) +
              " (the output's element type and shape), not " +
              std::string(py::str(array.dtype())) + rt::shapeToString(shape));
        session->setOutputView(
            index,
            rt::TensorView{sig.dtype, std::move(shape), array.mutable_data()});
        targets[index] = std::move(array);
      }
    }
    {
      py::gil_scoped_release release;
      session->run();
    }
    py::dict out;
    for (size_t i = 0; i < module->outputs().size(); ++i)
      if (!onDevice[i])
        out[py::str(module->outputs()[i].name)] =
            targets[i] ? *targets[i] : toArray(session->output(i));
    return out;
  }
};

} // namespace

PYBIND11_MODULE(_strata, m) {
  m.doc() = "strata's compiler and runtime (the strata package wraps this)";
  m.attr("__version__") = STRATA_VERSION_STRING;

  static py::exception<rt::Error> error(m, "Error");
  static py::exception<CompileError> compileError(m, "CompileError",
                                                  error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const CompileError &e) {
      compileError(e.what());
    } catch (const rt::Error &e) {
      error(e.what());
    }
  });

  // A model is its serialized bytes (`model`, named `name` in messages,
  // compiled in memory) or, when `model` is None, the file at `name`.
  m.def(
      "compile",
      [](const std::optional<py::bytes> &model, const std::string &name,
         const std::string &target, const std::string &cpu,
         const std::map<std::string, std::vector<int64_t>> &inputShapes,
         const std::string &precision, bool useLibraries,
         const std::string &decisions, const std::string &dumpDir,
         bool allowNewerOpset) {
        CompileOptions options =
            makeOptions(target, cpu, inputShapes, precision, useLibraries,
                        decisions, dumpDir, allowNewerOpset);
        if (!model)
          return compiled([&] { return compileOnnxFile(name, options); });
        std::string_view bytes = *model;
        return compiled([&] { return compileOnnx(bytes, name, options); });
      },
      py::arg("model"), py::arg("name"), py::arg("target") = "cpu",
      py::arg("cpu") = "native",
      py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
      py::arg("precision") = "", py::arg("use_libraries") = true,
      py::arg("decisions") = "", py::arg("dump_dir") = "",
      py::arg("allow_newer_opset") = false,
      "Compiles a serialized ONNX ModelProto (`model`; external data "
      "refused) or, when `model` is None, the model at the path `name`; "
      "returns (module bytes, warnings).");

  m.def(
      "explain",
      [](const std::optional<py::bytes> &model, const std::string &name,
         const std::string &target, const std::string &cpu,
         const std::map<std::string, std::vector<int64_t>> &inputShapes,
         const std::string &precision, bool useLibraries,
         const std::string &decisions, bool allowNewerOpset) {
        CompileOptions options =
            makeOptions(target, cpu, inputShapes, precision, useLibraries,
                        decisions, "", allowNewerOpset);
        std::string_view bytes;
        if (model)
          bytes = *model;
        std::string warnings, json;
        {
          py::gil_scoped_release release;
          json = model ? explainOnnx(bytes, name, options, &warnings)
                       : explainOnnxFile(name, options, &warnings);
        }
        return py::make_tuple(json, warnings);
      },
      py::arg("model"), py::arg("name"), py::arg("target") = "cpu",
      py::arg("cpu") = "native",
      py::arg("input_shapes") = std::map<std::string, std::vector<int64_t>>{},
      py::arg("precision") = "", py::arg("use_libraries") = true,
      py::arg("decisions") = "", py::arg("allow_newer_opset") = false,
      "`strata explain --json` of a model given as compile takes it; returns "
      "(JSON text, warnings).");

  py::class_<PyModule>(m, "Module")
      .def_property_readonly(
          "name", [](const PyModule &self) { return self.module->name(); })
      .def_property_readonly(
          "target", [](const PyModule &self) { return self.module->target(); })
      .def_property_readonly("inputs",
                             [](const PyModule &self) {
                               py::list out;
                               for (const auto &sig : self.module->inputs())
                                 out.append(signatureDict(sig));
                               return out;
                             })
      .def_property_readonly("outputs",
                             [](const PyModule &self) {
                               py::list out;
                               for (const auto &sig : self.module->outputs())
                                 out.append(signatureDict(sig));
                               return out;
                             })
      .def("to_bytes",
           [](const PyModule &self) {
             return py::bytes(reinterpret_cast<const char *>(self.bytes.data()),
                              self.bytes.size());
           })
      .def(
          "session",
          [](const PyModule &self, unsigned threads, int cudaDevice,
             bool cudaGraphs, std::optional<bool> cudaLibraryTuning,
             std::optional<std::string> cudaLibraryChoices) {
            rt::SessionOptions options;
            options.threads = threads;
            options.cuda.device = cudaDevice;
            options.cuda.graphs = cudaGraphs;
            options.cuda.tuneLibrary = cudaLibraryTuning;
            options.cuda.libraryChoices = cudaLibraryChoices;
            auto session = std::make_unique<PySession>();
            session->module = self.module;
            session->session =
                std::make_unique<rt::Session>(self.module, options);
            return session;
          },
          py::arg("threads") = 1, py::arg("cuda_device") = 0,
          py::arg("cuda_graphs") = true,
          py::arg("cuda_library_tuning") = std::optional<bool>(),
          py::arg("cuda_library_choices") = std::optional<std::string>());

  py::class_<PySession>(m, "Session")
      .def(
          "cuda_library_choices",
          [](const PySession &self) {
            return rt::cudaSessionInfo(*self.session).libraryChoices;
          },
          "A CUDA session's cuBLASLt algorithms as the text of a choices "
          "file (docs/runtime.md, \"Pinning cuBLASLt's choices\").")
      .def("run", &PySession::run, py::arg("feeds"),
           py::arg("out") = py::none(), py::arg("device_feeds") = py::none(),
           py::arg("device_outs") = py::none(),
           "Binds every input (name -> array; read in place when laid out "
           "as the module reads it, else copied), runs, and returns the "
           "outputs (name -> new NumPy array, or the array `out` gave for "
           "it, which the run wrote in place).");

  m.def(
      "load_bytes",
      [](py::bytes data, const std::string &name) {
        std::string_view view = data;
        auto module = std::make_unique<PyModule>();
        module->bytes.assign(view.begin(), view.end());
        module->module = rt::Module::loadFromMemory(module->bytes, name);
        return module;
      },
      py::arg("data"), py::arg("name") = "<memory>",
      "Loads (and verifies) a module from its bytes.");
}
