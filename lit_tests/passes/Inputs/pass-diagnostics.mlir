// Input of pass-diagnostics.py: the diagnostics its pass emits, as --verify-diagnostics
// expects them (a remark and a warning in the first chunk, an error in the second).

// CHECK-LABEL: func.func @remark_and_warning
// CHECK:         "ember.exp"
func.func @remark_and_warning(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-remark @+1 {{'ember.exp' op: exp(x) kept (no exp-of-log to cancel)}}
  %a = "ember.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  // expected-warning @+1 {{'ember.log' op: the log of a value that may be negative is NaN}}
  %b = "ember.log"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// An error fails the pass (nothing is printed for this chunk); emitted through MLIR's own
// Location.emit_error, it is collected and matched all the same.
// CHECK-NOT: @error
func.func @error(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ember.sqrt' op: not supported by this target}}
  %a = "ember.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
