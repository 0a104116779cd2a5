"""ModelCheckpoint and CheckpointConfig."""
import os
import re
import time

from ... import _files
from ..._tensor import Tensor
from ...nn.cell import Cell
from ._callback import Callback

__all__ = ["CheckpointConfig", "ModelCheckpoint"]


def _check_non_negative_int(value, arg, allow_none=True):
    if value is None and allow_none:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"For 'CheckpointConfig', the argument '{arg}' must be int, but got {type(value).__name__}.")
    if value < 0:
        raise ValueError(f"For 'CheckpointConfig', the argument '{arg}' must be non-negative, but got {value}.")
    return value


class CheckpointConfig:
    """When ModelCheckpoint saves and how many files it keeps.

    save_checkpoint_steps: save every this many steps; save_checkpoint_seconds
    (used when steps is 0/None): save every this many seconds;
    keep_checkpoint_max: keep at most this many files (oldest removed);
    keep_checkpoint_per_n_minutes: (with keep_checkpoint_max 0/None) keep one
    file per this many minutes.
    """

    def __init__(self, save_checkpoint_steps=1, save_checkpoint_seconds=0, keep_checkpoint_max=5,
                 keep_checkpoint_per_n_minutes=0, integrated_save=True, async_save=False, saved_network=None,
                 append_info=None, enc_key=None, enc_mode="AES-GCM", exception_save=False, crc_check=True,
                 **kwargs):
        save_checkpoint_steps = _check_non_negative_int(save_checkpoint_steps, "save_checkpoint_steps")
        save_checkpoint_seconds = _check_non_negative_int(save_checkpoint_seconds, "save_checkpoint_seconds")
        keep_checkpoint_max = _check_non_negative_int(keep_checkpoint_max, "keep_checkpoint_max")
        keep_checkpoint_per_n_minutes = _check_non_negative_int(keep_checkpoint_per_n_minutes,
                                                                "keep_checkpoint_per_n_minutes")
        if not save_checkpoint_steps and not save_checkpoint_seconds and not keep_checkpoint_max \
                and not keep_checkpoint_per_n_minutes:
            raise ValueError("The input arguments 'save_checkpoint_steps', 'save_checkpoint_seconds', "
                             "'keep_checkpoint_max' and 'keep_checkpoint_per_n_minutes' can't be all None or 0.")
        if save_checkpoint_steps:
            save_checkpoint_seconds = None
        if keep_checkpoint_max:
            keep_checkpoint_per_n_minutes = None
        elif not keep_checkpoint_per_n_minutes:
            keep_checkpoint_max = 1
        for arg, value in (("integrated_save", integrated_save), ("async_save", async_save),
                           ("exception_save", exception_save), ("crc_check", crc_check)):
            if not isinstance(value, bool):
                raise TypeError(f"For 'CheckpointConfig', the argument '{arg}' must be bool, "
                                f"but got {type(value).__name__}.")
        append_info = _check_append_info(append_info)
        if saved_network is not None and not isinstance(saved_network, Cell):
            raise TypeError(f"For 'CheckpointConfig', the type of 'saved_network' must be None or Cell, "
                            f"but got {type(saved_network).__name__}.")
        if not isinstance(crc_check, bool):
            raise TypeError(f"For 'CheckpointConfig', the argument 'crc_check' must be a bool, "
                            f"but got {type(crc_check).__name__}.")
        if enc_key is not None:
            raise NotImplementedError("For 'CheckpointConfig', encrypted checkpoints (enc_key) are not supported "
                                      "by msrt yet.")
        self._save_checkpoint_steps = save_checkpoint_steps
        self._save_checkpoint_seconds = save_checkpoint_seconds
        self._keep_checkpoint_max = keep_checkpoint_max
        self._keep_checkpoint_per_n_minutes = keep_checkpoint_per_n_minutes
        self._integrated_save = integrated_save
        self._async_save = async_save
        self._saved_network = saved_network
        self._append_info = append_info
        self._enc_key = enc_key
        self._enc_mode = enc_mode
        self._exception_save = exception_save
        # save_checkpoint's crc_check: MindSpore's CRC-32 trailer (written unless False).
        self._crc_check = crc_check

    save_checkpoint_steps = property(lambda self: self._save_checkpoint_steps)
    save_checkpoint_seconds = property(lambda self: self._save_checkpoint_seconds)
    keep_checkpoint_max = property(lambda self: self._keep_checkpoint_max)
    keep_checkpoint_per_n_minutes = property(lambda self: self._keep_checkpoint_per_n_minutes)
    integrated_save = property(lambda self: self._integrated_save)
    async_save = property(lambda self: self._async_save)
    saved_network = property(lambda self: self._saved_network)
    append_info = property(lambda self: self._append_info)
    crc_check = property(lambda self: self._crc_check)
    enc_key = property(lambda self: self._enc_key)
    enc_mode = property(lambda self: self._enc_mode)
    exception_save = property(lambda self: self._exception_save)
    crc_check = property(lambda self: self._crc_check)

    def get_checkpoint_policy(self):
        return {
            "save_checkpoint_steps": self.save_checkpoint_steps,
            "save_checkpoint_seconds": self.save_checkpoint_seconds,
            "keep_checkpoint_max": self.keep_checkpoint_max,
            "keep_checkpoint_per_n_minutes": self.keep_checkpoint_per_n_minutes,
            "saved_network": self.saved_network,
        }


_APPEND_NAMES = ("epoch_num", "step_num")


def _check_append_info(append_info):
    """MindSpore's rules: a list of "epoch_num", "step_num" and at most one
    dict of str keys to values a checkpoint can hold (numbers, bools, Tensors)."""
    if append_info is None or append_info == []:
        return None
    if not isinstance(append_info, list):
        raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' must be list, "
                        f"but got {type(append_info).__name__}.")
    dicts = 0
    for element in append_info:
        if isinstance(element, str):
            if element not in _APPEND_NAMES:
                raise ValueError(f"For 'CheckpointConfig', the value of element in the argument 'append_info' must "
                                 f"be in {list(_APPEND_NAMES)}, but got {element}.")
        elif isinstance(element, dict):
            dicts += 1
            if dicts > 1:
                raise TypeError(f"For 'CheckpointConfig', the element of 'append_info' must has only one dict, "
                                f"but got {dicts}.")
            for key, value in element.items():
                if not isinstance(key, str) or not isinstance(value, (int, float, bool, Tensor)):
                    raise TypeError(f"For 'CheckpointConfig', the key type of the dict 'append_info' must be string, "
                                    f"the value type must be int, float, bool or Tensor, but got key type "
                                    f"{type(key).__name__}, value type {type(value).__name__}.")
        else:
            raise TypeError(f"For 'CheckpointConfig', the type of 'append_info' element must be str or dict, "
                            f"but got {type(element).__name__}.")
    return append_info


def _unique_prefix(directory, prefix):
    """MindSpore renames the prefix to prefix_1, prefix_2... when checkpoint
    files with that prefix are already in the directory."""
    try:
        files = os.listdir(directory)
    except OSError:
        return prefix
    pattern = re.compile(rf"^{re.escape(prefix)}(_(\d+))?-.*\.ckpt$")
    used = [m for m in (pattern.match(f) for f in files) if m]
    if not used:
        return prefix
    highest = max(int(m.group(2)) if m.group(2) else 0 for m in used)
    return f"{prefix}_{highest + 1}"


class ModelCheckpoint(Callback):
    """Saves the training network's parameters (optimizer state included) to
    "<directory>/<prefix>-<epoch>_<step in epoch>.ckpt" as the config says,
    and once more at the end of training if the last step was not saved.
    A rank of a distributed job (after msrt.communication.init()) writes in
    "<directory>/rank_<id>/" instead, the layout of MindSpore's distributed
    checkpoints, so that ranks never write the same file.
    With `exception_save` (here or in the config), an exception raised out of
    training saves "<prefix>-<epoch>_<step in epoch>_breakpoint.ckpt"."""

    def __init__(self, prefix="CKP", directory=None, config=None, train_network=None, exception_save=False):
        super().__init__()
        if not isinstance(prefix, str):
            raise TypeError(f"For 'ModelCheckpoint', the argument 'prefix' must be str, but got "
                            f"{type(prefix).__name__}.")
        if not prefix or "/" in prefix:
            raise ValueError(f"For 'ModelCheckpoint', the argument 'prefix' for checkpoint file name is invalid, it "
                             f"can not be empty or contain '/', but got {prefix!r}.")
        if not isinstance(exception_save, bool):
            raise TypeError(f"For 'ModelCheckpoint', the argument 'exception_save' must be bool, "
                            f"but got {type(exception_save).__name__}.")
        if directory is not None and not isinstance(directory, str):
            raise TypeError(f"For 'ModelCheckpoint', the argument 'directory' must be str or None, "
                            f"but got {type(directory).__name__}.")
        if config is None:
            config = CheckpointConfig()
        if not isinstance(config, CheckpointConfig):
            raise TypeError(f"For 'ModelCheckpoint', the type of argument 'config' must be CheckpointConfig, "
                            f"but got {type(config).__name__}.")
        self._base_directory = os.path.abspath(directory) if directory is not None else os.getcwd()
        self._given_prefix = prefix
        self._place()
        self._config = config
        self._train_network = train_network
        self._exception_save = exception_save or config.exception_save
        self._cb_params = None
        self._last_triggered_step = 0
        self._last_time = time.time()
        self._last_time_for_keep = time.time()
        self._saved_files = []
        self._latest_ckpt_file_name = ""

    @property
    def latest_ckpt_file_name(self):
        """The file written last."""
        return self._latest_ckpt_file_name

    def _place(self):
        # A rank of a distributed job writes under <directory>/rank_<id> (Note [Per-rank places]),
        # decided again when training begins in case init() came after this callback was made.
        directory = _files.rank_place(self._base_directory)
        if directory != getattr(self, "_directory", None):
            os.makedirs(directory, exist_ok=True)
            self._directory = directory
            self._prefix = _unique_prefix(directory, self._given_prefix)

    def begin(self, run_context):
        self._cb_params = run_context.original_args()
        self._place()

    def __exit__(self, exc_type, exc, tb):
        # exception_save: an exception out of training saves the network as it is, "..._breakpoint.ckpt".
        cb_params = self._cb_params
        if exc_type is not None and self._exception_save and cb_params is not None \
                and cb_params.get("mode", "train") == "train":
            self._save_ckpt(cb_params, "_breakpoint")

    def step_end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode", "train") != "train":
            return
        if self._check_save_ckpt(cb_params):
            self._save_ckpt(cb_params)

    def end(self, run_context):
        cb_params = run_context.original_args()
        if cb_params.get("mode", "train") != "train":
            return
        if cb_params.cur_step_num != self._last_triggered_step:
            self._save_ckpt(cb_params)

    def _check_save_ckpt(self, cb_params):
        steps = self._config.save_checkpoint_steps
        if steps:
            return cb_params.cur_step_num - self._last_triggered_step >= steps
        seconds = self._config.save_checkpoint_seconds
        if seconds and time.time() - self._last_time >= seconds:
            self._last_time = time.time()
            return True
        return False

    def _network(self, cb_params):
        return self._config.saved_network or self._train_network or cb_params.train_network

    def _save_ckpt(self, cb_params, suffix=""):
        from ..serialization import save_checkpoint

        self._last_triggered_step = cb_params.cur_step_num
        batch_num = cb_params.get("batch_num") or 0
        step_in_epoch = (cb_params.cur_step_num - 1) % batch_num + 1 if batch_num > 0 else cb_params.cur_step_num
        name = f"{self._prefix}-{cb_params.cur_epoch_num}_{step_in_epoch}{suffix}.ckpt"
        path = os.path.join(self._directory, name)
        self._remove_old_files()
        kwargs = {"crc_check": self._config.crc_check}
        if self._config.append_info:
            kwargs["append_dict"] = _append_dict(self._config.append_info, cb_params)
        save_checkpoint(self._network(cb_params), path, **kwargs)
        if path in self._saved_files:
            self._saved_files.remove(path)
        self._saved_files.append(path)
        self._latest_ckpt_file_name = path

    def _remove_old_files(self):
        keep_max = self._config.keep_checkpoint_max
        if keep_max:
            while len(self._saved_files) >= keep_max:
                _remove(self._saved_files.pop(0))
        elif self._config.keep_checkpoint_per_n_minutes:
            # Keep one file per interval: drop the newest unless the interval has passed.
            now = time.time()
            if self._saved_files and now - self._last_time_for_keep < self._config.keep_checkpoint_per_n_minutes * 60:
                _remove(self._saved_files.pop())
            else:
                self._last_time_for_keep = now


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


def _append_dict(append_info, cb_params):
    out = {}
    for item in append_info:
        if item == "epoch_num":
            out["epoch_num"] = cb_params.cur_epoch_num
        elif item == "step_num":
            out["step_num"] = cb_params.cur_step_num
        elif isinstance(item, dict):
            out.update(item)
    return out
