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

// ASM-LABEL: fused:
// ASM:         vmulps {{.*}}%ymm
// ASM:         vaddps {{.*}}%ymm
func.func @fused(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {
  %0 = "ember.mul"(%x, %y) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %1 = "ember.add"(%0, %x) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  %2 = "ember.maximum"(%1, %y) : (tensor<1024xf32>, tensor<1024xf32>) -> tensor<1024xf32>
  return %2 : tensor<1024xf32>
}
