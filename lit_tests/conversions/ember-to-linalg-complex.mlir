// convert-ember-to-linalg on complex operands: the same parallel linalg.generic as for
// floats, with `complex` dialect ops in the body (fused chains included; abs gives a real
// element); complex -> int cast converts the real part (TF's rule); reductions fill a
// complex zero (`complex.create`) and add with `complex.add`; the DFT of `ember.fft` is a
// reduction generic reading a table of twiddles indexed by (k * j) mod n.

// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @arith(
// CHECK-SAME:    %[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<complex<f32>>)
// CHECK:       %[[M:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[Y]] : tensor<4xcomplex<f32>>, tensor<complex<f32>>) outs(%{{.*}} : tensor<4xcomplex<f32>>)
// CHECK:       ^bb0(%[[A:.*]]: complex<f32>, %[[B:.*]]: complex<f32>, %{{.*}}: complex<f32>):
// CHECK:         %[[P:.*]] = complex.mul %[[A]], %[[B]] : complex<f32>
// CHECK:         linalg.yield %[[P]] : complex<f32>
// exp then abs: one fused generic, complex in and f32 out; |x| is +inf where a part is
// infinite (C99's cabs; complex.abs alone gives NaN for inf + NaN i).
// CHECK:       %[[ABS:.*]] = linalg.generic {{.*}} ins(%[[M]] : tensor<4xcomplex<f32>>) outs(%{{.*}} : tensor<4xf32>)
// CHECK:       ^bb0(%[[C:.*]]: complex<f32>, %{{.*}}: f32):
// CHECK:         %[[E:.*]] = complex.exp %[[C]] : complex<f32>
// CHECK:         %[[R:.*]] = complex.abs %[[E]] : complex<f32>
// CHECK:         %[[A:.*]] = arith.select %{{.*}}, %{{.*}}, %[[R]] : f32
// CHECK:         linalg.yield %[[A]] : f32
// CHECK:       %[[EQ:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xi1>)
// CHECK:         complex.eq %{{.*}}, %{{.*}} : complex<f32>
// CHECK:       return %[[ABS]], %[[EQ]]
func.func @arith(%x: tensor<4xcomplex<f32>>, %y: tensor<complex<f32>>) -> (tensor<4xf32>, tensor<4xi1>) {
  %m = "ember.mul"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
  %e = "ember.exp"(%m) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  %a = "ember.abs"(%e) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  %q = "ember.equal"(%x, %m) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
  return %a, %q : tensor<4xf32>, tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @parts(
// CHECK:         complex.create %{{.*}}, %{{.*}} : complex<f64>
// CHECK:         complex.angle %{{.*}} : complex<f64>
// CHECK:         complex.conj %{{.*}} : complex<f64>
// CHECK:         %[[RE:.*]] = complex.re %{{.*}} : complex<f64>
// CHECK:         arith.maximumf %[[RE]]
// CHECK:         arith.fptosi %{{.*}} : f64 to i32
func.func @parts(%re: tensor<?xf64>, %im: tensor<?xf64>) -> (tensor<?xf64>, tensor<?xcomplex<f64>>, tensor<?xi32>) {
  %z = "ember.complex"(%re, %im) : (tensor<?xf64>, tensor<?xf64>) -> tensor<?xcomplex<f64>>
  %g = "ember.angle"(%z) : (tensor<?xcomplex<f64>>) -> tensor<?xf64>
  %c = "ember.conj"(%z) : (tensor<?xcomplex<f64>>) -> tensor<?xcomplex<f64>>
  %i = "ember.cast"(%z) {dtype = i32} : (tensor<?xcomplex<f64>>) -> tensor<?xi32>
  return %g, %c, %i : tensor<?xf64>, tensor<?xcomplex<f64>>, tensor<?xi32>
}

// -----

// CHECK-LABEL: func.func @sum(
// CHECK:       %[[ZERO:.*]] = complex.create %{{.*}}, %{{.*}} : complex<f32>
// CHECK:       %[[INIT:.*]] = linalg.fill ins(%[[ZERO]] : complex<f32>) outs(%{{.*}} : tensor<2xcomplex<f32>>)
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : tensor<2x3xcomplex<f32>>) outs(%[[INIT]] : tensor<2xcomplex<f32>>)
// CHECK:         complex.add %{{.*}}, %{{.*}} : complex<f32>
func.func @sum(%x: tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
  %s = "ember.reduce_sum"(%x) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %s : tensor<2xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @fft(
// CHECK:       %[[N:.*]] = arith.constant 8 : index
// CHECK:       %[[W:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} outs(%{{.*}} : tensor<?xcomplex<f32>>)
// CHECK:         math.sin %{{.*}} : f64
// CHECK:         math.cos %{{.*}} : f64
// CHECK:         complex.create %{{.*}}, %{{.*}} : complex<f32>
// CHECK:       linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<2x8xcomplex<f32>>)
// CHECK:         %[[K:.*]] = linalg.index 1 : index
// CHECK:         %[[J:.*]] = linalg.index 2 : index
// CHECK:         %[[KJ:.*]] = arith.muli %[[K]], %[[J]] : index
// CHECK:         %[[T:.*]] = arith.remui %[[KJ]], %[[N]] : index
// CHECK:         %[[WT:.*]] = tensor.extract %[[W]][%[[T]]] : tensor<?xcomplex<f32>>
// CHECK:         %[[P:.*]] = complex.mul %{{.*}}, %[[WT]] : complex<f32>
// CHECK:         complex.add %{{.*}}, %[[P]] : complex<f32>
func.func @fft(%x: tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>> {
  %f = "ember.fft"(%x) : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
  return %f : tensor<2x8xcomplex<f32>>
}

// -----

// rfft of 6 samples to fft_length 4: the input is cropped to 4 (tensor.extract_slice),
// 3 frequencies; irfft's output is divided by n.
// CHECK-LABEL: func.func @real_transforms(
// CHECK:       tensor.extract_slice %{{.*}}[0, 0] [2, 4] [1, 1] : tensor<2x6xf32> to tensor<2x4xf32>
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<2x3xcomplex<f32>>)
// CHECK:       linalg.generic {{.*}} outs(%{{.*}} : tensor<2x4xf32>)
// CHECK:         complex.re
// CHECK:         complex.im
// CHECK:       linalg.generic
// CHECK:         arith.divf
func.func @real_transforms(%x: tensor<2x6xf32>) -> tensor<2x4xf32> {
  %r = "ember.rfft"(%x) {fft_length = 4 : i64} : (tensor<2x6xf32>) -> tensor<2x3xcomplex<f32>>
  %b = "ember.irfft"(%r) {fft_length = -1 : i64} : (tensor<2x3xcomplex<f32>>) -> tensor<2x4xf32>
  return %b : tensor<2x4xf32>
}
