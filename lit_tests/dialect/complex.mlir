// Round trip of the complex ops (complex, real, imag, angle, conj), of complex operands of
// existing ops (abs to a real result, mul, cast to a real dtype, reduce_mean, matmul), and of
// the Fourier transforms (fft, ifft, rfft with and without fft_length, irfft), on static and
// dynamic (`?`) dims; and the verifier's error for an ordering comparison of complex values.

// RUN: ember-opt %s | FileCheck %s
// RUN: ember-opt %s | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | ember-opt | FileCheck %s
// RUN: ember-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// tf.complex(re, im) with a broadcast imaginary part; its parts again.
// CHECK-LABEL: func.func @parts(
// CHECK-SAME:    %[[RE:.*]]: tensor<2x?xf32>, %[[IM:.*]]: tensor<f32>)
// CHECK:       %[[Z:.*]] = "ember.complex"(%[[RE]], %[[IM]]) : (tensor<2x?xf32>, tensor<f32>) -> tensor<2x?xcomplex<f32>>
// CHECK:       %[[R:.*]] = "ember.real"(%[[Z]]) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
// CHECK:       %[[I:.*]] = "ember.imag"(%[[Z]]) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
// CHECK:       %[[A:.*]] = "ember.angle"(%[[Z]]) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
// CHECK:       %[[C:.*]] = "ember.conj"(%[[Z]]) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
// GENERIC-LABEL: sym_name = "parts"
// GENERIC:       "ember.complex"({{.*}}) : (tensor<2x?xf32>, tensor<f32>) -> tensor<2x?xcomplex<f32>>
// GENERIC:       "ember.conj"({{.*}}) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
func.func @parts(%re: tensor<2x?xf32>, %im: tensor<f32>) -> (tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xcomplex<f32>>) {
  %z = "ember.complex"(%re, %im) : (tensor<2x?xf32>, tensor<f32>) -> tensor<2x?xcomplex<f32>>
  %r = "ember.real"(%z) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  %i = "ember.imag"(%z) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  %a = "ember.angle"(%z) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xf32>
  %c = "ember.conj"(%z) : (tensor<2x?xcomplex<f32>>) -> tensor<2x?xcomplex<f32>>
  return %r, %i, %a, %c : tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xf32>, tensor<2x?xcomplex<f32>>
}

// Existing ops on complex128: |z| is real; cast to f64 keeps the real part; a complex
// constant prints as (re, im) pairs.
// CHECK-LABEL: func.func @existing_ops(
// CHECK:       "ember.constant"() {value = dense<[(1.000000e+00,2.000000e+00), (0.000000e+00,-1.000000e+00)]> : tensor<2xcomplex<f64>>} : () -> tensor<2xcomplex<f64>>
// CHECK:       "ember.mul"({{.*}}) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
// CHECK:       "ember.abs"({{.*}}) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
// CHECK:       "ember.cast"({{.*}}) {dtype = f64} : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
// CHECK:       "ember.reduce_mean"({{.*}}) {axes = array<i64: 0>, keepdims = false} : (tensor<2xcomplex<f64>>) -> tensor<complex<f64>>
// CHECK:       "ember.matmul"({{.*}}) {transpose_a = false, transpose_b = false} : (tensor<3x2xcomplex<f64>>, tensor<2x?xcomplex<f64>>) -> tensor<3x?xcomplex<f64>>
func.func @existing_ops(%a: tensor<3x2xcomplex<f64>>, %b: tensor<2x?xcomplex<f64>>) -> (tensor<2xf64>, tensor<2xf64>, tensor<complex<f64>>, tensor<3x?xcomplex<f64>>) {
  %z = "ember.constant"() {value = dense<[(1.0, 2.0), (0.0, -1.0)]> : tensor<2xcomplex<f64>>} : () -> tensor<2xcomplex<f64>>
  %p = "ember.mul"(%z, %z) : (tensor<2xcomplex<f64>>, tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>>
  %m = "ember.abs"(%p) : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
  %r = "ember.cast"(%p) {dtype = f64} : (tensor<2xcomplex<f64>>) -> tensor<2xf64>
  %s = "ember.reduce_mean"(%p) {axes = array<i64: 0>, keepdims = false} : (tensor<2xcomplex<f64>>) -> tensor<complex<f64>>
  %c = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<3x2xcomplex<f64>>, tensor<2x?xcomplex<f64>>) -> tensor<3x?xcomplex<f64>>
  return %m, %r, %s, %c : tensor<2xf64>, tensor<2xf64>, tensor<complex<f64>>, tensor<3x?xcomplex<f64>>
}

// The transforms run over the innermost dim: fft/ifft keep the shape; rfft of 6 samples
// padded to 8 gives 5 frequencies; irfft of 5 gives 2 * (5 - 1) = 8 samples by default.
// CHECK-LABEL: func.func @transforms(
// CHECK:       "ember.fft"({{.*}}) : (tensor<3x?xcomplex<f32>>) -> tensor<3x?xcomplex<f32>>
// CHECK:       "ember.ifft"({{.*}}) : (tensor<3x?xcomplex<f32>>) -> tensor<3x?xcomplex<f32>>
// CHECK:       "ember.rfft"({{.*}}) {fft_length = 8 : i64} : (tensor<2x6xf32>) -> tensor<2x5xcomplex<f32>>
// CHECK:       "ember.rfft"({{.*}}) {fft_length = -1 : i64} : (tensor<2x6xf32>) -> tensor<2x4xcomplex<f32>>
// CHECK:       "ember.irfft"({{.*}}) {fft_length = -1 : i64} : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
// GENERIC-LABEL: sym_name = "transforms"
// GENERIC:       "ember.irfft"({{.*}}) {fft_length = -1 : i64} : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
func.func @transforms(%z: tensor<3x?xcomplex<f32>>, %x: tensor<2x6xf32>) -> (tensor<3x?xcomplex<f32>>, tensor<3x?xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x8xf32>) {
  %f = "ember.fft"(%z) : (tensor<3x?xcomplex<f32>>) -> tensor<3x?xcomplex<f32>>
  %i = "ember.ifft"(%f) : (tensor<3x?xcomplex<f32>>) -> tensor<3x?xcomplex<f32>>
  %r = "ember.rfft"(%x) {fft_length = 8 : i64} : (tensor<2x6xf32>) -> tensor<2x5xcomplex<f32>>
  %d = "ember.rfft"(%x) {fft_length = -1 : i64} : (tensor<2x6xf32>) -> tensor<2x4xcomplex<f32>>
  %b = "ember.irfft"(%r) {fft_length = -1 : i64} : (tensor<2x5xcomplex<f32>>) -> tensor<2x8xf32>
  return %f, %i, %d, %b : tensor<3x?xcomplex<f32>>, tensor<3x?xcomplex<f32>>, tensor<2x4xcomplex<f32>>, tensor<2x8xf32>
}
