// RUN: mp-opt %s -split-input-file --mp-specialize-shapes="shapes=x=2x3,y=3x4" | FileCheck %s
// RUN: not mp-opt %s -split-input-file --mp-specialize-shapes="shapes=x=2x5" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not mp-opt %s -split-input-file --mp-specialize-shapes="shapes=nothere=2" 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: %if shared-models %{ mp-opt %shared_models/genai_gpt2_fp32_contrib_attention_past/model.onnx --mp-specialize-shapes="shapes=input_ids=2x4" -o /dev/null %}

// Pinned inputs make every inferred shape static, shape computations fold.
func.func @f(%x: tensor<?x3xf32> {mp.name = "x"}, %y: tensor<3x?xf32> {mp.name = "y"}) -> tensor<?x?xf32> {
  %0 = mp.matmul %x, %y : (tensor<?x3xf32>, tensor<3x?xf32>) -> tensor<?x?xf32>
  %s = mp.shape %0 : tensor<?x?xf32> -> tensor<2xi64>
  %i = mp.constant dense<[1, 0]> : tensor<2xi64>
  %t = mp.gather %s, %i : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = mp.reshape %0, %t : (tensor<?x?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}
// CHECK-LABEL: func.func @f(
// CHECK-SAME: tensor<2x3xf32> {mp.name = "x"}, %{{.*}}: tensor<3x4xf32> {mp.name = "y"}) -> tensor<4x2xf32>
// CHECK-DAG: %[[S:.+]] = mp.constant dense<[4, 2]> : tensor<2xi64>
// CHECK-DAG: %[[MM:.+]] = mp.matmul {{.*}} -> tensor<2x4xf32>
// CHECK: mp.reshape %[[MM]], %[[S]] : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<4x2xf32>

// BAD: error: input 'x' of type 'tensor<?x3xf32>' cannot take the shape 'tensor<2x5xf32>'
// NAME: error: no graph input named 'nothere'

// -----

// A Range whose limit is float arithmetic over constants (a window length
// cast to float, as HannWindow's expansion writes it) gets a static length;
// the float ops stay (they are precision decisions), only inference
// evaluates them.
// CHECK-LABEL: func.func @range_over_float_logic(
// CHECK: %[[F:.+]] = mp.cast %{{.+}} {to = f32} : tensor<i32> -> tensor<f32>
// CHECK: %[[L:.+]] = mp.sub %[[F]], %{{.+}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: mp.range %{{.+}}, %[[L]], %{{.+}} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<9xf32>
func.func @range_over_float_logic(%x: tensor<?x3xf32> {mp.name = "x"}, %y: tensor<3x?xf32> {mp.name = "y"}) -> tensor<?xf32> {
  %n = mp.constant dense<10> : tensor<i32>
  %zero = mp.constant dense<0.0> : tensor<f32>
  %one = mp.constant dense<1.0> : tensor<f32>
  %nf = mp.cast %n {to = f32} : tensor<i32> -> tensor<f32>
  %limit = mp.sub %nf, %one : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %r = mp.range %zero, %limit, %one : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
