# RUN: %python %s | FileCheck %s
# Variables are resource arguments read and written in program order; em.print is an op;
# em.py_function and nested Functions are func.call.
import ember as em

counter = em.Variable(0)


@em.function
def tick(x):
    em.print("before", counter)
    counter.assign_add(x)
    em.print("after", counter)
    return em.py_function(lambda t: t * 2, [counter.read_value()], em.int32)


print(tick.get_concrete_function(em.TensorSpec([], em.int32)).mlir("traced"))
# CHECK:       func.func private @__py_function_[[N:[0-9]+]](tensor<i32>) -> tensor<*xi32>
# CHECK-LABEL: func.func @tick(%arg0: tensor<i32>, %arg1: !ember.resource<tensor<i32>>)
# CHECK:         %[[R0:.*]] = "ember.read_variable"(%arg1)
# CHECK:         "ember.print"(%[[R0]]) {end = "\0A", format = "before {}", stream = "stderr", summarize = 3 : i64}
# CHECK:         "ember.assign_add_variable"(%arg1, %arg0)
# CHECK:         %[[R1:.*]] = "ember.read_variable"(%arg1)
# CHECK:         "ember.print"(%[[R1]]) {end = "\0A", format = "after {}", stream = "stderr", summarize = 3 : i64}
# CHECK:         call @__py_function_[[N]]({{.*}}) : (tensor<i32>) -> tensor<*xi32>


@em.function
def inner(a):
    return a + 1


@em.function
def outer(a):
    return inner(inner(a))


print(outer.get_concrete_function(em.TensorSpec([3], em.float32)).mlir("traced"))
# CHECK-LABEL: func.func @outer
# CHECK:         %[[A:.*]] = call @[[INNER:inner[_0-9]*]](%arg0)
# CHECK:         call @[[INNER]](%[[A]])
# CHECK:       func.func private @[[INNER]]
