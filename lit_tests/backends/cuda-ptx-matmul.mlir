// Matrix products through the CUDA backend to PTX. An f16 product whose M, N and K are
// multiples of 16 runs on tensor cores (ember-gpu-mma: WMMA tiles, one warp a block,
// .reqntid 32); a ragged f32 product and a bf16 one run ember-gpu-tile-matmul's
// register-tiled loops (no wmma). Same for sm_80 (PTX ISA 7.0) and sm_90 (8.0).

// RUN: ember-compile %s --target cuda:sm_90 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: ember-compile %s --target cuda:sm_80 --emit=ptx | FileCheck %s --check-prefixes=CHECK,SM80

// CHECK:       // gpu.binary @ragged_kernel
// SM90:        .version 8.0
// SM90-NEXT:   .target sm_90
// SM80:        .version 7.0
// SM80-NEXT:   .target sm_80
// CHECK:       .visible .entry ragged_kernel(
// CHECK:       .reqntid {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}
// The product (after the output's zero fill): its last row and column clamped for loads.
// CHECK:       // gpu.binary @ragged_kernel_0
// CHECK:       .visible .entry ragged_kernel(
// CHECK:       .reqntid {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}
// CHECK-NOT:   wmma
// CHECK:       min.{{[su]}}64
// CHECK:       mul.rn.f32
// CHECK:       add.rn.f32

// The f16 product: its zero fill of the f32 accumulator, then the tensor-core kernel.
// CHECK:       .visible .entry tensor_cores_kernel(
// CHECK:       .visible .entry tensor_cores_kernel(
// CHECK:       .reqntid 32, 1, 1
// CHECK:       wmma.load.c.sync.aligned.row.m16n16k16.f32
// CHECK:       wmma.load.a.sync.aligned.row.m16n16k16.f16
// CHECK:       wmma.load.b.sync.aligned.row.m16n16k16.f16
// CHECK:       wmma.mma.sync.aligned.row.row.m16n16k16.f32.f32
// CHECK:       wmma.store.d.sync.aligned.row.m16n16k16.f32

// CHECK:       .visible .entry bf16_kernel(
// CHECK-NOT:   wmma
// CHECK:       // gpu.binary
func.func @ragged(%a: tensor<70x33xf32>, %b: tensor<33x50xf32>) -> tensor<70x50xf32> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<70x33xf32>, tensor<33x50xf32>) -> tensor<70x50xf32>
  return %0 : tensor<70x50xf32>
}
func.func @tensor_cores(%a: tensor<32x160xf16>, %b: tensor<160x48xf16>) -> tensor<32x48xf16> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<32x160xf16>, tensor<160x48xf16>) -> tensor<32x48xf16>
  return %0 : tensor<32x48xf16>
}
func.func @bf16(%a: tensor<32x16xbf16>, %b: tensor<16x48xbf16>) -> tensor<32x48xbf16> {
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<32x16xbf16>, tensor<16x48xbf16>) -> tensor<32x48xbf16>
  return %0 : tensor<32x48xbf16>
}
