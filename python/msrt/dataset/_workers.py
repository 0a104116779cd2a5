"""Workers of the pipeline: thread pools and forked processes, results in submission order.

GeneratorDataset reads a random-access source with them and MapDataset runs its
operations with them. A process pool is forked at the start of a pass (Note
[Fork] in src/runtime/fork.cc says why msrt survives a fork); requests and
blocks travel as raw array bytes behind a JSON header, never pickled. An error
in a worker is raised in the pipeline with its type (built-in types; others
become RuntimeError) and the worker's traceback in the message.
"""
import builtins
import collections
import json
import multiprocessing
import struct
import traceback
from concurrent.futures import ThreadPoolExecutor

import numpy as np


# --------------------------------------------------------------------------
# Blocks as bytes

def encode_block(block):
    """A block (a list of columns: ndarrays, or lists of ndarrays) as bytes."""
    meta, buffers = [], []
    for column in block:
        arrays = [column] if isinstance(column, np.ndarray) else column
        meta.append([isinstance(column, np.ndarray), [[a.dtype.str, list(a.shape)] for a in arrays]])
        buffers.extend(np.ascontiguousarray(a).tobytes() for a in arrays)
    header = json.dumps({"columns": meta}).encode()
    return struct.pack("<I", len(header)) + header + b"".join(buffers)


def encode_error(error, where):
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    header = json.dumps({"error": [type(error).__name__, str(error), text, where]}).encode()
    return struct.pack("<I", len(header)) + header


def decode_block(payload):
    """The block `encode_block` encoded (writable arrays), or raises the error `encode_error` encoded."""
    data = bytearray(payload)  # writable arrays, as the in-process path gives
    (length,) = struct.unpack_from("<I", data)
    header = json.loads(data[4:4 + length].decode())
    if "error" in header:
        name, message, text, where = header["error"]
        kind = getattr(builtins, name, None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = RuntimeError
        raise kind(f"{message}\n(raised {where}:\n{text})")
    offset, block = 4 + length, []
    for stacked, arrays in header["columns"]:
        column = []
        for dtype, shape in arrays:
            dtype = np.dtype(dtype)
            if dtype.hasobject:
                raise RuntimeError("a worker process sent an object array; only plain arrays travel between them")
            count = int(np.prod(shape))
            column.append(np.frombuffer(data, dtype, count, offset).reshape(shape))
            offset += count * dtype.itemsize
        block.append(column[0] if stacked else column)
    return block


def encode_indices(indices):
    return np.ascontiguousarray(indices, np.int64).tobytes()


def decode_indices(payload):
    return np.frombuffer(payload, np.int64)


# --------------------------------------------------------------------------
# Pools

def _worker_loop(connection, work, decode_request, where):
    """A worker process: reads requests, answers each with its block (or the error)."""
    while True:
        message = connection.recv_bytes()
        if not message:
            return
        try:
            answer = encode_block(work(decode_request(message)))
        except Exception as error:  # reported to the pipeline, which raises it
            answer = encode_error(error, where)
        connection.send_bytes(answer)


class ProcessWorkers:
    """`count` forked processes running `work(request)`; request k goes to worker k % count.

    `encode_request`/`decode_request` turn a request into bytes and back; `what`
    names the pool in errors (e.g. "GeneratorDataset"). A worker has at most one
    request in its pipe: the next is sent once its answer is read, so neither side
    ever blocks writing to a full pipe that the other is not reading.
    """

    def __init__(self, count, work, encode_request, decode_request, what):
        context = multiprocessing.get_context("fork")
        self._encode_request = encode_request
        self._what = what
        self._connections, self._processes = [], []
        for _ in range(count):
            parent, child = context.Pipe()
            process = context.Process(target=_worker_loop,
                                      args=(child, work, decode_request, f"in a {what} worker process"),
                                      daemon=True)
            process.start()
            child.close()
            self._connections.append(parent)
            self._processes.append(process)
        self._submitted = 0
        self._busy = [False] * count  # a request sent whose answer is not read yet
        self._queued = [collections.deque() for _ in range(count)]  # requests not sent yet

    def submit(self, request):
        k = self._submitted % len(self._connections)
        self._submitted += 1
        self._queued[k].append(request)
        if not self._busy[k]:
            self._send_next(k)
        return lambda: self._receive(k)

    def _send_next(self, k):
        self._connections[k].send_bytes(self._encode_request(self._queued[k].popleft()))
        self._busy[k] = True

    def _receive(self, k):
        try:
            answer = self._connections[k].recv_bytes()
        except EOFError:
            self._processes[k].join(1)
            raise RuntimeError(f"A {self._what} worker process exited unexpectedly "
                               f"(exit code {self._processes[k].exitcode}).") from None
        self._busy[k] = False
        if self._queued[k]:
            self._send_next(k)
        return decode_block(answer)

    def close(self):
        """Stops the workers: idle ones are asked to exit, busy ones (an abandoned pass) terminated."""
        for k, (process, connection) in enumerate(zip(self._processes, self._connections)):
            if not self._busy[k] and process.is_alive():
                try:
                    connection.send_bytes(b"")
                    process.join(5)
                except OSError:
                    pass
            if process.is_alive():
                process.terminate()
            process.join()
            connection.close()


class ThreadWorkers:
    """`count` threads running `work(request)`."""

    def __init__(self, count, work, name):
        self._pool = ThreadPoolExecutor(count, thread_name_prefix=f"msrt-{name}")
        self._work = work

    def submit(self, request):
        return self._pool.submit(self._work, request).result

    def close(self):
        self._pool.shutdown(wait=True, cancel_futures=True)


def ordered_results(requests, workers, count):
    """The results of `requests` run by `workers`, in order, with 2 requests in flight per
    worker; closes `workers` when done or abandoned."""
    pending = collections.deque()
    try:
        for request in requests:
            pending.append(workers.submit(request))
            if len(pending) >= 2 * count:
                yield pending.popleft()()
        while pending:
            yield pending.popleft()()
    finally:
        workers.close()
