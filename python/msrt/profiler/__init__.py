"""`ms.Profiler`: per-op and per-step timing written as a Chrome trace and an
op summary table (docs/observability.md). The context keys enable_profiling
and profiling_options drive the same profiler."""
from .. import _C

__all__ = ["Profiler"]

_active = _C._profiler_active
_begin = _C._profiler_begin_span
_end = _C._profiler_end_span


class Profiler:
    """Collects from construction (unless start_profile=False) until stop();
    analyse() writes <output_path>/profiler/trace_<rank>.json and
    op_summary_<rank>.csv.

    Arguments: output_path (str, default "./data"), profile_memory (bool:
    memory counters in the trace), start_profile (bool, default True).
    """

    def __init__(self, **kwargs):
        self._session, start = _C._profiler_session(kwargs)
        if start:
            self._session.start()

    def start(self):
        """Starts (or resumes) collecting; RuntimeError if already collecting."""
        self._session.start()

    def stop(self):
        """Stops collecting once queued kernels have run; RuntimeError if not collecting."""
        self._session.stop()

    def analyse(self, offline_path=None):
        """Stops collecting if needed and writes the results."""
        if self._session.running:
            self._session.stop()
        self._paths = self._session.write()

    @property
    def output_path(self):
        return self._session.output_path


class _Span:
    """Marks a host span (a training step or a phase of one) while a profiler runs."""

    __slots__ = ("name", "on")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.on = _active()
        if self.on:
            _begin(self.name)
        return self

    def __exit__(self, *exc):
        if self.on:
            _end()
        return False


def _span(name):
    return _Span(name)


def _spanned(rows, name="data"):
    """Yields from `rows`, marking the time to fetch each one as a span."""
    iterator = iter(rows)
    while True:
        with _Span(name):
            row = next(iterator, _Span)
        if row is _Span:
            return
        yield row
