// A channels-last convolution whose weight does not match its input's
// channels (test/Gpu/cudnn.test, BAD).
func.func @bad(%x: tensor<2x8x8x16xf16>, %w: tensor<16x3x3x4xf16>) -> tensor<2x8x8x16xf16> {
  %y = graph.conv_channels_last %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x8x16xf16>, tensor<16x3x3x4xf16>) -> tensor<2x8x8x16xf16>
  return %y : tensor<2x8x8x16xf16>
}
