# RUN: %python %s | FileCheck %s
# Tracing records ops with the user's locations; Python values become constants.
import ember as em


@em.function
def affine(x, scale):
    return x * scale + 1.0


cf = affine.get_concrete_function(em.TensorSpec([None, 4], em.float32), 2.0)
print(cf.mlir("traced"))

# CHECK-LABEL: func.func @affine(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32>
# CHECK-DAG:     %[[ONE:.*]] = "ember.constant"() {value = dense<1.000000e+00> : tensor<f32>}
# CHECK-DAG:     %[[TWO:.*]] = "ember.constant"() {value = dense<2.000000e+00> : tensor<f32>}
# CHECK:         %[[M:.*]] = "ember.mul"(%arg0, %[[TWO]]) : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
# CHECK:         %[[A:.*]] = "ember.add"(%[[M]], %[[ONE]])
# CHECK:         return %[[A]] : tensor<?x4xf32>

print(cf.pretty_printed_signature())
# CHECK-LABEL: ConcreteFunction affine(x, scale=2.0)
# CHECK-NEXT:    Args:
# CHECK-NEXT:      x: float32 Tensor, shape=(None, 4)
# CHECK-NEXT:    Returns:
# CHECK-NEXT:      float32 Tensor, shape=(None, 4)
