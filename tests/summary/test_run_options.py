"""RunOptions / RunMetadata (a traced Session.run fills step_stats) and ConfigProto / GPUOptions,
accepted by Session: fields, defaults, nesting and protobuf's errors for unknown fields."""
import pytest

import segflow as sf

v1 = sf.compat.v1


def test_messages_fields_defaults_and_errors():
    ro = v1.RunOptions()
    assert (ro.trace_level, ro.timeout_in_ms) == (0, 0)
    assert (v1.RunOptions.NO_TRACE, v1.RunOptions.SOFTWARE_TRACE, v1.RunOptions.HARDWARE_TRACE,
            v1.RunOptions.FULL_TRACE) == (0, 1, 2, 3)
    assert v1.RunOptions.TraceLevel.Name(3) == "FULL_TRACE" and v1.RunOptions.TraceLevel.Value("NO_TRACE") == 0
    ro = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE, timeout_in_ms=500)
    assert ro.trace_level == 3 and ro.timeout_in_ms == 500 and ro.HasField("timeout_in_ms")
    with pytest.raises(ValueError, match='has no "bogus" field'):
        v1.RunOptions(bogus=1)
    with pytest.raises(AttributeError):
        ro.bogus = 1
    with pytest.raises(TypeError, match="trace_level"):
        v1.RunOptions(trace_level="full")
    config = v1.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                            gpu_options=v1.GPUOptions(allow_growth=True), device_count={"GPU": 0})
    assert config.gpu_options.allow_growth is True and config.device_count == {"GPU": 0}
    config.gpu_options.per_process_gpu_memory_fraction = 0.5
    config.graph_options.optimizer_options.global_jit_level = v1.OptimizerOptions.ON_1
    assert config.graph_options.optimizer_options.global_jit_level == 1
    assert v1.ConfigProto().gpu_options.allow_growth is False          # each message has its own nested ones
    assert v1.ConfigProto(gpu_options={"allow_growth": True}) == v1.ConfigProto(
        gpu_options=v1.GPUOptions(allow_growth=True))
    with pytest.raises(TypeError, match="gpu_options"):
        v1.ConfigProto(gpu_options=3)
    md = v1.RunMetadata()
    assert list(md.step_stats.dev_stats) == [] and list(md.partition_graphs) == []


def test_session_accepts_config_and_a_traced_run_fills_step_stats():
    with sf.Graph().as_default() as g:
        x = v1.placeholder(sf.float32, [3], name="x")
        v = sf.Variable([1.0, 1.0, 1.0], name="v")
        y = sf.reduce_sum(x * v, name="y")
        sf.math.exp(y, name="z")     # built, never fetched: not traced
        config = v1.ConfigProto(allow_soft_placement=True, gpu_options=v1.GPUOptions(allow_growth=True))
        with v1.Session(graph=g, config=config) as sess:
            sess.run(v1.global_variables_initializer())
            plain = sess.run(y, {x: [1.0, 2.0, 3.0]})
            md = v1.RunMetadata()
            traced = sess.run(y, {x: [1.0, 2.0, 3.0]}, options=v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE),
                              run_metadata=md)
            assert traced == plain == 6.0
            (dev,) = md.step_stats.dev_stats
            assert dev.device == "/job:localhost/replica:0/task:0/device:CPU:0"
            names = [n.node_name for n in dev.node_stats]
            assert "y" in names and "z" not in names and "x" not in names       # what ran, not what was fed
            for n in dev.node_stats:
                assert n.all_start_micros > 0 and 0 <= n.op_end_rel_micros == n.all_end_rel_micros
                assert n.all_end_rel_nanos >= 0 and n.timeline_label.startswith(f"{n.node_name} = ")
            assert [n for n in dev.node_stats if n.node_name == "y"][0].timeline_label.startswith("y = Sum(")
            untraced = v1.RunMetadata()
            sess.run(y, {x: [1.0, 2.0, 3.0]}, options=v1.RunOptions(), run_metadata=untraced)
            assert list(untraced.step_stats.dev_stats) == []
            sess.run(y, {x: [1.0, 2.0, 3.0]}, options=v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE))
            with pytest.raises(TypeError, match="options must be a RunOptions"):
                sess.run(y, {x: [1.0, 2.0, 3.0]}, options={"trace_level": 3})
            with pytest.raises(TypeError, match="run_metadata must be a RunMetadata"):
                sess.run(y, {x: [1.0, 2.0, 3.0]}, run_metadata=[])
            # a traced run that fails still raises the op's error
            with pytest.raises(sf.errors.InvalidArgumentError):
                sess.run(sf.debugging.check_numerics(sf.math.log(x - 10.0), "neg"), {x: [1.0, 2.0, 3.0]},
                         options=v1.RunOptions(trace_level=3), run_metadata=v1.RunMetadata())
