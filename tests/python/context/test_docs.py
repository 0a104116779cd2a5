"""docs/context.md is generated from the option tables (`make docs`)."""
import difflib
import os
import pathlib
import subprocess
import sys

import msrt as ms

REPO = pathlib.Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "context.md"
GENERATOR = REPO / "tools" / "gen_context_docs.py"


def _regenerate():
    proc = subprocess.run(
        [sys.executable, str(GENERATOR)], cwd=REPO, env=dict(os.environ), capture_output=True, text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_committed_docs_match_the_tables():
    assert DOC.is_file(), "docs/context.md is missing: run `make docs`"
    generated = _regenerate()
    committed = DOC.read_text(encoding="utf-8")
    if generated != committed:
        diff = "".join(
            list(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                      "docs/context.md (committed)", "generated"))[:60]
        )
        raise AssertionError("docs/context.md is stale: run `make docs` and commit it.\n" + diff)


def test_generation_does_not_depend_on_the_callers_profile():
    env = dict(os.environ, MSRT_CONTEXT_PROFILE="r1.6")
    proc = subprocess.run([sys.executable, str(GENERATOR)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == _regenerate()


def test_docs_list_every_key_once_per_family():
    text = DOC.read_text(encoding="utf-8")
    sections = text.split("\n## ")
    titles = {
        "context": "set_context / get_context",
        "auto_parallel_context": "set_auto_parallel_context / get_auto_parallel_context",
        "ps_context": "set_ps_context / get_ps_context",
    }
    for family, title in titles.items():
        section = next(s for s in sections if s.startswith(title))
        for o in ms.context.options(family):
            assert section.count(f"| `{o['name']}` |") == 1, (family, o["name"])
            assert o["doc"].split()[0] in section


def test_applicability_table_lists_every_key_restricted_somewhere():
    text = DOC.read_text(encoding="utf-8")
    table = text.split("## Device applicability", 1)[1]
    rows = {line.split("|")[1].strip().strip("`") for line in table.splitlines() if line.startswith("| `")}
    expected = {
        o["name"] for o in ms.context.options()
        if len(o["devices"]) < 3 or o["devices"] != o["mindspore_devices"]
    }
    assert rows == expected
    assert "print_file_path" in rows and "gpu_config" in rows and "mode" not in rows
