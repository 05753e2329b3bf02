"""The viz tests' fixture: a small model with gradients, whose embedding lookup gives an
IndexedSlices gradient (built by vizhelp.build_model)."""
import pytest

from vizhelp import build_model


@pytest.fixture
def model():
    return build_model()
