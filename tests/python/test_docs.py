"""The worked examples of docs/python.md and of every docstring run as written (doctest)."""
import doctest
import os

import numpy as np
import pytest

import pscan

DOC = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


def test_python_md_examples():
    pytest.importorskip("dask")
    # Markdown fences become blank lines, which end an example's expected output as doctest wants.
    with open(DOC) as fh:
        text = "\n".join("" if line.startswith("```") else line for line in fh.read().splitlines())
    test = doctest.DocTestParser().get_doctest(text, {"numpy": np, "pscan": pscan}, "python.md", DOC, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    r = runner.summarize(verbose=False)
    assert r.attempted > 10 and r.failed == 0, r


@pytest.mark.parametrize("module", ["pscan._api", "pscan._prims", "pscan._bykey", "pscan._recurrence", "pscan._user",
                                    "pscan._errors", "pscan.dask", "pscan"])
def test_docstring_examples(module):
    if module == "pscan.dask":
        pytest.importorskip("dask")
    import importlib

    mod = importlib.import_module(module)
    globs = {"numpy": np, "pscan": pscan}
    if module == "pscan.dask":
        import dask.array as da

        globs["da"] = da
    r = doctest.testmod(mod, extraglobs=globs, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert r.failed == 0, r
