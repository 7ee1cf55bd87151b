"""The tf.function guide's examples, ported to Ember (`tf.` -> `em.`), one test per example.

Sources (in /work/shared/guides/):
  - tf-function-guide.zh.txt, sections 基础知识 (basics) through 已知问题 (known issues);
  - tf-function-guide-2020.zh.txt, the side-effect (tf.function的副作用, 注意python的状态) and
    variable (变量) sections;
  - tf-wiki-graph-execution.zh.txt, the two quizzes of "@tf.function 内在机制".
Each test asserts what the guide shows: printed output (captured with capsys; `em.print`
writes to stderr by default, as tf.print), returned values, trace counts and errors (type and,
where the guide shows it, wording).

Where TensorFlow's text differs only by naming, the Ember equivalent is asserted:
  - `tf.Tensor(2, shape=(), dtype=int32)` -> `ember.Tensor(2, shape=(), dtype=int32)`,
    `<tf.Tensor 'add:0' ...>` -> `<ember.Tensor 'add:0' ...>`, `<tf.Variable ...>` ->
    `<ember.Variable ...>`, `dtype=tf.int32` -> `dtype=em.int32` in TensorSpec reprs;
  - TF's generated function name `__inference_double_166` is the function's own name;
  - messages that name tf.function / tf.Variable name em.function / em.Variable.
Values are compared as the guide prints them: string tensors hold UTF-8 bytes (`b'aa'`) and
float scalars print as `2.0`, both as in TensorFlow.

Examples adapted without changing their point:
  - train(num_steps) (控制回溯): `for _ in tf.range(num_steps)` needs AutoGraph, so the loop
    is an em.while_loop; the point is Python-vs-tensor retracing.
  - recursive_fn(tf.constant(5)) (不支持递归): `if n > 0` on a tensor needs AutoGraph, so the
    branch is an em.cond; the point is that recursion over tensors fails (RecursionError).
  - Fruit/SimpleModel/Count/Model extend tf.Module in the guide; plain classes here.
  - "与多个 Keras 优化器一起使用" (multiple Keras optimizers): the optimizers need gradients; the
    same point (an object that creates its variables lazily, passed to one Function as a
    second instance, raises ValueError; one Function per object works) is made with a
    gradient-free lazily-built accumulator.
  - leaky_function with MyClass (external_list / external_object): the guide only defines it;
    here it is decorated, called, and both leaked tensors are shown to be unusable.

Examples skipped (need AutoGraph, gradients, Keras or tf.data, which Ember lacks):
  - 用法: `tf.GradientTape` over `add(v, 1.0)` — gradients.
  - 用法: Conv2D eager-vs-Function timing — Keras layer, and tests never assert timings.
  - AutoGraph 转换: the `while tf.reduce_sum(x) > 1` loop and `tf.autograph.to_code` — AutoGraph.
  - 条件语句: fizzbuzz — AutoGraph (`for i in tf.range`, `if` on tensors).
  - 在 Python 数据上循环: the two `tf.data.Dataset.from_generator` measurements — tf.data
    (the Python-list measurements are ported).
  - 累加循环值: dynamic_rnn with tf.TensorArray — AutoGraph and TensorArray.
  - 使用 Python 迭代器和生成器: good_consume_next over a tf.data iterator — tf.data.
  - 与多个 Keras 优化器一起使用: the literal Keras/GradientTape code — gradients (adapted above).
  - 与多个 Keras 模型一起使用: prose only, no code.
  - 2020 guide and wiki: sections outside side effects/variables (AutoGraph, MNIST training
    with Keras and gradients, square_if_positive, tf.Session) — not in scope / AutoGraph.
"""

import re
import warnings

import numpy as np
import pytest

import ember as em
from ember.runtime.executor import InterpreterFallbackWarning


@pytest.fixture(autouse=True)
def compiled_path():
    """Every example runs on compiled code: the only interpreter fallbacks allowed are the
    by-design ones (string tensors, which only the host runs; those warn once, naming the
    op)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    fallbacks = [str(w.message) for w in caught
                 if issubclass(w.category, InterpreterFallbackWarning)]
    assert all("string tensors" in m for m in fallbacks), fallbacks


# == 基础知识: 用法 (usage) ===================================================================

def test_function_runs_like_a_core_op():
    @em.function  # The decorator converts `add` into a `Function`.
    def add(a, b):
        return a + b

    result = add(em.ones([2, 2]), em.ones([2, 2]))  # [[2., 2.], [2., 2.]]
    assert isinstance(result, em.Tensor)
    assert result.dtype is em.float32
    np.testing.assert_array_equal(result.numpy(), [[2.0, 2.0], [2.0, 2.0]])


def test_functions_nest_inside_functions():
    @em.function
    def add(a, b):
        return a + b

    @em.function
    def dense_layer(x, w, b):
        return add(em.matmul(x, w), b)

    result = dense_layer(em.ones([3, 2]), em.ones([2, 2]), em.ones([2]))
    assert result.shape == (3, 2) and result.dtype is em.float32
    np.testing.assert_array_equal(result.numpy(), [[3.0, 3.0]] * 3)
    assert add.experimental_get_tracing_count() == 1


# == 跟踪 (tracing) ============================================================================

def make_double():
    @em.function
    def double(a):
        print("Tracing with", a)
        return a + a
    return double


def test_different_argument_types_trace_again(capsys):
    double = make_double()
    print(double(em.constant(1)))
    print()
    print(double(em.constant(1.1)))
    print()
    print(double(em.constant("a")))
    print()
    out = capsys.readouterr().out.splitlines()
    assert out[0] == 'Tracing with Tensor("a:0", shape=(), dtype=int32)'
    assert out[1] == "ember.Tensor(2, shape=(), dtype=int32)"
    assert out[3] == 'Tracing with Tensor("a:0", shape=(), dtype=float32)'
    assert out[4] == "ember.Tensor(2.2, shape=(), dtype=float32)"
    assert out[6] == 'Tracing with Tensor("a:0", shape=(), dtype=string)'
    assert out[7] == "ember.Tensor(b'aa', shape=(), dtype=string)"
    assert out[2] == out[5] == out[8] == ""
    assert double.experimental_get_tracing_count() == 3
    assert "argument `a`: Tensor[int32, []] -> Tensor[float32, []]" in double.explain_retrace()


def test_same_argument_type_reuses_the_trace(capsys):
    double = make_double()
    double(em.constant("a"))
    capsys.readouterr()
    # This doesn't print 'Tracing with ...'
    print(double(em.constant("b")))
    assert capsys.readouterr().out == "ember.Tensor(b'bb', shape=(), dtype=string)\n"
    assert double.experimental_get_tracing_count() == 1


def test_pretty_printed_concrete_signatures_lists_every_trace():
    double = make_double()
    double(em.constant(1))
    double(em.constant(1.1))
    double(em.constant("a"))
    assert double.pretty_printed_concrete_signatures() == "\n\n".join(
        f"double(a)\n  Args:\n    a: {t} Tensor, shape=()\n  Returns:\n    {t} Tensor, shape=()"
        for t in ("int32", "float32", "string"))


# == 跟踪规则 (rules of tracing) ================================================================

def counting_function(**kwargs):
    """An em.function returning 0 that records the argument of every trace."""
    traces = []

    @em.function(**kwargs)
    def f(x):
        traces.append(x)
        return em.constant(0)
    return f, traces


def test_rule_python_values_trace_per_value():
    f, traces = counting_function()
    for value in (3, 3, 4, 3, "relu", "relu", None):
        f(value)
    assert traces == [3, 4, "relu", None]


def test_rule_tensors_trace_per_dtype_and_shape_not_value():
    f, traces = counting_function()
    f(em.constant([1, 2]))
    f(em.constant([3, 4]))  # same dtype and shape: reused
    f(em.constant([1, 2, 3]))  # new shape
    f(em.constant([1.0, 2.0]))  # new dtype
    assert [(t.dtype, t.shape) for t in traces] == [
        (em.int32, (2,)), (em.int32, (3,)), (em.float32, (2,))]


def test_rule_fixed_dim_is_a_subtype_of_unknown_dim():
    f, traces = counting_function()
    general = f.get_concrete_function(em.TensorSpec([None, None], em.float32))
    assert f(em.ones([1, 2])).numpy() == 0  # TensorShape([1, 2]) <: ([None, None])
    assert len(traces) == 1
    assert f.get_concrete_function(em.ones([1, 2])) is general


def test_rule_most_specific_matching_trace_is_preferred():
    f, _ = counting_function()
    specific = f.get_concrete_function(em.TensorSpec([1, None], em.float32))
    general = f.get_concrete_function(em.TensorSpec([None, None], em.float32))
    assert f.experimental_get_tracing_count() == 2
    assert f.get_concrete_function(em.ones([1, 2])) is specific
    assert f.get_concrete_function(em.ones([3, 2])) is general
    f(em.ones([1, 2]))
    f(em.ones([3, 2]))
    assert f.experimental_get_tracing_count() == 2


def test_rule_ranked_shape_is_a_subtype_of_unknown_rank():
    f, traces = counting_function()
    f.get_concrete_function(em.TensorSpec(None, em.int32))
    for shape in ([], [2], [2, 3]):
        f(em.zeros(shape, em.int32))
    assert len(traces) == 1 and traces[0].shape.rank is None


def test_rule_variables_trace_per_variable():
    f, traces = counting_function()
    v1, v2 = em.Variable(1.0), em.Variable(1.0)
    f(v1)
    f(v1)
    f(v2)  # same dtype and shape, but another resource
    assert len(traces) == 2


def test_rule_ordered_containers_trace_by_element_types_in_order():
    f, traces = counting_function()
    f([1, 2])
    f([2, 1])  # ListTraceType<Literal<2>, Literal<1>> differs
    f([1, 2])
    f((1, 2))  # a tuple is not a list
    assert traces == [[1, 2], [2, 1], (1, 2)]


def test_rule_mappings_trace_by_keys_and_value_types_in_any_order():
    f, traces = counting_function()
    f({1: 2, 3: 4})
    f({3: 4, 1: 2})  # equivalent type: same keys, same value types
    f({1: 2, 3: 5})
    assert traces == [{1: 2, 3: 4}, {1: 2, 3: 5}]


def test_rule_other_objects_trace_by_equality_and_hash():
    class Key:
        def __init__(self, k):
            self.k = k

        def __eq__(self, other):
            return isinstance(other, Key) and other.k == self.k

        def __hash__(self):
            return hash(self.k)

    f, traces = counting_function()
    a = Key(1)
    f(a)
    f(Key(1))  # equal and same hash: reused
    f(Key(2))
    assert len(traces) == 2


def test_rule_free_variables_are_not_part_of_the_trace_type():
    scale = 2
    f_traces = []

    @em.function
    def f(x):
        f_traces.append(x)
        return x * scale

    assert f(em.constant(1)).numpy() == 2
    scale = 3  # noqa: F841 - changing a free variable does not retrace
    assert f(em.constant(1)).numpy() == 2
    assert len(f_traces) == 1


# == 控制回溯 (controlling retracing) ==========================================================

def make_next_collatz():
    @em.function(input_signature=(em.TensorSpec(shape=[None], dtype=em.int32),))
    def next_collatz(x):
        print("Tracing with", x)
        return em.where(x % 2 == 0, x // 2, 3 * x + 1)
    return next_collatz


def test_input_signature_fixes_the_trace_and_rejects_other_inputs(capsys):
    next_collatz = make_next_collatz()
    print(next_collatz(em.constant([1, 2])))
    assert capsys.readouterr().out == ('Tracing with Tensor("x:0", shape=(None,), dtype=int32)\n'
                                       "ember.Tensor([4 1], shape=(2,), dtype=int32)\n")
    signature = ("  input_signature: (\n"
                 "    TensorSpec(shape=(None,), dtype=em.int32, name=None)).")
    # You specified a 1-D tensor in the input signature, so this should fail.
    with pytest.raises(ValueError, match="Python inputs incompatible with input_signature") as e:
        next_collatz(em.constant([[1, 2], [3, 4]]))
    assert "shape=(2, 2), dtype=int32" in str(e.value)
    assert str(e.value).endswith(signature)
    # You specified an int32 dtype in the input signature, so this should fail.
    with pytest.raises(ValueError, match="Python inputs incompatible with input_signature") as e:
        next_collatz(em.constant([1.0, 2.0]))
    assert "shape=(2,), dtype=float32" in str(e.value)
    assert str(e.value).endswith(signature)
    assert next_collatz.experimental_get_tracing_count() == 1


def test_unknown_dimensions_reuse_one_trace_for_every_length(capsys):
    @em.function(input_signature=(em.TensorSpec(shape=[None], dtype=em.int32),))
    def g(x):
        print('Tracing with', x)
        return x

    # No retrace!
    print(g(em.constant([1, 2, 3])))
    print(g(em.constant([1, 2, 3, 4, 5])))
    assert capsys.readouterr().out == (
        'Tracing with Tensor("x:0", shape=(None,), dtype=int32)\n'
        "ember.Tensor([1 2 3], shape=(3,), dtype=int32)\n"
        "ember.Tensor([1 2 3 4 5], shape=(5,), dtype=int32)\n")
    assert g.experimental_get_tracing_count() == 1


def test_reduce_retracing_generalises_shapes():
    f, traces = counting_function(reduce_retracing=True)
    f(em.constant([1]))
    f(em.constant([1, 2]))  # relaxed to shape (None,)
    f(em.constant([1, 2, 3]))  # served by the (None,) trace
    f(em.constant([[1]]))  # another rank: relaxed to unknown rank
    f(em.constant([[1, 2], [3, 4]]))
    assert [t.shape.dims for t in traces] == [(1,), (None,), None]


def test_python_arguments_retrace_but_tensor_arguments_do_not(capsys):
    def train_one_step():
        pass

    @em.function
    def train(num_steps):
        print("Tracing with num_steps = ", num_steps)
        em.print("Executing with num_steps = ", num_steps)
        for _ in em.range(num_steps):  # a staged loop (AutoGraph)
            train_one_step()

    previous = em.config.get_fallback()
    em.config.set_fallback("error")  # every trace compiles
    try:
        print("Retracing occurs for different Python arguments.")
        train(num_steps=10)
        train(num_steps=20)
        print()
        print("Traces are reused for Tensor arguments.")
        train(num_steps=em.constant(10))
        train(num_steps=em.constant(20))
    finally:
        em.config.set_fallback(previous)
    out, err = capsys.readouterr()
    assert out == ("Retracing occurs for different Python arguments.\n"
                   "Tracing with num_steps =  10\n"
                   "Tracing with num_steps =  20\n"
                   "\n"
                   "Traces are reused for Tensor arguments.\n"
                   'Tracing with num_steps =  Tensor("num_steps:0", shape=(), dtype=int32)\n')
    assert err == ("Executing with num_steps =  10\nExecuting with num_steps =  20\n"
                   "Executing with num_steps =  10\nExecuting with num_steps =  20\n")
    assert train.experimental_get_tracing_count() == 3


def test_separate_functions_never_share_traces(capsys):
    def f():
        print('Tracing!')
        em.print('Executing')

    em.function(f)()
    em.function(f)()
    out, err = capsys.readouterr()
    assert out == "Tracing!\nTracing!\n"
    assert err == "Executing\nExecuting\n"


# -- 使用跟踪协议 (the tracing protocol) ------------------------------------------------------

@em.function
def get_mixed_flavor(fruit_a, fruit_b):
    return fruit_a.flavor + fruit_b.flavor


class Fruit:
    flavor = em.constant([0, 0])


class Apple(Fruit):
    flavor = em.constant([1, 2])


class Mango(Fruit):
    flavor = em.constant([3, 4])


class FruitTraceType(em.types.experimental.TraceType):
    def __init__(self, fruit_type):
        self.fruit_type = fruit_type

    def is_subtype_of(self, other):
        return (type(other) is FruitTraceType and
                self.fruit_type is other.fruit_type)

    def most_specific_common_supertype(self, others):
        return self if all(self == other for other in others) else None

    def __eq__(self, other):
        return type(other) is FruitTraceType and self.fruit_type == other.fruit_type

    def __hash__(self):
        return hash(self.fruit_type)


class FruitWithTraceType:
    def __tf_tracing_type__(self, context):
        return FruitTraceType(type(self))


class AppleWithTraceType(FruitWithTraceType):
    flavor = em.constant([1, 2])


class MangoWithTraceType(FruitWithTraceType):
    flavor = em.constant([3, 4])


def test_tracing_protocol_lets_instances_of_one_class_share_a_trace():
    fn = em.function(get_mixed_flavor.python_function)
    # A generic TraceType for `Apple` and `Mango` does not match new instances.
    fn(Apple(), Mango())  # Traces a new concrete function
    fn(Apple(), Mango())  # Traces a new concrete function again
    assert fn.experimental_get_tracing_count() == 2
    # (the first Apple is gone by then: its trace was dropped with it)
    assert re.search(r"trace 2 .*argument `fruit_a`: Object\[Apple at 0x[0-9a-f]+, deleted\] "
                     r"-> Object\[Apple at 0x[0-9a-f]+(, deleted)?\]", fn.explain_retrace())
    # Now if you try calling it again:
    fn(AppleWithTraceType(), MangoWithTraceType())  # Traces a new concrete function
    result = fn(AppleWithTraceType(), MangoWithTraceType())  # Re-uses the traced function
    assert fn.experimental_get_tracing_count() == 3
    assert repr(result) == ("<ember.Tensor: shape=(2,), dtype=int32, "
                            "numpy=array([4, 6], dtype=int32)>")


def test_tracing_protocol_under_embers_own_name():
    class Flavoured:
        def __init__(self, flavor):
            self.flavor = em.constant(flavor)

        def __tracing_type__(self, context):
            return FruitTraceType(type(self))

    fn = em.function(get_mixed_flavor.python_function)
    fn(Flavoured([1, 2]), Flavoured([3, 4]))
    # The trace type says every Flavoured is alike, so the traced flavors are reused.
    np.testing.assert_array_equal(fn(Flavoured([0, 0]), Flavoured([0, 0])).numpy(), [4, 6])
    assert fn.experimental_get_tracing_count() == 1
    assert isinstance(FruitTraceType(Apple), em.types.TraceType)


# == 获取具体函数 (obtaining concrete functions) ===============================================

def test_get_concrete_function_traces_without_running(capsys):
    double = make_double()
    print("Obtaining concrete trace")
    double_strings = double.get_concrete_function(em.constant("a"))
    print("Executing traced function")
    print(double_strings(em.constant("a")))
    print(double_strings(a=em.constant("b")))
    assert capsys.readouterr().out == (
        "Obtaining concrete trace\n"
        'Tracing with Tensor("a:0", shape=(), dtype=string)\n'
        "Executing traced function\n"
        "ember.Tensor(b'aa', shape=(), dtype=string)\n"
        "ember.Tensor(b'bb', shape=(), dtype=string)\n")


def test_get_concrete_function_from_a_tensor_spec():
    double = make_double()
    # You can also call get_concrete_function on an InputSpec
    double_strings_from_inputspec = double.get_concrete_function(
        em.TensorSpec(shape=[], dtype=em.string))
    assert str(double_strings_from_inputspec(em.constant("c"))) == (
        "ember.Tensor(b'cc', shape=(), dtype=string)")
    assert double.get_concrete_function(em.constant("x")) is double_strings_from_inputspec


def test_get_concrete_function_from_an_unknown_shape_spec(capsys):
    # The 2020 guide's variant: TensorSpec(shape=None) prints no shape while tracing.
    double = make_double()
    double_strings = double.get_concrete_function(em.TensorSpec(shape=None, dtype=em.string))
    assert capsys.readouterr().out == 'Tracing with Tensor("a:0", dtype=string)\n'
    assert str(double_strings(em.constant("a"))) == "ember.Tensor(b'aa', shape=(), dtype=string)"
    with pytest.raises(em.InvalidArgumentError, match="expected to be a string tensor"):
        double_strings(em.constant(1))


def test_printing_a_concrete_function_shows_its_signature():
    double_strings = make_double().get_concrete_function(em.constant("a"))
    assert str(double_strings) == ("ConcreteFunction double(a)\n"
                                   "  Args:\n"
                                   "    a: string Tensor, shape=()\n"
                                   "  Returns:\n"
                                   "    string Tensor, shape=()")


def test_structured_input_signature_and_outputs():
    double_strings = make_double().get_concrete_function(em.constant("a"))
    assert str(double_strings.structured_input_signature) == (
        "((TensorSpec(shape=(), dtype=em.string, name='a'),), {})")
    assert str(double_strings.structured_outputs) == (
        'Tensor("Identity:0", shape=(), dtype=string)')


def test_concrete_function_rejects_an_incompatible_type():
    double_strings = make_double().get_concrete_function(em.constant("a"))
    with pytest.raises(em.InvalidArgumentError,
                       match=r"cannot compute double as input #0 .*was expected to be a string "
                             r"tensor but is a int32 tensor"):
        double_strings(em.constant(1))


def make_pow():
    @em.function
    def pow(a, b):
        return a ** b
    return pow


def test_concrete_function_keeps_python_arguments_fixed_at_trace_time():
    square = make_pow().get_concrete_function(a=em.TensorSpec(None, em.float32), b=2)
    assert str(square) == ("ConcreteFunction pow(a, b=2)\n"
                           "  Args:\n"
                           "    a: float32 Tensor, shape=<unknown>\n"
                           "  Returns:\n"
                           "    float32 Tensor, shape=<unknown>")
    assert square(em.constant(10.0)) == 100
    assert square(em.constant(10.0), b=2) == 100
    with pytest.raises(TypeError, match=re.escape(
            "ConcreteFunction pow(a, b) was constructed with int value 2 in b, but was called "
            "with int value 3.")):
        square(em.constant(10.0), b=3)


# == 获取计算图 (obtaining graphs) ==============================================================

def test_concrete_function_graph_lists_nodes_and_inputs(capsys):
    double_strings = make_double().get_concrete_function(em.constant("a"))
    capsys.readouterr()
    graph = double_strings.graph
    for node in graph.as_graph_def().node:
        print(f'{node.input} -> {node.name}')
    # TF's return node is an "Identity" op too; the add op is ember.add.
    assert capsys.readouterr().out == "[] -> a\n['a', 'a'] -> add\n['add'] -> Identity\n"
    assert [n.op for n in graph.nodes] == ["Placeholder", "ember.add", "Identity"]


# == 调试 (debugging) ===========================================================================

def test_run_functions_eagerly_runs_python_on_every_call(capsys):
    @em.function
    def f(x):
        print("Python ran with", x)
        return x + 1

    em.config.run_functions_eagerly(True)
    try:
        assert em.config.functions_run_eagerly()
        assert f(em.constant(1)).numpy() == 2
        assert f(em.constant(1)).numpy() == 2
        assert capsys.readouterr().out == (
            "Python ran with ember.Tensor(1, shape=(), dtype=int32)\n" * 2)
        assert f.experimental_get_tracing_count() == 0
    finally:
        em.config.run_functions_eagerly(False)
    assert f(em.constant(1)).numpy() == 2
    f(em.constant(1))
    assert capsys.readouterr().out == 'Python ran with Tensor("x:0", shape=(), dtype=int32)\n'
    assert f.experimental_get_tracing_count() == 1


def test_print_runs_while_tracing_and_em_print_on_every_call(capsys):
    @em.function
    def f(x):
        print("traced", x)
        em.print("executed", x)

    for value in (em.constant(1), em.constant(2), em.constant(3)):
        f(value)
    out, err = capsys.readouterr()
    assert out == 'traced Tensor("x:0", shape=(), dtype=int32)\n'
    assert err == "executed 1\nexecuted 2\nexecuted 3\n"


# == AutoGraph 转换: 在 Python 数据上循环 (looping over Python data) ==========================

def measure_graph_size(f, *args):
    g = f.get_concrete_function(*args).graph
    print("{}({}) contains {} nodes in its graph".format(
        f.__name__, ', '.join(map(str, args)), len(g.as_graph_def().node)))


def test_looping_over_python_data_unrolls_into_the_graph(capsys):
    @em.function
    def train(dataset):
        loss = em.constant(0)
        for x, y in dataset:
            loss += em.abs(y - x)  # Some dummy computation.
        return loss

    small_data = [(1, 1)] * 3
    big_data = [(1, 1)] * 10
    measure_graph_size(train, small_data)
    measure_graph_size(train, big_data)
    assert capsys.readouterr().out == (
        "train([(1, 1), (1, 1), (1, 1)]) contains 11 nodes in its graph\n"
        "train([(1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), (1, 1), "
        "(1, 1)]) contains 32 nodes in its graph\n")
    assert train(small_data).numpy() == 0


# == 限制: 执行 Python 副作用 (executing Python side effects) ==================================

def test_python_side_effects_happen_only_while_tracing(capsys):
    @em.function
    def f(x):
        print("Traced with", x)
        em.print("Executed with", x)

    steps = []
    for value in (1, 1, 2):
        f(value)
        steps.append(capsys.readouterr())
    assert [(s.out, s.err) for s in steps] == [
        ("Traced with 1\n", "Executed with 1\n"),
        ("", "Executed with 1\n"),
        ("Traced with 2\n", "Executed with 2\n")]


def test_py_function_runs_python_on_every_call(capsys):
    # The 2020 guide: tf.py_function is the way out to run Python on every call.
    external_list = []

    def side_effect(x):
        print('Python side effect')
        external_list.append(x)

    @em.function
    def f(x):
        em.py_function(side_effect, inp=[x], Tout=[])

    f(1)
    f(1)
    f(1)
    assert len(external_list) == 3
    # .numpy() call required because py_function casts 1 to em.constant(1)
    assert external_list[0].numpy() == 1
    assert capsys.readouterr().out == "Python side effect\n" * 3
    assert f.experimental_get_tracing_count() == 1


def test_py_function_returns_tensors_computed_in_python():
    @em.function
    def f(x):
        return em.py_function(lambda t: t.numpy() * 10, [x], em.int32)

    assert f(em.constant(2)).numpy() == 20
    assert f(em.constant(3)).numpy() == 30
    assert f.experimental_get_tracing_count() == 1


# -- 更改 Python 全局变量和自由变量 (changing Python globals and free variables) ---------------

def test_appending_to_an_outside_list_happens_once(capsys):
    external_list = []

    @em.function
    def side_effect(x):
        print('Python side effect')
        external_list.append(x)

    side_effect(1)
    side_effect(1)
    side_effect(1)
    # The list append only happened once!
    assert len(external_list) == 1
    assert capsys.readouterr().out == "Python side effect\n"


def test_python_counter_guarding_an_op_records_the_op_unconditionally(capsys):
    class Model:
        def __init__(self):
            self.v = em.Variable(0)
            self.counter = 0

        @em.function
        def __call__(self):
            if self.counter == 0:
                # A python side-effect
                self.counter += 1
                self.v.assign_add(1)
            return self.v

    m = Model()
    for n in range(3):
        print(m().numpy())  # prints 1, 2, 3
    assert capsys.readouterr().out == "1\n2\n3\n"


def test_init_scope_lifts_the_op_out_of_the_function(capsys):
    class Model:
        def __init__(self):
            self.v = em.Variable(0)
            self.counter = 0

        @em.function
        def __call__(self):
            if self.counter == 0:
                # Lifts ops out of function-building graphs
                with em.init_scope():
                    self.counter += 1
                    self.v.assign_add(1)
            return self.v

    m = Model()
    for n in range(3):
        print(m().numpy())  # prints 1, 1, 1
    assert capsys.readouterr().out == "1\n1\n1\n"


# -- 使用 Python 迭代器和生成器 (Python iterators and generators) -----------------------------

def test_python_iterator_advances_only_while_tracing(capsys):
    @em.function
    def buggy_consume_next(iterator):
        em.print("Value:", next(iterator))

    iterator = iter([1, 2, 3])
    buggy_consume_next(iterator)
    # This reuses the first value from the iterator, rather than consuming the next value.
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    assert capsys.readouterr().err == "Value: 1\nValue: 1\nValue: 1\n"
    assert next(iterator) == 2


def test_python_iterator_feeding_a_variable_advances_only_while_tracing(capsys):
    # The 2020 guide's version (注意python的状态).
    external_var = em.Variable(0)

    @em.function
    def buggy_consume_next(iterator):
        external_var.assign_add(next(iterator))
        em.print("Value of external_var:", external_var)

    iterator = iter([0, 1, 2, 3])
    buggy_consume_next(iterator)
    # This reuses the first value from the iterator, rather than consuming the next value.
    buggy_consume_next(iterator)
    buggy_consume_next(iterator)
    assert capsys.readouterr().err == "Value of external_var: 0\n" * 3


# -- tf.function 的所有输出都必须是返回值 (all outputs must be return values) ---------------

x = None  # the guide's global, leaked into by leaky_function


def test_tensor_leaked_through_a_global_has_no_value(capsys):
    @em.function
    def leaky_function(a):
        global x
        x = a + 1  # Bad - leaks local tensor
        return a + 2

    correct_a = leaky_function(em.constant(1))
    print(correct_a.numpy())  # Good - value obtained from function's returns
    try:
        x.numpy()  # Bad - tensor leaked from inside the function, cannot be used here
    except AttributeError as expected:
        print(expected)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "3"
    # TF: 'Tensor' object has no attribute 'numpy'
    assert out[1].startswith("numpy() needs a value, but <ember.Tensor 'add:0' shape=() "
                             "dtype=int32> is out of scope")
    assert "return it from the function instead" in out[1]


def test_leaked_tensor_cannot_be_captured_by_another_function(capsys):
    @em.function
    def leaky_function(a):
        global x
        x = a + 1  # Bad - leaks local tensor
        return x  # Good - uses local tensor

    correct_a = leaky_function(em.constant(1))
    print(correct_a.numpy())  # Good - value obtained from function's returns
    try:
        x.numpy()  # Bad - tensor leaked from inside the function, cannot be used here
    except AttributeError as expected:
        print(expected)

    @em.function
    def captures_leaked_tensor(b):
        b += x  # Bad - `x` is leaked from `leaky_function`
        return b

    with pytest.raises(TypeError, match=r"<ember\.Tensor 'add:0' shape=\(\) dtype=int32> is "
                                        r"out of scope: it was created while tracing "
                                        r"'leaky_function' \(at .*test_guide_examples\.py:\d+"):
        captures_leaked_tensor(em.constant(2))
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "2"
    assert "is out of scope" in out[1]


def test_tensors_leaked_into_outside_objects_are_unusable():
    class MyClass:
        def __init__(self):
            self.field = None

    external_list = []
    external_object = MyClass()

    @em.function
    def leaky_function():
        a = em.constant(1) + 0
        external_list.append(a)  # Bad - leaks tensor
        external_object.field = a  # Bad - leaks tensor
        return em.constant(0)

    leaky_function()
    for leaked in (external_list[0], external_object.field):
        with pytest.raises(AttributeError, match="is out of scope"):
            leaked.numpy()
        with pytest.raises(TypeError, match="is out of scope"):
            em.add(leaked, 1)


# -- 不支持递归 tf.functions (recursive Functions are not supported) -------------------------

def test_recursion_over_tensors_raises_recursion_error():
    @em.function
    def recursive_fn(n):
        # The guide's `if n > 0:` on a tensor needs AutoGraph; em.cond is what it becomes.
        return em.cond(n > 0, lambda: recursive_fn(n - 1), lambda: em.constant(1))

    with pytest.raises(RecursionError, match=r"em\.function 'recursive_fn' calls itself with "
                                             r"the same input types .* while it is being "
                                             r"traced.*em\.while_loop"):
        recursive_fn(em.constant(5))  # Bad - maximum recursion error.
    assert recursive_fn.experimental_get_tracing_count() == 0


def test_recursion_over_python_values_traces_once_per_value(capsys):
    @em.function
    def recursive_fn(n):
        if n > 0:
            print('tracing')
            return recursive_fn(n - 1)
        else:
            return 1

    with pytest.warns(em.RetracingWarning, match="recursive_fn"):
        result = recursive_fn(5)  # Warning - multiple tracings
    assert capsys.readouterr().out == "tracing\n" * 5
    assert repr(result) == "<ember.Tensor: shape=(), dtype=int32, numpy=1>"
    assert recursive_fn.experimental_get_tracing_count() == 6


# == 已知问题 (known issues) ===================================================================

foo = None  # the guide's global


def test_functions_do_not_see_later_changes_to_python_globals(capsys):
    global foo

    @em.function
    def buggy_add():
        return 1 + foo

    @em.function
    def recommended_add(foo):
        return 1 + foo

    foo = 1
    print("Buggy:", buggy_add())
    print("Correct:", recommended_add(foo))
    print("Updating the value of `foo` to 100!")
    foo = 100
    print("Buggy:", buggy_add())  # Did not change!
    print("Correct:", recommended_add(foo))
    assert capsys.readouterr().out == (
        "Buggy: ember.Tensor(2, shape=(), dtype=int32)\n"
        "Correct: ember.Tensor(2, shape=(), dtype=int32)\n"
        "Updating the value of `foo` to 100!\n"
        "Buggy: ember.Tensor(2, shape=(), dtype=int32)\n"
        "Correct: ember.Tensor(101, shape=(), dtype=int32)\n")


def test_a_global_variable_is_read_on_every_call(capsys):
    global foo

    @em.function
    def variable_add():
        return 1 + foo

    foo = em.Variable(1)
    print("Variable:", variable_add())
    print("Updating the value of `foo` to 100!")
    foo.assign(100)
    print("Variable:", variable_add())
    assert capsys.readouterr().out == (
        "Variable: ember.Tensor(2, shape=(), dtype=int32)\n"
        "Updating the value of `foo` to 100!\n"
        "Variable: ember.Tensor(101, shape=(), dtype=int32)\n")


class SimpleModel:
    def __init__(self):
        # These values are *not* em.Variables.
        self.bias = 0.
        self.weight = 2.


def evaluate(model, x):
    return model.weight * x + model.bias


def test_mutating_a_python_object_argument_does_not_retrace():
    evaluate_fn = em.function(evaluate)
    simple_model = SimpleModel()
    x = em.constant(10.)
    assert str(evaluate_fn(simple_model, x)) == "ember.Tensor(20.0, shape=(), dtype=float32)"
    # Adding bias!
    simple_model.bias += 5.0
    # Didn't change :(
    assert str(evaluate_fn(simple_model, x)) == "ember.Tensor(20.0, shape=(), dtype=float32)"
    assert evaluate_fn.experimental_get_tracing_count() == 1


def test_new_function_per_modified_object_sees_the_change():
    x = em.constant(10.)
    new_model = SimpleModel()
    evaluate_no_bias = em.function(evaluate).get_concrete_function(new_model, x)
    # Don't pass in `new_model`, `Function` already captured its state during tracing.
    result = evaluate_no_bias(x)
    assert str(result) == "ember.Tensor(20.0, shape=(), dtype=float32)"
    # Adding bias!
    new_model.bias += 5.0
    # Create new Function and ConcreteFunction since you modified new_model.
    evaluate_with_bias = em.function(evaluate).get_concrete_function(new_model, x)
    # Don't pass in `new_model`.
    assert str(evaluate_with_bias(x)) == "ember.Tensor(25.0, shape=(), dtype=float32)"
    assert str(evaluate_no_bias(x)) == "ember.Tensor(20.0, shape=(), dtype=float32)"


def test_variables_as_object_attributes_update_without_retracing():
    class BetterModel:
        def __init__(self):
            self.bias = em.Variable(0.)
            self.weight = em.Variable(2.)

    evaluate_fn = em.function(evaluate)
    better_model = BetterModel()
    x = em.constant(10.)
    assert str(evaluate_fn(better_model, x)) == "ember.Tensor(20.0, shape=(), dtype=float32)"
    # Adding bias!
    better_model.bias.assign_add(5.0)  # Note: instead of better_model.bias += 5
    # This works!
    assert str(evaluate_fn(better_model, x)) == "ember.Tensor(25.0, shape=(), dtype=float32)"
    assert evaluate_fn.experimental_get_tracing_count() == 1


# -- 创建 tf.Variables (creating variables) ----------------------------------------------------

def test_creating_a_variable_on_every_call_raises_value_error():
    @em.function
    def f(x):
        v = em.Variable(1.0)
        return v

    with pytest.raises(ValueError, match=r"em\.function only supports singleton em\.Variables "
                                         r"created on the first call") as e:
        f(1.0)
    assert "test_guide_examples.py" in str(e.value)  # where the variable was created
    assert "create it outside the em.function" in str(e.value)


def test_variable_created_once_behind_a_none_check_works():
    class Count:
        def __init__(self):
            self.count = None

        @em.function
        def __call__(self):
            if self.count is None:
                self.count = em.Variable(0)
            return self.count.assign_add(1)

    c = Count()
    assert str(c()) == "ember.Tensor(1, shape=(), dtype=int32)"
    assert str(c()) == "ember.Tensor(2, shape=(), dtype=int32)"


def test_variable_created_on_a_later_trace_raises_value_error():
    @em.function
    def f(x, make_new):
        if make_new:
            return em.Variable(x).read_value()
        return em.constant(x)

    assert f(1.0, False).numpy() == 1.0
    with pytest.raises(ValueError, match=r"tried to create variables on non-first call.*"
                                         r"this trace of 'f' is not its first"):
        f(2.0, True)


class LazyAccumulator:
    """Builds its variable on first use, as a Keras optimizer builds its slots."""

    def __init__(self, rate):
        self.rate = rate
        self.total = None

    def apply(self, value):
        if self.total is None:
            self.total = em.Variable(em.zeros_like(value))
        self.total.assign_add(value * self.rate)


def test_second_lazily_built_object_in_one_function_raises_value_error():
    # The guide's "multiple Keras optimizers" example, without gradients.
    acc1, acc2 = LazyAccumulator(1.0), LazyAccumulator(2.0)

    @em.function
    def train_step(w, x, accumulator):
        accumulator.apply(w * x)

    w = em.Variable(2.)
    x = em.constant([-1.])
    train_step(w, x, acc1)
    with pytest.raises(ValueError, match="only supports singleton em.Variables created on "
                                         "the first call"):
        train_step(w, x, acc2)  # Calling `train_step` with a different accumulator


def test_one_function_per_lazily_built_object_works():
    acc1, acc2 = LazyAccumulator(1.0), LazyAccumulator(2.0)

    def train_step(w, x, accumulator):  # Not an em.function.
        accumulator.apply(w * x)

    w = em.Variable(2.)
    x = em.constant([-1.])
    # Make a new Function and ConcreteFunction for each accumulator.
    train_step_1 = em.function(train_step).get_concrete_function(w, x, acc1)
    train_step_2 = em.function(train_step).get_concrete_function(w, x, acc2)
    for i in range(10):
        if i % 2 == 0:
            train_step_1(w, x)  # `acc1` is not used as a parameter.
        else:
            train_step_2(w, x)  # `acc2` is not used as a parameter.
    np.testing.assert_array_equal(acc1.total.numpy(), [-10.0])
    np.testing.assert_array_equal(acc2.total.numpy(), [-20.0])


# == 2020 guide: 变量 (variables) ===============================================================

def test_creating_and_updating_a_variable_every_call_raises_value_error():
    @em.function
    def f(x):
        v = em.Variable(1.0)
        v.assign_add(x)
        return v

    with pytest.raises(ValueError, match="tried to create variables on non-first call"):
        f(1.0)


def test_updating_a_variable_created_outside_is_unambiguous():
    v = em.Variable(1.0)

    @em.function
    def f(x):
        return v.assign_add(x)

    assert str(f(1.0)) == "ember.Tensor(2.0, shape=(), dtype=float32)"
    assert str(f(2.0)) == "ember.Tensor(4.0, shape=(), dtype=float32)"
    assert v.numpy() == 4.0


def test_variable_created_only_on_the_first_call_works():
    class C:
        pass

    obj = C()
    obj.v = None

    @em.function
    def g(x):
        if obj.v is None:
            obj.v = em.Variable(1.0)
        return obj.v.assign_add(x)

    first, second = g(1.0), g(2.0)
    assert str(first) == "ember.Tensor(2.0, shape=(), dtype=float32)"
    assert str(second) == "ember.Tensor(4.0, shape=(), dtype=float32)"


def test_variables_initialised_from_arguments_and_other_variables():
    state = []

    @em.function
    def fn(x):
        if not state:
            state.append(em.Variable(2.0 * x))
            state.append(em.Variable(state[0] * 3.0))
        return state[0] * x * state[1]

    assert str(fn(em.constant(1.0))) == "ember.Tensor(12.0, shape=(), dtype=float32)"
    assert str(fn(em.constant(3.0))) == "ember.Tensor(36.0, shape=(), dtype=float32)"
    assert [v.numpy() for v in state] == [2.0, 6.0]
    assert fn.experimental_get_tracing_count() == 1


# == tf.wiki: @tf.function 内在机制 (how tf.function works) =====================================

def test_wiki_quiz_traces_per_dtype_and_per_python_value(capsys):
    @em.function
    def f(x):
        print("The function is running in Python")
        em.print(x)

    def call(x):
        f(x)
        captured = capsys.readouterr()
        return ("py " if captured.out else "") + captured.err.strip()

    a = em.constant(1, dtype=em.int32)
    b = em.constant(2, dtype=em.int32)
    b_ = np.array(2, dtype=np.int32)
    c = em.constant(0.1, dtype=em.float32)
    d = em.constant(0.2, dtype=em.float32)
    # numpy arrays convert to tensors, so f(b_) reuses the int32 trace
    assert [call(v) for v in (a, b, b_, c, d)] == ["py 1", "2", "2", "py 0.1", "0.2"]
    with pytest.warns(em.RetracingWarning):
        results = [call(v) for v in (d, 1, 2, 1, 0.1, 0.2, 0.1)]
    assert results == ["0.2", "py 1", "py 2", "1", "py 0.1", "py 0.2", "0.1"]
    assert f.experimental_get_tracing_count() == 6


def test_wiki_quiz_variable_updates_persist_outside_the_function():
    a = em.Variable(0.0)

    @em.function
    def g():
        a.assign(a + 1.0)
        return a

    assert [str(g()) for _ in range(3)] == [
        "ember.Tensor(1.0, shape=(), dtype=float32)", "ember.Tensor(2.0, shape=(), dtype=float32)",
        "ember.Tensor(3.0, shape=(), dtype=float32)"]
    assert repr(a) == "<ember.Variable 'Variable:0' shape=() dtype=float32, numpy=3.0>"
