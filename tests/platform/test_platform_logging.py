"""compat.v1.logging and sf.get_logger: TF's logging functions on Python's logging, logger "segflow"."""
import logging

import pytest

import segflow as sf

tf_logging = sf.compat.v1.logging


@pytest.fixture
def logger():
    log = sf.get_logger()
    saved = log.level
    yield log
    log.setLevel(saved)


def test_the_logger_and_levels(logger):
    assert logger is logging.getLogger("segflow") and sf.compat.v1.get_logger is sf.get_logger
    assert (tf_logging.DEBUG, tf_logging.INFO, tf_logging.WARN, tf_logging.WARNING, tf_logging.ERROR,
            tf_logging.FATAL) == (logging.DEBUG, logging.INFO, logging.WARNING, logging.WARNING, logging.ERROR,
                                  logging.FATAL)
    tf_logging.set_verbosity(tf_logging.ERROR)
    assert tf_logging.get_verbosity() == logging.ERROR == logger.level
    tf_logging.set_verbosity(tf_logging.DEBUG)
    assert tf_logging.get_verbosity() == logging.DEBUG


def test_each_function_logs_at_its_level(logger, caplog):
    caplog.set_level(logging.DEBUG, logger="segflow")
    tf_logging.debug("d %d", 1)
    tf_logging.info("i %s", "x")
    tf_logging.warn("w1")
    tf_logging.warning("w2")
    tf_logging.error("e")
    tf_logging.fatal("f")            # logs; the program goes on
    tf_logging.log(tf_logging.INFO, "l")
    tf_logging.vlog(tf_logging.WARN, "v %d", 2)
    tf_logging.log_if(tf_logging.ERROR, "yes", True)
    tf_logging.log_if(tf_logging.ERROR, "no", False)
    tf_logging.TaskLevelStatusMessage("status")
    got = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    assert got == [("segflow", 10, "d 1"), ("segflow", 20, "i x"), ("segflow", 30, "w1"), ("segflow", 30, "w2"),
                   ("segflow", 40, "e"), ("segflow", 50, "f"), ("segflow", 20, "l"), ("segflow", 30, "v 2"),
                   ("segflow", 40, "yes"), ("segflow", 40, "status")]
    assert {r.filename for r in caplog.records} == {"test_platform_logging.py"}   # the caller, not segflow
    assert {r.funcName for r in caplog.records} == {"test_each_function_logs_at_its_level"}
    tf_logging.flush()


def test_verbosity_filters(logger, caplog):
    caplog.set_level(logging.DEBUG)
    tf_logging.set_verbosity(tf_logging.WARN)
    tf_logging.debug("hidden")
    tf_logging.info("hidden")
    tf_logging.warning("shown")
    sf.get_logger().error("shown too")
    assert [r.getMessage() for r in caplog.records if r.name == "segflow"] == ["shown", "shown too"]


def test_log_every_n_and_log_first_n_count_per_call_site(logger, caplog):
    caplog.set_level(logging.INFO, logger="segflow")
    for i in range(7):
        tf_logging.log_every_n(tf_logging.INFO, "every %d", 3, i)
        tf_logging.log_first_n(tf_logging.INFO, "first %d", 2, i)
    tf_logging.log_first_n(tf_logging.INFO, "other line %d", 2, 9)      # its own count
    assert [r.getMessage() for r in caplog.records] == ["every 0", "first 0", "first 1", "every 3", "every 6",
                                                        "other line 9"]
