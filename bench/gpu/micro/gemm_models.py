"""One-product models, x @ w + b [+ ReLU | + erf GELU] in bf16, to time strata's
GEMM kernel against cuBLASLt on the same products (bench/RESULTS.md,
2026-12-01 06:04: "The GEMM kernel against cuBLASLt"; 08:11: "Narrow against
wide").

  python3 gemm_models.py make DIR           (here: needs onnx) writes
      DIR/{ffn1,k1536,k2048,gg}_{gelu,relu,none}.onnx: 16384x768x3072 (BERT's
      FFN1), 16384x1536x3072, 8192x2048x4096 and 8192x4096x4096 (the GEMM +
      GELU workload), rows x K x columns; compile each with
      `strata compile --target=cuda --no-cache [--decisions=F]`, where F holds
      {"codegen": ["MatMul"]} to force the GEMM kernel (GELU products take it
      anyway), into MODULES/<model>_<anything>.strata
  python3 gemm_models.py run TOOL MODULES [ROUNDS]   (on the GPU machine:
      TOOL is strata-bench-gpu) times every module on random inputs, in turn,
      ROUNDS times: median and p10 of its replays, and the per-step time.
"""
import json
import os
import subprocess
import sys

SHAPES = {"ffn1": (16384, 768, 3072), "k1536": (16384, 1536, 3072),
          "k2048": (8192, 2048, 4096), "gg": (8192, 4096, 4096)}


def make(out):
    import onnx
    from onnx import TensorProto as T
    from onnx import helper as h

    def const(name, value):
        return h.make_node("Constant", [], [name], name=name,
                           value=h.make_tensor(name + "_v", T.BFLOAT16, [], [value]))

    os.makedirs(out, exist_ok=True)
    for tag, (m, k, n) in SHAPES.items():
        for act in ("gelu", "relu", "none"):
            nodes = [h.make_node("MatMul", ["x", "w"], ["mm"], name="MatMul"),
                     h.make_node("Add", ["mm", "b"], ["y" if act == "none" else "z"],
                                 name="Add")]
            if act == "gelu":  # as torch.onnx exports the erf GELU
                nodes += [const("s2", 1.4142135623730951),
                          h.make_node("Div", ["z", "s2"], ["d"], name="Div"),
                          h.make_node("Erf", ["d"], ["e"], name="Erf"),
                          const("one", 1.0),
                          h.make_node("Add", ["e", "one"], ["e1"], name="Add1"),
                          h.make_node("Mul", ["z", "e1"], ["ze"], name="Mul"),
                          const("half", 0.5),
                          h.make_node("Mul", ["ze", "half"], ["y"], name="Mul1")]
            elif act == "relu":
                nodes.append(h.make_node("Relu", ["z"], ["y"], name="Relu"))
            g = h.make_graph(nodes, f"{tag}_{act}",
                             [h.make_tensor_value_info("x", T.BFLOAT16, [m, k]),
                              h.make_tensor_value_info("w", T.BFLOAT16, [k, n]),
                              h.make_tensor_value_info("b", T.BFLOAT16, [n])],
                             [h.make_tensor_value_info("y", T.BFLOAT16, [m, n])])
            model = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
            onnx.checker.check_model(model)
            onnx.save(model, os.path.join(out, f"{tag}_{act}.onnx"))


def run(tool, modules, rounds):
    import numpy as np
    rng = np.random.default_rng(0)

    def bf16(a):
        return (a.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)

    for tag, (m, k, n) in SHAPES.items():
        d = f"/tmp/gemm_models_{tag}"
        os.makedirs(d, exist_ok=True)
        bf16(rng.standard_normal((m, k))).tofile(f"{d}/x.bin")
        bf16(rng.standard_normal((k, n)) / np.sqrt(k)).tofile(f"{d}/w.bin")
        bf16(rng.standard_normal(n) * 0.1).tofile(f"{d}/b.bin")
    names = sorted(f for f in os.listdir(modules) if f.endswith(".strata"))
    for r in range(rounds):
        for name in names:
            tag = name.split("_")[0]
            result = f"/tmp/gemm_models_{tag}/result.json"
            p = subprocess.run([tool, "run", os.path.join(modules, name), "--inputs",
                                f"/tmp/gemm_models_{tag}", "--json", result],
                               capture_output=True, text=True)
            if p.returncode:
                print(f"{r} {name}: failed: {p.stderr.strip()[-300:]}")
                continue
            with open(result) as f:
                x = json.load(f)
            t, steps = x["time"], x.get("profile", {}).get("per_step_mean_ms", [])
            print(f"{r} {name:24s} median {t['median_ms']:.4f} p10 {t['p10_ms']:.4f} "
                  f"per step {' '.join('%.4f' % s for s in steps)}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "make":
        make(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 2)
    else:
        sys.exit(__doc__)
