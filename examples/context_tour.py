"""A short tour of the msrt context (what `make demo` runs for now).

    .venv/bin/python examples/context_tour.py
"""
import json
import warnings

import msrt as ms


def main():
    print(f"msrt {ms.__version__}; build: {ms._C.build_info()}")

    ms.set_context(mode=ms.GRAPH_MODE, max_device_memory="3.5GB", save_graphs=True)
    print("\nAfter set_context(mode=GRAPH_MODE, max_device_memory='3.5GB', save_graphs=True):")
    for key in ("mode", "max_device_memory", "save_graphs", "save_graphs_path"):
        print(f"  get_context({key!r}) -> {ms.get_context(key)!r}")

    print("\nErrors name the key, what was expected and what was given:")
    for kwargs in ({"mode": 2}, {"device_id": "0"}, {"max_device_mem": "1GB"}):
        try:
            ms.set_context(**kwargs)
        except (TypeError, ValueError) as e:
            print(f"  set_context(**{kwargs}) -> {type(e).__name__}: {e}")

    print("\nA failing call changes nothing (atomic):")
    try:
        ms.set_context(mode=ms.PYNATIVE_MODE, device_id=-1)
    except ValueError:
        pass
    print(f"  mode is still {ms.get_context('mode')}")

    print("\nA key that does nothing on this device warns and is ignored:")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ms.set_context(gpu_config={"conv_fprop_algo": "performance"})
    for w in caught:
        print(f"  {w.category.__name__}: {w.message}")

    print("\nScoped, per-thread overrides:")
    with ms.context.override(mode=ms.PYNATIVE_MODE):
        print(f"  inside override: mode={ms.get_context('mode')}")
    print(f"  after:           mode={ms.get_context('mode')}")

    ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
    print("\n" + str(ms.context.explain("max_device_memory")))
    print(ms.context.summary())

    state = ms.context.snapshot()
    print(f"snapshot: {len(json.dumps(state))} bytes of JSON; load() restores it atomically")
    ms.context.load(state)


if __name__ == "__main__":
    main()
