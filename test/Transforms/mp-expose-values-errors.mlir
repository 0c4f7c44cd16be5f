// RUN: mp-opt %s -split-input-file --mp-expose-values -verify-diagnostics

// expected-error @below {{mp-expose-values: the module has no function to transform (import a model first)}}
module {
}
