"""libmsrt's functions are laid out in the order of src/code_order.txt (src/CMakeLists.txt, scripts/code_order/):
the functions a run calls lie together, in the order the file gives, so that a run maps few pages of the library."""
import os
import re
import subprocess

import pytest

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BUILD = os.environ.get("MSRT_BUILD_DIR") or os.path.join(ROOT, "build")
ORDER = os.path.join(ROOT, "src", "code_order.txt")


def _ordered_build():
    try:
        with open(os.path.join(BUILD, "CMakeCache.txt")) as f:
            return re.search(r"^MSRT_HAVE_GOLD:INTERNAL=1$", f.read(), re.M) is not None
    except OSError:
        return False


pytestmark = pytest.mark.skipif(not _ordered_build(),
                                reason="this build does not order libmsrt's code (not GCC with gold, or sanitized)")


@pytest.fixture(scope="module")
def layout():
    """The functions the file orders, as (position in the file, address, size), and the library's functions.

    Several symbols can name one function (a constructor's C1 and C2); the file names them together, and the
    function's position is the first of them. The static initialisers (.text.startup) and the cold parts of
    functions (.text.unlikely) are placed as groups, by the file's patterns: a function that the compiler put
    there in whole is not among the ordered ones."""
    library = os.path.realpath(os.path.join(BUILD, "src", "libmsrt.so"))
    out = subprocess.run(["nm", "-S", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    symbols = []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "TtWw":
            symbols.append((parts[3], int(parts[0], 16), int(parts[1], 16)))

    def span(names):
        return (min(a for n, a, s in symbols if names(n)), max(a + s for n, a, s in symbols if names(n)))

    startup = span(lambda n: n.startswith("_GLOBAL__sub_I") and not n.endswith(".cold"))
    cold = span(lambda n: n.endswith(".cold"))
    where = {n: (a, s) for n, a, s in symbols}
    with open(ORDER) as f:
        names = [line.strip()[len(".text."):] for line in f if line.startswith(".text.") and "*" not in line]
    placed = {}
    for position, name in enumerate(names):
        if name in where:
            address, size = where[name]
            if not (startup[0] <= address < startup[1] or cold[0] <= address < cold[1]):
                placed.setdefault(address, (position, address, size))
    return sorted(placed.values()), names, len(symbols)


def test_functions_follow_the_file(layout):
    placed, names, _ = layout
    # most of the file names functions of this build (a stale file costs memory, it does not break the build)
    assert len(placed) > 0.5 * len(names), f"{len(placed)} of the {len(names)} functions named are in libmsrt"
    addresses = [address for _, address, _ in placed]
    out_of_order = sum(1 for a, b in zip(addresses, addresses[1:]) if b < a)
    assert out_of_order == 0, f"{out_of_order} functions lie before one the file names ahead of them"


def test_ordered_functions_lie_together(layout):
    placed, _, _ = layout
    start = min(address for _, address, _ in placed)
    end = max(address + size for _, address, size in placed)
    code = sum(size for _, _, size in placed)
    # nothing between them but alignment padding (laid out by their objects instead, they spread over the
    # library: several times their size)
    assert end - start < 1.25 * code, f"{code} bytes of ordered code spread over {end - start}"
