"""Context get/set latency from Python, against PyTorch (Debian python3-torch).

    make bench     (or .venv/bin/python benchmarks/context_bench.py)

Prints medians of repeated timeit runs and the ratio against the peer measured
in the same run (PyTorch in the standard peer's process, benchmarks/peers.py).
Goals: get_context <= 1 us, set_context of one key <= 5 us.
"""
import statistics
import subprocess
import timeit

import peers


def median_us(stmt, number):
    runs = timeit.repeat(stmt, number=number, repeat=15)
    return statistics.median(runs) / number * 1e6


def torch_flag_latency():
    """(get, set) microseconds of PyTorch's deterministic-algorithms flag (run in the peer's process)."""
    import torch

    get = median_us(torch.are_deterministic_algorithms_enabled, 200_000)
    flip = [False]

    def torch_set():
        flip[0] = not flip[0]
        torch.use_deterministic_algorithms(flip[0])

    set_ = median_us(torch_set, 50_000)
    torch.use_deterministic_algorithms(False)
    return get, set_


def main():
    peers.msrt_process()
    import msrt as ms

    rows = []
    peer_get = peer_set = None
    try:
        peer_get, peer_set = peers.in_peer(torch_flag_latency)
    except (subprocess.CalledProcessError, peers.PeerBlasError) as error:  # the peer is optional (scripts/setup.sh)
        print(f"PyTorch peer unavailable ({type(error).__name__}); msrt figures only")
    else:
        rows.append(("peer get torch.are_deterministic_algorithms_enabled()", peer_get, None))
        rows.append(("peer set torch.use_deterministic_algorithms(b)", peer_set, None))

    get = median_us(lambda: ms.get_context("mode"), 200_000)
    get_dict = median_us(lambda: ms.get_auto_parallel_context("comm_fusion"), 50_000)
    modes = [ms.GRAPH_MODE, ms.PYNATIVE_MODE]
    state = [0]

    def set_one():
        state[0] ^= 1
        ms.set_context(mode=modes[state[0]])

    set1 = median_us(set_one, 50_000)
    set3 = median_us(lambda: ms.set_context(mode=0, device_id=0, save_graphs=False), 20_000)
    get_ap = median_us(lambda: ms.get_auto_parallel_context("parallel_mode"), 200_000)
    rows += [
        ("msrt get_context('mode')", get, peer_get),
        ("msrt get_auto_parallel_context('comm_fusion') (dict)", get_dict, peer_get),
        ("msrt get_auto_parallel_context('parallel_mode')", get_ap, peer_get),
        ("msrt set_context(mode=...)", set1, peer_set),
        ("msrt set_context(3 keys)", set3, peer_set),
    ]
    print("context get/set from Python (median of 15 timeit runs)")
    for name, us, peer in rows:
        ratio = f"{us / peer:6.2f}x peer" if peer else ""
        print(f"  {name:<56} {us:7.3f} us   {ratio}")
    print(f"goals: get <= 1 us {'met' if get <= 1 else 'NOT met'}; "
          f"set one key <= 5 us {'met' if set1 <= 5 else 'NOT met'}")


if __name__ == "__main__":
    main()
