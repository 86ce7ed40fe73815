"""strata as a torch.compile backend.

    model = torch.compile(model, backend="strata")

The backend is registered under the name "strata" through the package's
``torch_dynamo_backends`` entry point (installed with the package, and in
the build tree's python/ directory), or by calling :func:`register`. For each graph Dynamo hands it, the backend exports
the FX graph to ONNX with ``torch.onnx.export`` at the shapes it is called
with, compiles it with strata for the device of the inputs (``cuda`` when
they are on a GPU, else ``cpu``) and returns a function that runs the module;
a new combination of input shapes compiles again (each kept). Graph breaks
are Dynamo's: the code between graphs runs in Python as usual. A graph strata
cannot export or compile runs eagerly, with a warning naming the reason.

Inputs reach the runtime through DLPack (host tensors without a copy; the
session copies them once), outputs come back as tensors on the inputs'
device. ``strata_backend(gm, example_inputs)`` also works on any
``torch.fx.GraphModule`` (``torch.fx.symbolic_trace``), which is how the
tests exercise it under torch versions without torch.compile.
"""

import io
import warnings

import strata

__all__ = ["strata_backend", "register"]


def _flatten(value):
    """The tensors of a graph's result in order, and a function rebuilding
    the result's structure (a tensor, or a tuple/list of them) from them."""
    import torch
    if isinstance(value, torch.Tensor):
        return [value], lambda outs: outs[0]
    if isinstance(value, (tuple, list)) and all(
            isinstance(v, torch.Tensor) for v in value):
        kind = type(value)
        return list(value), lambda outs: kind(outs)
    raise TypeError("strata's backend handles graphs that return tensors, "
                    f"not {type(value).__name__}")


def _export(gm, inputs, names, output_names):
    import torch
    buffer = io.BytesIO()
    kwargs = dict(input_names=names, output_names=output_names,
                  opset_version=17, do_constant_folding=True)
    # torch 2.x defaults to the dynamo exporter, which re-traces the graph;
    # the FX graph is already traced, so the TorchScript exporter is used.
    try:
        torch.onnx.export(gm, tuple(inputs), buffer, dynamo=False, **kwargs)
    except TypeError:
        torch.onnx.export(gm, tuple(inputs), buffer, **kwargs)
    return buffer.getvalue()


class _Compiled:
    """The function handed back to Dynamo: one module per input shapes."""

    def __init__(self, gm, example_inputs, options):
        self.gm = gm
        self.options = options
        self.modules = {}
        self.eager = False
        self._compile(example_inputs)

    def _compile(self, inputs):
        import torch
        key = tuple((tuple(t.shape), str(t.dtype)) for t in inputs)
        with torch.no_grad():
            outputs, self._rebuild = _flatten(self.gm(*inputs))
        # NumPy has no bfloat16: such outputs come back as their uint16 bits.
        dtypes = [t.dtype for t in outputs]
        names = [f"input_{i}" for i in range(len(inputs))]
        output_names = [f"output_{i}" for i in range(len(outputs))]
        device = inputs[0].device if inputs else torch.device("cpu")
        target = "cuda" if device.type == "cuda" else "cpu"
        try:
            with torch.no_grad():
                onnx_bytes = _export(self.gm, inputs, names, output_names)
            module = strata.compile(onnx_bytes, target=target,
                                    **self.options)
        except (strata.CompileError, RuntimeError, TypeError,
                ValueError) as e:
            warnings.warn("strata: running this graph eagerly: "
                          + str(e).splitlines()[0], RuntimeWarning)
            self.eager = True
            return None
        entry = (module, module.session(), names, output_names, device,
                 dtypes)
        self.modules[key] = entry
        return entry

    def __call__(self, *inputs):
        import torch
        if self.eager:
            return self.gm(*inputs)
        key = tuple((tuple(t.shape), str(t.dtype)) for t in inputs)
        entry = self.modules.get(key) or self._compile(list(inputs))
        if entry is None:
            return self.gm(*inputs)
        module, session, names, output_names, device, dtypes = entry
        # bfloat16 tensors travel as their bits (NumPy has no bfloat16).
        results = session.run({
            name: (t.detach().contiguous().view(torch.int16)
                   if t.dtype == torch.bfloat16 else t.detach().contiguous())
            for name, t in zip(names, inputs)})
        outs = []
        for name, dtype in zip(output_names, dtypes):
            array = results[name]
            if dtype == torch.bfloat16:
                # uint16 bits; torch before 2.3 has no uint16, int16 it has.
                out = torch.from_numpy(array.view("int16")).view(dtype)
            else:
                out = torch.from_numpy(array)
            outs.append(out.to(device))
        return self._rebuild(outs)


def strata_backend(gm, example_inputs, options=None, **kwargs):
    """The torch.compile backend. ``options`` (``torch.compile(...,
    options={...})`` hands them over so) and keyword arguments go to
    :func:`strata.compile`: ``precision="bf16"``, ``libraries=False``."""
    merged = dict(options or {})
    merged.update(kwargs)
    return _Compiled(gm, list(example_inputs), merged)


def register():
    """Registers the backend as "strata" with torch._dynamo (torch 2.0 and
    later); the package's entry point makes this unnecessary once
    installed."""
    import torch
    dynamo = getattr(torch, "_dynamo", None)
    if dynamo is None:
        return False
    from torch._dynamo import list_backends, register_backend
    if "strata" not in list_backends(exclude_tags=()):
        register_backend(name="strata")(strata_backend)
    return True
