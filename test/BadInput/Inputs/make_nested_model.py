#!/usr/bin/env python3
"""make_nested_model.py DEPTH OUT: an ONNX text model whose If branches nest
DEPTH graphs deep (nesting.test)."""
import sys

depth, out = int(sys.argv[1]), sys.argv[2]
pre, post = [], []
for i in range(depth - 1):
    pre.append(f"y = If (c) <then_branch = t{i} () => (float[2] y) {{ ")
    post.append(f" }}, else_branch = e{i} () => (float[2] y) "
                "{ y = Identity(x) }>")
body = "".join(pre) + "y = Identity(x)" + "".join(reversed(post))
with open(out, "w") as f:
    f.write('<\n  ir_version: 8,\n  opset_import: ["" : 17]\n>\n'
            f"agraph (bool c, float[2] x) => (float[2] y) {{\n  {body}\n}}\n")
