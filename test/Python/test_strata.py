#!/usr/bin/env python3
"""The strata Python package (docs/python.md) against stored references.

Run with the package on the path (CTest's python-package test sets
PYTHONPATH to <build>/python):  python3 -m unittest test_strata -v

- models/resnet_small and mlp_dynamic compiled from a path, from bytes and
  from an onnx.ModelProto, run on their stored test inputs and compared with
  the stored outputs (float64 PyTorch references);
- a module saved, loaded back, and run by sessions on several threads;
- each kind of error as the exception and message a user sees;
- inputs through DLPack (torch tensors) and the torch.compile backend on FX
  graphs (torch.fx.symbolic_trace; Debian's torch 1.13 has no torch.compile)
  against eager PyTorch.
"""

import inspect
import os
import tempfile
import threading
import unittest
import warnings

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

import strata

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = os.path.join(ROOT, "models")


def read_pb(path):
    tensor = TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def data_set(name, index=0):
    d = os.path.join(MODELS, name, f"test_data_set_{index}")
    ins = [read_pb(os.path.join(d, f)) for f in sorted(os.listdir(d))
           if f.startswith("input_")]
    outs = [read_pb(os.path.join(d, f)) for f in sorted(os.listdir(d))
            if f.startswith("output_")]
    return ins, outs


class CompileAndRun(unittest.TestCase):
    def test_resnet_from_path_matches_reference(self):
        module = strata.compile(os.path.join(MODELS, "resnet_small",
                                             "model.onnx"))
        self.assertEqual(module.target, "cpu")
        self.assertEqual(module.inputs,
                         [{"name": "x", "dtype": "f32",
                           "shape": (1, 3, 32, 32)}])
        (x,), (want,) = data_set("resnet_small")
        got = module.run({"x": x})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)

    def test_dynamic_batch_from_bytes_and_proto(self):
        path = os.path.join(MODELS, "mlp_dynamic", "model.onnx")
        with open(path, "rb") as f:
            data = f.read()
        for index in range(3):
            (x,), (want,) = data_set("mlp_dynamic", index)
            for model in (data, onnx.load(path)):
                module = strata.compile(
                    model, input_shapes={"x": list(x.shape)})
                self.assertEqual(module.inputs[0]["shape"], x.shape)
                # A list of inputs, in the module's order.
                got = module.session(threads=2).run([x])
                np.testing.assert_allclose(
                    list(got.values())[0], want, rtol=1e-3, atol=1e-4)

    def test_inputs_in_place_and_copied_agree(self):
        # A C-ordered float32 array is read in place; a Fortran-ordered one,
        # a strided view and float64 values are not laid out as the module
        # reads them and are copied (float64 is refused). The input is not
        # kept after a run: the next run needs it again.
        module = strata.compile(os.path.join(MODELS, "resnet_small",
                                             "model.onnx"))
        # (A CPU module ignores the CUDA options.)
        session = module.session(cuda_library_tuning=False,
                                 cuda_library_choices="unused.txt")
        with self.assertRaisesRegex(strata.Error, "targets 'cpu', not 'cuda'"):
            session.cuda_library_choices()
        (x,), (want,) = data_set("resnet_small")
        in_place = session.run({"x": np.ascontiguousarray(x)})["y"]
        np.testing.assert_allclose(in_place, want, rtol=1e-3, atol=1e-4)
        fortran = session.run({"x": np.asfortranarray(x)})["y"]
        np.testing.assert_array_equal(fortran, in_place)
        wide = np.zeros((1, 3, 32, 64), np.float32)
        wide[..., ::2] = x
        strided = session.run({"x": wide[..., ::2]})["y"]
        np.testing.assert_array_equal(strided, in_place)
        with self.assertRaisesRegex(strata.Error, "input 'x' was not set"):
            session.run({})
        with self.assertRaisesRegex(strata.Error, "float64 was given"):
            session.run({"x": x.astype(np.float64)})

    def test_outputs_into_callers_arrays(self):
        # out= has the run write an output into the caller's array in
        # place; the result holds that array. A wrong dtype, shape, order or
        # a read-only array is refused, naming the output.
        module = strata.compile(os.path.join(MODELS, "resnet_small",
                                             "model.onnx"))
        session = module.session()
        (x,), (want,) = data_set("resnet_small")
        y = np.full(want.shape, np.nan, np.float32)
        got = session.run({"x": x}, out={"y": y})
        self.assertIs(got["y"], y)
        np.testing.assert_allclose(y, want, rtol=1e-3, atol=1e-4)
        again = session.run({"x": x})["y"]
        self.assertIsNot(again, y)
        np.testing.assert_array_equal(again, y)
        for bad in (np.zeros(want.shape, np.float64),
                    np.zeros((1,) + want.shape, np.float32),
                    np.zeros((1, 2 * want.shape[1]), np.float32)[:, ::2]):
            with self.assertRaisesRegex(strata.Error, "out\\['y'\\] must be"):
                session.run({"x": x}, out={"y": bad})
        frozen = np.zeros(want.shape, np.float32)
        frozen.flags.writeable = False
        with self.assertRaisesRegex(strata.Error, "writeable"):
            module.run({"x": x}, out={"y": frozen})
        with self.assertRaisesRegex(strata.Error, "has no output named 'z'"):
            session.run({"x": x}, out={"z": y})

    def test_save_load_and_threads(self):
        module = strata.compile(os.path.join(MODELS, "resnet_small",
                                             "model.onnx"))
        (x,), (want,) = data_set("resnet_small")
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "r.strata")
            module.save(path)
            loaded = strata.load(path)
        self.assertEqual(loaded.to_bytes(), module.to_bytes())
        results = [None] * 4

        def work(i):
            session = loaded.session()
            for _ in range(5):
                results[i] = session.run({"x": x})["y"]
        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for r in results:
            np.testing.assert_array_equal(r, results[0])
        np.testing.assert_allclose(results[0], want, rtol=1e-3, atol=1e-4)


class Explain(unittest.TestCase):
    def test_explain_records_the_decisions(self):
        path = os.path.join(MODELS, "resnet_small", "model.onnx")
        e = strata.explain(path)
        self.assertEqual(e["model"], path)
        self.assertEqual(e["target"], "cpu")
        kernels = e["kernels"]
        self.assertEqual(e["summary"]["kernels"], len(kernels))
        # The stem's convolution and its ReLU are one oneDNN call.
        stem = next(k for k in kernels if "/stem/stem.0/Conv" in k["nodes"])
        self.assertEqual(stem["kind"], "library")
        self.assertEqual(stem["library"], "dnnl.conv")
        self.assertIn("/stem/stem.2/Relu", stem["nodes"])
        self.assertTrue(stem["reason"])
        # The kernels hold the model's own nodes, every Conv and Gemm among
        # them.
        model = onnx.load(path)
        placed = {n for k in kernels for n in k["nodes"]}
        self.assertLessEqual(placed, {n.name for n in model.graph.node})
        self.assertLessEqual({n.name for n in model.graph.node
                              if n.op_type in ("Conv", "Gemm")}, placed)
        # Without libraries, every kernel is generated.
        e = strata.explain(path, libraries=False)
        self.assertEqual(e["summary"]["library_calls"], {})
        self.assertTrue(all(k["kind"] == "codegen" for k in e["kernels"]))
        # A ModelProto is explained in memory: the same kernels.
        in_memory = strata.explain(model)
        self.assertEqual(in_memory["model"], "<model bytes>")
        self.assertEqual([k["nodes"] for k in in_memory["kernels"]],
                         [k["nodes"] for k in kernels])


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.module = strata.compile(os.path.join(MODELS, "mlp_dynamic",
                                                 "model.onnx"),
                                    input_shapes={"x": [2, 64]})

    def test_wrong_input_dtype_and_shape(self):
        with self.assertRaisesRegex(
                strata.Error, "input 'x' is f32, but a NumPy array of "
                "float64 was given"):
            self.module.run({"x": np.zeros((2, 64))})
        with self.assertRaisesRegex(
                strata.Error, r"input 'x' expects f32\[2, 64\], got "
                r"f32\[3, 64\]"):
            self.module.run({"x": np.zeros((3, 64), np.float32)})
        with self.assertRaisesRegex(
                strata.Error, r"has no input named 'y' \(its inputs are "
                "'x'\\)"):
            self.module.run({"y": np.zeros((2, 64), np.float32)})
        with self.assertRaisesRegex(strata.Error, "input 'x' was not set"):
            self.module.session().run({})

    def test_compile_errors_name_the_problem(self):
        path = os.path.join(MODELS, "mlp_dynamic", "model.onnx")
        with self.assertRaisesRegex(
                strata.CompileError,
                r"model.onnx: error: input 'x' has the dynamic shape "
                r"\[\?, 64\]"):
            strata.compile(path)
        # Bytes are compiled in memory: the message names them, not a
        # temporary file.
        with self.assertRaisesRegex(strata.CompileError,
                                    "^<model bytes>: error: not a valid "
                                    "ONNX model"):
            strata.compile(b"\x08\x07garbage")
        with self.assertRaisesRegex(strata.CompileError, "unknown CPU 'bogus'"):
            strata.compile(path, cpu="bogus", input_shapes={"x": [1, 64]})
        node = helper.make_node("Bogus", ["a"], ["b"], name="mystery")
        graph = helper.make_graph(
            [node], "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
        model = helper.make_model(graph, opset_imports=[
            helper.make_opsetid("", 17)])
        with self.assertRaisesRegex(strata.CompileError, "Bogus"):
            strata.compile(model)
        # An opset newer than strata knows: refused, or read as the newest
        # it knows with a warning.
        newer = helper.make_model(helper.make_graph(
            [helper.make_node("Relu", ["a"], ["b"])], "g",
            [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])]),
            opset_imports=[helper.make_opsetid("", 99)])
        with self.assertRaisesRegex(strata.CompileError,
                                    "opset 99 is newer than strata knows"):
            strata.compile(newer)
        said = []
        module = strata.compile(newer, allow_newer_opset=True, warnings=said)
        self.assertIn("reading it as opset 22", "\n".join(said))
        np.testing.assert_array_equal(
            module.run({"a": np.array([-1, 2], np.float32)})["b"], [0, 2])
        # CompileError is an Error: one except clause catches both.
        self.assertTrue(issubclass(strata.CompileError, strata.Error))

    def test_corrupt_module_is_refused(self):
        data = bytearray(self.module.to_bytes())
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "half.strata")
            with open(path, "wb") as f:
                f.write(data[:len(data) // 2])
            with self.assertRaisesRegex(strata.Error,
                                        "half.strata': the file is truncated"):
                strata.load(path)


try:
    import torch
    import torch.fx
except ImportError:  # pragma: no cover - CI installs python3-torch
    torch = None


@unittest.skipIf(torch is None, "PyTorch is not installed")
class DeviceMemory(unittest.TestCase):
    # GPU tensors reach a CUDA session by their __cuda_array_interface__
    # (the GPU machine runs it: bench/gpu/torch_compile.py); which ones
    # qualify is decided here.
    def test_contiguous_device_tensors_qualify(self):
        class Fake:
            def __init__(self, shape, strides, typestr="<f4"):
                self.__cuda_array_interface__ = {
                    "shape": shape, "strides": strides, "typestr": typestr,
                    "data": (1 << 40, False), "version": 3}
        from strata import _device_memory
        self.assertEqual(_device_memory(Fake((2, 3), None)),
                         (1 << 40, "<f4", [2, 3]))
        self.assertEqual(_device_memory(Fake((2, 3), (12, 4))),
                         (1 << 40, "<f4", [2, 3]))
        self.assertIsNone(_device_memory(Fake((2, 3), (4, 8))))
        self.assertIsNone(_device_memory(np.zeros(3)))

    def test_cpu_sessions_take_host_arrays_only(self):
        module = strata.compile(os.path.join(MODELS, "resnet_small",
                                             "model.onnx"))
        (x,), (want,) = data_set("resnet_small")
        session = module.session()
        with self.assertRaisesRegex(strata.Error, "for CUDA sessions"):
            session._native.run({}, None, {"x": (1 << 40, "<f4",
                                                 list(x.shape))}, None)
        np.testing.assert_allclose(session.run({"x": x})["y"], want,
                                   rtol=1e-3, atol=1e-4)


class Torch(unittest.TestCase):
    def test_dlpack_inputs(self):
        module = strata.compile(os.path.join(MODELS, "resnet_small",
                                             "model.onnx"))
        (x,), (want,) = data_set("resnet_small")
        got = module.run({"x": torch.from_numpy(x)})["y"]
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)

    def test_backend_on_fx_graph_matches_eager(self):
        from strata.torch_backend import strata_backend

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
                self.bn = torch.nn.BatchNorm2d(8)
                self.fc = torch.nn.Linear(8, 5)

            def forward(self, x, scale):
                h = torch.relu(self.bn(self.conv(x)))
                h = torch.nn.functional.adaptive_avg_pool2d(h, 1).flatten(1)
                return self.fc(h) * scale, h.sum(dim=1)

        torch.manual_seed(0)
        net = Net().eval()
        gm = torch.fx.symbolic_trace(net)
        x = torch.randn(2, 3, 16, 16)
        scale = torch.tensor([1.5])
        compiled = strata_backend(gm, [x, scale])
        with torch.no_grad():
            want = net(x, scale)
            got = compiled(x, scale)
            self.assertIsInstance(got, tuple)
            for g, w in zip(got, want):
                torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
            # Another batch size compiles again; the first is kept.
            x4 = torch.randn(4, 3, 16, 16)
            got4 = compiled(x4, scale)
            torch.testing.assert_close(got4[0], net(x4, scale)[0],
                                       rtol=1e-4, atol=1e-5)
        self.assertEqual(len(compiled.modules), 2)

    def test_backend_freezes_lifted_weights(self):
        # Dynamo (torch 2.x) passes a module's parameters and buffers as
        # graph inputs; the backend makes them the module's constants.
        from strata.torch_backend import strata_backend

        def f(x, weight, running_mean, bias):
            h = torch.nn.functional.linear(x - running_mean, weight, bias)
            return torch.relu(h)
        torch.manual_seed(2)
        weight = torch.nn.Parameter(torch.randn(6, 4))
        bias = torch.nn.Parameter(torch.randn(6))
        gm = torch.fx.symbolic_trace(f)
        # A buffer is a plain tensor: Dynamo says where it read it from.
        mean = torch.randn(4)
        for node in gm.graph.nodes:
            if node.name == "running_mean":
                node.meta["grapharg"] = type("GraphArg", (), {
                    "source": type("Source", (), {
                        "name": lambda self: "L['self']._buffers['mean']"})()})
        x = torch.randn(3, 4)
        compiled = strata_backend(gm, [x, weight, mean, bias])
        self.assertEqual(compiled.weights, [1, 2, 3])
        with torch.no_grad():
            got = compiled(x, weight, mean, bias)
            torch.testing.assert_close(got, f(x, weight, mean, bias),
                                       rtol=1e-5, atol=1e-5)
        (module, *_), = compiled.modules.values()
        self.assertEqual([i["name"] for i in module.inputs], ["input_0"])
        # freeze=False keeps them inputs of the module.
        unfrozen = strata_backend(gm, [x, weight, mean, bias],
                                  options={"freeze": False})
        (module, *_), = unfrozen.modules.values()
        self.assertEqual(len(module.inputs), 4)
        with torch.no_grad():
            torch.testing.assert_close(unfrozen(x, weight, mean, bias),
                                       f(x, weight, mean, bias),
                                       rtol=1e-5, atol=1e-5)

    def test_backend_bfloat16_in_and_out(self):
        # NumPy has no bfloat16: tensors travel as their bits both ways.
        from strata.torch_backend import strata_backend

        def f(x, y):
            return (x @ y).relu()
        torch.manual_seed(1)
        x = torch.randn(4, 8).bfloat16()
        y = torch.randn(8, 3).bfloat16()
        compiled = strata_backend(torch.fx.symbolic_trace(f), [x, y])
        got = compiled(x, y)
        self.assertEqual(got.dtype, torch.bfloat16)
        self.assertEqual(len(compiled.modules), 1)
        torch.testing.assert_close(got.float(), f(x, y).float(),
                                   rtol=2e-2, atol=6e-2)

    def test_backend_falls_back_to_eager(self):
        from strata.torch_backend import strata_backend

        def f(x):
            # Returns a non-tensor: strata cannot take this graph.
            return {"y": x * 2}
        gm = torch.fx.symbolic_trace(f)
        x = torch.ones(3)
        with self.assertRaises(TypeError):
            strata_backend(gm, [x])

        def g(x):
            # torch.onnx cannot export FFTs: the export fails.
            return torch.fft.rfft(x).abs()
        gm = torch.fx.symbolic_trace(g)
        x = torch.randn(16)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            compiled = strata_backend(gm, [x])
            out = compiled(x)
        self.assertTrue(any("running this graph eagerly" in str(w.message)
                            for w in caught), [str(w.message) for w in caught])
        torch.testing.assert_close(out, g(x))

    def test_backend_exporters(self):
        from strata.torch_backend import strata_backend

        def f(x):
            return torch.tanh(x) * 3
        gm = torch.fx.symbolic_trace(f)
        x = torch.randn(5)
        with self.assertRaisesRegex(ValueError, "unknown exporter 'onnx'"):
            strata_backend(gm, [x], options={"exporter": "onnx"})
        compiled = strata_backend(gm, [x], exporter="torchscript")
        self.assertEqual(compiled.exporter, "torchscript")
        torch.testing.assert_close(compiled(x), f(x))
        if "dynamo" not in inspect.signature(torch.onnx.export).parameters:
            # torch 1.13 (CI): asked for the dynamo exporter alone, the
            # graph runs eagerly, and the warning says which export failed.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                compiled = strata_backend(gm, [x], exporter="dynamo")
                torch.testing.assert_close(compiled(x), f(x))
            self.assertTrue(compiled.eager)
            self.assertTrue(any("dynamo export:" in str(w.message)
                                for w in caught),
                            [str(w.message) for w in caught])


if __name__ == "__main__":
    unittest.main()
