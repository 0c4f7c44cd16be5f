// RUN: mp-opt %s -split-input-file --mp-shadow-fp16 -verify-diagnostics

// expected-error @below {{mp-shadow-fp16: the module has no function to transform (import a model first)}}
module {
}
