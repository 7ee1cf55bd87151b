// tanh reaches LLVM's vectoriser as a call with a vector variant
// (backends/cpu/vector_variants.py): the vector loop tests whether any lane has |x| >= 0.625
// (or is NaN) and branches, so e**(2|x|) and its division run only for vectors that have
// such a lane; the others compute the small-|x| polynomial alone (the same bits). The
// variant is inlined after vectorising and deleted; a scalar remainder calls the scalar
// function, which keeps both sides.

// RUN: ember-compile %s --emit=llvmir --cpu=haswell --features=+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=MLIR
// RUN: ember-compile %s --emit=llvmir --optimize --cpu=haswell --features=+avx2,+fma,+avx \
// RUN:   | FileCheck %s --check-prefix=AVX2 --implicit-check-not=@__ember_tanh_f32_v

// MLIR:       define internal float @__ember_tanh_f32(float %0) #[[SCALAR:[0-9]+]]
// MLIR:       define <8 x float> @__ember_tanh_f32_v8(<8 x float> %0) #[[VARIANT:[0-9]+]]
// MLIR:         fcmp uge <8 x float> {{.*}}, splat (float 6.250000e-01)
// MLIR:         bitcast <8 x i1> {{.*}} to i8
// MLIR:       attributes #[[SCALAR]] = { noinline "vector-function-abi-variant"="_ZGV_LLVM_N8v___ember_tanh_f32(__ember_tanh_f32_v8)" }
// MLIR:       attributes #[[VARIANT]] = { alwaysinline }

// AVX2-LABEL: define void @act(
// AVX2:       vector.body:
// AVX2:         fcmp uge <8 x float> {{.*}}, splat (float 6.250000e-01)
// AVX2-NEXT:    bitcast <8 x i1> {{.*}} to i8
// AVX2-NEXT:    icmp eq i8
// AVX2:         br i1
// AVX2:         fdiv <8 x float> splat (float 2.000000e+00)
// AVX2:         call <8 x float> @llvm.copysign.v8f32
// AVX2:       call fastcc float @__ember_tanh_f32(
// AVX2:       define internal fastcc float @__ember_tanh_f32(float %0)
// AVX2:         fdiv float 2.000000e+00
func.func @act(%x: tensor<1003xf32>) -> tensor<1003xf32> {
  %0 = "ember.tanh"(%x) : (tensor<1003xf32>) -> tensor<1003xf32>
  return %0 : tensor<1003xf32>
}
