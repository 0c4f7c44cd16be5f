"""A vocoder output block whose convolution overflows fp16.

    mel f32[1, 16, 32]
    ups.0      ConvTranspose1d 16->32, k=8, stride 4 (x4 upsampling) + LeakyRelu(0.1)
    conv       Conv1d 32->32, k=3, weights std 2e3                     + LeakyRelu(0.1)
    conv_post  Conv1d 32->1, k=3, Tanh                                  -> audio f32[1, 1, 128]

The upsampler (weights std 0.5) gives features of std ~3 (at most ~12); the
conv weights (std 2e3, at most ~8e3: every constant is well inside fp16's
range) take them to pre-activations of up to ~1.7e5, 9 % of them beyond
fp16's 65504. In fp16 the conv writes +-inf; LeakyRelu keeps the signs, and
conv_post, whose weights have both signs, sums +inf and -inf into NaN, which
Tanh passes on. In fp32 the pre-activations are merely large (conv_post's
stay below ~6e4) and Tanh saturates to +-1: a finite, clipped waveform.

conv_post is what makes this a failure: a single conv overflowing straight
into Tanh would not be one, since tanh(+-inf) = +-1 is what fp32 gives too
(mp's mixed build passes such a block).
"""

from __future__ import annotations

import numpy as np
import onnx

from ._graph import GraphBuilder

N_MELS = 16
FRAMES = 32
CHANNELS = 32
UPSAMPLE = (4, 8)  # stride, kernel
KERNEL = 3
LEAKY_SLOPE = 0.1
UPS_WEIGHT_STD = 0.5
CONV_WEIGHT_STD = 2e3
SEED = 7004

OVERFLOW_CONV = "conv/Conv"  # the node whose fp16 result overflows


def _conv(g: GraphBuilder, x: str, scope: str, c_in: int, c_out: int, k: int,
          weight_std: float | None = None) -> str:
    """Conv1d, nn.Conv1d init (uniform +-1/sqrt(c_in k)) unless ``weight_std`` is given."""
    bound = 1.0 / np.sqrt(c_in * k)
    if weight_std is None:
        w = g.uniform(f"{scope}.weight", (c_out, c_in, k), bound)
    else:
        w = g.normal(f"{scope}.weight", (c_out, c_in, k), 0.0, weight_std)
    b = g.uniform(f"{scope}.bias", (c_out,), bound)
    pad = (k - 1) // 2
    return g.node("Conv", [x, w, b], scope, kernel_shape=[k], pads=[pad, pad],
                  dilations=[1], strides=[1])


def build() -> onnx.ModelProto:
    g = GraphBuilder("vocoder_overflow", seed=SEED)
    x = g.input("mel", [1, N_MELS, FRAMES])
    stride, k = UPSAMPLE
    bound = 1.0 / np.sqrt(CHANNELS * k)
    w = g.normal("ups.0.weight", (N_MELS, CHANNELS, k), 0.0, UPS_WEIGHT_STD)
    b = g.uniform("ups.0.bias", (CHANNELS,), bound)
    pad = (k - stride) // 2  # output length = stride * input length
    x = g.node("ConvTranspose", [x, w, b], "ups.0", kernel_shape=[k], pads=[pad, pad],
               strides=[stride])
    x = g.node("LeakyRelu", [x], "ups.0", alpha=LEAKY_SLOPE)
    x = _conv(g, x, "conv", CHANNELS, CHANNELS, KERNEL, weight_std=CONV_WEIGHT_STD)
    x = g.node("LeakyRelu", [x], "conv", alpha=LEAKY_SLOPE)
    x = _conv(g, x, "conv_post", CHANNELS, 1, KERNEL)
    g.node("Tanh", [x], "conv_post", outputs=["audio"])
    g.output("audio", [1, 1, stride * FRAMES])
    return g.model(doc="mp stress case: vocoder conv pre-activations beyond fp16 range")


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    # normalized log-mel features
    return {"mel": rng.standard_normal((1, N_MELS, FRAMES)).astype(np.float32)}
