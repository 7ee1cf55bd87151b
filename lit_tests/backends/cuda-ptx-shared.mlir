// A parallel reduction mapped to threads becomes gpu.all_reduce (convert-parallel-loops-
// to-gpu), which convert-gpu-to-nvvm lowers with warp shuffles and a workgroup buffer:
// PTX .shared memory, shfl.sync.bfly and bar.sync. The kernel requires exactly its block
// (.reqntid, from the launch; no .maxntid). The input is already loops on
// memrefs: ember-compile takes upstream dialects at any stage.

// RUN: ember-compile %s --target cuda:sm_90 --emit=ptx | FileCheck %s

// CHECK:       .visible .entry row_sums_kernel(
// CHECK-NOT:   .maxntid
// CHECK:       .reqntid {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}
// CHECK:       .shared .align 4 .b8 {{.*}}[{{[0-9]+}}];
// CHECK:       shfl.sync.bfly.b32
// CHECK:       st.shared
// CHECK:       bar.sync
// CHECK:       ld.shared
func.func @row_sums(%x: memref<64x256xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %s = scf.parallel (%j) = (%c0) to (%c256) step (%c1) init (%zero) -> f32 {
      %v = memref.load %x[%i, %j] : memref<64x256xf32>
      scf.reduce(%v : f32) {
      ^bb0(%a: f32, %b: f32):
        %r = arith.addf %a, %b : f32
        scf.reduce.return %r : f32
      }
    }
    memref.store %s, %out[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
