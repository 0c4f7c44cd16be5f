// Verifier errors of mp.gru and mp.rnn (and of mp.lstm where the checks are
// shared).
// RUN: mp-opt %s -split-input-file -verify-diagnostics

func.func @gru_w_rows(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x48x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{W must be [num_directions, 3*hidden_size, input_size], got 'tensor<1x64x8xf32>' (hidden_size 16, 1 direction)}}
  %y, %yh = mp.gru %x, %w, %r {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x48x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @gru_w_directions(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<2x48x16xf32>) -> tensor<2x2x16xf32> {
  // expected-error @+1 {{W must be [num_directions, 3*hidden_size, input_size], got 'tensor<1x48x8xf32>' (hidden_size 16, 2 directions)}}
  %y, %yh = mp.gru %x, %w, %r {direction = "bidirectional", hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<2x48x16xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>)
  return %yh : tensor<2x2x16xf32>
}
// -----
func.func @gru_input_size(%x: tensor<5x2x7xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{W's input_size 8 differs from X's 7}}
  %y, %yh = mp.gru %x, %w, %r {hidden_size = 16 : i64} : (tensor<5x2x7xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @gru_bias(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %b: tensor<1x48xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{B must be [num_directions, 6*hidden_size], got 'tensor<1x48xf32>' (hidden_size 16, 1 direction)}}
  %y, %yh = mp.gru %x, %w, %r bias %b {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<1x48xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @gru_initial_h(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %h: tensor<1x3x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{initial states must be [num_directions, batch_size, hidden_size], got 'tensor<1x3x16xf32>' (hidden_size 16, 1 direction)}}
  %y, %yh = mp.gru %x, %w, %r initial_h %h {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<1x3x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @gru_initial_h_batch_first(%x: tensor<2x5x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %h: tensor<1x2x16xf32>) -> tensor<2x1x16xf32> {
  // expected-error @+1 {{initial states must be [batch_size, num_directions, hidden_size], got 'tensor<1x2x16xf32>'}}
  %y, %yh = mp.gru %x, %w, %r initial_h %h {hidden_size = 16 : i64, layout = 1 : i64} : (tensor<2x5x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<1x2x16xf32>) -> (tensor<2x5x1x16xf32>, tensor<2x1x16xf32>)
  return %yh : tensor<2x1x16xf32>
}
// -----
func.func @gru_sequence_lens(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>, %l: tensor<3xi32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{sequence_lens must be [batch_size], got 'tensor<3xi32>'}}
  %y, %yh = mp.gru %x, %w, %r sequence_lens %l {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>, tensor<3xi32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @gru_activation_count(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{expects 2 activations (2 per direction), got 3}}
  %y, %yh = mp.gru %x, %w, %r {activations = ["Sigmoid", "Tanh", "Tanh"], hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @gru_activation_name(%x: tensor<5x2x8xf32>, %w: tensor<1x48x8xf32>, %r: tensor<1x48x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{unsupported activation 'Gelu'}}
  %y, %yh = mp.gru %x, %w, %r {activations = ["Sigmoid", "Gelu"], hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x48x8xf32>, tensor<1x48x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @rnn_r(%x: tensor<5x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x12xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{R must be [num_directions, hidden_size, hidden_size], got 'tensor<1x16x12xf32>' (hidden_size 16, 1 direction)}}
  %y, %yh = mp.rnn %x, %w, %r {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x12xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @rnn_direction(%x: tensor<5x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{direction must be forward, reverse or bidirectional}}
  %y, %yh = mp.rnn %x, %w, %r {direction = "both", hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @rnn_layout(%x: tensor<5x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{layout must be 0 or 1}}
  %y, %yh = mp.rnn %x, %w, %r {hidden_size = 16 : i64, layout = 2 : i64} : (tensor<5x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
// -----
func.func @rnn_activations(%x: tensor<5x2x8xf32>, %w: tensor<2x16x8xf32>, %r: tensor<2x16x16xf32>) -> tensor<2x2x16xf32> {
  // expected-error @+1 {{expects 2 activations (1 per direction), got 1}}
  %y, %yh = mp.rnn %x, %w, %r {activations = ["Relu"], direction = "bidirectional", hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<2x16x8xf32>, tensor<2x16x16xf32>) -> (tensor<5x2x2x16xf32>, tensor<2x2x16xf32>)
  return %yh : tensor<2x2x16xf32>
}
// -----
func.func @rnn_hidden_size(%x: tensor<5x2x8xf32>, %w: tensor<1x16x8xf32>, %r: tensor<1x16x16xf32>) -> tensor<1x2x0xf32> {
  // expected-error @+1 {{hidden_size must be positive, got 0}}
  %y, %yh = mp.rnn %x, %w, %r {hidden_size = 0 : i64} : (tensor<5x2x8xf32>, tensor<1x16x8xf32>, tensor<1x16x16xf32>) -> (tensor<5x1x2x0xf32>, tensor<1x2x0xf32>)
  return %yh : tensor<1x2x0xf32>
}
// -----
func.func @lstm_peepholes(%x: tensor<5x2x8xf32>, %w: tensor<1x64x8xf32>, %r: tensor<1x64x16xf32>, %p: tensor<1x16xf32>) -> tensor<1x2x16xf32> {
  // expected-error @+1 {{P must be [num_directions, 3*hidden_size], got 'tensor<1x16xf32>'}}
  %y, %yh, %yc = mp.lstm %x, %w, %r peepholes %p {hidden_size = 16 : i64} : (tensor<5x2x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x16xf32>) -> (tensor<5x1x2x16xf32>, tensor<1x2x16xf32>, tensor<1x2x16xf32>)
  return %yh : tensor<1x2x16xf32>
}
