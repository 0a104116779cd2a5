"""A progress indicator for long work, without dependencies.

On a terminal it redraws one line in place (at most `refresh` times a
second); otherwise (logs, pipes, CI) it prints a plain line at every
`every_percent` of progress, so logs stay readable.
"""
import sys
import time

__all__ = ["ProgressLine"]


def _format_seconds(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


class ProgressLine:
    """`update(done, extra="")` as work advances; `close(extra="")` at the end."""

    def __init__(self, total, title="", stream=None, width=30, refresh=10.0, every_percent=10, tty=None):
        self.total = total if total and total > 0 else None
        self.title = title
        self.stream = stream if stream is not None else sys.stdout
        self.width = width
        self.min_interval = 1.0 / refresh if refresh else 0.0
        self.every_percent = every_percent
        is_tty = getattr(self.stream, "isatty", None)
        self.tty = tty if tty is not None else bool(is_tty and is_tty())
        self.start = time.perf_counter()
        self._last_draw = 0.0
        self._last_bucket = -1
        self._line_len = 0
        self.done = 0

    def needs_draw(self, done):
        """Whether update(done) would print (lets callers skip costly extras)."""
        if self.tty:
            return time.perf_counter() - self._last_draw >= self.min_interval or done == self.total
        if self.total is None:
            return time.perf_counter() - self._last_draw >= 10.0
        return self._bucket(done) > self._last_bucket

    def _bucket(self, done):
        return int(100 * done / self.total) // max(self.every_percent, 1) if self.total else 0

    def text(self, done, extra=""):
        elapsed = time.perf_counter() - self.start
        parts = [self.title] if self.title else []
        if self.total:
            frac = min(done / self.total, 1.0)
            filled = int(self.width * frac)
            bar = "=" * filled + (">" if filled < self.width else "") + " " * max(self.width - filled - 1, 0)
            parts.append(f"[{bar}] {done}/{self.total}")
            if max(2, self.total // 100) <= done < self.total:  # the first steps include warm-up
                parts.append(f"ETA {_format_seconds(elapsed / done * (self.total - done))}")
        else:
            parts.append(f"{done}")
        parts.append(_format_seconds(elapsed))
        if extra:
            parts.append(extra)
        return " ".join(parts)

    def update(self, done, extra=""):
        self.done = done
        if not self.tty and self.total and done >= self.total:
            return  # the last line is close()'s, with its final figures
        if not self.needs_draw(done):
            return
        self._last_draw = time.perf_counter()
        if self.total:
            self._last_bucket = self._bucket(done)
        line = self.text(done, extra)
        if self.tty:
            pad = " " * max(self._line_len - len(line), 0)
            self.stream.write("\r" + line + pad)
            self._line_len = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self, extra=""):
        line = self.text(self.done, extra)
        if self.tty:
            pad = " " * max(self._line_len - len(line), 0)
            self.stream.write("\r" + line + pad + "\n")
        elif self.total is None or self._last_bucket < self._bucket(self.done) or extra:
            self.stream.write(line + "\n")
        self.stream.flush()
