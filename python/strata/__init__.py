"""strata from Python: compile ONNX models, load and run strata modules.

    import numpy as np, strata

    module = strata.compile("model.onnx", input_shapes={"x": [4, 64]})
    y = module.run({"x": np.ones((4, 64), np.float32)})["y"]
    module.save("model.strata")                # later: strata.load(...)

    session = module.session(threads=4)        # one per thread of yours
    outputs = session.run({"x": x})

Inputs may be NumPy arrays, anything NumPy can turn into one, or tensors
that speak DLPack (``__dlpack__``: PyTorch, JAX, CuPy); GPU tensors are
brought to the host first, and the session copies its inputs once. Outputs
are new NumPy arrays. Errors raise :class:`Error` (the runtime's message,
naming the module, the input or the step) or :class:`CompileError` (each
diagnostic as ``strata`` prints it, naming the node). docs/python.md has the
whole API; :mod:`strata.torch_backend` is the torch.compile backend.
"""

import json
import os

import numpy as np

from ._strata import CompileError, Error, __version__, load_bytes
from ._strata import compile as _compile
from ._strata import explain as _explain

__all__ = ["CompileError", "Error", "Module", "Session", "compile", "explain",
           "load", "__version__"]


def _as_array(value, name):
    """A NumPy array for an input: DLPack tensors through np.from_dlpack
    (no copy for host memory), GPU tensors through the host."""
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "__dlpack__"):
        device = getattr(value, "__dlpack_device__", None)
        # DLPack device type 1 is the host (kDLCPU); anything else (CUDA,
        # ROCm) must come to the host, which the tensor's own API does.
        if device is not None and device()[0] != 1:
            if hasattr(value, "cpu"):
                value = value.cpu()
            else:
                raise Error(f"input '{name}' lives on DLPack device "
                            f"{device()}; bring it to the host first")
        try:
            return np.from_dlpack(value)
        except (AttributeError, TypeError, RuntimeError, BufferError):
            pass
    if hasattr(value, "numpy"):
        return value.detach().numpy() if hasattr(value, "detach") \
            else value.numpy()
    return np.asarray(value)


def _device_memory(value):
    """(address, NumPy type string, shape) of a contiguous GPU tensor, from
    its ``__cuda_array_interface__``; None for anything else."""
    interface = getattr(value, "__cuda_array_interface__", None)
    if interface is None:
        return None
    shape = tuple(interface["shape"])
    strides = interface.get("strides")
    if strides is not None:
        # C-contiguous strides written out are contiguous too.
        itemsize = np.dtype(interface["typestr"]).itemsize
        expected, step = [], itemsize
        for extent in reversed(shape):
            expected.append(step)
            step *= extent
        if tuple(reversed(expected)) != tuple(strides):
            return None
    return (int(interface["data"][0]), interface["typestr"], list(shape))


class Session:
    """The memory of one run at a time of a module (not thread-safe: use one
    per thread; sessions of one module share its code and constants)."""

    def __init__(self, module, native):
        self.module = module
        self._native = native

    def cuda_library_choices(self):
        """A CUDA session's cuBLASLt algorithms as the text of a choices
        file, to save and pin in later sessions
        (``module.session(cuda_library_choices=path)``); an error for a CPU
        session."""
        return self._native.cuda_library_choices()

    def run(self, feeds, out=None):
        """Runs the module on ``feeds`` (a dict name -> array, or a list in
        the order of ``module.inputs``) and returns the outputs by name.

        ``out`` (a dict name -> array) has the run write those outputs into
        the caller's arrays, in place (writeable, C-ordered, the output's
        dtype and shape), with no array of the session's; the result then
        holds those arrays.

        A CUDA module's session reads GPU tensors (anything with a
        contiguous ``__cuda_array_interface__``: PyTorch, CuPy) device to
        device, without a copy through the host, and writes an ``out`` GPU
        tensor likewise. Work queued on other streams that writes those
        tensors must be finished first (``torch.cuda.synchronize()``, or
        the producing stream's); the run returns once the outputs are
        written."""
        if not isinstance(feeds, dict):
            feeds = list(feeds)
            names = [i["name"] for i in self.module.inputs]
            if len(feeds) != len(names):
                raise Error(f"strata module '{self.module.name}' has "
                            f"{len(names)} inputs, {len(feeds)} were given")
            feeds = dict(zip(names, feeds))
        host, device = {}, {}
        for name, value in feeds.items():
            memory = (_device_memory(value)
                      if self.module.target == "cuda" else None)
            if memory is not None:
                device[name] = memory
            else:
                host[name] = _as_array(value, name)
        host_out, device_out = None, {}
        if out is not None:
            host_out = {}
            for name, value in out.items():
                memory = (_device_memory(value)
                          if self.module.target == "cuda" else None)
                if memory is not None:
                    device_out[name] = memory[0]
                else:
                    host_out[name] = value
        results = self._native.run(host, host_out, device or None,
                                   device_out or None)
        for name in device_out:
            results[name] = out[name]
        return results


class Module:
    """A compiled, verified module (immutable; share it between threads)."""

    def __init__(self, native):
        self._native = native
        self._default = None

    @property
    def name(self):
        return self._native.name

    @property
    def target(self):
        """"cpu" or "cuda"."""
        return self._native.target

    @property
    def inputs(self):
        """[{"name", "dtype", "shape"}], None for dynamic dimensions."""
        return self._native.inputs

    @property
    def outputs(self):
        return self._native.outputs

    def to_bytes(self):
        """The module file's bytes."""
        return self._native.to_bytes()

    def save(self, path):
        """Writes the module file (``strata run``/``bench`` and the C and C++
        runtimes load it)."""
        with open(path, "wb") as f:
            f.write(self.to_bytes())

    def session(self, threads=1, cuda_device=0, cuda_graphs=True,
                cuda_library_tuning=None, cuda_library_choices=None):
        """A new session: ``threads`` for the CPU pool (0: one per hardware
        thread), the GPU and CUDA graphs for CUDA modules.
        ``cuda_library_tuning=False`` runs cuBLASLt's heuristic pick for
        every product, the same in every session, instead of timing its
        candidates when the session is made (None: STRATA_CUBLASLT_TUNE
        decides, else on). ``cuda_library_choices`` (a path) pins every
        cuBLASLt call to the algorithms a tested session recorded
        (:meth:`Session.cuda_library_choices`; None:
        STRATA_CUBLASLT_CHOICES decides)."""
        return Session(self, self._native.session(
            threads, cuda_device, cuda_graphs, cuda_library_tuning,
            None if cuda_library_choices is None
            else os.fspath(cuda_library_choices)))

    def run(self, feeds, out=None):
        """Runs on a session of one thread kept by the module (not for
        concurrent use: make sessions for that); ``out`` as
        :meth:`Session.run` takes it."""
        if self._default is None:
            self._default = self.session()
        return self._default.run(feeds, out)

    def __repr__(self):
        ins = ", ".join(f"{i['name']}: {i['dtype']}{list(i['shape'])}"
                        for i in self.inputs)
        return f"<strata.Module {self.name!r} ({self.target}) inputs {ins}>"


def load(path):
    """Loads a module file (verified: a truncated or corrupted file raises
    :class:`Error`)."""
    with open(path, "rb") as f:
        data = f.read()
    return Module(load_bytes(data, os.fspath(path)))


def _in_memory(model):
    """(bytes, "<model bytes>") for a model in memory (bytes or an
    onnx.ModelProto), compiled without a file (messages name it so); else
    (None, its path)."""
    if hasattr(model, "SerializeToString"):
        model = model.SerializeToString()
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model), "<model bytes>"
    return None, os.fspath(model)


def _options(target, input_shapes, precision, cpu, libraries, decisions,
             allow_newer_opset):
    return dict(target=target, cpu=cpu,
                input_shapes={name: [int(d) for d in dims]
                              for name, dims in (input_shapes or {}).items()},
                precision=precision or "", use_libraries=bool(libraries),
                decisions=os.fspath(decisions) if decisions else "",
                allow_newer_opset=bool(allow_newer_opset))


def compile(model, target="cpu", *, input_shapes=None, precision=None,
            cpu="native", libraries=True, decisions=None, dump_dir=None,
            warnings=None, allow_newer_opset=False):
    """Compiles an ONNX model into a :class:`Module`.

    ``model`` is a path or the model's bytes (an ``onnx.ModelProto`` too;
    a model in memory cannot keep its tensors in external data files).
    ``input_shapes`` binds dynamic dimensions: ``{"x": [4, 64]}``.
    ``precision`` is None/"fp32", "fp16" or "bf16"; ``cpu`` the processor
    (``strata compile --cpu``); ``libraries=False`` generates every kernel;
    ``decisions`` a decisions file (docs/explain.md); ``dump_dir`` writes
    every stage's IR. Warnings are appended to the list ``warnings`` when
    one is given. ``allow_newer_opset`` reads a model of an opset newer
    than strata knows as the newest it knows (``--allow-newer-opset``, at
    your own risk). Raises :class:`CompileError`.
    """
    args = _options(target, input_shapes, precision, cpu, libraries,
                    decisions, allow_newer_opset)
    dump = os.fspath(dump_dir) if dump_dir else ""
    model_bytes, name = _in_memory(model)
    data, text = _compile(model_bytes, name, dump_dir=dump, **args)
    if warnings is not None and text:
        warnings.extend(text.splitlines())
    return Module(load_bytes(data, name))


def explain(model, target="cpu", *, input_shapes=None, precision=None,
            cpu="native", libraries=True, decisions=None,
            allow_newer_opset=False):
    """How the model is split into kernels, and why: the record of
    ``strata explain --json`` (docs/explain.md) as a dict, with a
    ``"kernels"`` list (each kernel's ONNX nodes, why they were fused and
    their neighbours not, library or generated code and why, its tile) and
    a ``"summary"``. Takes :func:`compile`'s arguments."""
    args = _options(target, input_shapes, precision, cpu, libraries,
                    decisions, allow_newer_opset)
    data, name = _in_memory(model)
    text, _ = _explain(data, name, **args)
    result = json.loads(text)
    result["model"] = name
    return result
