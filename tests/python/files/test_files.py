"""Files msrt writes and reads (Note [Safe file writes], Note [A failed call
changes nothing]): symlinks are never followed, concurrent writers leave one
valid file, checksums catch corruption, nothing read can run code, paths
with NUL bytes are ValueErrors and filesystem errors OSErrors naming the path."""
import json
import os
import pickle
import struct
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import msrt as ms
from msrt import _C, nn


def run_python(code, cwd):
    """Runs `code` in a fresh interpreter (msrt imported as `ms`, json and
    warnings available); the JSON after a printed "RESULT=" is `.result`."""
    proc = subprocess.run([sys.executable, "-c", "import json, warnings\nimport msrt as ms\n" + textwrap.dedent(code)],
                          cwd=cwd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    proc.result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT="):
            proc.result = json.loads(line[len("RESULT="):])
    return proc


NUL = "bad\0path"


class Small(nn.Cell):
    def __init__(self):
        super().__init__()
        self.dense = nn.Dense(4, 3)

    def construct(self, x):
        return ms.ops.relu(self.dense(x)) * 2.0


def x_input():
    return ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)


@pytest.fixture
def outside(tmp_path):
    """A file outside the written folder that a planted symlink points at."""
    target = tmp_path / "outside.txt"
    target.write_bytes(b"precious")
    return target


def plant(link, target):
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    os.symlink(target, link)


def assert_untouched(outside, link):
    assert outside.read_bytes() == b"precious"
    assert not link.is_symlink() and link.is_file()


# --- symlinks planted at targets and at predictable temporary names ---------------------------------
def test_checkpoint_replaces_a_planted_symlink_and_ignores_predictable_temp_names(tmp_path, outside):
    folder = tmp_path / "out"
    link = folder / "net.ckpt"
    plant(link, outside)
    plant(folder / f".net.ckpt.{os.getpid()}.tmp", outside)  # the name older versions used
    ms.save_checkpoint({"w": ms.Tensor(np.ones(3, np.float32))}, str(link))
    assert_untouched(outside, link)
    assert ms.load_checkpoint(str(link))["w"].asnumpy().tolist() == [1, 1, 1]


def test_pending_file_writes_pieces_replaces_symlinks_and_leaves_holes(tmp_path, outside):
    from msrt import _files

    link = tmp_path / "data.bin"
    plant(link, outside)
    pending = _files.PendingFile(str(link))
    pending.write(1 << 20, b"tail")
    pending.write(0, b"head")
    assert pending.read(0, 4) == b"head"
    with pytest.raises(OSError):
        pending.read((1 << 20) + 2, 4)
    pending.commit()
    assert_untouched(outside, link)
    data = link.read_bytes()
    assert len(data) == (1 << 20) + 4 and data[:4] == b"head" and data[-4:] == b"tail" and not any(data[4:1 << 20])
    assert os.stat(link).st_blocks * 512 < 1 << 20  # the gap is a hole
    with pytest.raises(OSError, match="already"):
        pending.commit()
    dropped = _files.PendingFile(str(tmp_path / "never.bin"))
    dropped.write(0, b"x")
    del dropped
    import gc
    gc.collect()
    assert sorted(os.listdir(tmp_path)) == ["data.bin", "outside.txt"]


def test_export_replaces_a_planted_symlink(tmp_path, outside):
    link = tmp_path / "out" / "net.mindir"
    plant(link, outside)
    ms.export(Small(), x_input(), file_name=str(link))
    assert_untouched(outside, link)
    ms.load(str(link))


def test_profiler_results_replace_planted_symlinks(tmp_path, outside):
    folder = tmp_path / "prof" / "profiler"
    links = [folder / f"trace_{_C.rank_id()}.json", folder / f"op_summary_{_C.rank_id()}.csv"]
    for link in links:
        plant(link, outside)
    profiler = ms.Profiler(output_path=str(tmp_path / "prof"))
    (ms.Tensor(np.ones(3, np.float32)) + 1).asnumpy()
    profiler.analyse()
    for link in links:
        assert_untouched(outside, link)


def test_print_file_refuses_a_planted_symlink(tmp_path, outside, in_tmp):
    link = tmp_path / "p" / "print.data"
    link.parent.mkdir()
    ms.set_context(print_file_path=str(link))
    plant(link, outside)  # planted after set_context checked the path
    with pytest.raises(OSError, match="symbolic link"):
        ms.ops.print_("hello")
    assert outside.read_bytes() == b"precious"


def test_kernel_dump_index_refuses_a_planted_symlink(tmp_path, outside):
    dump = tmp_path / "dump"
    plant(dump / f"rank_{_C.rank_id()}" / "index.jsonl", outside)
    ms.set_context(save_dump_path=str(dump), enable_dump=True, pynative_synchronize=True)
    try:
        with pytest.raises(OSError, match="symbolic link"):
            (ms.Tensor(np.ones(3, np.float32)) + 1).asnumpy()
    finally:
        ms.set_context(enable_dump=False)
    assert outside.read_bytes() == b"precious"


IR_SCRIPT = """
import sys
import numpy as np
ms.set_context(mode=ms.GRAPH_MODE, save_graphs=2, save_graphs_path=sys.argv[1] if len(sys.argv) > 1 else "ir")

@ms.jit
def f(x):
    return x * 2 + 1

print(f(ms.Tensor(np.ones(3, np.float32))).asnumpy())
"""


def test_ir_dumps_replace_planted_symlinks(tmp_path, outside):
    run_python(IR_SCRIPT, cwd=tmp_path)
    names = sorted(os.listdir(tmp_path / "ir"))
    assert names, "save_graphs wrote nothing"
    for name in names:
        plant(tmp_path / "ir" / name, outside)
    run_python(IR_SCRIPT, cwd=tmp_path)  # a fresh process writes the same names
    for name in names:
        assert_untouched(outside, tmp_path / "ir" / name)


CACHE_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from net_for_cache import Net
ms.set_context(mode=ms.GRAPH_MODE, enable_compile_cache=True, compile_cache_path=sys.argv[2])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = Net()(ms.Tensor(np.arange(8, dtype=np.float32).reshape(2, 4) / 8)).asnumpy()
print("RESULT=" + json.dumps({"out": out.tolist(), "warnings": [str(w.message) for w in caught]}))
"""

NET_FOR_CACHE = """
import msrt as ms
from msrt import nn

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.w = ms.Parameter(ms.Tensor([[1.0, 2.0, 3.0]] * 4), name="w")

    def construct(self, x):
        return ms.ops.matmul(x, self.w) * 2.0
"""


def run_cache(tmp_path, cache):
    (tmp_path / "net_for_cache.py").write_text(NET_FOR_CACHE)
    code = CACHE_SCRIPT.replace("sys.argv[1]", repr(str(tmp_path))).replace("sys.argv[2]", repr(str(cache)))
    return run_python(code, cwd=tmp_path).result


def test_compile_cache_replaces_planted_symlinks(tmp_path, outside):
    cache = tmp_path / "cache"
    folder = cache / f"rank_{_C.rank_id()}" / "graph_cache"
    links = [folder / "compile_cache_0.msgraph", folder / "compile_dependency.hash"]
    for link in links:
        plant(link, outside)
    first = run_cache(tmp_path, cache)
    for link in links:
        assert_untouched(outside, link)
    second = run_cache(tmp_path, cache)
    assert second["out"] == first["out"] and second["warnings"] == []


# --- concurrent writers ------------------------------------------------------------------------------
def test_threads_saving_one_checkpoint_leave_one_valid_file(tmp_path):
    path = str(tmp_path / "shared.ckpt")
    values = [np.full((64, 64), i, np.float32) for i in range(8)]
    errors = []

    def save(i):
        try:
            for _ in range(5):
                ms.save_checkpoint({"w": ms.Tensor(values[i]), "i": ms.Tensor(np.array(i))}, path)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=save, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    loaded = ms.load_checkpoint(path)
    i = int(loaded["i"].asnumpy())
    np.testing.assert_array_equal(loaded["w"].asnumpy(), values[i])
    assert sorted(os.listdir(tmp_path)) == ["shared.ckpt"]  # no temporary file left


def test_processes_saving_checkpoints_leave_valid_files(tmp_path):
    code = textwrap.dedent("""
        import sys
        import numpy as np
        import msrt as ms
        i = int(sys.argv[1])
        for path in sys.argv[2:]:
            for _ in range(10):
                ms.save_checkpoint({"w": ms.Tensor(np.full((256, 256), i, np.float32)),
                                    "i": ms.Tensor(np.array(i))}, path)
    """)
    shared = str(tmp_path / "shared.ckpt")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(i), shared, str(tmp_path / f"own_{i}.ckpt")])
             for i in range(4)]
    assert all(p.wait(timeout=120) == 0 for p in procs)
    loaded = ms.load_checkpoint(shared)
    i = int(loaded["i"].asnumpy())
    assert (loaded["w"].asnumpy() == i).all()
    for i in range(4):
        assert (ms.load_checkpoint(str(tmp_path / f"own_{i}.ckpt"))["w"].asnumpy() == i).all()


# --- NUL bytes and filesystem errors --------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: ms.save_checkpoint({"w": ms.Tensor(np.ones(1, np.float32))}, NUL + ".ckpt"),
    lambda: ms.load_checkpoint(NUL + ".ckpt"),
    lambda: ms.export(Small(), x_input(), file_name=NUL),
    lambda: ms.load(NUL + ".mindir"),
    lambda: ms.set_context(save_graphs_path=NUL),
    lambda: ms.set_context(print_file_path=NUL),
    lambda: ms.set_context(compile_cache_path=NUL),
    lambda: ms.set_context(save_dump_path=NUL),
    lambda: ms.Profiler(output_path=NUL),
    lambda: ms.dataset.MnistDataset(NUL),
    lambda: ms.parse_print(NUL),
    lambda: ms.set_context(env_config_path=NUL),
    lambda: ms.set_auto_parallel_context(strategy_ckpt_load_file=NUL),
    lambda: ms.set_auto_parallel_context(strategy_ckpt_save_file=NUL),
    lambda: ms.set_auto_parallel_context(strategy_ckpt_config={"load_file": NUL}),
    lambda: ms.set_context(enable_profiling=True, profiling_options=json.dumps({"output": NUL})),
], ids=["save_checkpoint", "load_checkpoint", "export", "load", "save_graphs_path", "print_file_path",
        "compile_cache_path", "save_dump_path", "Profiler", "MnistDataset", "parse_print", "env_config_path",
        "strategy_ckpt_load_file", "strategy_ckpt_save_file", "strategy_ckpt_config", "profiling_options"])
def test_a_path_with_a_nul_byte_is_a_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_writing_under_a_missing_or_unusable_folder_is_an_os_error_naming_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    for path in (tmp_path / "missing" / "a.ckpt", blocker / "a.ckpt"):
        with pytest.raises(OSError, match=str(path.parent)):
            ms.save_checkpoint({"w": ms.Tensor(np.ones(1, np.float32))}, str(path))
    with pytest.raises(OSError, match=str(blocker)):
        ms.export(Small(), x_input(), file_name=str(blocker / "net"))
    with pytest.raises(OSError, match=str(blocker)):
        _C._read_file(str(blocker / "x"))


# --- a failed set_context changes nothing on disk; switches that can not work raise -----------------
def test_a_failed_set_context_creates_no_folder(tmp_path):
    new = tmp_path / "new" / "graphs"
    with pytest.raises(ValueError):
        ms.set_context(save_graphs_path=str(new), mode=12345)
    assert not (tmp_path / "new").exists()
    with pytest.raises(ValueError):
        ms.set_auto_parallel_context(strategy_ckpt_save_file=str(tmp_path / "p" / "q" / "s.ckpt"),
                                     parallel_mode="bogus")
    assert not (tmp_path / "p").exists()
    ms.set_context(save_graphs_path=str(new))  # a call that succeeds creates it
    assert new.is_dir()


def test_no_folder_is_made_when_another_key_of_the_call_fails(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    with pytest.raises(OSError):
        # save_graphs_path's folder would be made first; print_file_path's parent is a file.
        ms.set_context(save_graphs_path=str(tmp_path / "made" / "g"), print_file_path=str(blocker / "x" / "p.data"))
    assert not (tmp_path / "made").exists()


def test_enable_profiling_that_can_not_write_raises_and_changes_nothing(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    options = json.dumps({"output": str(blocker / "sub")})
    with pytest.raises(OSError, match="profiler|Profiler"):
        ms.set_context(enable_profiling=True, profiling_options=options)
    assert ms.get_context("enable_profiling") is False
    with pytest.raises(OSError):
        ms.Profiler(output_path=str(blocker / "sub"))


def test_enable_dump_with_an_unusable_save_dump_path_raises(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    with pytest.raises(OSError, match="save_dump_path"):
        ms.set_context(enable_dump=True, save_dump_path=str(blocker / "dumps"))
    assert ms.get_context("enable_dump") is False
    assert ms.get_context("save_dump_path") != str(blocker / "dumps")


def test_print_file_path_in_an_unusable_place_raises(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    with pytest.raises(OSError, match="print_file_path"):
        ms.set_context(print_file_path=str(blocker / "print.data"))
    assert ms.get_context("print_file_path") == ""


# --- checksums and formats ----------------------------------------------------------------------------
def test_every_bit_flip_of_a_checkpoint_is_detected(tmp_path):
    path = tmp_path / "c.ckpt"
    ms.save_checkpoint({"w": ms.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3)),
                        "flag": ms.Tensor(np.array([True, False]))}, str(path))
    blob = path.read_bytes()
    for position in range(len(blob)):
        for bit in (0, 3, 7):
            corrupt = bytearray(blob)
            corrupt[position] ^= 1 << bit
            path.write_bytes(bytes(corrupt))
            with pytest.raises(ValueError, match=str(path)):
                ms.load_checkpoint(str(path))


def test_checkpoint_booleans_other_than_0_and_1_are_refused(tmp_path):
    path = tmp_path / "b.ckpt"
    payload = struct.pack("<I", 1) + b"b" + struct.pack("<BBQ", 0, 1, 2) + struct.pack("<Q", 2) + b"\x01\x02"
    header = struct.pack("<8sIIQ", b"MSRTCKPT", 2, 1, len(payload))
    path.write_bytes(header + payload + struct.pack("<I", _C._crc32c(header + payload)))
    with pytest.raises(ValueError, match="booleans are 0 or 1"):
        ms.load_checkpoint(str(path))


def test_checkpoint_shapes_whose_byte_size_overflows_are_refused(tmp_path):
    path = tmp_path / "o.ckpt"
    payload = struct.pack("<I", 1) + b"o" + struct.pack("<BBQQ", 8, 2, 2**62, 2**62) + struct.pack("<Q", 0)
    header = struct.pack("<8sIIQ", b"MSRTCKPT", 2, 1, len(payload))
    path.write_bytes(header + payload + struct.pack("<I", _C._crc32c(header + payload)))
    with pytest.raises(ValueError, match="overflows"):
        ms.load_checkpoint(str(path))


def test_big_endian_arrays_are_saved_as_their_values(tmp_path):
    path = str(tmp_path / "be.ckpt")
    ms.save_checkpoint({"w": np.arange(4, dtype=">f4")}, path)
    assert ms.load_checkpoint(path)["w"].asnumpy().tolist() == [0, 1, 2, 3]


@pytest.fixture
def exported(tmp_path):
    return ms.export(Small(), x_input(), file_name=str(tmp_path / "net"))


def test_a_flipped_bit_anywhere_in_a_graph_file_is_detected(exported):
    blob = open(exported, "rb").read()
    rng = np.random.default_rng(0)
    positions = sorted(set(range(0, 64)) | set(rng.integers(0, len(blob), 300).tolist()) |
                       set(range(len(blob) - 8, len(blob))))
    for position in positions:
        corrupt = bytearray(blob)
        corrupt[position] ^= 1 << int(rng.integers(0, 8))
        with open(exported, "wb") as f:
            f.write(bytes(corrupt))
        with pytest.raises(ValueError, match="net.mindir"):
            ms.load(exported)


def _graph_file(header, meta=b"", data=b"", version=2):
    text = json.dumps(header).encode() if not isinstance(header, bytes) else header
    body = b"MSRTGRPH" + struct.pack("<IQ", version, len(text)) + text + meta + data
    return body + struct.pack("<I", _C._crc32c(body))


def test_old_pickled_graph_files_are_refused_with_a_request_to_export_again(tmp_path):
    class Boom:
        def __reduce__(self):
            return (os.system, ("touch " + str(tmp_path / "ran"),))

    meta = pickle.dumps({"template": Boom()})
    text = json.dumps({"graph": "g", "inputs": [], "outputs": [], "nodes": [], "metadata_bytes": len(meta),
                       "data_bytes": 0}).encode()
    old = b"MSRTGRPH" + struct.pack("<IQ", 1, len(text)) + text + meta
    path = tmp_path / "old.mindir"
    path.write_bytes(old)
    with pytest.raises(ValueError, match=r"old\.mindir.*export it again"):
        ms.load(str(path))
    # A version-2 file whose record is a pickle is refused too, and never unpickled.
    path.write_bytes(_graph_file({"graph": "g", "inputs": [], "outputs": [], "nodes": [],
                                  "metadata_bytes": len(meta), "data_bytes": 0}, meta))
    with pytest.raises(ValueError, match="pickled"):
        ms.load(str(path))
    assert not (tmp_path / "ran").exists()


def test_deeply_nested_json_in_a_graph_file_is_a_value_error(tmp_path):
    path = tmp_path / "deep.mindir"
    deep = b'{"graph": "g", "x": ' + b"[" * 100000 + b"]" * 100000 + b"}"
    path.write_bytes(_graph_file(deep))
    with pytest.raises(ValueError, match="deep.mindir"):
        ms.load(str(path))
    record = b'{"schema": "msrt-graph-record", "version": 1, "kind": "export", "inputs": [], "template": ' + \
        b'{"t": "list", "items": [' * 5000 + b"]}" * 5000 + b"}"
    header = {"graph": "g", "inputs": [], "outputs": [], "nodes": [], "metadata_bytes": len(record), "data_bytes": 0}
    path.write_bytes(_graph_file(header, record))
    with pytest.raises(ValueError, match="deep.mindir"):
        ms.load(str(path))


def test_the_record_is_json_and_round_trips_result_structures(tmp_path):
    @ms.jit
    def f(x):
        return {"a": (x, None, 3, 2.5, "s", True), "b": [x * 2]}

    path = ms.export(f, x_input(), file_name=str(tmp_path / "f"))
    out = nn.GraphCell(ms.load(path))(x_input())
    assert out["a"][1:] == (None, 3, 2.5, "s", True)
    np.testing.assert_allclose(out["b"][0].asnumpy(), x_input().asnumpy() * 2)


def test_corrupt_cache_hashes_and_entries_recompile_with_a_warning(tmp_path):
    cache = tmp_path / "cache"
    first = run_cache(tmp_path, cache)
    folder = cache / f"rank_{_C.rank_id()}" / "graph_cache"
    (folder / "compile_dependency.hash").write_bytes(b"\xff\xfe\x00 not utf-8 \x80\n0 zz\n")
    again = run_cache(tmp_path, cache)
    assert again["out"] == first["out"] and any("out of date" in w for w in again["warnings"])
    entry = folder / "compile_cache_0.msgraph"
    blob = bytearray(entry.read_bytes())
    blob[len(blob) // 2] ^= 0x10
    entry.write_bytes(bytes(blob))
    third = run_cache(tmp_path, cache)
    assert third["out"] == first["out"] and any("can not be read" in w for w in third["warnings"])
    assert run_cache(tmp_path, cache)["warnings"] == []  # the rewritten entry serves the next run


def test_an_unwritable_cache_folder_warns_and_training_goes_on(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_bytes(b"x")
    result = run_cache(tmp_path, blocker / "cache")
    assert result["out"] and any("can not be written" in w for w in result["warnings"])


def test_deeply_nested_env_config_file_is_a_value_error(tmp_path):
    path = tmp_path / "env.json"
    path.write_text('{"rdr": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ValueError, match="nests arrays or objects deeper than 100 levels"):
        ms.set_context(env_config_path=str(path))


def test_mutated_graph_records_give_only_value_errors(exported):
    """The compile-cache/export record reader (python/msrt/_graph_files.py) on
    random mutations of a valid record, the checksum fixed up so that they
    reach it: a ValueError or a loaded graph, never another exception."""
    from msrt import _graph_files

    blob = open(exported, "rb").read()
    (header_size,) = struct.unpack_from("<Q", blob, 12)
    header = json.loads(blob[20:20 + header_size])
    meta = blob[20 + header_size:20 + header_size + header["metadata_bytes"]]
    rng = np.random.default_rng(1)
    outcomes = {"ok": 0, "refused": 0}
    for _ in range(400):
        mutated = bytearray(meta)
        for _ in range(int(rng.integers(1, 4))):
            kind = int(rng.integers(0, 3))
            at = int(rng.integers(0, len(mutated)))
            if kind == 0:
                mutated[at] = int(rng.integers(0, 256))
            elif kind == 1:
                del mutated[at]
            else:
                mutated.insert(at, int(rng.choice(list(b'{}[]",:0123456789tnfe-.'))))
        try:
            record = _graph_files.record_from_bytes(bytes(mutated), "export", "mutated.mindir")
            _graph_files.rebuild(record["template"], iter(range(100)))
            outcomes["ok"] += 1
        except ValueError:
            outcomes["refused"] += 1
        except StopIteration:
            outcomes["ok"] += 1
    assert outcomes["refused"] > 0
