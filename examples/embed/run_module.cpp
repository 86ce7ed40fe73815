// run_module.cpp - run a compiled strata module from C++
// (strata/Runtime/Runtime.h).
//
//   run_module_cpp MODULE [--threads N] [--inputs DIR] [--outputs DIR]
//
// The same program as run_module.c, through the C++ API: inputs from
// DIR/<name>.bin (raw row-major bytes; zeros without --inputs), one run, the
// first values of each output printed and, with --outputs, written to
// DIR/<name>.bin. Errors are strata::rt::Error, whose message names the
// module, the tensor or the step.

#include <strata/Runtime/Runtime.h>

#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

using namespace strata;

static std::vector<char> readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw rt::Error("cannot open " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

int main(int argc, char **argv) {
  std::string modulePath, inputDir, outputDir;
  rt::SessionOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--inputs" && i + 1 < argc)
      inputDir = argv[++i];
    else if (arg == "--outputs" && i + 1 < argc)
      outputDir = argv[++i];
    else if (arg == "--threads" && i + 1 < argc)
      options.threads = std::stoul(argv[++i]);
    else if (modulePath.empty() && arg[0] != '-')
      modulePath = arg;
    else {
      std::cerr << "usage: run_module_cpp MODULE [--threads N] [--inputs DIR] "
                   "[--outputs DIR]\n";
      return 2;
    }
  }
  if (modulePath.empty()) {
    std::cerr << "usage: run_module_cpp MODULE [--threads N] [--inputs DIR] "
                 "[--outputs DIR]\n";
    return 2;
  }

  try {
    // A module is immutable and may be shared by sessions on many threads;
    // a session runs on one thread at a time.
    std::shared_ptr<const rt::Module> module = rt::Module::load(modulePath);
    std::cout << "module " << modulePath << ", target " << module->target()
              << "\n";
    rt::Session session(module, options);
    for (const rt::TensorSignature &sig : module->inputs()) {
      std::cout << "input  " << sig.name << ": " << rt::dtypeName(sig.dtype)
                << rt::shapeToString(sig.shape) << "\n";
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
                << rt::shapeToString(out.shape());
      if (out.dtype() == rt::DType::F32) {
        std::cout << " =";
        for (int64_t k = 0; k < out.numElements() && k < 4; ++k)
          std::cout << " " << out.data<float>()[k];
        if (out.numElements() > 4)
          std::cout << " ...";
      }
      std::cout << "\n";
      if (!outputDir.empty()) {
        std::ofstream file(outputDir + "/" + sig.name + ".bin",
                           std::ios::binary);
        file.write(static_cast<const char *>(out.rawData()), out.byteSize());
        if (!file)
          throw rt::Error("cannot write " + outputDir + "/" + sig.name +
                          ".bin");
      }
    }
  } catch (const rt::Error &e) {
    std::cerr << "run_module_cpp: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
