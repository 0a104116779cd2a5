"""The probe suite: bad inputs across the public Python API (probes.py).

Each group runs in its own process, so that a probe that crashes the
interpreter (a signal) is seen as such: the process is restarted after the
probe that crashed, and every crash fails the test naming its probe. Every
other probe must raise one of the typed errors it lists, or return a correct
result.
"""
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile

import pytest

from . import probes

HERE = pathlib.Path(__file__).resolve().parent
MIN_PROBES = 500
# Each group within this many seconds (ASan builds are several times slower).
GROUP_TIMEOUT = 900


def run_group(group):
    """{"count", "results": {name: (outcome, detail)}, "crashes": [(name, how)]}."""
    # Whatever the probes write (temporary files, a profiler's output) goes to a scratch directory.
    work = tempfile.mkdtemp(prefix=f"msrt-probes-{group}-")
    env = dict(os.environ, PYTHONFAULTHANDLER="0", TMPDIR=work)
    try:
        return _run_group_in(group, work, env)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _run_group_in(group, work, env):
    results, crashes, count, first = {}, [], None, 0
    while True:
        proc = subprocess.run([sys.executable, str(HERE / "probes.py"), group, str(first)], capture_output=True,
                              text=True, env=env, cwd=work, timeout=GROUP_TIMEOUT)
        started = None
        for line in proc.stdout.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if "count" in record:
                count = record["count"]
            elif "start" in record:
                started = record
            else:
                results[record["name"]] = (record["outcome"], record["detail"])
                started = None
        if proc.returncode == 0:
            break
        if started is None:  # died outside any probe (e.g. building the group)
            raise AssertionError(f"probe group {group!r} failed outside a probe (exit {proc.returncode}):\n"
                                 f"{proc.stderr[-3000:]}")
        how = (f"signal {signal.Signals(-proc.returncode).name}" if proc.returncode < 0
               else f"exit status {proc.returncode}")
        crashes.append((started["start"], f"{how}: {proc.stderr.strip()[-600:]}"))
        first = started["index"] + 1
    return {"count": count, "results": results, "crashes": crashes}


@pytest.fixture(scope="module")
def outcomes():
    return {group: run_group(group) for group in probes.GROUPS}


@pytest.mark.parametrize("group", sorted(probes.GROUPS))
def test_group_has_no_crash_and_only_typed_errors_or_correct_results(outcomes, group):
    outcome = outcomes[group]
    problems = [f"CRASH {name}: {how}" for name, how in outcome["crashes"]]
    problems += [f"WRONG {name}: {detail}" for name, (result, detail) in outcome["results"].items()
                 if result == "wrong"]
    assert not problems, f"{len(problems)} of {outcome['count']} probes in {group!r} failed:\n" + "\n".join(problems)
    assert len(outcome["results"]) == outcome["count"]


def test_harness_sees_a_crash_and_runs_the_probes_after_it():
    outcome = run_group("harness_self_test")
    assert [name for name, _ in outcome["crashes"]] == ["segfault"]
    assert "SEGV" in outcome["crashes"][0][1]  # a signal, or AddressSanitizer's SEGV report
    assert outcome["results"] == {"before": ("correct", ""), "after": ("correct", "")}


def test_at_least_500_probes_of_the_public_api(outcomes):
    counts = {"typed": 0, "correct": 0, "wrong": 0}
    for outcome in outcomes.values():
        for result, _ in outcome["results"].values():
            counts[result] += 1
    total = sum(o["count"] for o in outcomes.values())
    crashes = sum(len(o["crashes"]) for o in outcomes.values())
    per_group = ", ".join(f"{group} {o['count']}" for group, o in outcomes.items())
    print(f"\nprobes: {total} ({counts['typed']} typed errors, {counts['correct']} correct results, "
          f"{counts['wrong']} wrong, {crashes} signals): {per_group}")
    # op_attributes calls the ops' one entry point (_C.call) directly; the others use the public API.
    public = total - outcomes["op_attributes"]["count"]
    assert public >= MIN_PROBES
