"""The iterators that run a pipeline (`create_tuple_iterator`,
`create_dict_iterator`), and the background prefetch that keeps a training
step fed (Note [prefetch])."""
import queue
import threading

from . import config
from ._blocks import _num_rows, _row, _RunState
from ._convert import to_tensor
from ._validate import INT32_MAX, as_column_list, check_bool, check_columns, check_value, type_check


class _Prefetcher:
    """Runs a pass (a generator of blocks) in a background thread, up to `size` blocks ahead.

    Note [prefetch]: the thread holds only the pass, the queue and a stop flag, never the
    iterator, so an abandoned iterator is collected; closing its row generator closes
    the prefetcher, which stops the thread (it sees the flag between blocks) and waits
    for it, after the pass itself was closed in that thread (its worker pools shut
    down). An error of the pass is raised in the consumer, the same exception object.
    """

    _END = object()

    def __init__(self, blocks, size):
        self._queue = queue.Queue(maxsize=size)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, args=(blocks, self._queue, self._stop),
                                        name="msrt-dataset-prefetch", daemon=True)
        self._thread.start()

    @staticmethod
    def _produce(blocks, out, stop):
        def put(item):
            while not stop.is_set():
                try:
                    out.put(item, timeout=0.05)
                    return True
                except queue.Full:
                    continue
            return False

        try:
            for block in blocks:
                if not put(block) or stop.is_set():
                    break
            else:
                put(_Prefetcher._END)
        except BaseException as error:  # raised again in the consumer
            put(error)
        finally:
            blocks.close()

    def __iter__(self):
        return self

    def __next__(self):
        item = self._queue.get()
        if item is _Prefetcher._END:
            self.close()
            raise StopIteration
        if isinstance(item, BaseException):
            self.close()
            raise item
        return item

    def close(self):
        """Stops the background thread and waits for it (unless called from that thread: the
        garbage collector may close an abandoned iterator there; the thread then stops after
        its current block)."""
        self._stop.set()
        if threading.current_thread() is self._thread:
            return
        while self._thread.is_alive():
            try:
                while True:
                    self._queue.get_nowait()
            except queue.Empty:
                pass
            self._thread.join(0.05)


def _prefetched(blocks, size):
    return _Prefetcher(blocks, size)


def _check_iterator_args(num_epochs, output_numpy, do_copy):
    type_check(num_epochs, (int,), "num_epochs")
    check_value(num_epochs, (-1, INT32_MAX), "num_epochs")
    if num_epochs == 0:
        raise ValueError("num_epochs should be either -1 or a positive integer, got 0.")
    check_bool(output_numpy, "output_numpy")
    check_bool(do_copy, "do_copy")


class _Iterator:
    """Runs a pipeline for `num_epochs` epochs (-1: unlimited). Each epoch ends with
    StopIteration; iterating again starts the next epoch, with a new order."""

    def __init__(self, dataset, num_epochs, output_numpy, do_copy, column_index=None):
        self._dataset = dataset
        self._num_epochs = num_epochs
        self._output_numpy = output_numpy
        self._do_copy = do_copy
        self._column_index = column_index
        self._state = _RunState()
        self._epochs_done = 0
        self._rows = None

    def __iter__(self):
        return self

    def _blocks(self):
        """The blocks of one epoch: computed ahead by a background thread unless prefetch is off."""
        if not config.get_enable_prefetch():
            return self._dataset._run(self._state)
        return _prefetched(self._dataset._run(self._state), config.get_prefetch_size())

    def _row_generator(self):
        select = self._column_index
        blocks = self._blocks()
        try:
            for block in blocks:
                if select is not None:
                    block = [block[j] for j in select]
                for i in range(_num_rows(block)):
                    yield [_row(column, i) for column in block]
        finally:
            blocks.close()

    def _convert(self, value):
        return value if self._output_numpy else to_tensor(value)

    def _next_values(self):
        if self._rows is None:
            if self._num_epochs != -1 and self._epochs_done >= self._num_epochs:
                raise StopIteration
            self._rows = self._row_generator()
        try:
            values = next(self._rows)
        except StopIteration:
            self._rows = None
            self._epochs_done += 1
            raise
        return [self._convert(v) for v in values]

    def stop(self):
        """Ends the iterator: every later call raises StopIteration."""
        if self._rows is not None:
            self._rows.close()
            self._rows = None
        self._num_epochs = self._epochs_done = max(self._epochs_done, 1)

    def get_col_names(self):
        names = self._dataset._columns
        return [names[j] for j in self._column_index] if self._column_index is not None else list(names)

    def get_dataset_size(self):
        return self._dataset.get_dataset_size()


class TupleIterator(_Iterator):
    """Yields each row as a list of column values."""

    def __init__(self, dataset, columns=None, num_epochs=-1, output_numpy=False, do_copy=True):
        _check_iterator_args(num_epochs, output_numpy, do_copy)
        index = None
        if columns is not None:
            check_columns(columns, "column_names")
            index = [dataset._column_index(n, "column") for n in as_column_list(columns)]
        super().__init__(dataset, num_epochs, output_numpy, do_copy, index)

    def __next__(self):
        return self._next_values()


class DictIterator(_Iterator):
    """Yields each row as a dict from column name to value."""

    def __init__(self, dataset, num_epochs=-1, output_numpy=False, do_copy=True):
        _check_iterator_args(num_epochs, output_numpy, do_copy)
        super().__init__(dataset, num_epochs, output_numpy, do_copy)

    def __next__(self):
        return dict(zip(self._dataset._columns, self._next_values()))
