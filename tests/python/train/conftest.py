"""Fixtures for Model / callback tests."""
import pytest

from .mnistdata import write_mnist


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a longer test on real data (still part of `make test`)")


@pytest.fixture
def mnist_dir(tmp_path):
    return write_mnist(tmp_path / "mnist")
