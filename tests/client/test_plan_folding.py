"""A plan computes its constant-only steps once, when it is made (shapes, counts, index vectors),
with the semantics of computing them at every run."""
import numpy as np
import pytest

import segflow as sf
from segflow._core.session import make_plan


def test_constant_steps_are_folded_and_fetches_are_fresh_copies():
    with sf.Graph().as_default():
        a = sf.constant([1.0, 2.0])
        b = a * 3.0 + 1.0                         # constants only: folded
        p = sf.compat.v1.placeholder(sf.float32, [2])
        c = p * b                                 # needs the feed: runs each time
        plan = make_plan([b, c], [], [p])
        kinds = [step[0].type for step in plan.steps]
        assert kinds == ["Mul"]                   # only the op that reads the placeholder is left
        with sf.compat.v1.Session() as sess:
            first = sess.run(b)
            first[0] = -100.0                     # a caller writing into a result ...
            np.testing.assert_array_equal(sess.run(b), [4.0, 7.0])      # ... changes no later run
            np.testing.assert_array_equal(sess.run(c, {p: [1.0, 2.0]}), [4.0, 14.0])


def test_random_and_stateful_ops_are_never_folded():
    with sf.Graph().as_default():
        r = sf.random.uniform([1000], seed=1)
        with sf.compat.v1.Session() as sess:
            assert not np.array_equal(sess.run(r), sess.run(r))


def test_a_failing_constant_step_still_fails_at_run_time():
    with sf.Graph().as_default():
        x = sf.constant([1.0, np.nan])
        checked = sf.debugging.check_numerics(x, "found")
        with sf.compat.v1.Session() as sess:
            with pytest.raises(sf.errors.InvalidArgumentError, match="found"):
                sess.run(checked)


def test_large_constants_are_computed_each_run():
    with sf.Graph().as_default():
        big = sf.zeros([10000]) + 1.0             # more than the folding limit: not kept by the plan
        plan = make_plan([big], [], [])
        assert any(step[0].type == "AddV2" for step in plan.steps)
        with sf.compat.v1.Session() as sess:
            assert sess.run(big).sum() == 10000.0


def test_shape_and_size_of_static_shapes_fold_even_with_unknown_values():
    with sf.Graph().as_default():
        p = sf.compat.v1.placeholder(sf.float32, [2, 3])
        n = sf.cast(sf.size(p), sf.float32) * 2.0        # known from the static shape alone
        q = sf.compat.v1.placeholder(sf.float32, [None, 3])
        m = sf.size(q)                                    # not known until q is fed
        assert make_plan([n], [], [p]).steps == []
        assert [s[0].type for s in make_plan([m], [], [q]).steps] == ["Size"]
        with sf.compat.v1.Session() as sess:
            assert sess.run(n, {p: np.zeros((2, 3))}) == 12.0
            assert sess.run(m, {q: np.zeros((5, 3))}) == 15
