"""A Resize to the input's own size (cubic, half_pixel: VitDet's export resizes
its position embeddings so), transposed and added to a batch of two: the
resized value is broadcast over the batch. numpy's float64 reference: the
input itself, transposed and added."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(0)
pos = rng.standard_normal((1, 8, 4, 4)).astype(np.float32)
x = rng.standard_normal((2, 4, 4, 8)).astype(np.float32)
nodes = [
    helper.make_node("Resize", ["pos", "", "", "sizes"], ["resized"], mode="cubic",
                     coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.75),
    helper.make_node("Transpose", ["resized"], ["t"], perm=[0, 2, 3, 1]),
    helper.make_node("Add", ["x", "t"], ["y"]),
]
graph = helper.make_graph(
    nodes, "resize_identity", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 4, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 4, 8])],
    initializer=[numpy_helper.from_array(pos, "pos"),
                 numpy_helper.from_array(np.array([1, 8, 4, 4], np.int64), "sizes")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          f"{out}/resize_identity.onnx")
np.save(f"{out}/x.npy", x)
np.save(f"{out}/y.npy", x.astype(np.float64) + pos.transpose(0, 2, 3, 1))
