"""ProgressLine: an updating line on a terminal, periodic lines otherwise."""
import io

from msrt.train.progress import ProgressLine


def test_non_tty_prints_every_ten_percent():
    out = io.StringIO()
    line = ProgressLine(100, title="work", stream=out)
    for i in range(1, 101):
        line.update(i)
    line.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == 11  # 0%..100% buckets that were reached: 1% (bucket 0) ... 100%
    assert lines[-1].startswith("work [==============================] 100/100")


def test_tty_redraws_one_line():
    out = io.StringIO()
    line = ProgressLine(10, title="t", stream=out, tty=True, refresh=0)
    for i in range(1, 11):
        line.update(i, extra=f"loss {1 / i:.2f}")
    line.close("done")
    text = out.getvalue()
    assert text.count("\n") == 1 and text.count("\r") == 11
    assert text.rstrip().endswith("done")


def test_unknown_total():
    out = io.StringIO()
    line = ProgressLine(None, stream=out)
    line.update(5)
    line.close()
    assert out.getvalue().splitlines()[0].startswith("5 ")
