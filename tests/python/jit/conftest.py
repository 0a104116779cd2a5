"""Fixtures of the graph-mode tests."""
import pytest

import msrt as ms


@pytest.fixture
def graph_mode():
    ms.set_context(mode=ms.GRAPH_MODE)
    yield
    ms.set_context(mode=ms.PYNATIVE_MODE)
