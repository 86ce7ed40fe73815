// compile_and_run.cpp - compile an ONNX model and run it, from C++
// (strata/Compile.h and strata/Runtime/Runtime.h).
//
//   compile_and_run MODEL.onnx [--shape NAME=D0,D1,...] [--inputs DIR]
//                   [--outputs DIR]
//
// Compiles the model for this CPU in the process (strata::compiler), loads
// the module's bytes into the runtime (strata::runtime) without a file in
// between, and runs it once as run_module_cpp does: inputs from
// DIR/<name>.bin (raw row-major bytes; zeros without --inputs), outputs to
// DIR/<name>.bin with --outputs. A model strata cannot compile is a
// strata::CompileError listing its diagnostics, one per line.

#include <strata/Compile.h>
#include <strata/Runtime/Runtime.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

using namespace strata;

static std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw rt::Error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

static int usage() {
  std::cerr << "usage: compile_and_run MODEL.onnx [--shape NAME=D0,D1,...] "
               "[--inputs DIR] [--outputs DIR]\n";
  return 2;
}

int main(int argc, char **argv) {
  std::string modelPath, inputDir, outputDir;
  CompileOptions options; // cpu, native, fp32, oneDNN where it pays
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--inputs" && i + 1 < argc) {
      inputDir = argv[++i];
    } else if (arg == "--outputs" && i + 1 < argc) {
      outputDir = argv[++i];
    } else if (arg == "--shape" && i + 1 < argc) {
      std::string binding = argv[++i];
      size_t eq = binding.find('=');
      if (eq == std::string::npos)
        return usage();
      std::vector<int64_t> &shape = options.inputShapes[binding.substr(0, eq)];
      std::stringstream dims(binding.substr(eq + 1));
      for (std::string d; std::getline(dims, d, ',');)
        shape.push_back(std::stoll(d));
    } else if (modelPath.empty() && arg[0] != '-') {
      modelPath = arg;
    } else {
      return usage();
    }
  }
  if (modelPath.empty())
    return usage();

  try {
    CompileResult compiled = compileOnnxFile(modelPath, options);
    if (!compiled.warnings.empty())
      std::cerr << compiled.warnings << "\n";
    std::cout << "compiled " << modelPath << ": " << compiled.module.size()
              << " bytes\n";
    std::shared_ptr<const rt::Module> module =
        rt::Module::loadFromMemory(std::move(compiled.module), modelPath);
    rt::Session session(module);
    for (const rt::TensorSignature &sig : module->inputs()) {
      rt::Tensor tensor = rt::Tensor::zeros(sig.dtype, sig.shape);
      if (!inputDir.empty()) {
        std::vector<char> bytes = readFile(inputDir + "/" + sig.name + ".bin");
        if (bytes.size() != tensor.byteSize())
          throw rt::Error(inputDir + "/" + sig.name + ".bin holds " +
                          std::to_string(bytes.size()) + " bytes, not " +
                          std::to_string(tensor.byteSize()));
        std::memcpy(tensor.rawData(), bytes.data(), bytes.size());
      }
      session.setInput(sig.name, tensor);
    }
    session.run();
    for (const rt::TensorSignature &sig : module->outputs()) {
      const rt::Tensor &out = session.output(sig.name);
      std::cout << "output " << sig.name << ": " << rt::dtypeName(out.dtype())
                << rt::shapeToString(out.shape()) << "\n";
      if (!outputDir.empty()) {
        std::ofstream file(outputDir + "/" + sig.name + ".bin",
                           std::ios::binary);
        file.write(static_cast<const char *>(out.rawData()), out.byteSize());
        if (!file)
          throw rt::Error("cannot write " + outputDir + "/" + sig.name +
                          ".bin");
      }
    }
  } catch (const CompileError &e) {
    std::cerr << "compile_and_run: " << e.what() << "\n";
    return 1;
  } catch (const rt::Error &e) {
    std::cerr << "compile_and_run: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
