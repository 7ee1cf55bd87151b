"""The public functions users reach for first (issue 13), each with TensorFlow's name: every
one must exist, and every one is called by the compiled-vs-eager differential programs
(tests/fuzz/ops_catalogue.py) unless `NOT_FUZZED` says why not."""

import pathlib
import sys

import pytest

import ember as em

sys.path.insert(0, str(pathlib.Path(__file__).parent / "fuzz"))
from ops_catalogue import RECIPES  # noqa: E402

API = """
em.cumsum em.cumprod em.math.cumsum em.math.cumprod em.clip_by_value em.clip_by_norm em.tile
em.split em.unstack em.stack em.reverse em.roll em.eye em.linspace em.pad em.meshgrid
em.repeat
em.einsum em.tensordot em.sort em.argsort em.math.top_k em.unique em.searchsorted
em.gather_nd em.scatter_nd em.tensor_scatter_nd_update em.tensor_scatter_nd_add
em.tensor_scatter_nd_max em.math.segment_sum em.math.segment_mean em.math.segment_max
em.math.unsorted_segment_sum em.boolean_mask
em.math.erf em.math.erfc em.math.lgamma em.math.digamma em.math.reduce_logsumexp
em.math.log_softmax em.math.softplus em.math.is_nan em.math.is_inf em.math.is_finite
em.math.floormod em.math.truncatediv em.math.bincount em.math.count_nonzero em.math.reduce_std
em.math.reduce_variance em.math.squared_difference em.math.xlogy
em.nn.relu6 em.nn.leaky_relu em.nn.elu em.nn.selu em.nn.gelu em.nn.silu em.nn.softmax
em.nn.log_softmax em.nn.softmax_cross_entropy_with_logits
em.nn.sparse_softmax_cross_entropy_with_logits em.nn.sigmoid_cross_entropy_with_logits
em.nn.l2_normalize em.nn.moments em.nn.batch_normalization em.nn.dropout em.nn.conv1d
em.nn.conv2d_transpose em.nn.depthwise_conv2d em.nn.avg_pool em.nn.max_pool em.nn.avg_pool1d
em.nn.max_pool1d em.nn.avg_pool2d em.nn.max_pool2d em.nn.bias_add
em.linalg.norm em.linalg.matmul em.linalg.matvec em.linalg.diag em.linalg.diag_part
em.linalg.trace em.linalg.band_part em.linalg.inv em.linalg.solve em.linalg.cholesky
em.linalg.triangular_solve em.linalg.qr
em.linalg.eigh em.linalg.eigvalsh em.linalg.svd em.linalg.pinv em.linalg.lstsq
em.linalg.matrix_rank
em.random.Generator em.random.uniform em.random.normal em.random.truncated_normal
em.random.categorical em.random.shuffle em.random.stateless_uniform em.random.stateless_normal
em.random.stateless_truncated_normal
em.debugging.assert_equal em.debugging.assert_less em.debugging.assert_all_finite
em.debugging.check_numerics
em.experimental.dlpack.from_dlpack em.experimental.dlpack.to_dlpack
em.complex64 em.complex128 em.math.real em.math.imag em.math.conj em.math.angle
em.signal.fft em.signal.ifft em.signal.rfft
em.add_n em.math.add_n em.clip_by_global_norm em.unique_with_counts em.linalg.matrix_transpose
em.linalg.adjoint em.math.reduce_euclidean_norm em.math.cumulative_logsumexp
em.is_tensor em.sequence_mask em.nn.l2_loss em.switch_case em.case em.linalg.global_norm
""".split()

# Called by other tests instead of the random programs, and why.
NOT_FUZZED = {
    "em.random.Generator": "stateful: tests/frontend/test_random.py compares eager and compiled",
    "em.random.uniform": "stateful (global generator): tests/frontend/test_random.py",
    "em.random.normal": "stateful (global generator): tests/frontend/test_random.py",
    "em.random.truncated_normal": "stateful (global generator): tests/frontend/test_random.py",
    "em.random.categorical": "stateful (global generator): tests/frontend/test_random.py",
    "em.random.shuffle": "stateful (global generator): tests/frontend/test_random.py",
    "em.nn.dropout": "random without a seed: tests/frontend/test_random.py",
    "em.debugging.assert_equal": "no result: tests/frontend/test_composites.py raises eager "
                                 "and compiled",
    "em.debugging.assert_less": "no result: tests/frontend/test_composites.py",
    "em.experimental.dlpack.from_dlpack": "host-side conversion, not an op",
    "em.experimental.dlpack.to_dlpack": "host-side conversion, not an op",
    "em.complex64": "a dtype", "em.complex128": "a dtype", "em.stack": "an existing op",
    "em.pad": "an existing op (its modes: tests/dialects/test_eager_vs_numpy.py)",
    "em.linalg.matmul": "an existing op", "em.nn.softmax": "an existing op",
    "em.nn.log_softmax": "an existing op", "em.math.log_softmax": "an existing op",
    "em.math.is_nan": "an existing op", "em.math.is_finite": "an existing op",
    "em.math.floormod": "an existing op", "em.nn.max_pool2d": "an existing op",
    "em.nn.avg_pool2d": "an existing op",
    "em.is_tensor": "a Python predicate on types: tests/frontend/test_tensor_like.py",
    "em.sequence_mask": "tests/frontend/test_sequence_mask.py compares eager and compiled "
                        "(static and ? dims) with numpy; not in the fixed-seed catalogue",
    "em.nn.l2_loss": "tests/frontend/test_l2_loss.py compares eager and compiled (static "
                     "and ? dims) with numpy; not in the fixed-seed catalogue",
    "em.switch_case": "control flow taking functions: tests/frontend/test_switch_case.py "
                      "compares eager, traced and compiled",
    "em.case": "control flow taking functions: tests/frontend/test_case_predicates.py",
    **{f"em.linalg.{name}": "vectors defined up to sign: tests/frontend/"
       "test_linalg_spectral.py compares eager and compiled with numpy by reconstruction"
       for name in ("eigh", "eigvalsh", "svd", "pinv", "lstsq", "matrix_rank")},
    "em.linalg.global_norm": "clip_by_global_norm's norm (fuzzed through it): "
                             "tests/frontend/test_misc_composites.py, eager and compiled",
}


def _lookup(path: str):
    obj = em
    for part in path.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def test_every_function_exists():
    missing = [name for name in API if _lookup(name) is None]
    assert not missing, f"{len(missing)} of {len(API)} missing: {' '.join(missing)}"


def test_every_function_is_in_the_differential_programs():
    fuzzed = {r.name for r in RECIPES}
    absent = [name for name in API if name not in fuzzed and name not in NOT_FUZZED
              and _lookup(name) is not None]
    assert not absent, f"not in tests/fuzz/ops_catalogue.py: {' '.join(absent)}"


@pytest.mark.parametrize("name", sorted(NOT_FUZZED))
def test_exemptions_name_existing_functions(name):
    assert name in API
