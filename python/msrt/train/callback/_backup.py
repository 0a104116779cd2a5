"""BackupAndRestore: resumes an interrupted training run from its last backup."""
import os

from ... import _files
from ..serialization import load_checkpoint, load_param_into_net, save_checkpoint
from ._callback import Callback

__all__ = ["BackupAndRestore"]

_EPOCH, _STEP = "epoch_num", "step_num"


class BackupAndRestore(Callback):
    """Saves the training network (optimizer state included) to
    "<backup_dir>/backup.ckpt" at the end of every epoch (or every
    `save_freq` epochs). When training starts and that file exists, its
    parameters are loaded and training goes on from the epoch after the one
    backed up (Model.train reads cb_params.initial_epoch after
    on_train_begin). A rank of a distributed job uses
    "<backup_dir>/rank_<id>/backup.ckpt". The file is written atomically, so an interruption
    while saving leaves the previous backup; it is deleted when training
    ends unless `delete_checkpoint` is False."""

    def __init__(self, backup_dir, save_freq="epoch", delete_checkpoint=True):
        super().__init__()
        if not isinstance(backup_dir, str):
            raise ValueError(f"For 'BackupAndRestore', the argument 'backup_dir' must be str, "
                             f"but got {type(backup_dir).__name__}.")
        if save_freq != "epoch" and (isinstance(save_freq, bool) or not isinstance(save_freq, int)
                                     or save_freq <= 0):
            raise ValueError(f"For 'BackupAndRestore', the argument 'save_freq' must be 'epoch' or a positive int, "
                             f"but got {save_freq!r}.")
        if not isinstance(delete_checkpoint, bool):
            raise ValueError(f"For 'BackupAndRestore', the argument 'delete_checkpoint' must be bool, "
                             f"but got {type(delete_checkpoint).__name__}.")
        self._backup_dir = os.path.abspath(backup_dir)
        self._place()
        self.save_freq = save_freq
        self.delete_checkpoint = delete_checkpoint

    def _place(self):
        # A rank of a distributed job backs up to <backup_dir>/rank_<id> (Note [Per-rank places]),
        # decided again when training begins in case init() came after this callback was made.
        self.backup_file = os.path.join(_files.rank_place(self._backup_dir), "backup.ckpt")

    def on_train_begin(self, run_context):
        self._place()
        if not os.path.exists(self.backup_file):
            return
        cb_params = run_context.original_args()
        params = load_checkpoint(self.backup_file)
        epoch, step = params.pop(_EPOCH, None), params.pop(_STEP, None)
        load_param_into_net(cb_params.train_network, params)
        if epoch is not None and step is not None:
            cb_params.initial_epoch = int(epoch.asnumpy())
            cb_params.cur_step_num = int(step.asnumpy())

    def on_train_epoch_end(self, run_context):
        cb_params = run_context.original_args()
        epoch = cb_params.cur_epoch_num
        if self.save_freq == "epoch" or epoch % self.save_freq == 0:
            _files.make_dirs(os.path.dirname(self.backup_file))
            save_checkpoint(cb_params.train_network, self.backup_file,
                            append_dict={_EPOCH: epoch, _STEP: cb_params.cur_step_num})

    def on_train_end(self, run_context):
        if self.delete_checkpoint and os.path.exists(self.backup_file):
            os.remove(self.backup_file)
