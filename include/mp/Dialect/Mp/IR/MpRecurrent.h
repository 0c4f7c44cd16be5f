//===- MpRecurrent.h - what mp.lstm, mp.gru and mp.rnn share ----*- C++ -*-===//
//
// The activations the recurrent ops accept, shared by their verifiers and
// the CPU lowering so that an op that verifies is one that lowers.
//
//===----------------------------------------------------------------------===//

#ifndef MP_DIALECT_MP_IR_MPRECURRENT_H
#define MP_DIALECT_MP_IR_MPRECURRENT_H

#include "llvm/ADT/StringRef.h"

namespace mp {

/// An ONNX recurrent activation (the `activations` attribute of LSTM, GRU
/// and RNN): whether it takes alpha / beta, and their ONNX defaults.
struct RecurrentActivation {
  llvm::StringRef name; ///< lower case, e.g. "hardsigmoid"
  bool usesAlpha, usesBeta;
  double alpha, beta;
};

/// The activation called `name` (ONNX spelling, compared case-insensitively),
/// or null when mp does not know it.
const RecurrentActivation *lookupRecurrentActivation(llvm::StringRef name);

} // namespace mp

#endif // MP_DIALECT_MP_IR_MPRECURRENT_H
