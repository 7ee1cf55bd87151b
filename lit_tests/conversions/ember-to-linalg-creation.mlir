// convert-ember-to-linalg on creation ops: constant -> arith.constant on the signless type,
// fill -> linalg.fill of the extracted scalar, range -> linalg.generic over linalg.index,
// shape -> a constant, or tensor.from_elements of tensor.dim for dynamic dims.

// A range of run-time bounds computes its length when it runs (the last case).
// RUN: ember-opt %s -p convert-ember-to-linalg --split-input-file | FileCheck %s

// ui8 constants keep their bits on i8 (200 reads as -56); splats stay splats; bf16 and i1
// constants are taken over as they are.
// CHECK-LABEL: func.func @constants()
// CHECK-SAME:    -> (tensor<3xi8>, tensor<1000xi8>, tensor<2xbf16>, tensor<2xi1>, tensor<2x2xf32>)
// CHECK:       %[[A:.*]] = arith.constant dense<[1, -56, -1]> : tensor<3xi8>
// CHECK:       %[[B:.*]] = arith.constant dense<-56> : tensor<1000xi8>
// CHECK:       %[[C:.*]] = arith.constant dense<[1.500000e+00, 2.000000e+00]> : tensor<2xbf16>
// CHECK:       %[[D:.*]] = arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK:       %[[E:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK:       return %[[A]], %[[B]], %[[C]], %[[D]], %[[E]]
func.func @constants() -> (tensor<3xui8>, tensor<1000xui8>, tensor<2xbf16>, tensor<2xi1>, tensor<2x2xf32>) {
  %0 = "ember.constant"() {value = dense<[1, 200, 255]> : tensor<3xui8>} : () -> tensor<3xui8>
  %1 = "ember.constant"() {value = dense<200> : tensor<1000xui8>} : () -> tensor<1000xui8>
  %2 = "ember.constant"() {value = dense<[1.5, 2.0]> : tensor<2xbf16>} : () -> tensor<2xbf16>
  %3 = "ember.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  %4 = "ember.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  return %0, %1, %2, %3, %4 : tensor<3xui8>, tensor<1000xui8>, tensor<2xbf16>, tensor<2xi1>, tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @fill_static(
// CHECK-SAME:    %[[DIMS:.*]]: tensor<2xi64>, %[[V:.*]]: tensor<f32>) -> tensor<3x4xf32>
// CHECK:       %[[S:.*]] = tensor.extract %[[V]][] : tensor<f32>
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<3x4xf32>
// CHECK:       %[[F:.*]] = linalg.fill ins(%[[S]] : f32) outs(%[[E]] : tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK:       return %[[F]]
func.func @fill_static(%dims: tensor<2xi64>, %v: tensor<f32>) -> tensor<3x4xf32> {
  %0 = "ember.fill"(%dims, %v) : (tensor<2xi64>, tensor<f32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// A dynamic result dim is read from the shape operand (clamped at 0), after a check that
// raises eager's error if a dim is negative.
// CHECK:       func.func private @ember_error_0(i64) attributes {ember.error = "OpShapeError", ember.message = "shape operand has a negative dimension {}", ember.op = "ember.fill"
// CHECK-LABEL: func.func @fill_dynamic(
// CHECK-SAME:    %[[DIMS:.*]]: tensor<2xi32>, %[[V:.*]]: tensor<i8>) -> tensor<?x4xi8>
// CHECK:       arith.cmpi slt
// CHECK:       scf.if
// CHECK-NEXT:    func.call @ember_error_0
// CHECK:       %[[S:.*]] = tensor.extract %[[V]][] : tensor<i8>
// CHECK:       %[[C0:.*]] = arith.constant 0 : index
// CHECK:       %[[D:.*]] = tensor.extract %[[DIMS]][%[[C0]]] : tensor<2xi32>
// CHECK:       %[[Z:.*]] = arith.constant 0 : i32
// CHECK:       %[[M:.*]] = arith.maxsi %[[D]], %[[Z]] : i32
// CHECK:       %[[I:.*]] = arith.index_cast %[[M]] : i32 to index
// CHECK:       %[[E:.*]] = tensor.empty(%[[I]]) : tensor<?x4xi8>
// CHECK:       linalg.fill ins(%[[S]] : i8) outs(%[[E]] : tensor<?x4xi8>)
func.func @fill_dynamic(%dims: tensor<2xi32>, %v: tensor<i8>) -> tensor<?x4xi8> {
  %0 = "ember.fill"(%dims, %v) : (tensor<2xi32>, tensor<i8>) -> tensor<?x4xi8>
  return %0 : tensor<?x4xi8>
}

// -----

// Float ranges compute start + i * delta in f64 and round once (the reference's numpy
// promotes to f64 too).
// CHECK-LABEL: func.func @range_f32(
// CHECK-SAME:    %[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>, %[[C:.*]]: tensor<f32>) -> tensor<5xf32>
// CHECK:       %[[START:.*]] = tensor.extract %[[A]][] : tensor<f32>
// CHECK:       %[[DELTA:.*]] = tensor.extract %[[C]][] : tensor<f32>
// CHECK:       %[[S:.*]] = arith.extf %[[START]] : f32 to f64
// CHECK:       %[[D:.*]] = arith.extf %[[DELTA]] : f32 to f64
// CHECK:       linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<5xf32>)
// CHECK:         %[[I:.*]] = linalg.index 0 : index
// CHECK:         %[[N:.*]] = arith.index_cast %[[I]] : index to i64
// CHECK:         %[[F:.*]] = arith.sitofp %[[N]] : i64 to f64
// CHECK:         %[[P:.*]] = arith.mulf %[[D]], %[[F]] : f64
// CHECK:         %[[V:.*]] = arith.addf %[[S]], %[[P]] : f64
// CHECK:         %[[R:.*]] = arith.truncf %[[V]] : f64 to f32
// CHECK:         linalg.yield %[[R]] : f32
func.func @range_f32(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>) -> tensor<5xf32> {
  %0 = "ember.range"(%a, %b, %c) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Integer ranges wrap in the element type; f16 results round once, through f32 rounded to
// odd (no __truncdfhf2 libcall).
// CHECK-LABEL: func.func @range_i8_f16(
// CHECK:         %[[I:.*]] = linalg.index 0 : index
// CHECK:         %[[N:.*]] = arith.index_cast %[[I]] : index to i8
// CHECK:         %[[P:.*]] = arith.muli %{{.*}}, %[[N]] : i8
// CHECK:         arith.addi %{{.*}}, %[[P]] : i8
// CHECK:         arith.truncf %{{.*}} : f64 to f32
// CHECK:         arith.bitcast %{{.*}} : f32 to i32
// CHECK:         arith.ori
// CHECK:         arith.truncf %{{.*}} : f32 to f16
func.func @range_i8_f16(%a: tensor<i8>, %h: tensor<f16>) -> (tensor<4xi8>, tensor<3xf16>) {
  %0 = "ember.range"(%a, %a, %a) : (tensor<i8>, tensor<i8>, tensor<i8>) -> tensor<4xi8>
  %1 = "ember.range"(%h, %h, %h) : (tensor<f16>, tensor<f16>, tensor<f16>) -> tensor<3xf16>
  return %0, %1 : tensor<4xi8>, tensor<3xf16>
}

// -----

// CHECK-LABEL: func.func @shapes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<?x4xi8>, %[[Z:.*]]: tensor<f64>)
// CHECK:       %[[S:.*]] = arith.constant dense<[2, 3]> : tensor<2xi32>
// CHECK:       %[[C0:.*]] = arith.constant 0 : index
// CHECK:       %[[D:.*]] = tensor.dim %[[Y]], %[[C0]] : tensor<?x4xi8>
// CHECK:       %[[DI:.*]] = arith.index_cast %[[D]] : index to i64
// CHECK:       %[[FOUR:.*]] = arith.constant 4 : i64
// CHECK:       %[[T:.*]] = tensor.from_elements %[[DI]], %[[FOUR]] : tensor<2xi64>
// CHECK:       %[[U:.*]] = arith.constant dense<> : tensor<0xi32>
// CHECK:       return %[[S]], %[[T]], %[[U]]
func.func @shapes(%x: tensor<2x3xf32>, %y: tensor<?x4xui8>, %z: tensor<f64>) -> (tensor<2xi32>, tensor<2xi64>, tensor<0xi32>) {
  %0 = "ember.shape"(%x) {dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  %1 = "ember.shape"(%y) {dtype = i64} : (tensor<?x4xui8>) -> tensor<2xi64>
  %2 = "ember.shape"(%z) {dtype = i32} : (tensor<f64>) -> tensor<0xi32>
  return %0, %1, %2 : tensor<2xi32>, tensor<2xi64>, tensor<0xi32>
}

// -----

// A range of run-time bounds: its length is ceil(|limit - start| / |delta|) in unsigned
// arithmetic (exact where the signed difference overflows), 0 if the bounds run the other
// way; a zero delta, or a length of 2**63 elements or more, calls a site reporting the
// three bounds, whose inference raises eager's error.
// CHECK-LABEL: func.func private @ember_error_0(i64, i64, i64)
// CHECK-SAME:    ember.op = "ember.range"
// CHECK-SAME:    ember.valued = "[0, 1, 2]"
// CHECK-LABEL: func.func @range_dynamic(
// CHECK:         %[[ZERO:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK:         scf.if %[[ZERO]] {
// CHECK-NEXT:      func.call @ember_error_0(%{{.*}}, %{{.*}}, %{{.*}}) : (i64, i64, i64) -> ()
// CHECK:         %[[Q:.*]] = arith.divui %{{.*}}, %{{.*}} : i64
// CHECK:         %[[R:.*]] = arith.remui %{{.*}}, %{{.*}} : i64
// CHECK:         %[[N:.*]] = arith.addi %[[Q]], %{{.*}} : i64
// CHECK:         %[[M:.*]] = arith.select %{{.*}}, %[[N]], %{{.*}} : i64
// CHECK:         %[[HUGE:.*]] = arith.cmpi slt, %[[M]], %{{.*}} : i64
// CHECK:         scf.if %[[HUGE]] {
// CHECK:         %[[SIZE:.*]] = arith.index_cast %[[M]] : i64 to index
// CHECK:         tensor.empty(%[[SIZE]]) : tensor<?xi32>
func.func @range_dynamic(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>) -> tensor<?xi32> {
  %0 = "ember.range"(%a, %b, %c) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  return %0 : tensor<?xi32>
}
