"""A model whose two outputs, "/model/head/Add_output_0" and
"_model/head/Add_output_0", give the same file name once sanitized; with
numpy's values of both (x + 1 and x * 2)."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
x = np.arange(6, dtype=np.float32).reshape(2, 3)
one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
nodes = [helper.make_node("Add", ["x", "one"], ["/model/head/Add_output_0"]),
         helper.make_node("Mul", ["x", "two"], ["_model/head/Add_output_0"])]
graph = helper.make_graph(
    nodes, "names", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3])
     for n in ("/model/head/Add_output_0", "_model/head/Add_output_0")],
    initializer=[one, two])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          f"{out}/names.onnx")
np.save(f"{out}/x.npy", x)
np.save(f"{out}/y0.npy", x + 1)
np.save(f"{out}/y1.npy", x * 2)
