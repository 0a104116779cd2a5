"""docs/mindspore-api.md is generated from the registries by
tools/gen_api_status.py (`make docs`)."""
import difflib
import importlib.util
import os
import pathlib
import subprocess
import sys

import msrt as ms

REPO = pathlib.Path(__file__).resolve().parents[3]
DOC = REPO / "docs" / "mindspore-api.md"
GENERATOR = REPO / "tools" / "gen_api_status.py"


def _generate(env=None):
    proc = subprocess.run([sys.executable, str(GENERATOR)], cwd=REPO, env=dict(os.environ, **(env or {})),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _generator():
    spec = importlib.util.spec_from_file_location("gen_api_status", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(text):
    """{(section title, name): (status, missing)} of the generated tables."""
    rows, section = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            section = line[3:]
        elif line.startswith("| `"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            rows[(section, cells[0].strip("`"))] = (cells[1], cells[2] if len(cells) > 2 else "")
    return rows


def test_committed_file_matches_the_registries():
    assert DOC.is_file(), "docs/mindspore-api.md is missing: run `make docs`"
    generated, committed = _generate(), DOC.read_text(encoding="utf-8")
    if generated != committed:
        diff = "".join(list(difflib.unified_diff(committed.splitlines(True), generated.splitlines(True),
                                                 "docs/mindspore-api.md (committed)", "generated"))[:60])
        raise AssertionError("docs/mindspore-api.md is stale: run `make docs` and commit it.\n" + diff)


def test_generation_does_not_depend_on_the_callers_profile():
    assert _generate({"MSRT_CONTEXT_PROFILE": "r1.6"}) == _generate()


def test_declared_forms_with_unsupported_parameters_are_partial():
    rows = _rows(DOC.read_text(encoding="utf-8"))
    seen = 0
    for form in ms.ops._api.forms():
        unsupported = [p["name"] for p in form["init"] + form["params"] if p["binds"] == "unsupported"]
        section = "`mindspore.Tensor`" if form["kind"] == "method" else "`mindspore.ops`"
        for name in form["names"]:
            status, missing = rows[(section, name)]
            if unsupported and f"mindspore.{section.strip('`')}.{name}" not in _generator().PARTIAL:
                assert status == "partial", (section, name)
                assert all(p in missing for p in unsupported), (section, name, missing)
                seen += 1
            elif not unsupported:
                assert status in ("exists", "partial"), (section, name)
    assert seen > 0


def test_every_declared_name_and_context_key_is_listed():
    rows = _rows(DOC.read_text(encoding="utf-8"))
    for option in ms.context.options():
        assert (f"Context keys: `{option['family']}`", option["name"]) in rows
    for name in ms.nn.__all__:
        if not name.startswith("_") and not isinstance(getattr(ms.nn, name), type(sys)):
            assert rows[("`mindspore.nn`", name)][0] in ("exists", "partial"), name


def test_partial_table_names_existing_apis():
    """An entry of the hand-kept table must name something msrt has: once it
    is removed or renamed, the table has to follow."""
    gen = _generator()
    for full in gen.PARTIAL:
        section, name = full.rsplit(".", 1)
        assert section in gen.TARGETS, full
        assert hasattr(gen.owner(section), name), full


def test_absent_names_really_are_absent():
    rows = _rows(DOC.read_text(encoding="utf-8"))
    assert rows[("`mindspore.parallel`", "set_algo_parameters")][0] == "partial"  # stored, no effect yet
    absent = [(section, name) for (section, name), (status, _) in rows.items() if status == "absent"]
    gen = _generator()
    # The probes the classification rests on see what is missing (every listed name may exist by now).
    assert gen.import_module("mindspore.no_such_module") is None
    assert gen.import_module("mindspore.communication") is not None
    for section, name in absent:
        title = section.strip("`")
        if title == "Module paths":
            assert gen.import_module(name) is None, name
        elif title.startswith("mindspore"):
            where = gen.owner(title)
            assert where is None or not hasattr(where, name), (title, name)
