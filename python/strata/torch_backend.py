"""strata as a torch.compile backend.

    model = torch.compile(model, backend="strata")

The backend is registered under the name "strata" through the package's
``torch_dynamo_backends`` entry point (installed with the package, and in
the build tree's python/ directory), or by calling :func:`register`. For
each graph Dynamo hands it, the backend exports the FX graph to ONNX with
``torch.onnx.export`` at the shapes it is called with (the dynamo exporter
where torch has it, else or if strata cannot take its graph the TorchScript
exporter: ``exporter=``), compiles it with strata for the device of the inputs (``cuda`` when
they are on a GPU, else ``cpu``) and returns a function that runs the module;
a new combination of input shapes compiles again (each kept). Graph breaks
are Dynamo's: the code between graphs runs in Python as usual. A graph strata
cannot export or compile runs eagerly, with a warning naming the reason.

The backend is for inference. Dynamo (torch 2.x) hands a module's
parameters and buffers to the backend as graph inputs; the backend freezes
them into the module as constants (``freeze=True``, the default, as
TensorRT's backend and Inductor's ``freezing`` do), so that strata sees
constant weights, folds BatchNorm and pre-packs them, and a call passes only
the real inputs. A model whose weights change after the first call must then
be compiled again (``torch._dynamo.reset()``), or compiled with
``options={"freeze": False}``.

On the GPU the session reads the input tensors and writes new output
tensors device to device (``__cuda_array_interface__``), once the work torch
queued on its stream is done; on the CPU inputs reach the runtime through
DLPack (read in place) and outputs come back as tensors. ``strata_backend(gm, example_inputs)`` also works on any
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


def _source_name(node):
    """The name of the Python value Dynamo read a placeholder from
    (``L['self']._modules['fc']._parameters['weight']``), or ''."""
    source = getattr(node.meta.get("grapharg"), "source", None)
    name = getattr(source, "name", None)
    if callable(name):
        name = name()
    return name if isinstance(name, str) else ""


def _weights(gm, inputs):
    """The positions of the graph's inputs that are the model's parameters
    or buffers: nn.Parameter tensors, and what Dynamo read from a module's
    ``_parameters`` or ``_buffers``."""
    import torch
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(inputs):
        return []
    found = []
    for i, (node, t) in enumerate(zip(placeholders, inputs)):
        if not isinstance(t, torch.Tensor):
            continue
        name = _source_name(node)
        if (isinstance(t, torch.nn.Parameter) or "_parameters[" in name
                or "_buffers[" in name):
            found.append(i)
    return found


def _freeze(gm, inputs, positions):
    """A copy of ``gm`` whose inputs at ``positions`` are constants of the
    graph (attributes read with get_attr), so that the export writes them as
    initializers."""
    import copy
    import torch
    gm = copy.copy(gm)
    gm.graph = copy.deepcopy(gm.graph)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    first = next(n for n in gm.graph.nodes if n.op != "placeholder")
    for k, i in enumerate(positions):
        name = f"_strata_weight_{k}"
        gm.register_buffer(name, inputs[i].detach())
        with gm.graph.inserting_before(first):
            constant = gm.graph.get_attr(name)
        placeholders[i].replace_all_uses_with(constant)
        gm.graph.erase_node(placeholders[i])
    gm.recompile()
    return gm


def _export_torchscript(gm, inputs, names, output_names):
    import torch
    buffer = io.BytesIO()
    kwargs = dict(input_names=names, output_names=output_names,
                  opset_version=17, do_constant_folding=True)
    try:
        torch.onnx.export(gm, tuple(inputs), buffer, dynamo=False, **kwargs)
    except TypeError:
        # torch before 2.5: no `dynamo`, TorchScript's is the only exporter.
        torch.onnx.export(gm, tuple(inputs), buffer, **kwargs)
    return buffer.getvalue()


def _export_dynamo(gm, inputs, names, output_names):
    import torch
    program = torch.onnx.export(gm, tuple(inputs), dynamo=True,
                                input_names=names, output_names=output_names,
                                optimize=True, verbose=False)
    return program.model_proto.SerializeToString()


def _has_dynamo_exporter():
    import importlib.util
    import inspect
    import torch
    try:
        parameters = inspect.signature(torch.onnx.export).parameters
    except (TypeError, ValueError):
        return False
    return ("dynamo" in parameters
            and importlib.util.find_spec("onnxscript") is not None)


_EXPORTERS = {"dynamo": _export_dynamo, "torchscript": _export_torchscript}


def _exporters(choice):
    """The exporters to try, in order. "auto": torch's own default first,
    the dynamo exporter (torch.export, where torch has it and onnxscript is
    installed), then the TorchScript exporter. The TorchScript exporter
    writes invalid graphs for some float16 models (its constant folding
    turns float16 weights into float32 initializers, and a
    LayerNormalization then mixes the two), which the dynamo exporter types
    right; the TorchScript exporter takes graphs torch.export refuses."""
    if choice == "auto":
        return (["dynamo"] if _has_dynamo_exporter() else []) + [
            "torchscript"]
    if choice not in _EXPORTERS:
        raise ValueError(f"strata: unknown exporter '{choice}' (auto, "
                         f"dynamo or torchscript)")
    return [choice]


def _first_line(error):
    text = str(error).strip()
    return (text.splitlines()[0] if text else type(error).__name__)


class _Compiled:
    """The function handed back to Dynamo: one module per input shapes."""

    def __init__(self, gm, example_inputs, options):
        self.gm = gm
        options = dict(options)
        self.weights = (_weights(gm, example_inputs)
                        if options.pop("freeze", True) else [])
        self.exporters = _exporters(options.pop("exporter", "auto"))
        self.options = options
        self.modules = {}
        self.eager = False
        if self.weights:
            self.graph = _freeze(gm, example_inputs, self.weights)
        else:
            self.graph = gm
        self._compile(self._inputs(example_inputs))

    def _inputs(self, inputs):
        """The inputs that are not frozen into the module."""
        frozen = set(self.weights)
        return [t for i, t in enumerate(inputs) if i not in frozen]

    def _compile(self, inputs):
        import torch
        key = tuple((tuple(t.shape), str(t.dtype)) for t in inputs)
        with torch.no_grad():
            outputs, self._rebuild = _flatten(self.graph(*inputs))
        # NumPy has no bfloat16: such outputs come back as their uint16 bits.
        dtypes = [t.dtype for t in outputs]
        names = [f"input_{i}" for i in range(len(inputs))]
        output_names = [f"output_{i}" for i in range(len(outputs))]
        device = inputs[0].device if inputs else torch.device("cpu")
        target = "cuda" if device.type == "cuda" else "cpu"
        # Each exporter in turn, until strata compiles what one wrote.
        failures = []
        module = None
        for exporter in self.exporters:
            try:
                with torch.no_grad():
                    onnx_bytes = _EXPORTERS[exporter](self.graph, inputs,
                                                      names, output_names)
            except Exception as e:  # any exporter failure: try the next
                failures.append(f"{exporter} export: {_first_line(e)}")
                continue
            try:
                module = strata.compile(onnx_bytes, target=target,
                                        **self.options)
                break
            except (strata.CompileError, strata.Error, RuntimeError,
                    ValueError) as e:
                failures.append(f"{exporter} export, compile: "
                                f"{_first_line(e)}")
        if module is None:
            warnings.warn("strata: running this graph eagerly: "
                          + "; ".join(failures), RuntimeWarning)
            self.eager = True
            return None
        self.exporter = exporter
        # On the GPU the session reads the tensors and writes new ones of
        # these shapes device to device; an output whose shape is set at run
        # time (None in it) has the whole graph go through the host.
        shapes = {o["name"]: o["shape"] for o in module.outputs}
        device_shapes = [shapes[name] for name in output_names]
        if (module.target != "cuda" or device.type != "cuda" or
                any(None in shape for shape in device_shapes)):
            device_shapes = None
        entry = (module, module.session(), names, output_names, device,
                 dtypes, device_shapes)
        self.modules[key] = entry
        return entry

    def __call__(self, *inputs):
        import torch
        if self.eager:
            return self.gm(*inputs)
        inputs = self._inputs(inputs)
        key = tuple((tuple(t.shape), str(t.dtype)) for t in inputs)
        entry = self.modules.get(key) or self._compile(inputs)
        if entry is None:
            return self.graph(*inputs)
        (_, session, names, output_names, device, dtypes,
         device_shapes) = entry
        # bfloat16 tensors travel as their bits (NumPy has no bfloat16, and
        # __cuda_array_interface__ no type for it).
        feeds = {name: (t.detach().contiguous().view(torch.int16)
                        if t.dtype == torch.bfloat16
                        else t.detach().contiguous())
                 for name, t in zip(names, inputs)}
        if device_shapes is not None:
            # After the work torch queued for the inputs.
            outs = [torch.empty(shape, dtype=dtype, device=device)
                    for shape, dtype in zip(device_shapes, dtypes)]
            torch.cuda.current_stream(device).synchronize()
            session.run(feeds, out={
                name: (t.view(torch.int16) if t.dtype == torch.bfloat16
                       else t)
                for name, t in zip(output_names, outs)})
            return self._rebuild(outs)
        results = session.run(feeds)
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
