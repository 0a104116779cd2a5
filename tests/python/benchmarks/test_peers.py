"""benchmarks/peers.py: the PyTorch peer runs with PyTorch's own OpenMP defaults, whatever msrt's side asked for.
Not a timing test."""
import importlib
import pathlib
import sys
import textwrap

import pytest

BENCH = pathlib.Path(__file__).resolve().parents[3] / "benchmarks"

pytest.importorskip("torch")
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
peers = importlib.import_module("peers")
LIBGOMP_DEFAULT_SPIN = 300000


def test_the_peer_spins_as_libgomp_does_by_default_when_the_caller_waits_passively(monkeypatch):
    monkeypatch.setenv("OMP_WAIT_POLICY", "PASSIVE")  # what msrt's side of a benchmark runs with
    assert peers.in_peer(peers.openmp_spin_count) == LIBGOMP_DEFAULT_SPIN


def test_a_peer_module_that_imports_msrt_leaves_pytorchs_defaults(tmp_path, monkeypatch):
    # msrt's import asks for passive waits before its libgomp loads; in the peer PyTorch's libgomp is loaded first.
    (tmp_path / "peer_module_importing_msrt.py").write_text(textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(BENCH)!r})
        import msrt  # noqa: F401
        import peers


        def spin():
            return peers.openmp_spin_count()
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("peer_module_importing_msrt")
    assert peers.in_peer(module.spin) == LIBGOMP_DEFAULT_SPIN


def test_the_peer_runs_on_openblas_openmp_build():
    blas = peers.in_peer(peers.loaded_blas)
    assert blas and all(p.startswith(str(pathlib.Path(peers.OPENBLAS_OPENMP).resolve()) + "/") for p in blas), blas


def test_a_peer_on_another_blas_is_refused_with_what_it_loaded(tmp_path, monkeypatch):
    # This process's BLAS (NumPy's) is not in an empty folder: the check names the folder it wanted and what it found.
    import numpy  # noqa: F401  (maps a BLAS)

    monkeypatch.setattr(peers, "OPENBLAS_OPENMP", str(tmp_path))
    with pytest.raises(peers.PeerBlasError, match=r"OpenBLAS's OpenMP build \(.*\).* but it loaded .*blas"):
        peers.require_peer_blas()
