// sin and cos reach LLVM's vectoriser as calls with vector variants
// (backends/cpu/vector_variants.py): the vector loop tests whether any lane is a huge
// argument (|x| >= 2**28) and branches, so Payne-Hanek's reduction (the 64-bit products,
// llvm.fshl) runs only for vectors that have one. The variants are inlined after
// vectorising and deleted; a scalar remainder calls the exact scalar function. (The loop
// is interleaved 4 vectors deep, backends/cpu/interleave.py: with AVX2 a vector epilogue
// comes before the scalar remainder.)

// RUN: ember-compile %s --emit=llvmir --cpu=znver4 \
// RUN:   --features=+avx512f,+avx512dq,+avx512vl,+avx512bw,+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=MLIR
// RUN: ember-compile %s --emit=llvmir --optimize --cpu=znver4 \
// RUN:   --features=+avx512f,+avx512dq,+avx512vl,+avx512bw,+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=AVX512 --implicit-check-not=@__ember_
// RUN: ember-compile %s --emit=llvmir --optimize --cpu=haswell --features=+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=AVX2 --implicit-check-not=@__ember_sin_f32_v

// Before LLVM: the scalar function is noinline and names its variant (masked, for loops
// with masked tails, with AVX-512; unmasked <8 x float> with AVX2).
// MLIR:       define internal float @__ember_sin_f32(float %0) #[[SCALAR:[0-9]+]]
// MLIR:       define <16 x float> @__ember_sin_f32_m16(<16 x float> %0, <16 x i1> %1) #[[VARIANT:[0-9]+]]
// MLIR:         bitcast <16 x i1> {{.*}} to i16
// MLIR:       attributes #[[SCALAR]] = { noinline "vector-function-abi-variant"="_ZGV_LLVM_M16v___ember_sin_f32(__ember_sin_f32_m16)" }
// MLIR:       attributes #[[VARIANT]] = { alwaysinline }

// AVX512-LABEL: define void @wave(
// AVX512:       vector.body:
// AVX512:         @llvm.masked.load.v16f32
// AVX512:         bitcast <16 x i1> {{.*}} to i16
// AVX512-NEXT:    icmp eq i16
// AVX512-NEXT:    br i1
// AVX512:         @llvm.fshl.v16i64
// AVX512:         bitcast <16 x i1> {{.*}} to i16
// AVX512:         @llvm.fshl.v16i64
// AVX512:         @llvm.masked.store.v16f32
// AVX512:         br i1 {{.*}}, label %middle.block, label %vector.body

// AVX2-LABEL: define void @wave(
// AVX2:       vector.body:
// AVX2:         bitcast <8 x i1> {{.*}} to i8
// AVX2-NEXT:    icmp eq i8
// AVX2-NEXT:    br i1
// AVX2:         @llvm.fshl.v8i64
// AVX2:         br i1 {{.*}}, label %{{.*}}, label %vector.body
// AVX2:         call fastcc float @__ember_sin_f32(
// AVX2:         call fastcc float @__ember_cos_f32(
// AVX2:       define internal fastcc float @__ember_sin_f32(float %0)
func.func @wave(%x: tensor<1003xf32>) -> tensor<1003xf32> {
  %0 = "ember.sin"(%x) : (tensor<1003xf32>) -> tensor<1003xf32>
  %1 = "ember.cos"(%x) : (tensor<1003xf32>) -> tensor<1003xf32>
  %2 = "ember.add"(%0, %1) : (tensor<1003xf32>, tensor<1003xf32>) -> tensor<1003xf32>
  return %2 : tensor<1003xf32>
}
