"""A small HiFi-GAN-like vocoder: mel f32[1, 80, frames] -> audio f32[1, 1, 8*frames].

    conv_pre      Conv1d 80->64, k=7
    ups.0         ConvTranspose1d 64->32, k=8, stride 4      + LeakyRelu(0.1)
    resblocks.0   2 x (LeakyRelu(0.1), Conv1d 32->32 k=3 dilation 1/3, residual Add)
    ups.1         ConvTranspose1d 32->16, k=4, stride 2      + LeakyRelu(0.1)
    resblocks.1   2 x (LeakyRelu(0.1), Conv1d 16->16 k=3 dilation 1/3, residual Add)
    conv_post     LeakyRelu(0.01), Conv1d 16->1, k=7, Tanh   -> audio

Upsampling and long convolution chains are where vocoders lose accuracy in
fp16.
"""

from __future__ import annotations

import numpy as np
import onnx

from ._graph import GraphBuilder

N_MELS = 80
CHANNELS = (64, 32, 16)
UPSAMPLE = ((4, 8), (2, 4))  # (stride, kernel) per stage
DILATIONS = (1, 3)
SEED = 2024


def _conv(g: GraphBuilder, x: str, scope: str, c_in: int, c_out: int, k: int,
          dilation: int = 1) -> str:
    bound = 1.0 / np.sqrt(c_in * k)
    w = g.uniform(f"{scope}.weight", (c_out, c_in, k), bound)
    b = g.uniform(f"{scope}.bias", (c_out,), bound)
    pad = dilation * (k - 1) // 2
    return g.node("Conv", [x, w, b], scope, kernel_shape=[k], pads=[pad, pad],
                  dilations=[dilation], strides=[1])


def _conv_transpose(g: GraphBuilder, x: str, scope: str, c_in: int, c_out: int,
                    stride: int, k: int) -> str:
    bound = 1.0 / np.sqrt(c_out * k)
    w = g.uniform(f"{scope}.weight", (c_in, c_out, k), bound)
    b = g.uniform(f"{scope}.bias", (c_out,), bound)
    pad = (k - stride) // 2  # output length = stride * input length
    return g.node("ConvTranspose", [x, w, b], scope, kernel_shape=[k], pads=[pad, pad],
                  strides=[stride])


def build() -> onnx.ModelProto:
    g = GraphBuilder("conv_vocoder", seed=SEED)
    x = g.input("mel", [1, N_MELS, "frames"])
    x = _conv(g, x, "conv_pre", N_MELS, CHANNELS[0], 7)
    for i, (stride, k) in enumerate(UPSAMPLE):
        c_in, c_out = CHANNELS[i], CHANNELS[i + 1]
        x = _conv_transpose(g, x, f"ups.{i}", c_in, c_out, stride, k)
        x = g.node("LeakyRelu", [x], f"ups.{i}", alpha=0.1)
        for j, d in enumerate(DILATIONS):
            s = f"resblocks.{i}.convs.{j}"
            t = g.node("LeakyRelu", [x], s, alpha=0.1)
            t = _conv(g, t, s, c_out, c_out, 3, dilation=d)
            x = g.node("Add", [x, t], s)
    x = g.node("LeakyRelu", [x], "conv_post", alpha=0.01)
    x = _conv(g, x, "conv_post", CHANNELS[-1], 1, 7)
    g.node("Tanh", [x], "conv_post", outputs=["audio"])
    g.output("audio", [1, 1, "samples"])
    return g.model(doc="mp example: small HiFi-GAN-like vocoder")


def example_inputs(rng: np.random.Generator) -> dict[str, np.ndarray]:
    frames = 16
    # log-mel-like values
    return {"mel": (rng.standard_normal((1, N_MELS, frames)) - 4.0).astype(np.float32)}
