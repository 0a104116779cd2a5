"""Fixtures of the dataset tests (helpers live in dsutil.py)."""
import pytest

from dsutil import write_mnist
from msrt.dataset import config, datasets


@pytest.fixture
def mnist_dir(tmp_path):
    """A directory with 20 train and 10 test images (plain files)."""
    return write_mnist(tmp_path / "mnist")


@pytest.fixture
def make_mnist(tmp_path):
    """write_mnist into a fresh subdirectory of tmp_path."""
    counter = [0]

    def make(**kwargs):
        counter[0] += 1
        return write_mnist(tmp_path / f"mnist{counter[0]}", **kwargs)

    return make


@pytest.fixture(autouse=True)
def _fresh_seed():
    """Each test starts with no pipeline seed set, as a fresh process does."""
    config._reset()
    yield
    config._reset()


@pytest.fixture
def small_blocks(monkeypatch):
    """Sources read 7 rows per block, so small datasets cross block boundaries."""
    monkeypatch.setattr(datasets, "_BLOCK_ROWS", 7)
