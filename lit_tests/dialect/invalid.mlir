// Verifier errors of the ember dialect, one case per chunk. Kinds (operand/result counts, tensor
// vs resource, attribute kinds, unknown ops) are checked by MLIR through the IRDL definition;
// shapes, dtypes and attribute values by the op specs' type inference. Each message is pinned by
// a substring specific to the failure.

// RUN: ember-opt %s --split-input-file --verify-diagnostics

// -----
// Broadcasting: 4 and 3 are different sizes, neither is 1.
func.func @broadcast_incompatible(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'ember.add' op operand types tensor<4xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return
}

// -----
// A dynamic dim broadcasts, but the static trailing dims still disagree.
func.func @broadcast_incompatible_dynamic(%a: tensor<?x3xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{operand types tensor<?x3xf32> and tensor<2x4xf32> are not broadcast-compatible}}
  %0 = "ember.mul"(%a, %b) : (tensor<?x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return
}

// -----
func.func @mixed_dtypes(%a: tensor<4xf32>, %b: tensor<4xi32>) {
  // expected-error @+1 {{'ember.add' op operand types tensor<4xf32> and tensor<4xi32> have different element types}}
  %0 = "ember.add"(%a, %b) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return
}

// -----
func.func @wrong_result_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.neg' op result #0 has type tensor<5xf32> but the operands give tensor<4xf32>}}
  %0 = "ember.neg"(%a) : (tensor<4xf32>) -> tensor<5xf32>
  return
}

// -----
// Comparisons give i1, never the operand dtype.
func.func @wrong_result_dtype(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.less' op result #0 has type tensor<4xf32> but the operands give tensor<4xi1>}}
  %0 = "ember.less"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @wrong_result_rank(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'ember.reduce_sum' op result #0 has type tensor<2x1xf32> but the operands give tensor<2xf32>}}
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return
}

// -----
func.func @float_only_op_on_ints(%a: tensor<4xi32>) {
  // expected-error @+1 {{'ember.exp' op operand of type tensor<4xi32> must have floating-point or complex elements}}
  %0 = "ember.exp"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return
}

// -----
func.func @logical_op_on_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.logical_and' op operands of type tensor<4xf32> must have bool (i1) elements}}
  %0 = "ember.logical_and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return
}

// -----
// Strings can be tested for equality but not ordered.
func.func @ordered_compare_on_strings(%a: tensor<2x!ember.string>) {
  // expected-error @+1 {{'ember.less' op operands of type tensor<2x!ember.string> must have numeric (integer or floating-point) elements}}
  %0 = "ember.less"(%a, %a) : (tensor<2x!ember.string>, tensor<2x!ember.string>) -> tensor<2xi1>
  return
}

// -----
func.func @select_condition_not_bool(%c: tensor<4xi32>, %x: tensor<4xf32>) {
  // expected-error @+1 {{'ember.select' op condition of type tensor<4xi32> must have i1 elements}}
  %0 = "ember.select"(%c, %x, %x) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @reduce_axis_out_of_range(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.reduce_sum' op axis 2 is out of range for rank 2}}
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 2>, keepdims = false} : (tensor<4x3xf32>) -> tensor<4xf32>
  return
}

// -----
// -2 and 0 name the same dim of a rank-2 tensor.
func.func @reduce_duplicate_axes(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.reduce_max' op axes [0, -2] contain a duplicate}}
  %0 = "ember.reduce_max"(%a) {axes = array<i64: 0, -2>, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----
func.func @argmax_axis_out_of_range(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.argmax' op axis -3 is out of range for rank 2}}
  %0 = "ember.argmax"(%a) {axis = -3 : i64, dtype = i64} : (tensor<4x3xf32>) -> tensor<3xi64>
  return
}

// -----
func.func @argmin_bad_index_dtype(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.argmin' op dtype must be i32 or i64, got i8}}
  %0 = "ember.argmin"(%a) {axis = 0 : i64, dtype = i8} : (tensor<4xf32>) -> tensor<i8>
  return
}

// -----
func.func @transpose_bad_perm(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.transpose' op perm [0, 0] is not a permutation of 0..1 for tensor<4x3xf32>}}
  %0 = "ember.transpose"(%a) {perm = array<i64: 0, 0>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return
}

// -----
func.func @reshape_element_count(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.reshape' op cannot reshape tensor<4x3xf32> (12 elements) to [5, 2] (10 elements)}}
  %0 = "ember.reshape"(%a) {shape = array<i64: 5, 2>} : (tensor<4x3xf32>) -> tensor<5x2xf32>
  return
}

// -----
func.func @reshape_two_inferred_dims(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.reshape' op shape [-1, -1] may hold at most one -1}}
  %0 = "ember.reshape"(%a) {shape = array<i64: -1, -1>} : (tensor<4x3xf32>) -> tensor<?x?xf32>
  return
}

// -----
func.func @matmul_contraction_mismatch(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+1 {{'ember.matmul' op contraction dims differ: tensor<4x3xf32> has 3, tensor<4x5xf32> has 4}}
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return
}

// -----
func.func @matmul_vector_operand(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'ember.matmul' op operands tensor<3xf32> and tensor<3x5xf32> must have rank >= 2}}
  %0 = "ember.matmul"(%a, %b) {transpose_a = false, transpose_b = false} : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  return
}

// -----
func.func @broadcast_to_incompatible(%a: tensor<3xf32>) {
  // expected-error @+1 {{'ember.broadcast_to' op cannot broadcast tensor<3xf32> to [4, 2]}}
  %0 = "ember.broadcast_to"(%a) {shape = array<i64: 4, 2>} : (tensor<3xf32>) -> tensor<4x2xf32>
  return
}

// -----
func.func @squeeze_non_unit_dim(%a: tensor<1x3xf32>) {
  // expected-error @+1 {{'ember.squeeze' op cannot squeeze dim 1 of size 3 in tensor<1x3xf32>}}
  %0 = "ember.squeeze"(%a) {axes = array<i64: 1>} : (tensor<1x3xf32>) -> tensor<1xf32>
  return
}

// -----
// expand_dims takes axes in [-rank-1, rank].
func.func @expand_dims_axis_out_of_range(%a: tensor<3xf32>) {
  // expected-error @+1 {{'ember.expand_dims' op axis 2 is out of range for rank 2}}
  %0 = "ember.expand_dims"(%a) {axis = 2 : i64} : (tensor<3xf32>) -> tensor<3x1xf32>
  return
}

// -----
func.func @concat_dtype_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x3xi32>) {
  // expected-error @+1 {{'tensor.concat' op inputs and result element type must match}}
  %0 = "tensor.concat"(%a, %b) <{dim = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  return
}

// -----
func.func @strided_slice_zero_stride(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.strided_slice' op strides must be non-zero}}
  %0 = "ember.strided_slice"(%a) {begin = array<i64: 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 4>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @strided_slice_length_mismatch(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'ember.strided_slice' op begin, end and strides must have the same length}}
  %0 = "ember.strided_slice"(%a) {begin = array<i64: 0, 0>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 4>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64, strides = array<i64: 1, 1>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return
}

// -----
func.func @strided_slice_index_out_of_bounds(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.strided_slice' op index 4 is out of bounds for dim 0 of size 4}}
  %0 = "ember.strided_slice"(%a) {begin = array<i64: 4>, begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end = array<i64: 5>, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64, strides = array<i64: 1>} : (tensor<4xf32>) -> tensor<f32>
  return
}

// -----
func.func @gather_float_indices(%p: tensor<5x3xf32>, %i: tensor<2xf32>) {
  // expected-error @+1 {{'ember.gather' op indices of type tensor<2xf32> must have i32 or i64 elements}}
  %0 = "ember.gather"(%p, %i) {axis = 0 : i64} : (tensor<5x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----
func.func @one_hot_non_scalar_on_value(%i: tensor<4xi32>, %on: tensor<1xf32>, %off: tensor<f32>) {
  // expected-error @+1 {{'ember.one_hot' op on_value tensor<1xf32> and off_value tensor<f32> must be scalars}}
  %0 = "ember.one_hot"(%i, %on, %off) {axis = -1 : i64, depth = 3 : i64} : (tensor<4xi32>, tensor<1xf32>, tensor<f32>) -> tensor<4x3xf32>
  return
}

// -----
func.func @pad_bad_mode(%a: tensor<3xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'ember.pad' op mode must be one of ['CONSTANT', 'REFLECT', 'SYMMETRIC'], got 'EDGE'}}
  %0 = "ember.pad"(%a, %v) {mode = "EDGE", paddings = array<i64: 1, 1>} : (tensor<3xf32>, tensor<f32>) -> tensor<5xf32>
  return
}

// -----
// REFLECT cannot pad a dim of size 3 by more than 2.
func.func @pad_reflect_too_wide(%a: tensor<3xf32>, %v: tensor<f32>) {
  // expected-error @+1 {{'ember.pad' op REFLECT padding 3,0 of dim 0 exceeds 2 for tensor<3xf32>}}
  %0 = "ember.pad"(%a, %v) {mode = "REFLECT", paddings = array<i64: 3, 0>} : (tensor<3xf32>, tensor<f32>) -> tensor<6xf32>
  return
}

// -----
func.func @conv2d_bad_padding_string(%x: tensor<1x5x5x3xf32>, %f: tensor<3x3x3x8xf32>) {
  // expected-error @+1 {{'ember.conv2d' op padding must be "SAME" or "VALID", got 'same'}}
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "same", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x8xf32>) -> tensor<1x5x5x8xf32>
  return
}

// -----
func.func @conv2d_channel_mismatch(%x: tensor<1x5x5x4xf32>, %f: tensor<3x3x3x8xf32>) {
  // expected-error @+1 {{'ember.conv2d' op input channels of tensor<1x5x5x4xf32> (4) differ from filter input channels of tensor<3x3x3x8xf32> (3)}}
  %0 = "ember.conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<3x3x3x8xf32>) -> tensor<1x3x3x8xf32>
  return
}

// -----
func.func @depthwise_conv2d_channel_mismatch(%x: tensor<1x5x5x4xf32>, %f: tensor<3x3x3x2xf32>) {
  // expected-error @+1 {{'ember.depthwise_conv2d' op input channels of tensor<1x5x5x4xf32> (4) differ from filter channels of tensor<3x3x3x2xf32> (3)}}
  %0 = "ember.depthwise_conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x5x5x4xf32>, tensor<3x3x3x2xf32>) -> tensor<1x3x3x6xf32>
  return
}

// -----
func.func @depthwise_conv2d_wrong_result(%x: tensor<1x5x5x3xf32>, %f: tensor<3x3x3x2xf32>) {
  // expected-error @+1 {{'ember.depthwise_conv2d' op result #0 has type tensor<1x3x3x3xf32> but the operands give tensor<1x3x3x6xf32>}}
  %0 = "ember.depthwise_conv2d"(%x, %f) {dilations = array<i64: 1, 1>, padding = "VALID", strides = array<i64: 1, 1>} : (tensor<1x5x5x3xf32>, tensor<3x3x3x2xf32>) -> tensor<1x3x3x3xf32>
  return
}

// -----
func.func @max_pool2d_zero_stride(%x: tensor<1x4x4x3xf32>) {
  // expected-error @+1 {{'ember.max_pool2d' op strides must be two positive ints (height, width) below 2**31, got [0, 2]}}
  %0 = "ember.max_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 0, 2>} : (tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32>
  return
}

// -----
func.func @avg_pool2d_not_nhwc(%x: tensor<4x4x3xf32>) {
  // expected-error @+1 {{'ember.avg_pool2d' op input tensor<4x4x3xf32> must be rank 4 (NHWC)}}
  %0 = "ember.avg_pool2d"(%x) {ksize = array<i64: 2, 2>, padding = "VALID", strides = array<i64: 2, 2>} : (tensor<4x4x3xf32>) -> tensor<2x2x3xf32>
  return
}

// -----
func.func @softmax_on_ints(%x: tensor<2x10xi32>) {
  // expected-error @+1 {{'ember.softmax' op operand of type tensor<2x10xi32> must have floating-point elements}}
  %0 = "ember.softmax"(%x) {axis = -1 : i64} : (tensor<2x10xi32>) -> tensor<2x10xi32>
  return
}

// -----
// `shape` has no default: leaving it out is caught by the IRDL definition.
func.func @missing_required_attribute(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{attribute "shape" is expected but not provided}}
  %0 = "ember.reshape"(%a) : (tensor<4x3xf32>) -> tensor<12xf32>
  return
}

// -----
func.func @bool_attribute_given_an_integer(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.reduce_sum' op attribute 'keepdims' expects a bool (`true` or `false`), got 1 : i64}}
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 0>, keepdims = 1 : i64} : (tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----
func.func @array_attribute_given_an_integer(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{expected base attribute 'builtin.dense_array' but got 'builtin.integer'}}
  %0 = "ember.reduce_sum"(%a) {axes = 0 : i64, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----
func.func @dtype_attribute_given_a_string(%a: tensor<4xf32>) {
  // expected-error @+1 {{expected base attribute 'builtin.type' but got 'builtin.string'}}
  %0 = "ember.cast"(%a) {dtype = "i32"} : (tensor<4xf32>) -> tensor<4xi32>
  return
}

// -----
func.func @unknown_attribute(%a: tensor<4x3xf32>) {
  // expected-error @+1 {{'ember.reduce_sum' op has no attribute 'foo'; expected ['axes', 'keepdims']}}
  %0 = "ember.reduce_sum"(%a) {axes = array<i64: 0>, foo = 1 : i64, keepdims = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  return
}

// -----
func.func @too_many_operands(%a: tensor<4xf32>) {
  // expected-error @+1 {{op expects exactly 1 operands, but got 2}}
  %0 = "ember.neg"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @too_few_operands(%a: tensor<4xf32>) {
  // expected-error @+1 {{op expects exactly 2 operands, but got 1}}
  %0 = "ember.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
// Assignments produce no value.
func.func @result_on_assign(%r: !ember.resource<tensor<2xf32>>, %v: tensor<2xf32>) {
  // expected-error @+1 {{op expects exactly 0 results, but got 1}}
  %0 = "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<2xf32>>, tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----
func.func @tensor_where_resource_expected(%a: tensor<2xf32>) {
  // expected-error @+1 {{expected base type 'ember.resource' but got 'builtin.tensor'}}
  %0 = "ember.read_variable"(%a) : (tensor<2xf32>) -> tensor<2xf32>
  return
}

// -----
func.func @resource_where_tensor_expected(%r: !ember.resource<tensor<2xf32>>) {
  // expected-error @+1 {{'ember.neg' op operand 'input' must be a tensor, got !ember.resource<tensor<2xf32>>}}
  %0 = "ember.neg"(%r) : (!ember.resource<tensor<2xf32>>) -> tensor<2xf32>
  return
}

// -----
func.func @resource_of_non_tensor(%r: !ember.resource<i32>) {
  // expected-error @+1 {{'ember.read_variable' op expected a tensor type, got i32}}
  %0 = "ember.read_variable"(%r) : (!ember.resource<i32>) -> tensor<i32>
  return
}

// -----
func.func @scalar_where_tensor_expected(%a: i32) {
  // expected-error @+1 {{'ember.neg' op expected a tensor type, got i32}}
  %0 = "ember.neg"(%a) : (i32) -> tensor<i32>
  return
}

// -----
func.func @non_tensor_result(%a: tensor<2xf32>) {
  // expected-error @+1 {{'ember.neg' op expected a tensor type, got f32}}
  %0 = "ember.neg"(%a) : (tensor<2xf32>) -> f32
  return
}

// -----
func.func @unknown_ember_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{unregistered operation 'ember.nonexistent' found in dialect ('ember')}}
  %0 = "ember.nonexistent"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @non_ember_integer_width(%a: tensor<4xi7>) {
  // expected-error @+1 {{'ember.neg' op element type i7 is not an ember dtype; expected one of i1, i8, i16, i32, i64, ui8, f16, bf16, f32, f64, !ember.string}}
  %0 = "ember.neg"(%a) : (tensor<4xi7>) -> tensor<4xi7>
  return
}

// -----
func.func @non_ember_complex_elements(%a: tensor<4xcomplex<f16>>) {
  // expected-error @+1 {{is not an ember dtype}}
  %0 = "ember.neg"(%a) : (tensor<4xcomplex<f16>>) -> tensor<4xcomplex<f16>>
  return
}

// -----
func.func @cast_to_non_ember_dtype(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.cast' op attribute 'dtype': element type complex<f16> is not an ember dtype}}
  %0 = "ember.cast"(%a) {dtype = complex<f16>} : (tensor<4xf32>) -> tensor<4xcomplex<f16>>
  return
}

// -----
func.func @cast_string_to_number(%a: tensor<2x!ember.string>) {
  // expected-error @+1 {{'ember.cast' op cannot cast tensor<2x!ember.string> to f32: strings only cast to strings}}
  %0 = "ember.cast"(%a) {dtype = f32} : (tensor<2x!ember.string>) -> tensor<2xf32>
  return
}

// -----
func.func @constant_not_dense() {
  // expected-error @+1 {{'ember.constant' op attribute 'value' expects a dense elements attribute of a static ember tensor type}}
  %0 = "ember.constant"() {value = 1.0 : f32} : () -> tensor<f32>
  return
}

// -----
func.func @constant_result_type_mismatch() {
  // expected-error @+1 {{'ember.constant' op result #0 has type tensor<2xf64> but the operands give tensor<2xf32>}}
  %0 = "ember.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<2xf64>
  return
}

// -----
// With constant dims the fill shape is known, and must be non-negative.
func.func @fill_negative_dim() {
  %dims = "ember.constant"() {value = dense<[-1, 2]> : tensor<2xi64>} : () -> tensor<2xi64>
  %v = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{'ember.fill' op shape operand has a negative dimension -1}}
  %0 = "ember.fill"(%dims, %v) : (tensor<2xi64>, tensor<f32>) -> tensor<?x2xf32>
  return
}

// -----
func.func @fill_static_shape_mismatch() {
  %dims = "ember.constant"() {value = dense<[3, 4]> : tensor<2xi32>} : () -> tensor<2xi32>
  %v = "ember.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{'ember.fill' op result #0 has type tensor<4x3xf32> but the operands give tensor<3x4xf32>}}
  %0 = "ember.fill"(%dims, %v) : (tensor<2xi32>, tensor<f32>) -> tensor<4x3xf32>
  return
}

// -----
func.func @range_zero_delta() {
  %s = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %l = "ember.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
  %d = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{'ember.range' op delta must not be zero}}
  %0 = "ember.range"(%s, %l, %d) : (tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<?xi32>
  return
}

// -----
func.func @range_mixed_dtypes(%s: tensor<i32>, %l: tensor<i64>, %d: tensor<i32>) {
  // expected-error @+1 {{'ember.range' op operands tensor<i32>, tensor<i64>, tensor<i32> must have the same element type}}
  %0 = "ember.range"(%s, %l, %d) : (tensor<i32>, tensor<i64>, tensor<i32>) -> tensor<?xi32>
  return
}

// -----
func.func @shape_float_dtype(%a: tensor<?x4xf32>) {
  // expected-error @+1 {{'ember.shape' op dtype must be i32 or i64, got f32}}
  %0 = "ember.shape"(%a) {dtype = f32} : (tensor<?x4xf32>) -> tensor<2xf32>
  return
}

// -----
func.func @random_dynamic_seed(%seed: tensor<?xi64>) {
  // expected-error @+1 {{'ember.random_uniform' op seed of type tensor<?xi64> must have shape [2]}}
  %0 = "ember.random_uniform"(%seed) {dtype = f32, maxval = 1.0 : f64, minval = 0.0 : f64, shape = array<i64: 4>} : (tensor<?xi64>) -> tensor<4xf32>
  return
}

// -----
func.func @random_integer_dtype(%seed: tensor<2xi64>) {
  // expected-error @+1 {{'ember.random_normal' op dtype must be floating-point, got i32}}
  %0 = "ember.random_normal"(%seed) {dtype = i32, mean = 0.0 : f64, shape = array<i64: 4>, stddev = 1.0 : f64} : (tensor<2xi64>) -> tensor<4xi32>
  return
}

// -----
func.func @print_format_two_placeholders(%v: tensor<2xi32>) {
  // expected-error @+1 {{'ember.print' op format must contain at most one {}, got '{} and {}'}}
  "ember.print"(%v) {end = "\0A", format = "{} and {}", stream = "stderr", summarize = 3 : i64} : (tensor<2xi32>) -> ()
  return
}

// -----
func.func @print_bad_stream(%v: tensor<2xi32>) {
  // expected-error @+1 {{'ember.print' op stream must be "stderr" or "stdout", got 'stdlog'}}
  "ember.print"(%v) {end = "\0A", format = "{}", stream = "stdlog", summarize = 3 : i64} : (tensor<2xi32>) -> ()
  return
}

// -----
func.func @print_bad_summarize(%v: tensor<2xi32>) {
  // expected-error @+1 {{'ember.print' op summarize must be -1 (every entry) or >= 0, got -2}}
  "ember.print"(%v) {end = "\0A", format = "{}", stream = "stdout", summarize = -2 : i64} : (tensor<2xi32>) -> ()
  return
}

// -----
func.func @assign_wrong_dtype(%r: !ember.resource<tensor<2xf32>>, %v: tensor<2xi32>) {
  // expected-error @+1 {{'ember.assign_variable' op value of type tensor<2xi32> does not match the variable's type tensor<2xf32>}}
  "ember.assign_variable"(%r, %v) : (!ember.resource<tensor<2xf32>>, tensor<2xi32>) -> ()
  return
}

// -----
func.func @assign_add_wrong_shape(%r: !ember.resource<tensor<2xf32>>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'ember.assign_add_variable' op value of type tensor<3xf32> does not fit the variable's shape tensor<2xf32>}}
  "ember.assign_add_variable"(%r, %v) : (!ember.resource<tensor<2xf32>>, tensor<3xf32>) -> ()
  return
}

// -----
func.func @assign_sub_on_bools(%r: !ember.resource<tensor<2xi1>>, %v: tensor<2xi1>) {
  // expected-error @+1 {{'ember.assign_sub_variable' op value of type tensor<2xi1> must have numeric elements}}
  "ember.assign_sub_variable"(%r, %v) : (!ember.resource<tensor<2xi1>>, tensor<2xi1>) -> ()
  return
}

// -----
func.func @read_variable_wrong_result(%r: !ember.resource<tensor<2xf32>>) {
  // expected-error @+1 {{'ember.read_variable' op result #0 has type tensor<3xf32> but the operands give tensor<2xf32>}}
  %0 = "ember.read_variable"(%r) : (!ember.resource<tensor<2xf32>>) -> tensor<3xf32>
  return
}

// -----
// Each failing op is reported, not only the first one in a function.
func.func @two_errors_in_one_function(%a: tensor<4xf32>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'ember.sub' op operand types tensor<4xf32> and tensor<3xf32> are not broadcast-compatible}}
  %0 = "ember.sub"(%a, %b) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  // expected-error @+1 {{'ember.sqrt' op result #0 has type tensor<3xf32> but the operands give tensor<4xf32>}}
  %1 = "ember.sqrt"(%a) : (tensor<4xf32>) -> tensor<3xf32>
  return
}

// -----
func.func @dynamic_strided_slice_constant_index_out_of_bounds(%a: tensor<4xf32>) {
  %b = "ember.constant"() {value = dense<[-5]> : tensor<1xi32>} : () -> tensor<1xi32>
  // expected-error @+1 {{'ember.dynamic_strided_slice' op index -5 is out of bounds for dim 0 of size 4}}
  %0 = "ember.dynamic_strided_slice"(%a, %b, %b, %b) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 1 : i64} : (tensor<4xf32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<f32>
  return
}

// -----
func.func @slice_size_past_the_end(%a: tensor<4xf32>) {
  %b = "ember.constant"() {value = dense<[3]> : tensor<1xi32>} : () -> tensor<1xi32>
  %n = "ember.constant"() {value = dense<[2]> : tensor<1xi32>} : () -> tensor<1xi32>
  // expected-error @+1 {{'ember.slice' op size[0] = 2 is outside [0, 1]: dim 0 of tensor<4xf32> has 1 element from begin[0] = 3 on}}
  %0 = "ember.slice"(%a, %b, %n) : (tensor<4xf32>, tensor<1xi32>, tensor<1xi32>) -> tensor<2xf32>
  return
}

// -----
func.func @dynamic_strided_slice_float_bounds(%a: tensor<4xf32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'ember.dynamic_strided_slice' op begin of type tensor<1xf32> must have i32 or i64 elements}}
  %0 = "ember.dynamic_strided_slice"(%a, %b, %b, %b) {begin_mask = 0 : i64, ellipsis_mask = 0 : i64, end_mask = 0 : i64, new_axis_mask = 0 : i64, shrink_axis_mask = 0 : i64} : (tensor<4xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<?xf32>
  return
}

// -----
// The scanned axis must be in [-rank, rank).
func.func @cumsum_bad_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'ember.cumsum' op axis 2 is out of range for rank 2}}
  %0 = "ember.cumsum"(%x) {axis = 2 : i64, exclusive = false, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----
// A scalar has no axis to scan.
func.func @cumprod_scalar(%x: tensor<i32>) {
  // expected-error @+1 {{'ember.cumprod' op axis 0 is out of range for rank 0: a scan needs an operand of rank >= 1}}
  %0 = "ember.cumprod"(%x) {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<i32>) -> tensor<i32>
  return
}

// -----
// Booleans do not add.
func.func @cumsum_bool(%x: tensor<3xi1>) {
  // expected-error @+1 {{'ember.cumsum' op operand of type tensor<3xi1> must have numeric (integer or floating-point) elements}}
  %0 = "ember.cumsum"(%x) {axis = 0 : i64, exclusive = false, reverse = false} : (tensor<3xi1>) -> tensor<3xi1>
  return
}

// -----
// The batch (leading) dims must agree.
func.func @searchsorted_leading_dims(%s: tensor<2x5xf32>, %v: tensor<3x3xf32>) {
  // expected-error @+1 {{'ember.searchsorted' op sorted_sequence tensor<2x5xf32> and values tensor<3x3xf32> must have the same rank and leading dims (all but the last)}}
  %0 = "ember.searchsorted"(%s, %v) {out_type = i32, side = "left"} : (tensor<2x5xf32>, tensor<3x3xf32>) -> tensor<3x3xi32>
  return
}

// -----
// side is "left" or "right".
func.func @searchsorted_side(%s: tensor<5xf32>, %v: tensor<3xf32>) {
  // expected-error @+1 {{'ember.searchsorted' op side must be 'left' or 'right', got 'up'}}
  %0 = "ember.searchsorted"(%s, %v) {out_type = i32, side = "up"} : (tensor<5xf32>, tensor<3xf32>) -> tensor<3xi32>
  return
}

// -----
// Complex values have no order (tf.math.less rejects complex64 too).
func.func @complex_less(%a: tensor<4xcomplex<f32>>) {
  // expected-error @+1 {{'ember.less' op operands of type tensor<4xcomplex<f32>> must have numeric (integer or floating-point) elements}}
  %0 = "ember.less"(%a, %a) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
  return
}

// -----
// The transforms need a complex input (rfft takes the real signal).
func.func @fft_of_real(%a: tensor<8xf32>) {
  // expected-error @+1 {{'ember.fft' op operand of type tensor<8xf32> must have complex (complex64 or complex128) elements}}
  %0 = "ember.fft"(%a) : (tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----
// Bitwise ops take integers only: bool tensors have the logical ops, floats have no bits to
// operate on.
func.func @bitwise_of_floats(%a: tensor<4xf32>) {
  // expected-error @+1 {{'ember.bitwise_and' op operands of type tensor<4xf32> must have integer (int8, int16, int32, int64 or uint8) elements}}
  %0 = "ember.bitwise_and"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----
func.func @invert_of_bools(%a: tensor<4xi1>) {
  // expected-error @+1 {{'ember.invert' op operand of type tensor<4xi1> must have integer (int8, int16, int32, int64 or uint8) elements}}
  %0 = "ember.invert"(%a) : (tensor<4xi1>) -> tensor<4xi1>
  return
}
