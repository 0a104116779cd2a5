"""Small helpers shared by the context tests (imported by the test modules)."""
import contextlib
import os
import warnings

import msrt as ms

FAMILIES = ("context", "auto_parallel_context", "ps_context", "offload_context", "algo_parameters")
PROFILES = ("r0.5", "r1.0", "r1.6", "r2.3")
DEVICES = ("CPU", "GPU", "Ascend")

SETTERS = {
    "context": ms.set_context,
    "auto_parallel_context": ms.set_auto_parallel_context,
    "ps_context": ms.set_ps_context,
    # MindSpore's offload context takes one dict and gives all of it.
    "offload_context": lambda **kwargs: ms.set_offload_context(kwargs),
    "algo_parameters": ms.set_algo_parameters,
}
GETTERS = {
    "context": ms.get_context,
    "auto_parallel_context": ms.get_auto_parallel_context,
    "ps_context": ms.get_ps_context,
    "offload_context": lambda key: ms.get_offload_context()[key],
    "algo_parameters": ms.get_algo_parameters,
}


def options(family=None):
    """options() as {name: record} for one family, or {(family, name): record}."""
    if family is not None:
        return {o["name"]: o for o in ms.context.options(family)}
    return {(o["family"], o["name"]): o for o in ms.context.options()}


def current_device():
    return ms.get_context("device_target")


def quiet_get(family, key):
    """get_* without the device-applicability warning some keys issue."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GETTERS[family](key)


def state():
    """The whole context (what a test compares before and after a failed call)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ms.context.snapshot()


@contextlib.contextmanager
def recorded_warnings():
    """Records every warning issued in the block (no filtering, no output)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


def of_category(caught, category):
    return [str(w.message) for w in caught if issubclass(w.category, category)]


def message(excinfo):
    """An exception's message (KeyError's str() would add quotes)."""
    return str(excinfo.value.args[0])


def assert_tokens(text, tokens):
    for token in tokens:
        assert token in text, f"{token!r} not in message: {text}"


def profile_where(opt, deprecated):
    """A profile in which `opt` is (or is not) deprecated, or None."""
    since = opt["deprecated_since"]
    if not since:
        return None if deprecated else "r2.3"
    index = PROFILES.index(since)
    if deprecated:
        return PROFILES[-1]
    return PROFILES[index - 1] if index > 0 else None


class Tmp:
    """A path under the test's tmp_path, given to a setter as a str.

    kind: "path" (nothing created), "file" (created with `text`), "dir"
    (created), "under_file" (a path whose parent is a regular file).
    real: the sample's expected stored form is the realpath.
    """

    def __init__(self, name, kind="path", text="", real=False):
        self.name, self.kind, self.text, self.real = name, kind, text, real

    def resolve(self, root):
        path = os.path.join(str(root), self.name)
        if self.kind == "file":
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(self.text)
        elif self.kind == "dir":
            os.makedirs(path, exist_ok=True)
        elif self.kind == "under_file":
            blocker = os.path.join(str(root), "blocker")
            with open(blocker, "w", encoding="utf-8") as f:
                f.write("x")
            path = os.path.join(blocker, self.name)
        return os.path.realpath(path) if self.real else path

    def __repr__(self):
        return f"Tmp({self.name!r}, {self.kind!r})"


def resolve(value, root):
    """Replaces every Tmp inside `value` (dicts, lists, tuples) by its path."""
    if isinstance(value, Tmp):
        return value.resolve(root)
    if isinstance(value, dict):
        return {k: resolve(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, root) for v in value]
    if isinstance(value, tuple):
        return tuple(resolve(v, root) for v in value)
    return value


def device_kwargs(opt):
    """Extra set_context arguments that make `opt` apply (device_target first)."""
    if opt["family"] != "context" or opt["name"] == "device_target":
        return {}
    if current_device() in opt["devices"]:
        return {}
    return {"device_target": opt["devices"][0]}
