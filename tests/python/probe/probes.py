"""Bad inputs across msrt's public Python API, as data.

Each probe is (name, thunk, expectation): the thunk calls the API with one bad
(or tricky) input; the expectation is the exception types it may raise (typed
errors only) or `Ok(check)`, a result that must be correct. Probes are grouped;
`python probes.py GROUP` runs one group and prints one JSON line per probe, so
that test_probes.py can run each group in its own process and tell a crash
(a signal) from an error. The group lists are built lazily (make_<group>)
so that a run imports and builds only what it probes.
"""
import json
import math
import os
import sys
import tempfile
import warnings

import numpy as np

TYPE = (TypeError,)
VALUE = (ValueError,)
TV = (TypeError, ValueError)
INDEX = (IndexError,)
MEMORY = (MemoryError,)
# A huge shape that fits in int64 but not in memory, or that overflows.
BIG_OR_OVERFLOW = (MemoryError, ValueError)
TYPED = (TypeError, ValueError, IndexError, RuntimeError, MemoryError, OSError, KeyError)


class Ok:
    """The call must return and check(result) must hold, or raise one of
    `raises` (typed errors) where either is right."""

    def __init__(self, check=lambda r: True, what="a result", raises=()):
        self.check = check
        self.what = what
        self.raises = raises


def _deep_list(depth=100000):
    v = [1]
    for _ in range(depth):
        v = [v]
    return v


def _deep_dict(depth=100000):
    v = {"a": 1}
    for _ in range(depth):
        v = {"a": v}
    return v


def _self_list():
    v = [1]
    v.append(v)
    return v


def _self_dict():
    v = {}
    v["a"] = v
    return v


DEEP_LIST = _deep_list()
DEEP_DICT = _deep_dict()
DEEP_TUPLE = tuple(_deep_list(20000))
SELF_LIST = _self_list()
SELF_DICT = _self_dict()

# Values that are wrong for every context key, whatever its type.
COMMON_BAD = [
    ("deep_list", DEEP_LIST),
    ("self_list", SELF_LIST),
    ("deep_dict", DEEP_DICT),
    ("self_dict", SELF_DICT),
    ("deep_tuple", DEEP_TUPLE),
    ("huge_int", 2**100),
    ("neg_huge_int", -(2**100)),
    ("nan", math.nan),
    ("inf", math.inf),
    ("bytes", b"CPU"),
    ("object", object()),
]
EXTRA_BAD = {
    "bool": [("str", "yes"), ("float", 1.5), ("list", [True])],
    "int": [("str", "1"), ("float", 1.5), ("list", [1])],
    "str": [("int", 1), ("list", ["CPU"]), ("nul", "bad\0value"), ("float", 0.5), ("surrogate", "\udcff")],
    "dict": [("str", "x"), ("int", 1), ("unknown_sub_key", {"no_such_sub_key": 1}), ("int_key", {1: 2})],
    'str ("xxGB")': [("no_number", "GB"), ("negative", "-1GB"), ("float_overflow", "1e999GB"),
                     ("int_overflow", "99999999999999999999999999GB"), ("nul", "1GB\0"), ("int", 12)],
    "list[int]": [("str_item", [1, "a"]), ("huge_item", [2**100]), ("nested", [[1]])],
    "bool or int": [("str", "x"), ("float", 1.5)],
    "str or tuple(tuple(int))": [("str_items", (("a",),)), ("int", 3)],
}


def _setter_probe(setter, snapshot, kwargs):
    """Calls setter(**kwargs); a failed call must leave the context unchanged.
    Returns "warned" when the call was accepted with a warning (keys that do
    not apply on this device are ignored with one, as MindSpore does)."""

    def run():
        before = snapshot()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                setter(**kwargs)
            except TYPED:
                if snapshot() != before:
                    raise AssertionError("a failed call changed the context") from None
                raise
        return "warned" if caught else "accepted"

    return run


# Keys that take any text: a NUL byte in them is not an error.
FREE_TEXT_KEYS = {"graph_kernel_flags", "scheduler_ip", "client_password", "server_password"}


def _context_expectation(record, label, device):
    """What a bad value for a context key must give."""
    errors = TV
    if record["type"] == "dict":
        errors = TV + (KeyError,)  # MindSpore raises KeyError for unknown sub-keys of some dict keys
    if record["family"] == "ps_context":
        errors = TV + (RuntimeError,)  # as MindSpore's ps context setter
    if device not in record["devices"] or record["deprecation_action"] == "ignored":
        # Not applicable here, or ignored since a release: ignored with a warning, or refused.
        return Ok(lambda r: r == "warned", "accepted with a warning", raises=errors)
    if label == "nul" and record["name"] in FREE_TEXT_KEYS:
        return Ok(what="accepted (free text)", raises=errors)
    if label == "int_overflow" and record["type"] == 'str ("xxGB")':
        return Ok(what="accepted (a float number of GB, as MindSpore)", raises=errors)
    return errors


def make_context():
    import msrt as ms

    setters = {"context": ms.set_context, "auto_parallel_context": ms.set_auto_parallel_context,
               "ps_context": ms.set_ps_context, "offload_context": lambda **kw: ms.set_offload_context(kw),
               "algo_parameters": ms.set_algo_parameters}
    probes = []
    device = ms.get_context("device_target")
    for record in ms.context.options():
        family, name, kind = record["family"], record["name"], record["type"]
        setter = setters[family]
        for label, value in COMMON_BAD + EXTRA_BAD.get(kind, []):
            probes.append((f"{family}.{name}={label}", _setter_probe(setter, ms.context.snapshot, {name: value}),
                           _context_expectation(record, label, device)))
    for family, setter in setters.items():
        for label, kwargs in [("unknown_key", {"no_such_key": 1}), ("unknown_nested", {"no_such_key": DEEP_LIST}),
                              ("nul_key", {"mo\0de": 1})]:
            probes.append((f"{family}.{label}", _setter_probe(setter, ms.context.snapshot, kwargs),
                           (TypeError, ValueError, KeyError)))
    getters = {"context": ms.get_context, "auto_parallel_context": ms.get_auto_parallel_context,
               "ps_context": ms.get_ps_context, "offload_context": lambda k: ms.get_offload_context()[k],
               "algo_parameters": ms.get_algo_parameters}
    for family, getter in getters.items():
        for label, key in [("unknown", "no_such_key"), ("int", 5), ("nul", "mode\0"), ("deep", DEEP_LIST)]:
            probes.append((f"get.{family}.{label}", lambda g=getter, k=key: g(k), (TypeError, ValueError, KeyError)))
    for label, value in [("deep", DEEP_LIST), ("self", SELF_LIST), ("int", 5), ("bad_dict", {"no_such_key": 1})]:
        probes.append((f"context.load={label}", lambda v=value: ms.context.load(v), TV + (KeyError,)))
    for label, value in [("unknown", "r9.9"), ("int", 5), ("nul", "r2.3\0")]:
        probes.append((f"context.set_profile={label}", lambda v=value: ms.context.set_profile(v), TV))
    for label, key in [("unknown", "no_such_key"), ("int", 5)]:
        probes.append((f"context.explain={label}", lambda k=key: ms.context.explain(k), TV + (KeyError,)))

    def override_deep():
        with ms.context.override(save_graphs=DEEP_LIST):
            pass

    probes.append(("context.override=deep", override_deep, TV))
    # env_config_path files (JSON) that nest deeply or are malformed.
    tmp = tempfile.mkdtemp()
    for label, text in [("deep_array", "[" * 100000 + "]" * 100000),
                        ("deep_object", '{"a":' * 100000 + "1" + "}" * 100000),
                        ("deep_in_rdr", '{"rdr": ' + "[" * 50000 + "]" * 50000 + "}"), ("truncated", '{"rdr": {'),
                        ("binary", "\x00\xff\xfe"), ("huge_number", '{"rdr": {"mode": 1e999}}'),
                        ("deep_unclosed", "[" * 200000)]:
        path = os.path.join(tmp, label + ".json")
        with open(path, "w", encoding="latin-1") as f:
            f.write(text)
        probes.append((f"env_config_path={label}", _setter_probe(ms.set_context, ms.context.snapshot,
                                                                 {"env_config_path": path}), VALUE))
    for label, flags in [("huge_level", "--opt_level=99999999999999999999999"), ("negative_level", "--opt_level=-1"),
                         ("no_value", "--opt_level="), ("unknown", "--no_such_flag=1"), ("nul", "--opt_level=1\0"),
                         ("many", "--enable_expand_ops=" + ",".join(["Add"] * 100000) + " --opt_level=x"),
                         ("binary", "\x01\x02--=")]:
        probes.append((f"graph_kernel_flags={label}",
                       _setter_probe(ms.set_context, ms.context.snapshot, {"graph_kernel_flags": flags}),
                       Ok(lambda r: r in ("accepted", "warned"), "accepted (with a warning)", raises=TV)))
    for label, text in [("deep", "{" + '"a":{' * 100000),
                        ("deep_closed", '{"x": ' + "[" * 100000 + "]" * 100000 + "}")]:
        probes.append((f"profiling_options={label}",
                       _setter_probe(ms.set_context, ms.context.snapshot, {"profiling_options": text}), VALUE))
    return probes


def make_tensor():
    import msrt as ms
    from msrt import ops

    def t(*shape, dtype=np.float32):
        return ms.Tensor(np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape))

    def equal(expected):
        expected = np.asarray(expected)
        return Ok(lambda r: r.shape == expected.shape and np.array_equal(r.asnumpy(), expected),
                  f"{expected.tolist()!r}")

    def big_endian(dtype, values):
        return np.array(values, dtype=dtype)

    p = []
    # Construction.
    for label, data in [("object", object()), ("str", "abc"), ("str_list", ["a", "b"]), ("ragged", [1, [2, 3]]),
                        ("object_array", np.array([object()])), ("datetime_array", np.array(["2020-01-01"], "M8[D]")),
                        ("unicode_array", np.array(["a"])), ("void_array", np.zeros(2, "V4")),
                        ("structured", np.zeros(2, [("a", "i4"), ("b", "f4")])),
                        ("deep_list", DEEP_LIST), ("self_list", SELF_LIST), ("deep_tuple", DEEP_TUPLE),
                        ("dict", {"a": 1}), ("set", {1, 2}), ("bytes", b"ab"), ("none_list", [None, 1])]:
        p.append((f"Tensor({label})", lambda d=data: ms.Tensor(d), TV))
    for label, data in [("complex", np.array(1 + 2j, np.complex64)), ("complex_array", np.ones(2, np.complex64)),
                        ("uint16_array", np.ones(2, np.uint16)), ("uint64_array", np.ones(2, np.uint64))]:
        p.append((f"Tensor({label})", lambda d=data: ms.Tensor(d).asnumpy(),
                  Ok(lambda r, d=data: r.dtype == d.dtype and np.array_equal(r, d), repr(data))))
    for label, dtype in [("bogus", "bogus"), ("int", 5), ("object", object()), ("nul", "float32\0"), ("list", [1])]:
        p.append((f"Tensor(dtype={label})", lambda d=dtype: ms.Tensor([1.0], dtype=d), TV))
    for label, shape in [("negative", (-1, 2)), ("overflow", (2**40, 2**40)), ("overflow_zero", (0, 2**62, 2**62)),
                         ("huge", (2**45,)), ("str", ("a",)), ("float", (1.5,)), ("deep", DEEP_LIST),
                         ("huge_int", (2**100,))]:
        p.append((f"Tensor(shape={label})", lambda s=shape: ms.Tensor(shape=s, dtype=ms.float32),
                  TV + (MemoryError, OverflowError)))
    p.append(("Tensor(shape, init) overflow", lambda: ms.Tensor(shape=(2**40, 2**40), dtype=ms.float32, init="zeros"),
              BIG_OR_OVERFLOW))
    p.append(("Tensor(int overflow)", lambda: ms.Tensor(2**100), TV + (OverflowError,)))
    p.append(("Tensor(int list overflow)", lambda: ms.Tensor([1, 2**100]), TV + (OverflowError,)))
    # Byte order: values, not bytes.
    for dtype, values in [(">i4", [1, 2, -3]), (">f4", [1.5, -2.0, 3.25]), (">f8", [1.5, -2.0, 1e300]),
                          (">i8", [1, -2, 2**40]), (">i2", [1, -2, 300]), (">f2", [1.5, -2.0, 0.25]),
                          ("<i4", [1, 2, 3]), ("=f4", [1.0, 2.0, 3.0]), (">u1", [1, 2, 255]),
                          ("|b1", [True, False, True])]:
        p.append((f"Tensor(np {dtype})", lambda d=dtype, v=values: ms.Tensor(big_endian(d, v)),
                  equal(np.array(values, dtype=np.dtype(dtype).newbyteorder("=")))))
    p.append(("Tensor(np >f4 2-D strided)", lambda: ms.Tensor(np.arange(12, dtype=">f4").reshape(3, 4)[:, ::2]),
              equal(np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2])))
    p.append(("Tensor(np >f8 0-d)", lambda: ms.Tensor(np.array(2.5, dtype=">f8")), equal(np.array(2.5))))
    p.append(("Tensor(np >f4, dtype=float64)", lambda: ms.Tensor(np.array([1.5, 2], ">f4"), dtype=ms.float64),
              equal(np.array([1.5, 2.0]))))
    p.append(("Tensor(np >f4, dtype=bfloat16)",
              lambda: ms.Tensor(np.array([1.5, 2], ">f4"), dtype=ms.bfloat16).astype(ms.float32),
              equal(np.array([1.5, 2.0], np.float32))))
    p.append(("Tensor.from_numpy(>i8)", lambda: ms.Tensor.from_numpy(np.array([5, 6], ">i8")), equal(np.array([5, 6]))))
    p.append(("Parameter(np >f4)", lambda: ms.Parameter(ms.Tensor(np.array([1.5, 2], ">f4")), name="p"),
              equal(np.array([1.5, 2.0], np.float32))))

    p.append(("Parameter(np >f8 array)", lambda: ms.Parameter(np.array([1.5, 2], ">f8"), name="p"),
              equal(np.array([1.5, 2.0]))))
    p.append(("ops.cast(Tensor(>i2))", lambda: ops.cast(ms.Tensor(np.array([1, -300], ">i2")), ms.float32),
              equal(np.array([1.0, -300.0], np.float32))))
    p.append(("Tensor(>f4) sum", lambda: ms.Tensor(np.array([1.5, 2.5, 3.0], ">f4")).sum(),
              equal(np.array(7.0, np.float32))))

    def set_data_big_endian():
        prm = ms.Parameter(ms.Tensor(np.zeros(2, np.float32)), name="p")
        prm.set_data(ms.Tensor(np.array([1.5, -2], ">f4")))
        return prm

    p.append(("Parameter.set_data(>f4)", set_data_big_endian, equal(np.array([1.5, -2.0], np.float32))))

    def setitem_big_endian():
        x = ms.Tensor(np.zeros(3, np.float32))
        x[0:2] = np.array([1.5, -2], ">f4")
        return x

    p.append(("t[0:2] = np >f4", setitem_big_endian, equal(np.array([1.5, -2.0, 0.0], np.float32))))
    p.append(("t + np >f4", lambda: ms.Tensor(np.ones(2, np.float32)) + np.array([1.5, 2], ">f4"),
              equal(np.array([2.5, 3.0], np.float32))))
    p.append(("ops.add(t, Tensor(>f8))", lambda: ops.add(ms.Tensor(np.ones(2)), ms.Tensor(np.array([1.5, 2], ">f8"))),
              equal(np.array([2.5, 3.0]))))
    # Shapes: overflow, negative, huge.
    for label, shape in [("overflow", (2**62, 4)), ("neg2", (-2, 3)), ("two_minus_one", (-1, -1)),
                         ("zero_minus_one", (0, -1)), ("huge_int", (2**100,)), ("max_int", (2**63 - 1,)),
                         ("wrong_count", (4, 4)), ("float", (1.5, 4)), ("str", ("a",)),
                         ("overflow_product", (2**32, 2**32, 0))]:
        p.append((f"reshape{label}", lambda s=shape: t(2, 3).reshape(s), TV + (OverflowError,)))
    for label, fn in [
        ("zeros overflow", lambda: ops.zeros((2**40, 2**40))),
        ("zeros overflow with zero", lambda: ops.zeros((0, 2**40, 2**40))),
        ("ones overflow", lambda: ops.ones((2**31, 2**31, 4), ms.float32)),
        ("fill overflow", lambda: ops.fill(ms.float32, (2**62, 2**2), 1.0)),
        ("full overflow", lambda: ops.full((2**40, 2**40), 1.0)),
        ("zeros negative", lambda: ops.zeros((-1, 2))),
        ("ones negative", lambda: ops.ones((3, -5))),
        ("zeros huge", lambda: ops.zeros((2**45,))),
        ("ones huge float64", lambda: ops.ones((2**20, 2**20), ms.float64)),
        ("broadcast_to overflow", lambda: ops.broadcast_to(t(1, 1), (2**40, 2**40))),
        ("broadcast_to huge", lambda: ops.broadcast_to(t(1), (2**44,))),
        ("broadcast_to negative", lambda: ops.broadcast_to(t(1, 2), (-2, 2))),
        ("broadcast binary overflow", lambda: ops.add(ops.broadcast_to(t(1), (0,)), t(2))),
        ("tile overflow", lambda: ops.tile(t(2, 2), (2**40, 2**40))),
        ("tile negative", lambda: ops.tile(t(2, 2), (-1, 2))),
        ("tile huge", lambda: ops.tile(t(2), (2**44,))),
        ("arange huge", lambda: ops.arange(0, 2**62)),
        ("arange zero step", lambda: ops.arange(0, 10, 0)),
        ("arange zero float step", lambda: ops.arange(0.0, 1.0, 0.0)),
        ("arange nan", lambda: ops.arange(0, math.nan)),
        ("arange inf", lambda: ops.arange(0, math.inf)),
        ("eye overflow", lambda: ops.eye(2**40, 2**40)),
        ("eye negative", lambda: ops.eye(-1, 2)),
        ("one_hot huge depth",
         lambda: ops.one_hot(ms.Tensor(np.array([0, 1], np.int32)), 2**62, ms.Tensor(1.0), ms.Tensor(0.0))),
        ("one_hot negative depth",
         lambda: ops.one_hot(ms.Tensor(np.array([0, 1], np.int32)), -1, ms.Tensor(1.0), ms.Tensor(0.0))),
        ("concat overflow", lambda: ops.concat((ops.zeros((0, 2**62), ms.bool_), ops.zeros((0, 2**62), ms.bool_)), 1)),
        ("expand_dims many", lambda: t(2).reshape((1,) * 64 + (2,))),
        ("matmul mismatch", lambda: ops.matmul(t(2, 3), t(2, 3)) if hasattr(ops, "matmul") else t(2, 3) @ t(2, 3)),
        ("matmul 0-d", lambda: ms.Tensor(1.0) @ ms.Tensor(2.0)),
        ("add shape mismatch", lambda: t(2, 3) + t(3, 2)),
        ("add str", lambda: t(2) + "a"),
        ("add object", lambda: t(2) + object()),
        ("add list of str", lambda: t(2) + ["a", "b"]),
        ("add huge int", lambda: ms.Tensor(np.array([1, 2], np.int32)) + 2**100),
        ("mul deep list", lambda: t(2) * DEEP_LIST),
        ("cast bogus", lambda: ops.cast(t(2), "bogus")),
        ("astype bogus", lambda: t(2).astype("bogus")),
        ("astype int", lambda: t(2).astype(5)),
        ("sum axis out of range", lambda: t(2, 3).sum(axis=5)),
        ("sum axis negative out of range", lambda: t(2, 3).sum(axis=-3)),
        ("sum axis huge", lambda: t(2, 3).sum(axis=2**100)),
        ("sum axis int64 max", lambda: t(2, 3).sum(axis=2**63 - 1)),
        ("sum axis int64 min", lambda: t(2, 3).sum(axis=-(2**63))),
        ("sum axis str", lambda: t(2, 3).sum(axis="a")),
        ("sum axis duplicate", lambda: ops.sum(t(2, 3), (0, 0))),
        ("mean axis out of range", lambda: ops.mean(t(2, 3), 7)),
        ("argmax axis out of range", lambda: ops.argmax(t(2, 3), 2)),
        ("argmax empty", lambda: ops.argmax(ops.zeros((0,)), 0)),
        ("max empty", lambda: ops.amax(ops.zeros((0,)))),
        ("min empty", lambda: ops.amin(ops.zeros((0, 3)), 0)),
        ("transpose bad perm", lambda: ops.transpose(t(2, 3), (0, 0))),
        ("transpose short perm", lambda: ops.transpose(t(2, 3), (0,))),
        ("transpose perm out of range", lambda: ops.transpose(t(2, 3), (0, 5))),
        ("transpose perm huge", lambda: ops.transpose(t(2, 3), (0, 2**70))),
        ("squeeze axis out of range", lambda: ops.squeeze(t(1, 3), 4)),
        ("squeeze axis not 1", lambda: ops.squeeze(t(2, 3), 0)),
        ("expand_dims axis out of range", lambda: ops.expand_dims(t(2, 3), 10)),
        ("expand_dims axis negative", lambda: ops.expand_dims(t(2, 3), -10)),
        ("concat mismatch", lambda: ops.concat((t(2, 3), t(3, 2)))),
        ("concat axis out of range", lambda: ops.concat((t(2, 3), t(2, 3)), 5)),
        ("concat empty", lambda: ops.concat(())),
        ("concat dtype mismatch", lambda: ops.concat((t(2), t(2, dtype=np.int32)))),
        ("stack mismatch", lambda: ops.stack((t(2), t(3)))),
        ("split zero", lambda: ops.split(t(4), 0)),
        ("gather index out of range", lambda: ops.gather(t(3), ms.Tensor(np.array([5], np.int32)), 0)),
        ("gather negative index", lambda: ops.gather(t(3), ms.Tensor(np.array([-9], np.int32)), 0)),
        ("gather float index", lambda: ops.gather(t(3), ms.Tensor(np.array([0.5], np.float32)), 0)),
        ("gather axis out of range", lambda: ops.gather(t(3), ms.Tensor(np.array([0], np.int32)), 3)),
        ("strided_slice zero stride", lambda: ops.strided_slice(t(4), (0,), (4,), (0,))),
        ("strided_slice short", lambda: ops.strided_slice(t(4, 4), (0, 0, 0), (4,), (1,))),
        ("slice negative size", lambda: ops.slice(t(4), (0,), (-5,))),
        ("slice out of range", lambda: ops.slice(t(4), (3,), (5,))),
        ("slice negative begin", lambda: ops.slice(t(4), (-1,), (1,))),
        ("slice short begin", lambda: ops.slice(t(4, 4), (0,), (1,))),
        ("where shape mismatch", lambda: ops.where(ms.Tensor(np.array([True, False])), t(3), t(3))),
        ("select non-bool", lambda: ops.select(t(2), t(2), t(2))),
        ("pow str", lambda: ops.pow(t(2), "a")),
        ("sqrt int tensor", lambda: ops.sqrt(t(2, dtype=np.int32))),
        ("addn mismatch", lambda: ops.addn((t(2), t(3)))),
        ("addn empty", lambda: ops.addn(())),
        ("print_ deep", lambda: ops.print_(DEEP_LIST)),
        ("assign shape mismatch", lambda: ops.assign(ms.Parameter(t(2), name="q"), t(3))),
    ]:
        p.append((f"ops.{label}", fn, TYPED + (OverflowError,) if "huge" in label else TYPED))
    # Empty tensors: results, not errors.
    # Values out of an integer type's range: a defined result (no undefined behaviour in the cast).
    for label, fn in [
        ("cast nan/inf/huge to int32",
         lambda: ops.cast(ms.Tensor(np.array([np.nan, np.inf, -np.inf, 1e300], np.float64)), ms.int32)),
        ("cast huge float32 to int64", lambda: ops.cast(ms.Tensor(np.array([3e38, -3e38], np.float32)), ms.int64)),
        ("cast huge to uint8", lambda: ops.cast(ms.Tensor(np.array([1e10, -1e10, np.nan], np.float32)), ms.uint8)),
        ("fill int32 with 1e300", lambda: ops.fill(ms.int32, (2,), 1e300)),
        ("fill int8 with nan", lambda: ops.fill(ms.int8, (2,), math.nan)),
        ("astype int16 of inf", lambda: ms.Tensor(np.array([np.inf], np.float32)).astype(ms.int16)),
    ]:
        p.append((label, fn, Ok(what="any values of the integer type", raises=TV)))
    p.append(("slice to the end", lambda: ops.slice(t(2, 4), (1, 1), (-1, 2)),
              equal(np.arange(8, dtype=np.float32).reshape(2, 4)[1:, 1:3])))
    p.append(("split uneven", lambda: ops.split(t(5), 2), Ok(lambda r: [a.shape for a in r] == [(2,), (2,), (1,)])))
    p.append(("clamp min > max (NumPy's clip)", lambda: ops.clamp(t(3), 5.0, 1.0),
              equal(np.clip(np.arange(3, dtype=np.float32), 5.0, 1.0))))
    p.append(("log of empty", lambda: ops.log(ops.zeros((0,))), equal(np.zeros((0,), np.float32))))
    p.append(("size of object", lambda: ops.size(object()), TYPE))
    p.append(("rank of str", lambda: ops.rank("a"), TYPE))
    p.append(("shape of list", lambda: ops.shape([1, 2]), TYPE))
    p.append(("dtype of float", lambda: ops.dtype(1.5), TYPE))
    p.append(("sum of empty", lambda: ops.sum(ops.zeros((0,))), equal(np.array(0.0, np.float32))))
    p.append(("add of empties", lambda: ops.zeros((0, 3)) + ops.zeros((0, 3)), equal(np.zeros((0, 3), np.float32))))
    p.append(("matmul (0,3)x(3,0)", lambda: ops.zeros((0, 3)) @ ops.zeros((3, 0)), equal(np.zeros((0, 0), np.float32))))
    p.append(("matmul (2,0)x(0,2)", lambda: ops.zeros((2, 0)) @ ops.zeros((0, 2)), equal(np.zeros((2, 2), np.float32))))
    p.append(("reshape empty", lambda: ops.zeros((0, 4)).reshape(4, 0), equal(np.zeros((4, 0), np.float32))))
    p.append(("concat with empty", lambda: ops.concat((ops.zeros((0, 2)), ops.ones((1, 2)))),
              equal(np.ones((1, 2), np.float32))))
    p.append(("exp of empty", lambda: ops.exp(ops.zeros((0,))), equal(np.zeros((0,), np.float32))))
    p.append(("transpose of empty", lambda: ops.transpose(ops.zeros((0, 3)), (1, 0)),
              equal(np.zeros((3, 0), np.float32))))
    p.append(("bool mask of empty", lambda: ops.zeros((0,))[ms.Tensor(np.zeros(0, bool))],
              equal(np.zeros((0,), np.float32))))
    # Indexing.
    x = t(3, 4)
    mask3 = np.array([True, False, True])
    for label, index in [("int out of range", 10), ("negative out of range", -10), ("huge int", 2**100),
                         ("int64 max", 2**63 - 1), ("str", "a"), ("float", 1.5), ("two ellipsis", (..., ...)),
                         ("too many", (0, 0, 0)), ("list out of range", [10]), ("array out of range", np.array([0, 9])),
                         ("tensor out of range", ms.Tensor(np.array([7], np.int32))),
                         ("float array", np.array([0.5])), ("object", object()), ("dict", {"a": 1}),
                         ("mask short", np.array([True, False])), ("mask long", np.array([True, False, True, True])),
                         ("mask tensor short", ms.Tensor(np.array([True, False]))),
                         ("mask 2-D wrong", np.ones((3, 3), bool)), ("mask 2-D transposed", np.ones((4, 3), bool)),
                         ("mask second axis wrong", (slice(None), np.array([True, False]))),
                         ("mask after ellipsis wrong", (..., np.array([True, False, True]))),
                         ("mask too many dims", np.ones((3, 4, 1), bool)),
                         ("mismatched arrays", ([0, 1], [0, 1, 2])), ("deep list", DEEP_LIST),
                         ("self list", SELF_LIST), ("nested ragged", [[0, 1], [0]])]:
        p.append((f"getitem {label}", lambda i=index: x[i], (IndexError, TypeError, ValueError)))
    p.append(("getitem mask ok", lambda: x[mask3], equal(np.arange(12, dtype=np.float32).reshape(3, 4)[mask3])))
    p.append(("getitem mask after ellipsis ok", lambda: x[..., np.array([True, False, False, True])],
              equal(np.arange(12, dtype=np.float32).reshape(3, 4)[..., np.array([True, False, False, True])])))
    p.append(("getitem 2-D mask ok", lambda: x[np.arange(12).reshape(3, 4) % 2 == 0],
              equal(np.arange(0, 12, 2, dtype=np.float32))))

    def setter(index, value):
        def run():
            y = t(3, 4)
            before = y.asnumpy().copy()
            try:
                y[index] = value
            except TYPED:
                if not np.array_equal(y.asnumpy(), before):
                    raise AssertionError("a failed assignment changed the tensor") from None
                raise
            return y
        return run

    for label, index, value in [("mask short", np.array([True, False]), 1.0), ("mask long", np.ones(4, bool), 1.0),
                                ("mask tensor short", ms.Tensor(np.array([True, False])), 1.0),
                                ("mask 2-D wrong", np.ones((4, 3), bool), 1.0),
                                ("int out of range", 5, 1.0), ("value shape mismatch", 0, [1.0, 2.0, 3.0]),
                                ("value str", 0, "a"), ("value object", 0, object()),
                                ("value deep", 0, DEEP_LIST), ("index str", "a", 1.0)]:
        p.append((f"setitem {label}", setter(index, value), (IndexError, TypeError, ValueError)))

    def setitem_mask_ok():
        y = t(3, 4)
        y[mask3] = -1.0
        return y

    ref = np.arange(12, dtype=np.float32).reshape(3, 4)
    ref[mask3] = -1.0
    p.append(("setitem mask ok", setitem_mask_ok, equal(ref)))
    # Parameters.
    for label, fn in [("Parameter(str)", lambda: ms.Parameter("abc")),
                      ("Parameter(object)", lambda: ms.Parameter(object())),
                      ("Parameter name int", lambda: ms.Parameter(t(2), name=5)),
                      ("Parameter deep", lambda: ms.Parameter(DEEP_LIST)),
                      ("set_data shape", lambda: ms.Parameter(t(2), name="a").set_data(t(3))),
                      ("set_data str", lambda: ms.Parameter(t(2), name="a").set_data("x")),
                      ("set_data deep", lambda: ms.Parameter(t(2), name="a").set_data(DEEP_LIST))]:
        p.append((label, fn, TV))
    return p


def make_nn():
    import msrt as ms
    from msrt import nn

    def t(*shape):
        return ms.Tensor(np.ones(shape, np.float32))

    p = []
    for label, fn in [
        ("Dense negative in", lambda: nn.Dense(-1, 3)),
        ("Dense zero out", lambda: nn.Dense(3, 0)),
        ("Dense str", lambda: nn.Dense("a", 3)),
        ("Dense float", lambda: nn.Dense(2.5, 3)),
        ("Dense overflow", lambda: nn.Dense(2**40, 2**40)),
        ("Dense huge", lambda: nn.Dense(2**20, 2**20)),
        ("Dense huge int", lambda: nn.Dense(2**100, 2)),
        ("Dense bad activation", lambda: nn.Dense(3, 2, activation="bogus")),
        ("Dense bad weight_init", lambda: nn.Dense(3, 2, weight_init="bogus")),
        ("Dense weight_init shape", lambda: nn.Dense(3, 2, weight_init=t(5, 5))),
        ("Dense call wrong dim", lambda: nn.Dense(3, 2)(t(4, 5))),
        ("Dense call 0-d", lambda: nn.Dense(3, 2)(ms.Tensor(1.0))),
        ("Dense call int tensor", lambda: nn.Dense(3, 2)(ms.Tensor(np.ones((2, 3), np.int32)))),
        ("Conv2d zero kernel", lambda: nn.Conv2d(3, 8, 0)),
        ("Conv2d negative kernel", lambda: nn.Conv2d(3, 8, -3)),
        ("Conv2d zero stride", lambda: nn.Conv2d(3, 8, 3, stride=0)),
        ("Conv2d bad pad_mode", lambda: nn.Conv2d(3, 8, 3, pad_mode="bogus")),
        ("Conv2d negative padding", lambda: nn.Conv2d(3, 8, 3, pad_mode="pad", padding=-1)),
        ("Conv2d group 0", lambda: nn.Conv2d(3, 8, 3, group=0)),
        ("Conv2d group mismatch", lambda: nn.Conv2d(3, 8, 3, group=2)),
        ("Conv2d zero dilation", lambda: nn.Conv2d(3, 8, 3, dilation=0)),
        ("Conv2d huge channels", lambda: nn.Conv2d(2**31, 2**31, 3)),
        ("Conv2d bad data_format", lambda: nn.Conv2d(3, 8, 3, data_format="NCWH")),
        ("Conv2d kernel tuple 3", lambda: nn.Conv2d(3, 8, (3, 3, 3))),
        ("Conv2d call 3-D", lambda: nn.Conv2d(3, 8, 3)(t(3, 8, 8))),
        ("Conv2d call channels", lambda: nn.Conv2d(3, 8, 3)(t(1, 4, 8, 8))),
        ("Conv2d call too small valid", lambda: nn.Conv2d(3, 8, 5, pad_mode="valid")(t(1, 3, 2, 2))),
        ("Conv2d call huge padding", lambda: nn.Conv2d(3, 8, 3, pad_mode="pad", padding=2**62)(t(1, 3, 4, 4))),
        ("Conv2d call huge dilation", lambda: nn.Conv2d(3, 8, 3, dilation=2**62, pad_mode="valid")(t(1, 3, 4, 4))),
        ("Conv2d call huge stride", lambda: nn.Conv2d(3, 8, 3, stride=2**63 - 1)(t(1, 3, 4, 4))),
        ("BatchNorm2d zero", lambda: nn.BatchNorm2d(0)),
        ("BatchNorm2d negative", lambda: nn.BatchNorm2d(-1)),
        ("BatchNorm2d momentum", lambda: nn.BatchNorm2d(3, momentum=2.0)),
        ("BatchNorm2d eps", lambda: nn.BatchNorm2d(3, eps=-1.0)),
        ("BatchNorm2d eps nan", lambda: nn.BatchNorm2d(3, eps=math.nan)),
        ("BatchNorm2d momentum nan", lambda: nn.BatchNorm2d(3, momentum=math.nan)),
        ("BatchNorm2d call channels", lambda: nn.BatchNorm2d(3)(t(2, 4, 2, 2))),
        ("BatchNorm2d call 2-D", lambda: nn.BatchNorm2d(3)(t(2, 3))),
        ("BatchNorm1d call 4-D", lambda: nn.BatchNorm1d(3)(t(2, 3, 2, 2))),
        ("Dropout keep_prob 0", lambda: nn.Dropout(keep_prob=0.0)),
        ("Dropout keep_prob 2", lambda: nn.Dropout(keep_prob=2.0)),
        ("Dropout p 1", lambda: nn.Dropout(p=1.0)),
        ("Dropout p negative", lambda: nn.Dropout(p=-0.5)),
        ("Dropout p str", lambda: nn.Dropout(p="a")),
        ("Dropout p nan", lambda: nn.Dropout(p=math.nan)),
        ("MaxPool2d zero kernel", lambda: nn.MaxPool2d(0)),
        ("MaxPool2d zero stride", lambda: nn.MaxPool2d(2, 0)),
        ("MaxPool2d bad pad_mode", lambda: nn.MaxPool2d(2, 2, pad_mode="bogus")),
        ("MaxPool2d call 2-D", lambda: nn.MaxPool2d(2, 2)(t(4, 4))),
        ("MaxPool2d call window too big", lambda: nn.MaxPool2d(5, 1)(t(1, 1, 2, 2))),
        ("MaxPool2d huge kernel", lambda: nn.MaxPool2d(2**62, 1)(t(1, 1, 2, 2))),
        ("AvgPool2d negative kernel", lambda: nn.AvgPool2d(-2)),
        ("AvgPool2d call window too big", lambda: nn.AvgPool2d(3, 1)(t(1, 1, 2, 2))),
        ("Flatten bad dims", lambda: nn.Flatten(start_dim=5)(t(2, 3))),
        ("Softmax axis call", lambda: nn.Softmax(axis=5)(t(2, 3))),
        ("Softmax axis str", lambda: nn.Softmax(axis="a")),
        ("LogSoftmax axis call", lambda: nn.LogSoftmax(axis=-5)(t(2, 3))),
        ("LeakyReLU alpha str", lambda: nn.LeakyReLU(alpha="a")),
        ("ReLU call str", lambda: nn.ReLU()("a")),
        ("ReLU call list", lambda: nn.ReLU()(DEEP_LIST)),
        ("get_activation bogus", lambda: nn.get_activation("bogus")),
        ("get_activation int", lambda: nn.get_activation(5)),
        ("SequentialCell str", lambda: nn.SequentialCell("x")),
        ("SequentialCell int", lambda: nn.SequentialCell([1, 2])),
        ("CellList int", lambda: nn.CellList([1])),
        ("MSELoss bad reduction", lambda: nn.MSELoss(reduction="bogus")),
        ("MSELoss reduction int", lambda: nn.MSELoss(reduction=5)),
        ("MSELoss shape mismatch", lambda: nn.MSELoss()(t(2, 3), t(3, 2))),
        ("L1Loss shape mismatch", lambda: nn.L1Loss()(t(2, 3), t(4))),
        ("L1Loss str", lambda: nn.L1Loss()("a", t(2))),
        ("CrossEntropyLoss bad reduction", lambda: nn.CrossEntropyLoss(reduction="x")),
        ("CrossEntropyLoss label out of range",
         lambda: nn.CrossEntropyLoss()(t(2, 3), ms.Tensor(np.array([0, 7], np.int32)))),
        ("CrossEntropyLoss label shape",
         lambda: nn.CrossEntropyLoss()(t(2, 3), ms.Tensor(np.array([0, 1, 2], np.int32)))),
        ("CrossEntropyLoss float labels shape", lambda: nn.CrossEntropyLoss()(t(2, 3), t(2, 4))),
        ("NLLLoss label out of range", lambda: nn.NLLLoss()(t(2, 3), ms.Tensor(np.array([0, -9], np.int32)))),
        ("NLLLoss weight shape", lambda: nn.NLLLoss(weight=t(5))(t(2, 3), ms.Tensor(np.array([0, 1], np.int32)))),
        ("NLLLoss float label", lambda: nn.NLLLoss()(t(2, 3), t(2))),
        ("SoftmaxCE sparse out of range",
         lambda: nn.SoftmaxCrossEntropyWithLogits(sparse=True)(t(2, 3), ms.Tensor(np.array([0, 3], np.int32)))),
        ("SoftmaxCE dense shape", lambda: nn.SoftmaxCrossEntropyWithLogits()(t(2, 3), t(2, 2))),
        ("SoftmaxCE bad reduction", lambda: nn.SoftmaxCrossEntropyWithLogits(reduction="bogus")),
    ]:
        p.append((f"nn.{label}", fn, TYPED))

    def params():
        return nn.Dense(3, 2).trainable_params()

    for label, fn in [
        ("SGD empty params", lambda: nn.SGD([], 0.1)),
        ("SGD params int", lambda: nn.SGD(5, 0.1)),
        ("SGD params str list", lambda: nn.SGD(["a"], 0.1)),
        ("SGD lr negative", lambda: nn.SGD(params(), -1.0)),
        ("SGD lr str", lambda: nn.SGD(params(), "a")),
        ("SGD lr nan", lambda: nn.SGD(params(), math.nan)),
        ("Adam lr nan", lambda: nn.Adam(params(), math.nan)),
        ("SGD lr deep", lambda: nn.SGD(params(), DEEP_LIST)),
        ("SGD momentum negative", lambda: nn.SGD(params(), 0.1, momentum=-1.0)),
        ("SGD weight_decay negative", lambda: nn.SGD(params(), 0.1, weight_decay=-1.0)),
        ("SGD nesterov without momentum", lambda: nn.SGD(params(), 0.1, nesterov=True)),
        ("SGD loss_scale zero", lambda: nn.SGD(params(), 0.1, loss_scale=0.0)),
        ("SGD lr tensor 2-D", lambda: nn.SGD(params(), ms.Tensor(np.ones((2, 2), np.float32)))),
        ("SGD group missing params", lambda: nn.SGD([{"lr": 0.1}], 0.1)),
        ("SGD group unknown key", lambda: nn.SGD([{"params": params(), "bogus": 1}], 0.1)),
        ("Momentum missing momentum", lambda: nn.Momentum(params(), 0.1)),
        ("Momentum negative", lambda: nn.Momentum(params(), 0.1, -0.5)),
        ("Momentum str", lambda: nn.Momentum(params(), 0.1, "a")),
        ("Adam beta1 2", lambda: nn.Adam(params(), beta1=2.0)),
        ("Adam beta2 negative", lambda: nn.Adam(params(), beta2=-0.1)),
        ("Adam eps zero", lambda: nn.Adam(params(), eps=0.0)),
        ("Adam eps nan", lambda: nn.Adam(params(), eps=math.nan)),
        ("SGD momentum nan", lambda: nn.SGD(params(), 0.1, momentum=math.nan)),
        ("Adam eps str", lambda: nn.Adam(params(), eps="a")),
        ("Adam weight_decay negative", lambda: nn.Adam(params(), weight_decay=-1.0)),
        ("AdamWeightDecay beta1 nan", lambda: nn.AdamWeightDecay(params(), beta1=math.nan)),
        ("optimizer call wrong count", lambda: nn.SGD(params(), 0.1)((t(2, 3),))),
        ("Adam call wrong count", lambda: nn.Adam(params(), 0.1)((t(2, 3),))),
        ("AdamWeightDecay call wrong count", lambda: nn.AdamWeightDecay(params(), 0.1)((t(2, 3),))),
        ("Momentum call wrong count", lambda: nn.Momentum(params(), 0.1, 0.9)(())),
        ("optimizer call wrong shape", lambda: nn.SGD(params(), 0.1)((t(5, 5), t(2)))),
        ("optimizer call str", lambda: nn.SGD(params(), 0.1)("x")),
        ("lr list wrong", lambda: nn.SGD(params(), [0.1, "a"])),
        ("CosineDecayLR min > max", lambda: nn.CosineDecayLR(1.0, 0.1, 10)),
        ("CosineDecayLR steps 0", lambda: nn.CosineDecayLR(0.0, 0.1, 0)),
        ("ExponentialDecayLR rate str", lambda: nn.ExponentialDecayLR(0.1, "a", 10)),
        ("ExponentialDecayLR steps negative", lambda: nn.ExponentialDecayLR(0.1, 0.9, -1)),
        ("PolynomialDecayLR power negative", lambda: nn.PolynomialDecayLR(0.1, 0.01, 10, -1.0)),
        ("WarmUpLR steps 0", lambda: nn.WarmUpLR(0.1, 0)),
        ("piecewise unsorted", lambda: nn.piecewise_constant_lr([5, 2], [0.1, 0.2])),
        ("piecewise mismatch", lambda: nn.piecewise_constant_lr([2, 5], [0.1])),
        ("exponential_decay_lr negative", lambda: nn.exponential_decay_lr(0.1, 0.9, -1, 1, 1)),
        ("cosine_decay_lr str", lambda: nn.cosine_decay_lr(0.0, 0.1, "a", 1, 1)),
        ("warmup_lr zero epoch", lambda: nn.warmup_lr(0.1, 10, 1, 0)),
        ("TrainOneStepCell not cell", lambda: nn.TrainOneStepCell(5, nn.SGD(params(), 0.1))),
        ("TrainOneStepCell not optimizer", lambda: nn.TrainOneStepCell(nn.Dense(3, 2), 5)),
        ("WithLossCell not cell", lambda: nn.WithLossCell(5, nn.MSELoss())),
        ("WithLossCell call wrong shape", lambda: nn.WithLossCell(nn.Dense(3, 2), nn.MSELoss())(t(2, 5), t(2, 2))),
    ]:
        p.append((f"nn.{label}", fn, TYPED))
    return p


def _write_mnist(directory, n=8):
    import struct

    images = np.zeros((n, 28, 28), np.uint8)
    labels = (np.arange(n) % 10).astype(np.uint8)
    for split, stem in [("train", "train"), ("test", "t10k")]:
        with open(os.path.join(directory, f"{stem}-images-idx3-ubyte"), "wb") as f:
            f.write(struct.pack(">IIII", 2051, n, 28, 28) + images.tobytes())
        with open(os.path.join(directory, f"{stem}-labels-idx1-ubyte"), "wb") as f:
            f.write(struct.pack(">II", 2049, n) + labels.tobytes())


def make_dataset():
    import msrt.dataset as ds
    from msrt.dataset import transforms, vision

    tmp = tempfile.mkdtemp()
    _write_mnist(tmp)

    def base():
        return ds.MnistDataset(tmp, usage="train")

    def first(dataset):
        return next(dataset.create_tuple_iterator(num_epochs=1))

    p = []
    for label, fn in [
        ("Mnist missing dir", lambda: first(ds.MnistDataset(os.path.join(tmp, "nope")))),
        ("Mnist nul path", lambda: ds.MnistDataset(tmp + "\0x")),
        ("Mnist int path", lambda: ds.MnistDataset(5)),
        ("Mnist bad usage", lambda: ds.MnistDataset(tmp, usage="bogus")),
        ("Mnist num_samples negative", lambda: ds.MnistDataset(tmp, num_samples=-1)),
        ("Mnist num_samples str", lambda: ds.MnistDataset(tmp, num_samples="a")),
        ("Mnist num_shards without shard_id", lambda: ds.MnistDataset(tmp, num_shards=2)),
        ("Mnist shard_id out of range", lambda: ds.MnistDataset(tmp, num_shards=2, shard_id=5)),
        ("Mnist num_parallel_workers 0", lambda: ds.MnistDataset(tmp, num_parallel_workers=0)),
        ("Mnist sampler and shuffle", lambda: ds.MnistDataset(tmp, sampler=ds.SequentialSampler(), shuffle=True)),
        ("batch 0", lambda: base().batch(0)),
        ("batch negative", lambda: base().batch(-1)),
        ("batch str", lambda: base().batch("a")),
        ("batch huge", lambda: base().batch(2**40)),
        ("batch float", lambda: base().batch(1.5)),
        ("repeat -2", lambda: base().repeat(-2)),
        ("repeat str", lambda: base().repeat("a")),
        ("repeat 0", lambda: base().repeat(0)),
        ("shuffle 0", lambda: base().shuffle(0)),
        ("shuffle negative", lambda: base().shuffle(-5)),
        ("shuffle str", lambda: base().shuffle("a")),
        ("take -2", lambda: base().take(-2)),
        ("take str", lambda: base().take("a")),
        ("skip -1", lambda: base().skip(-1)),
        ("project unknown", lambda: first(base().project(["nope"]))),
        ("project empty", lambda: base().project([])),
        ("project int", lambda: base().project(5)),
        ("rename mismatch", lambda: base().rename(["image"], ["a", "b"])),
        ("rename unknown", lambda: first(base().rename(["nope"], ["a"]))),
        ("map operations int", lambda: base().map(operations=5)),
        ("map unknown column", lambda: first(base().map(operations=[lambda x: x], input_columns=["nope"]))),
        ("map raising op", lambda: first(base().map(operations=[lambda x: 1 / 0], input_columns=["image"]))),
        ("map deep list", lambda: base().map(operations=DEEP_LIST)),
        ("iterator num_epochs 0", lambda: base().create_tuple_iterator(num_epochs=0)),
        ("iterator num_epochs str", lambda: base().create_tuple_iterator(num_epochs="a")),
        ("dict iterator num_epochs -2", lambda: base().create_dict_iterator(num_epochs=-2)),
        ("tuple iterator columns unknown", lambda: first_columns(base())),
        ("Resize negative", lambda: vision.Resize(-1)),
        ("Resize zero", lambda: vision.Resize((0, 5))),
        ("Resize str", lambda: vision.Resize("a")),
        ("Resize huge", lambda: first(base().map(operations=[vision.Resize((2**20, 2**20))], input_columns=["image"]))),
        ("Rescale str", lambda: vision.Rescale("a", 0.0)),
        ("Normalize mismatch", lambda: vision.Normalize([0.5, 0.5], [0.5])),
        ("Normalize zero std", lambda: vision.Normalize([0.5], [0.0])),
        ("HWC2CHW on 2-D call", lambda: vision.HWC2CHW()(np.zeros(3, np.uint8))),
        ("TypeCast bogus", lambda: transforms.TypeCast("bogus")),
        ("RandomSampler num_samples negative", lambda: ds.RandomSampler(num_samples=-1)),
        ("SubsetSampler str", lambda: ds.SubsetSampler("abc")),
        ("SubsetSampler out of range", lambda: first(ds.MnistDataset(tmp, sampler=ds.SubsetSampler([100])))),
        ("DistributedSampler shard out of range", lambda: ds.DistributedSampler(2, 5)),
        ("DistributedSampler zero shards", lambda: ds.DistributedSampler(0, 0)),
        ("config set_seed negative", lambda: ds.config.set_seed(-1)),
        ("config set_seed huge", lambda: ds.config.set_seed(2**100)),
    ]:
        p.append((f"dataset.{label}", fn, TYPED + (ZeroDivisionError,) if "raising" in label else TYPED))
    return p


def first_columns(dataset):
    return next(dataset.create_tuple_iterator(columns=["nope"], num_epochs=1))


def make_grad():
    import msrt as ms
    from msrt import ops

    def f(x):
        return (x * x).sum()

    x = ms.Tensor(np.array([1.0, 2.0], np.float32))
    p = []
    for label, fn in [
        ("grad int", lambda: ms.grad(5)(x)),
        ("grad position out of range", lambda: ms.grad(f, grad_position=5)(x)),
        ("grad position negative", lambda: ms.grad(f, grad_position=-3)(x)),
        ("grad position str", lambda: ms.grad(f, grad_position="a")(x)),
        ("grad position float", lambda: ms.grad(f, grad_position=0.5)(x)),
        ("grad position huge", lambda: ms.grad(f, grad_position=2**100)(x)),
        ("grad weights int", lambda: ms.grad(f, grad_position=None, weights=5)(x)),
        ("grad of str arg", lambda: ms.grad(f)("a")),
        ("grad of None output", lambda: ms.grad(lambda y: None)(x)),
        ("grad of raising function", lambda: ms.grad(lambda y: y.reshape(7))(x)),
        ("value_and_grad position out of range", lambda: ms.value_and_grad(f, grad_position=3)(x)),
        ("value_and_grad weights str", lambda: ms.value_and_grad(f, None, weights="a")(x)),
        ("value_and_grad has_aux non-tuple", lambda: ms.value_and_grad(f, has_aux=True)(x)),
        ("grad sens wrong shape", lambda: ops.GradOperation(sens_param=True)(f)(x, ms.Tensor(np.ones(3, np.float32)))),
        ("GradOperation get_by_list no weights", lambda: ops.GradOperation(get_by_list=True)(f)(x)),
    ]:
        p.append((f"grad.{label}", fn, TYPED))
    # MindSpore's rule: a non-scalar output is differentiated with sens = ones.
    p.append(("grad of non-scalar output", lambda: ms.grad(lambda y: y * 2)(x),
              Ok(lambda r: np.allclose(r.asnumpy(), [2.0, 2.0]), "[2, 2]")))
    p.append(("grad correct", lambda: ms.grad(f)(x), Ok(lambda r: np.allclose(r.asnumpy(), [2.0, 4.0]), "[2, 4]")))
    return p


def make_profiler():
    import msrt as ms

    tmp = tempfile.mkdtemp()
    p = []
    for label, kwargs in [
        ("output_path int", {"output_path": 5}),
        ("output_path deep", {"output_path": DEEP_LIST}),
        ("output_path file", {"output_path": __file__}),
        ("profile_memory str", {"profile_memory": "x"}),
        ("profile_memory deep", {"profile_memory": DEEP_LIST}),
        ("start_profile int", {"start_profile": 2}),
        ("start_profile self list", {"start_profile": SELF_LIST}),
        ("unknown option", {"bogus": 1}),
        ("unknown deep", {"bogus": DEEP_DICT}),
        ("nested dict option", {"output_path": tmp, "profile_memory": SELF_DICT}),
        ("huge int", {"output_path": tmp, "start_profile": 2**100}),
    ]:
        p.append((f"Profiler({label})", lambda k=kwargs: ms.Profiler(**k), TYPED))

    def start_twice():
        prof = ms.Profiler(output_path=tmp, start_profile=True)
        try:
            prof.start()
        finally:
            prof.stop()

    def stop_idle():
        prof = ms.Profiler(output_path=tmp, start_profile=False)
        prof.stop()

    p.append(("Profiler start twice", start_twice, (RuntimeError,)))
    p.append(("Profiler stop idle", stop_idle, (RuntimeError,)))
    for label, fn in [
        ("memory_allocated bogus", lambda: ms.runtime.memory_allocated("TPU")),
        ("memory_allocated int", lambda: ms.runtime.memory_allocated(5)),
        ("memory_allocated deep", lambda: ms.runtime.memory_allocated(DEEP_LIST)),
        ("memory_allocated nul", lambda: ms.runtime.memory_allocated("CPU\0")),
        ("memory_stats bogus", lambda: ms.runtime.memory_stats("bogus")),
        ("memory_summary int", lambda: ms.runtime.memory_summary(3)),
        ("max_memory_allocated bogus", lambda: ms.runtime.max_memory_allocated("x")),
        ("memory_reserved bogus", lambda: ms.runtime.memory_reserved("x")),
        ("max_memory_reserved bogus", lambda: ms.runtime.max_memory_reserved("x")),
        ("reset_peak bogus", lambda: ms.runtime.reset_peak_memory_stats("x")),
        ("empty_cache bogus", lambda: ms.runtime.empty_cache("x")),
        ("set_seed str", lambda: ms.set_seed("a")),
        ("set_seed negative", lambda: ms.set_seed(-1)),
        ("set_seed huge", lambda: ms.set_seed(2**100)),
        ("set_seed deep", lambda: ms.set_seed(DEEP_LIST)),
    ]:
        p.append((f"runtime.{label}", fn, TYPED + (OverflowError,) if "huge" in label else TYPED))
    p.append(("runtime.thread_info", lambda: ms.runtime.thread_info(), Ok(lambda r: isinstance(r, dict), "a dict")))
    p.append(("runtime.memory_allocated CPU", lambda: ms.runtime.memory_allocated("CPU"),
              Ok(lambda r: isinstance(r, int) and r >= 0, "an int >= 0")))
    return p


def make_primitives():
    import msrt as ms
    from msrt import ops

    P = ops.operations if hasattr(ops, "operations") else ops  # noqa: N806 - MindSpore's `operations as P`

    def t(*shape, dtype=np.float32):
        return ms.Tensor(np.ones(shape, dtype))

    idx = ms.Tensor(np.array([0, 1], np.int32))
    p = []
    for label, fn in [
        ("Conv2D out_channel 0", lambda: P.Conv2D(0, 3)(t(1, 3, 4, 4), t(0, 3, 3, 3))),
        ("Conv2D pad huge", lambda: P.Conv2D(2, 2, pad_mode="pad", pad=2**62)(t(1, 3, 4, 4), t(2, 3, 2, 2))),
        ("Conv2D pad negative", lambda: P.Conv2D(2, 2, pad_mode="pad", pad=-1)(t(1, 3, 4, 4), t(2, 3, 2, 2))),
        ("Conv2D stride huge", lambda: P.Conv2D(2, 2, stride=2**63 - 1)(t(1, 3, 4, 4), t(2, 3, 2, 2))),
        ("Conv2D dilation huge", lambda: P.Conv2D(2, 2, dilation=2**62)(t(1, 3, 4, 4), t(2, 3, 2, 2))),
        ("Conv2D weight mismatch", lambda: P.Conv2D(2, 2)(t(1, 3, 4, 4), t(2, 5, 2, 2))),
        ("Conv2D group huge", lambda: P.Conv2D(2, 2, group=2**62)(t(1, 3, 4, 4), t(2, 3, 2, 2))),
        ("MaxPool kernel huge", lambda: P.MaxPool(kernel_size=2**62, strides=1)(t(1, 1, 4, 4))),
        ("MaxPool kernel zero", lambda: P.MaxPool(kernel_size=0)(t(1, 1, 4, 4))),
        ("MaxPool strides zero", lambda: P.MaxPool(kernel_size=2, strides=0)(t(1, 1, 4, 4))),
        ("MaxPool same stride huge",
         lambda: P.MaxPool(kernel_size=2, strides=2**63 - 1, pad_mode="same")(t(1, 1, 4, 4))),
        ("AvgPool kernel negative", lambda: P.AvgPool(kernel_size=-2)(t(1, 1, 4, 4))),
        ("AvgPool 3-D input", lambda: P.AvgPool(kernel_size=2)(t(1, 4, 4))),
        ("Reshape negative", lambda: P.Reshape()(t(6), (-2, -3))),
        ("Reshape overflow", lambda: P.Reshape()(t(6), (2**62, 4, 0))),
        ("Reshape deep", lambda: P.Reshape()(t(6), DEEP_LIST)),
        ("Reshape self list", lambda: P.Reshape()(t(6), SELF_LIST)),
        ("Tile overflow", lambda: P.Tile()(t(2, 2), (2**62, 2**62))),
        ("BroadcastTo overflow", lambda: P.BroadcastTo((2**40, 2**40))(t(1, 1))),
        ("BroadcastTo incompatible", lambda: P.BroadcastTo((3, 4))(t(2, 4))),
        ("OneHot depth huge", lambda: P.OneHot()(idx, 2**62, ms.Tensor(1.0), ms.Tensor(0.0))),
        ("OneHot depth overflow",
         lambda: P.OneHot()(ms.Tensor(np.zeros((2**20,), np.int32)), 2**50, ms.Tensor(1.0), ms.Tensor(0.0))),
        ("OneHot axis bad", lambda: P.OneHot(axis=5)(idx, 3, ms.Tensor(1.0), ms.Tensor(0.0))),
        ("Transpose duplicate", lambda: P.Transpose()(t(2, 3), (0, 0))),
        ("Concat axis", lambda: P.Concat(axis=5)((t(2), t(2)))),
        ("Stack axis", lambda: P.Stack(axis=-9)((t(2), t(2)))),
        ("Split zero outputs", lambda: P.Split(0, 0)(t(4))),
        ("Split uneven", lambda: P.Split(0, 3)(t(4))),
        ("StridedSlice zero stride", lambda: P.StridedSlice()(t(4), (0,), (4,), (0,))),
        ("Gather axis", lambda: P.Gather()(t(3), idx, 5)),
        ("Fill overflow", lambda: P.Fill()(ms.float32, (2**40, 2**40), 1.0)),
        ("Fill negative", lambda: P.Fill()(ms.float32, (-1,), 1.0)),
        ("Zeros overflow", lambda: P.Zeros()((2**40, 2**40), ms.float32)),
        ("Ones huge", lambda: P.Ones()((2**45,), ms.float32)),
        ("Cast bogus", lambda: P.Cast()(t(2), "bogus")),
        ("ReduceSum axis huge", lambda: P.ReduceSum()(t(2, 3), 2**62)),
        ("ReduceMean axis deep", lambda: P.ReduceMean()(t(2, 3), DEEP_LIST)),
        ("Argmax axis", lambda: P.Argmax(axis=9)(t(2, 3))),
        ("MatMul mismatch", lambda: P.MatMul()(t(2, 3), t(2, 3))),
        ("BatchMatMul rank", lambda: P.BatchMatMul()(t(3), t(3))),
        ("BiasAdd mismatch", lambda: P.BiasAdd()(t(2, 3), t(4))),
        ("Softmax axis", lambda: P.Softmax(axis=7)(t(2, 3))),
        ("Dropout keep_prob 0", lambda: P.Dropout(keep_prob=0.0)(t(3))),
        ("Dropout keep_prob nan", lambda: P.Dropout(keep_prob=math.nan)(t(3))),
        ("BatchNorm mismatch", lambda: P.BatchNorm()(t(2, 3, 2, 2), t(4), t(4), t(4), t(4))),
        ("SparseSoftmaxCE label range",
         lambda: P.SparseSoftmaxCrossEntropyWithLogits()(t(2, 3), ms.Tensor(np.array([0, 9], np.int32)))),
        ("Assign shape", lambda: P.Assign()(ms.Parameter(t(2), name="w"), t(3))),
        ("ApplyGradientDescent shape",
         lambda: P.ApplyGradientDescent()(ms.Parameter(t(2), name="w"), ms.Tensor(0.1), t(3))),
        ("Print deep", lambda: P.Print()(DEEP_LIST)),
        ("ScalarToTensor str", lambda: P.ScalarToTensor()("a")),
        ("TupleToArray ragged", lambda: P.TupleToArray()(((1, 2), (3,)))),
        ("Shape of str", lambda: P.Shape()("a")),
        ("Rank of list", lambda: P.Rank()([1])),
        ("Size of None", lambda: P.Size()(None)),
        ("DType of int", lambda: P.DType()(3)),
        ("TupleToArray deep", lambda: P.TupleToArray()(DEEP_TUPLE)),
    ]:
        p.append((f"P.{label}", fn, TYPED + (OverflowError,) if "huge" in label else TYPED))
    x = np.arange(4, dtype=np.float32)
    for label, args, expected in [
        ("huge stride", ((0,), (2**63 - 1,), (2**63 - 1,)), x[0:2**63 - 1:2**63 - 1]),
        ("int64 min stride", ((2**63 - 1,), (-(2**63),), (-(2**63),)), x[2**63 - 1:-(2**63):-(2**63)]),
        ("huge negative stride", ((3,), (-(2**63),), (-(2**63) + 1,)), x[3:-(2**63):-(2**63) + 1]),
        ("big step", ((1,), (4,), (2,)), x[1:4:2]),
        ("reverse", ((-1,), (-5,), (-1,)), x[-1:-5:-1]),
    ]:
        p.append((f"P.StridedSlice {label}", lambda a=args: P.StridedSlice()(ms.Tensor(x), *a),
                  Ok(lambda r, e=expected: np.array_equal(r.asnumpy(), e), repr(expected.tolist()))))
    p.append(("P.Tile short multiples (padded with 1s, as NumPy)", lambda: P.Tile()(t(2, 2), (2,)),
              Ok(lambda r: r.shape == (2, 4))))
    return p


def make_train():
    import msrt as ms
    import msrt.dataset as ds
    from msrt import amp, nn
    from msrt.train import CheckpointConfig, LossMonitor, Model, ModelCheckpoint, TimeMonitor

    tmp = tempfile.mkdtemp()
    _write_mnist(tmp)

    def t(*shape):
        return ms.Tensor(np.ones(shape, np.float32))

    def model(**kw):
        net = nn.Dense(3, 2)
        return Model(net, nn.MSELoss(), nn.SGD(net.trainable_params(), 0.1), **kw)

    def data():
        return ds.MnistDataset(tmp, usage="train").batch(2)

    ckpt = os.path.join(tmp, "net.ckpt")
    garbage = os.path.join(tmp, "garbage.ckpt")
    with open(garbage, "wb") as f:
        f.write(b"\x00" * 64)
    p = []
    for label, fn in [
        ("Model network int", lambda: Model(5)),
        ("Model loss str", lambda: Model(nn.Dense(3, 2), "mse")),
        ("Model optimizer int", lambda: Model(nn.Dense(3, 2), nn.MSELoss(), 5)),
        ("Model amp_level bogus", lambda: model(amp_level="O9")),
        ("Model metrics int", lambda: model(metrics=5)),
        ("Model metrics unknown", lambda: model(metrics={"bogus_metric"})),
        ("Model.train epoch 0", lambda: model().train(0, data())),
        ("Model.train epoch str", lambda: model().train("a", data())),
        ("Model.train epoch negative", lambda: model().train(-1, data())),
        ("Model.train dataset int", lambda: model().train(1, 5)),
        ("Model.train wrong shapes", lambda: model().train(1, data())),
        ("Model.train callbacks int", lambda: model().train(1, data(), callbacks=5)),
        ("Model.train sink_size str", lambda: model().train(1, data(), sink_size="a")),
        ("Model.eval without metrics", lambda: model().eval(data())),
        ("Model.predict wrong shape", lambda: model().predict(t(2, 7))),
        ("LossMonitor str", lambda: LossMonitor("a")),
        ("TimeMonitor data_size negative", lambda: TimeMonitor(data_size=-1)),
        ("CheckpointConfig steps negative", lambda: CheckpointConfig(save_checkpoint_steps=-1)),
        ("CheckpointConfig all zero", lambda: CheckpointConfig(save_checkpoint_steps=0, save_checkpoint_seconds=0,
                                                               keep_checkpoint_max=0, keep_checkpoint_per_n_minutes=0)),
        ("CheckpointConfig keep max negative", lambda: CheckpointConfig(keep_checkpoint_max=-1)),
        ("ModelCheckpoint prefix slash", lambda: ModelCheckpoint(prefix="a/b", directory=tmp)),
        ("ModelCheckpoint prefix int", lambda: ModelCheckpoint(prefix=5, directory=tmp)),
        ("ModelCheckpoint config str", lambda: ModelCheckpoint(directory=tmp, config="x")),
        ("ModelCheckpoint directory nul", lambda: ModelCheckpoint(directory=tmp + "/a\0b")),
        ("save_checkpoint int", lambda: ms.save_checkpoint(5, ckpt)),
        ("save_checkpoint path int", lambda: ms.save_checkpoint(nn.Dense(3, 2), 5)),
        ("save_checkpoint path nul", lambda: ms.save_checkpoint(nn.Dense(3, 2), tmp + "/a\0.ckpt")),
        ("save_checkpoint deep list", lambda: ms.save_checkpoint(DEEP_LIST, ckpt)),
        ("save_checkpoint list of object", lambda: ms.save_checkpoint([{"name": "a", "data": object()}], ckpt)),
        ("load_checkpoint missing", lambda: ms.load_checkpoint(os.path.join(tmp, "missing.ckpt"))),
        ("load_checkpoint garbage", lambda: ms.load_checkpoint(garbage)),
        ("load_checkpoint directory", lambda: ms.load_checkpoint(tmp)),
        ("load_checkpoint int", lambda: ms.load_checkpoint(5)),
        ("load_checkpoint nul", lambda: ms.load_checkpoint(tmp + "/a\0.ckpt")),
        ("load_param_into_net int", lambda: ms.load_param_into_net(nn.Dense(3, 2), 5)),
        ("load_param_into_net wrong shape",
         lambda: ms.load_param_into_net(nn.Dense(3, 2), {"weight": ms.Parameter(t(7, 7), name="weight")})),
        ("load_param_into_net net int", lambda: ms.load_param_into_net(5, {})),
        ("parse_print missing", lambda: ms.parse_print(os.path.join(tmp, "missing.pb"))),
        ("parse_print garbage", lambda: ms.parse_print(garbage)),
        ("parse_print int", lambda: ms.parse_print(5)),
        ("export net int", lambda: ms.export(5, t(1, 3), file_name=os.path.join(tmp, "g"))),
        ("export bad format",
         lambda: ms.export(nn.Dense(3, 2), t(1, 3), file_name=os.path.join(tmp, "g"), file_format="BOGUS")),
        ("export wrong input shape", lambda: ms.export(nn.Dense(3, 2), t(1, 7), file_name=os.path.join(tmp, "g"))),
        ("export name nul", lambda: ms.export(nn.Dense(3, 2), t(1, 3), file_name=tmp + "/g\0")),
        ("load missing", lambda: ms.load(os.path.join(tmp, "missing.mindir"))),
        ("load garbage", lambda: ms.load(garbage)),
        ("load int", lambda: ms.load(5)),
        ("amp level bogus", lambda: amp.auto_mixed_precision(nn.Dense(3, 2), "O7")),
        ("amp dtype bogus", lambda: amp.auto_mixed_precision(nn.Dense(3, 2), "O2", dtype="bogus")),
        ("amp network int", lambda: amp.auto_mixed_precision(5, "O2")),
        ("amp build_train_network level",
         lambda: amp.build_train_network(nn.Dense(3, 2), nn.SGD(nn.Dense(3, 2).trainable_params(), 0.1), level="O9")),
        ("amp all_finite str", lambda: amp.all_finite("a")),
    ]:
        p.append((f"train.{label}", fn, TYPED))
    return p


def make_op_attributes():
    """Every op of the catalogue, called through the one entry point all
    public ops use, with each attribute set to extreme or ill-typed values:
    a typed error or a result, never a crash (or, under UBSan, undefined
    behaviour in shape inference)."""
    import msrt as ms
    from msrt import _C

    bad_values = [("int64_max", 2**63 - 1), ("int64_min", -(2**63)), ("minus_one", -1), ("zero", 0),
                  ("two_pow_40", 2**40), ("list_int64_max", [2**63 - 1] * 4), ("list_int64_min", [-(2**63)] * 2),
                  ("list_mixed", [1, -(2**63), 2**63 - 1]), ("nan", math.nan), ("inf", -math.inf),
                  ("str", "bogus"), ("deep", DEEP_LIST), ("nested", [[1, 2]]), ("none", None)]
    x = ms.Tensor(np.ones((1, 2, 4, 4), np.float32))._t
    p = []
    for name in _C.op_names():
        info = _C.op_info(name)
        inputs = [x, x] if info["inputs"] and info["inputs"][0].endswith("...") else [x] * len(info["inputs"])
        p.append((f"op {name} defaults", lambda n=name, i=inputs: _C.call(n, i, {}),
                  Ok(what="a result", raises=TYPED)))
        for attr in info["attrs"]:
            for label, value in bad_values:
                p.append((f"op {name}.{attr}={label}", lambda n=name, i=inputs, a=attr, v=value: _C.call(n, i, {a: v}),
                          Ok(what="a result", raises=TYPED)))
        p.append((f"op {name} unknown attribute", lambda n=name, i=inputs: _C.call(n, i, {"no_such_attribute": 1}),
                  TYPED))
    return p


def make_jit():
    import msrt as ms
    from msrt import nn, ops

    def f(x):
        return ops.reshape(x * 2, (-1,))

    def t(*shape):
        return ms.Tensor(np.ones(shape, np.float32))

    jf = ms.jit(f)
    p = []
    for label, fn in [
        ("jit call str", lambda: jf("a")),
        ("jit call deep list", lambda: jf(DEEP_LIST)),
        ("jit call self list", lambda: jf(SELF_LIST)),
        ("jit call deep dict", lambda: jf(DEEP_DICT)),
        ("jit call object", lambda: jf(object())),
        ("jit wrong arity", lambda: jf(t(2), t(2))),
        ("jit overflow inside", lambda: ms.jit(lambda x: ops.broadcast_to(x, (2**40, 2**40)))(t(1, 1))),
        ("jit tile overflow inside", lambda: ms.jit(lambda x: ops.tile(x, (2**62, 2**62)))(t(2, 2))),
        ("jit reshape bad inside", lambda: ms.jit(lambda x: x.reshape(7))(t(2, 3))),
        ("jit zeros huge inside", lambda: ms.jit(lambda x: x + ops.zeros((2**45,)))(t(1))),
        ("jit zeros negative inside", lambda: ms.jit(lambda x: x + ops.zeros((-3,)))(t(1))),
        ("jit shape mismatch inside", lambda: ms.jit(lambda x, y: x + y)(t(2, 3), t(3, 2))),
        ("jit of int", lambda: ms.jit(5)),
        ("jit bad capture_mode", lambda: ms.jit(f, capture_mode="bogus")(t(2))),
        ("jit grad overflow", lambda: ms.grad(ms.jit(lambda x: ops.broadcast_to(x, (2**40, 2**40)).sum()))(t(1, 1))),
        ("graph cell wrong shape", lambda: _graph_mode(lambda: nn.Dense(3, 2)(t(4, 5)))),
        ("graph cell deep input", lambda: _graph_mode(lambda: nn.ReLU()(DEEP_LIST))),
        ("graph cell huge broadcast", lambda: _graph_mode(lambda: _BroadcastCell()(t(1, 1)))),
    ]:
        p.append((f"jit.{label}", fn, TYPED))
    p.append(("jit big-endian input", lambda: jf(ms.Tensor(np.array([1.5, 2], ">f4"))),
              Ok(lambda r: np.array_equal(r.asnumpy(), [3.0, 4.0]), "[3, 4]")))
    p.append(("jit correct after errors", lambda: jf(t(2)),
              Ok(lambda r: np.array_equal(r.asnumpy(), [2.0, 2.0]), "[2, 2]")))
    return p


def _graph_mode(fn):
    import msrt as ms

    ms.set_context(mode=ms.GRAPH_MODE)
    try:
        return fn()
    finally:
        ms.set_context(mode=ms.PYNATIVE_MODE)


def _BroadcastCell():  # noqa: N802 - builds a Cell class lazily (msrt imported in the group process)
    from msrt import nn, ops

    class BroadcastCell(nn.Cell):
        def construct(self, x):
            return ops.broadcast_to(x, (2**40, 2**40))

    return BroadcastCell()


def make_harness_self_test():
    """For test_probes' own test: a probe that crashes between two that pass."""
    import ctypes

    return [("before", lambda: 1, Ok()), ("segfault", lambda: ctypes.string_at(0), TYPED), ("after", lambda: 2, Ok())]


GROUPS = {
    "context": make_context,
    "tensor": make_tensor,
    "nn": make_nn,
    "dataset": make_dataset,
    "grad": make_grad,
    "profiler": make_profiler,
    "jit": make_jit,
    "primitives": make_primitives,
    "train": make_train,
    "op_attributes": make_op_attributes,
}
# Run only by test_probes' check that a crash is seen and the group goes on.
HARNESS_GROUPS = {"harness_self_test": make_harness_self_test}


def _materialize(result):
    """Reads every Tensor in the result: ops run asynchronously, and an op's
    error is raised when its output is read."""
    if hasattr(result, "asnumpy"):
        result.asnumpy()
    elif isinstance(result, (tuple, list)):
        for item in result:
            _materialize(item)
    return result


def _short(value):
    try:
        text = repr(value)
    except BaseException as e:  # noqa: BLE001 - a repr that fails is reported, not raised
        text = f"<repr failed: {type(e).__name__}>"
    return text[:200]


def run_group(group, first=0, out=sys.stdout):
    """Runs one group from probe `first` on; one JSON line per probe:
    {"name", "outcome", "detail"}. A "start" line (with the probe's index)
    precedes each probe so that a crash names the probe it hit."""
    warnings.simplefilter("ignore")
    probes = {**GROUPS, **HARNESS_GROUPS}[group]()
    print(json.dumps({"count": len(probes)}), file=out, flush=True)
    for index, (name, thunk, expect) in enumerate(probes):
        if index < first:
            continue
        print(json.dumps({"start": name, "index": index}), file=out, flush=True)
        try:
            result = _materialize(thunk())
        except BaseException as e:  # noqa: BLE001 - every outcome is recorded
            if isinstance(expect, Ok) and isinstance(e, expect.raises):
                outcome, detail = "typed", f"{type(e).__name__}: {_short(str(e))}"
            elif isinstance(expect, Ok):
                outcome, detail = "wrong", f"raised {type(e).__name__}: {_short(str(e))}"
            elif isinstance(e, expect):
                outcome, detail = "typed", f"{type(e).__name__}: {_short(str(e))}"
            else:
                expected = [t.__name__ for t in expect]
                outcome, detail = "wrong", f"raised {type(e).__name__} (expected {expected}): {_short(str(e))}"
        else:
            if isinstance(expect, Ok):
                try:
                    good = bool(expect.check(result))
                except BaseException as e:  # noqa: BLE001
                    good, result = False, f"check raised {type(e).__name__}: {e}"
                outcome = "correct" if good else "wrong"
                detail = "" if good else f"returned {_short(result)}, expected {expect.what}"
            else:
                outcome, detail = "wrong", f"returned {_short(result)} (expected {[t.__name__ for t in expect]})"
        print(json.dumps({"name": name, "outcome": outcome, "detail": detail}), file=out, flush=True)


if __name__ == "__main__":
    run_group(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0)
