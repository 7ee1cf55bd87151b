// A chain of elementwise ops fuses into one linalg.generic, and LLVM turns its loop into a
// single vector loop for the target (pinned to haswell: AVX2, <8 x float>).

// RUN: ember-compile %s --emit=linalg | FileCheck %s --check-prefix=LINALG
// RUN: ember-compile %s --emit=llvmir --optimize --cpu=haswell --features=+avx2,+fma,+avx | FileCheck %s --check-prefix=LLVM
// RUN: ember-compile %s --emit=asm --cpu=haswell --features=+avx2,+fma,+avx | FileCheck %s --check-prefix=ASM

// LINALG-LABEL: func.func @fused
// LINALG-COUNT-1: linalg.generic
// LINALG-NOT:     linalg.generic
// LINALG:           arith.mulf
// LINALG-NEXT:      arith.addf
// LINALG-NEXT:      arith.maximumf
// LINALG-NEXT:      linalg.yield

// LLVM-LABEL: define void @fused(
// LLVM:       vector.body:
// LLVM:         fmul <8 x float>
// LLVM:         fadd <8 x float>
// LLVM:         @llvm.maximum.v8f32
// LLVM:         store <8 x float>
// LLVM:         br i1 {{.*}}, label %middle.block, label %vector.body
// LLVM-NOT:   vector.body:
// LLVM-LABEL: define void @tail(

// ASM-LABEL: fused:
// ASM:         vmulps {{.*}}%ymm
// ASM:         vaddps {{.*}}%ymm
func.func @fused(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "ember.mul"(%x, %y) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "ember.add"(%0, %x) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "ember.maximum"(%1, %y) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}

// 1001 elements on skylake-avx512 (<8 x float>: it prefers 256-bit vectors): 1001 is no
// multiple of 8, and with AVX-512's mask registers the loop is predicated instead of followed
// by a scalar (or a second vector) copy of the body for the remainder. Buffers are noalias
// (outputs overlap no argument), so no run-time overlap check either: one loop in all.
// RUN: ember-compile %s --emit=llvmir --optimize --cpu=skylake-avx512 --features=+avx512f,+avx512vl,+avx512bw,+avx512dq,+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=TAIL --implicit-check-not=scalar.ph --implicit-check-not=vector.memcheck --implicit-check-not=vec.epilog
// TAIL-LABEL: define void @fused(
// TAIL-SAME:    ptr noalias
// TAIL-LABEL: define void @tail(
// TAIL-SAME:    ptr noalias {{.*}} ptr noalias
// TAIL:       vector.body:
// TAIL:         @llvm.masked.load.v8f32
// TAIL:         fmul <8 x float>
// TAIL:         @llvm.masked.store.v8f32
// TAIL:         br i1 {{.*}}, label %{{.*}}, label %vector.body
// TAIL-NOT:   vector.body:
func.func @tail(%x: tensor<1001xf32>, %y: tensor<1001xf32>) -> tensor<1001xf32> {
  %0 = "ember.mul"(%x, %y) : (tensor<1001xf32>, tensor<1001xf32>) -> tensor<1001xf32>
  %1 = "ember.tanh"(%0) : (tensor<1001xf32>) -> tensor<1001xf32>
  return %1 : tensor<1001xf32>
}
