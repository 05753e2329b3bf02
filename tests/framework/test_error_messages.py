"""One test per class of error message: each names the op (type, and node name in a graph), the
input, what is wrong and, where there is one, the fix; graph-mode errors carry the Operation."""
import numpy as np
import pytest

import segflow as sf
from segflow.framework.op_def import list_ops
from segflow.framework import ops


def _message(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.value, str(info.value)


def test_bad_value_names_op_input_position_and_range_eager_and_graph():
    e, text = _message(lambda: sf.math.unsorted_segment_sum([1.0, 2.0], [0, 7], 3))
    assert isinstance(e, sf.errors.InvalidArgumentError)
    assert text.startswith("UnsortedSegmentSum: input 'segment_ids':") and "segment_ids[1] = 7" in text
    assert "[0, 3)" in text
    with ops.Graph().as_default():
        ids = sf.compat.v1.placeholder(sf.int32, [None])
        y = sf.math.unsorted_segment_sum(sf.constant([1.0, 2.0]), ids, 3, name="my_sum")
        with sf.compat.v1.Session() as sess:
            e, text = _message(lambda: sess.run(y, {ids: [0, 7]}))
    assert isinstance(e, sf.errors.InvalidArgumentError)
    assert text.startswith("UnsortedSegmentSum 'my_sum': input 'segment_ids':")
    assert e.op is y.op          # as TF's OpError.op


def test_dtype_mismatch_names_both_inputs_and_dtypes():
    e, text = _message(lambda: sf.constant([1.0, 2.0]) + sf.constant([1, 2]))
    assert isinstance(e, sf.errors.InvalidArgumentError) and isinstance(e, TypeError)
    assert "AddV2" in text and "int32" in text and "float32" in text and "'x'" in text and "'y'" in text


def test_disallowed_dtype_names_the_attr_and_the_allowed_ones():
    e, text = _message(lambda: sf.math.unsorted_segment_sum([1.0], [0.0], 1))
    assert "Tindices" in text and "int32" in text and "float32" in text and "segment_ids" in text


def test_shape_errors_name_both_shapes():
    _, text = _message(lambda: sf.matmul(sf.constant([[1.0, 2.0]]), sf.constant([[1.0, 2.0]])))
    assert text.startswith("MatMul:") and "(1, 2)" in text
    _, text = _message(lambda: sf.reshape(sf.constant([1.0, 2.0]), [3]))
    assert text.startswith("Reshape: input 'shape':") and "2 elements" in text and "[3]" in text


def test_graph_building_errors_name_the_node():
    with ops.Graph().as_default():
        e, text = _message(lambda: sf.concat([sf.constant([1.0]), sf.constant([[1.0]])], 0, name="joined"))
    assert isinstance(e, ValueError) and "ConcatV2 'joined'" in text and "(1, 1)" in text


def test_out_of_memory_is_resource_exhausted_with_the_shape_and_size():
    e, text = _message(lambda: sf.math.unsorted_segment_sum(np.ones((2, 1000), np.float32), [0, 1], 10**9))
    assert isinstance(e, sf.errors.ResourceExhaustedError)
    assert "UnsortedSegmentSum" in text and "[1000000000, 1000]" in text and "float32" in text


def test_failed_variable_update_names_the_variable_and_leaves_it_unchanged():
    v = sf.Variable([1.0, 2.0], name="weights")
    e, text = _message(lambda: v.assign([1.0, 2.0, 3.0]))
    assert isinstance(e, sf.errors.InvalidArgumentError) and "'weights'" in text and "(3,)" in text
    np.testing.assert_array_equal(v.numpy(), [1.0, 2.0])


def test_missing_gradient_names_the_op_and_the_fix():
    if "ErrorsNoGrad" not in list_ops():
        sf.register_op("ErrorsNoGrad", inputs=("x",), attrs={"T": "x"},
                       infer=lambda op, x: [sf.TensorSpec(x.dtype, x.shape)], kernel=lambda x: x * 2)
    x = sf.constant([1.0])
    with sf.GradientTape() as tape:
        tape.watch(x)
        y = sf.apply_op("ErrorsNoGrad", x)
    e, text = _message(lambda: tape.gradient(y, x))
    assert isinstance(e, LookupError) and "ErrorsNoGrad" in text
    assert '@ops.RegisterGradient("ErrorsNoGrad")' in text


def test_unknown_op_type_is_not_found():
    e, text = _message(lambda: sf.apply_op("NoSuchOpType", sf.constant(1.0)))
    assert isinstance(e, sf.errors.NotFoundError) and "NoSuchOpType" in text
