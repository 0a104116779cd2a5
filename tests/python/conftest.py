"""Shared fixtures of the Python suite.

The context is process-wide, so every test runs between a snapshot and a
load of it: whatever a test sets, the next test starts from the same state.
Behaviour that cannot be undone in a process (freezing) or that depends on a
fresh process (defaults supplied by the environment, the profile chosen at
start-up, the log level) is tested in a subprocess through `run_python`.
"""
import json
import os
import subprocess
import sys
import textwrap
import warnings

import pytest

# Variables the context reads. They are removed before msrt is imported so
# the suite does not depend on the caller's shell; tests set them with
# monkeypatch (and subprocesses inherit what a test set).
CONTEXT_ENV_VARS = (
    "MSRT_CONTEXT_PROFILE",
    "DEVICE_ID",
    "MS_DEV_SAVE_GRAPHS",
    "MS_DEV_SAVE_GRAPHS_PATH",
    "MS_COMPILER_CACHE_ENABLE",
    "MS_COMPILER_CACHE_PATH",
    "MS_DEV_GRAPH_KERNEL_FLAGS",
    "MS_ROLE",
    "MS_WORKER_NUM",
    "MS_SERVER_NUM",
    "MS_SCHED_HOST",
    "MS_SCHED_PORT",
    "MS_SCHED_MANAGE_PORT",
    "MS_NODE_ID",
    "GLOG_v",
)
for _name in CONTEXT_ENV_VARS:
    os.environ.pop(_name, None)
# Every compiled graph is verified after every pass (src/compiler/pipeline.cc).
os.environ["MSRT_VERIFY_IR"] = "1"

import msrt as ms  # noqa: E402

DEFAULT_PROFILE = "r2.3"
ms.context.set_profile(DEFAULT_PROFILE)


@pytest.fixture(autouse=True)
def _restore_context():
    """Snapshots the context before each test and restores it afterwards.

    The memory pool freezes its keys (max_device_memory, ...) at the first
    tensor; the suite shares one process, so each test starts with them
    thawed (a test-only hook) and freezing itself is tested in subprocesses.
    """
    ms._C._testing_thaw_memory_pools()
    profile = ms.context.get_profile()
    before = ms.context.snapshot()
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ms._C._testing_thaw_memory_pools()
        after = ms.context.snapshot()
        if after != before or ms.context.get_profile() != profile:
            # Loading marks every key as loaded, so it is done only when needed.
            ms.context.load(before)
        ms.context.set_profile(profile)
    assert ms.context.snapshot() == before, "the context could not be restored after the test"


def run_python(code, env=None, cwd=None, check=True, timeout=60):
    """Runs `code` in a fresh interpreter (msrt imported as `ms`, `json` and
    `warnings` available). The environment is this process's (already cleaned
    of context variables, plus what the test set with monkeypatch) updated by
    `env`; a value of None removes a variable. When the code prints a line
    starting with "RESULT=", the JSON after it is returned as `.result`.
    """
    full_env = dict(os.environ)
    for key, value in (env or {}).items():
        if value is None:
            full_env.pop(key, None)
        else:
            full_env[key] = value
    prelude = "import json, warnings\nimport msrt as ms\n"
    proc = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        env=full_env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"subprocess failed with {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}"
        )
    proc.result = None
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT="):
            proc.result = json.loads(line[len("RESULT="):])
    return proc


@pytest.fixture
def python_subprocess(tmp_path):
    """`run_python` with the test's tmp_path as the working directory."""

    def run(code, env=None, check=True):
        return run_python(code, env=env, cwd=tmp_path, check=check)

    return run


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Runs the test from its tmp_path, so relative paths land there."""
    monkeypatch.chdir(tmp_path)
    return tmp_path
