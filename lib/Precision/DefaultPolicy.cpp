//===- DefaultPolicy.cpp - the built-in mixed-precision policy ------------===//
//
// One row per ONNX op type that carries float data. The choices follow
// TensorFlow's auto-mixed-precision lists where they are sound, and depart
// where a peer loses accuracy: where TF and PyTorch autocast disagree
// (softmax, layer/RMS norm, reductions) mp stores in fp16 and accumulates
// statistics in fp32 instead of running the whole op in fp32.
//
//===----------------------------------------------------------------------===//

#include "mp/Precision/Policy.h"

using namespace mp;
using llvm::ArrayRef;
using llvm::StringRef;

static constexpr PrecisionClass A = PrecisionClass::allow;
static constexpr PrecisionClass I = PrecisionClass::infer;
static constexpr PrecisionClass D = PrecisionClass::deny;
static constexpr PrecisionClass C = PrecisionClass::clear;

static const DefaultPolicyEntry kTable[] = {
    // Contractions: Tensor Core work; fp32 accumulators keep long dot
    // products exact enough.
    {"MatMul", "mp.matmul", A, true, "contraction: Tensor Cores, fp32 accumulation"},
    {"Gemm", "mp.gemm", A, true, "contraction: Tensor Cores, fp32 accumulation"},
    {"Einsum", "mp.einsum", A, true, "contraction: Tensor Cores, fp32 accumulation"},
    {"Conv", "mp.conv", A, true, "convolution: implicit GEMM, fp32 accumulation"},
    {"ConvTranspose", "mp.conv_transpose", A, true, "convolution: implicit GEMM, fp32 accumulation"},
    {"LSTM", "mp.lstm", A, true, "gate GEMMs dominate; gates and cell state accumulate in fp32"},
    {"GRU", "mp.gru", A, true, "gate GEMMs dominate; gates and hidden state accumulate in fp32"},
    {"RNN", "mp.rnn", A, true, "input and recurrent GEMMs dominate; hidden state accumulates in fp32"},
    {"Attention", "mp.attention", A, true, "fused attention: fp16 QK/V products, fp32 softmax and accumulation"},
    {"MultiHeadAttention", "mp.ms.multi_head_attention", A, true, "fused attention: fp16 products, fp32 softmax"},
    {"GroupQueryAttention", "mp.ms.group_query_attention", A, true, "fused attention: fp16 products, fp32 softmax"},
    // com.microsoft Attention shares the op type; this row maps its mp op.
    {"Attention", "mp.ms.attention", A, true, "fused attention with QKV projection: fp16 products, fp32 softmax"},

    // Elementwise arithmetic with bounded growth: follow the inputs.
    {"Add", "mp.add", I, false, "elementwise: no growth beyond its inputs"},
    {"Sub", "mp.sub", I, false, "elementwise: no growth beyond its inputs"},
    {"Mul", "mp.mul", I, false, "elementwise: products of in-range activations"},
    {"Div", "mp.div", I, false, "elementwise: follows its inputs"},
    {"Neg", "mp.neg", I, false, "elementwise: exact in fp16"},
    {"Abs", "mp.abs", I, false, "elementwise: exact in fp16"},
    {"Max", "mp.max", I, false, "elementwise: exact in fp16"},
    {"Min", "mp.min", I, false, "elementwise: exact in fp16"},
    {"Mean", "mp.mean", I, true, "elementwise mean: summed in fp32"},
    {"Sum", "mp.sum", I, true, "elementwise sum: summed in fp32"},
    {"Clip", "mp.clip", I, false, "elementwise: bounded"},
    {"Where", "mp.where", I, false, "select: no arithmetic"},
    {"Floor", "mp.floor", I, false, "elementwise: exact in fp16"},
    {"Round", "mp.round", I, false, "elementwise: exact in fp16"},
    {"Ceil", "mp.ceil", I, false, "elementwise: exact in fp16"},
    {"Sign", "mp.sign", I, false, "elementwise: exact in fp16"},
    {"Relu", "mp.relu", I, false, "activation: exact in fp16"},
    {"LeakyRelu", "mp.leaky_relu", I, false, "activation: bounded"},
    {"PRelu", "mp.prelu", I, false, "activation: bounded"},
    {"Elu", "mp.elu", I, false, "activation: output in (-alpha, x]"},
    {"HardSigmoid", "mp.hard_sigmoid", I, false, "activation: output in [0, 1]"},
    {"Sigmoid", "mp.sigmoid", I, false, "activation: output in (0, 1); exp evaluated in fp32"},
    {"Tanh", "mp.tanh", I, false, "activation: output in (-1, 1)"},
    {"Erf", "mp.erf", I, false, "activation: output in (-1, 1)"},
    {"Gelu", "mp.gelu", I, false, "activation: evaluated in fp32 registers, stored fp16"},
    {"FastGelu", "mp.ms.fast_gelu", I, false, "activation: evaluated in fp32 registers, stored fp16"},
    {"BiasGelu", "mp.ms.bias_gelu", I, false, "activation: evaluated in fp32 registers, stored fp16"},
    {"QuickGelu", "mp.ms.quick_gelu", I, false, "activation: evaluated in fp32 registers, stored fp16"},
    {"Sqrt", "mp.sqrt", I, false, "elementwise: shrinks magnitudes"},
    {"IsNaN", "mp.is_nan", I, false, "test: NaN survives the fp16 cast"},
    {"Mod", "mp.mod", I, false, "elementwise: bounded by the divisor"},
    {"Equal", "mp.equal", I, false, "comparison of values already in its inputs' precision"},
    {"Greater", "mp.greater", I, false, "comparison of values already in its inputs' precision"},
    {"GreaterOrEqual", "mp.greater_or_equal", I, false, "comparison of values already in its inputs' precision"},
    {"Less", "mp.less", I, false, "comparison of values already in its inputs' precision"},
    {"LessOrEqual", "mp.less_or_equal", I, false, "comparison of values already in its inputs' precision"},
    {"ArgMax", "mp.arg_max", I, false, "index of the maximum: follows its input"},
    {"ArgMin", "mp.arg_min", I, false, "index of the minimum: follows its input"},
    {"TopK", "mp.top_k", I, false, "selection: values keep their input's type, indices are int64"},
    {"RotaryEmbedding", "mp.rotary_embedding", I, false, "rotation by precomputed cos/sin: bounded"},
    {"RotaryEmbedding", "mp.ms.rotary_embedding", I, false, "rotation by precomputed cos/sin: bounded"},

    // Reductions and normalizations: fp16 storage, fp32 statistics.
    {"Softmax", "mp.softmax", I, true, "fp16 in/out; max, exp and the denominator in fp32"},
    {"LogSoftmax", "mp.log_softmax", I, true, "fp16 in/out; log-sum-exp in fp32"},
    {"ReduceMean", "mp.reduce_mean", I, true, "mean: summed in fp32, result in range of the input"},
    {"ReduceSum", "mp.reduce_sum", I, true, "sum: fp32 accumulator; fp16 only when its inputs are"},
    {"ReduceMax", "mp.reduce_max", I, false, "max: exact in fp16"},
    {"ReduceMin", "mp.reduce_min", I, false, "min: exact in fp16"},
    {"LayerNormalization", "mp.layer_norm", I, true, "fp16 in/out; mean and variance in fp32 (x^2 overflows fp16)"},
    {"RMSNormalization", "mp.rms_norm", I, true, "fp16 in/out; mean of squares in fp32 (x^2 overflows fp16)"},
    {"SimplifiedLayerNormalization", "mp.rms_norm", I, true, "fp16 in/out; mean of squares in fp32"},
    {"SkipLayerNormalization", "mp.ms.skip_layer_norm", I, true, "fp16 in/out; statistics in fp32"},
    {"SkipSimplifiedLayerNormalization", "mp.ms.skip_layer_norm", I, true, "fp16 in/out; statistics in fp32"},
    {"EmbedLayerNormalization", "mp.ms.embed_layer_norm", I, true, "fp16 in/out; statistics in fp32"},
    {"GroupNormalization", "mp.group_norm", I, true, "fp16 in/out; statistics in fp32"},
    {"InstanceNormalization", "mp.instance_norm", I, true, "fp16 in/out; statistics in fp32"},
    {"BatchNormalization", "mp.batch_norm", I, true, "fp16 in/out; scale and shift folded in fp32"},
    {"AveragePool", "mp.average_pool", I, true, "window sums in fp32"},
    {"GlobalAveragePool", "mp.global_average_pool", I, true, "long sums in fp32"},
    {"MaxPool", "mp.max_pool", I, false, "max: exact in fp16"},

    // Range or precision risks: keep fp32.
    {"Exp", "mp.exp", D, false, "overflows fp16 above 11.09"},
    {"Pow", "mp.pow", D, false, "x^y overflows or underflows fp16 easily"},
    {"Log", "mp.log", D, false, "inputs near 0 lose their exponent range in fp16"},
    {"Reciprocal", "mp.reciprocal", D, false, "1/x overflows fp16 for |x| < 1.5e-5"},
    {"Softplus", "mp.softplus", D, false, "log(1 + e^x): e^x overflows fp16"},
    {"Sin", "mp.sin", D, false, "large phase arguments (positions x frequencies) lose precision in fp16"},
    {"Cos", "mp.cos", D, false, "large phase arguments (positions x frequencies) lose precision in fp16"},
    {"ReduceSumSquare", "mp.reduce_sum_square", D, false, "squares overflow fp16"},
    {"ReduceL2", "mp.reduce_l2", D, false, "squares overflow fp16"},
    {"ReduceL1", "mp.reduce_l1", I, true, "sum of magnitudes: fp32 accumulator, like ReduceSum"},
    {"ReduceLogSum", "mp.reduce_log_sum", D, false, "log of a sum: the sum overflows fp16"},
    {"ReduceLogSumExp", "mp.reduce_log_sum_exp", D, false, "exp overflows fp16"},
    {"ReduceProd", "mp.reduce_prod", D, false, "products overflow or underflow fp16"},
    {"CumSum", "mp.cumsum", D, false, "long running sums lose precision in fp16"},
    {"Resize", "mp.resize", D, false, "vocoder upsampling: interpolation weights need fp32"},
    {"IsInf", "mp.is_inf", D, false, "values beyond 65504 would turn into inf in fp16"},
    {"Range", "mp.range", D, false, "generated positions exceed fp16's exact integers (2048)"},
    // Generators: Box-Muller's log and cos, and 24-bit uniforms, need fp32.
    {"RandomNormal", "mp.random_normal", D, false, "generated in fp32: Box-Muller's log/cos and 24-bit uniforms"},
    {"RandomNormalLike", "mp.random_normal", D, false, "generated in fp32: Box-Muller's log/cos and 24-bit uniforms"},
    {"RandomUniform", "mp.random_uniform", D, false, "generated in fp32: 24-bit uniforms"},
    {"RandomUniformLike", "mp.random_uniform", D, false, "generated in fp32: 24-bit uniforms"},

    // Data movement: no arithmetic, any type.
    {"Reshape", "mp.reshape", C, false, "data movement"},
    {"Transpose", "mp.transpose", C, false, "data movement"},
    {"Concat", "mp.concat", C, false, "data movement"},
    {"Split", "mp.split", C, false, "data movement"},
    {"Slice", "mp.slice", C, false, "data movement"},
    {"Gather", "mp.gather", C, false, "data movement"},
    {"GatherElements", "mp.gather_elements", C, false, "data movement"},
    {"GatherND", "mp.gather_nd", C, false, "data movement"},
    {"ScatterND", "mp.scatter_nd", C, false, "data movement"},
    {"ScatterElements", "mp.scatter_elements", C, false, "data movement"},
    {"TensorScatter", "mp.tensor_scatter", C, false, "data movement (KV cache writes)"},
    {"Squeeze", "mp.squeeze", C, false, "data movement"},
    {"Unsqueeze", "mp.unsqueeze", C, false, "data movement"},
    {"Flatten", "mp.flatten", C, false, "data movement"},
    {"Expand", "mp.expand", C, false, "data movement"},
    {"Tile", "mp.tile", C, false, "data movement"},
    {"NonZero", "mp.non_zero", C, false, "compares with zero: no arithmetic"},
    {"OneHot", "mp.one_hot", C, false, "fills with its values' type: no arithmetic"},
    {"Pad", "mp.pad", C, false, "data movement"},
    {"Trilu", "mp.trilu", C, false, "masking: no arithmetic"},
    {"Identity", "mp.identity", C, false, "data movement"},
    {"ConstantOfShape", "mp.constant_of_shape", C, false, "fill: the value is checked for fp16 range"},
    {"If", "mp.if", C, false, "control flow: results take one type from both branches"},
    {"Shape", "mp.shape", C, false, "reads only the shape"},
    {"Size", "mp.size", C, false, "reads only the shape"},
};

ArrayRef<DefaultPolicyEntry> mp::defaultPolicyTable() { return kTable; }

const DefaultPolicyEntry *mp::findDefaultEntry(StringRef name) {
  for (const DefaultPolicyEntry &e : kTable)
    if (name == e.opType)
      return &e;
  for (const DefaultPolicyEntry &e : kTable)
    if (name == e.mpOp)
      return &e;
  return nullptr;
}

void mp::printDefaultPolicyTable(llvm::raw_ostream &os) {
  os << "| ONNX op type | mp op | class | fp32 accumulation | why |\n"
     << "|---|---|---|---|---|\n";
  for (const DefaultPolicyEntry &e : kTable)
    os << "| " << e.opType << " | `" << e.mpOp << "` | "
       << stringifyPrecisionClass(e.cls) << " | "
       << (e.accumulateF32 ? "yes" : "") << " | " << e.reason << " |\n";
}
