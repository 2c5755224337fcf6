"""docs/python.md against the module: its tables are whole, and the
verdicts it lists are the ones the types say (issue 49 §5)."""

import os
import re

import pytest

from swapsight._fit import FIT_VERDICTS
from swapsight._report import VERDICTS

DOCS = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "python.md")


@pytest.fixture
def lines():
    if not os.path.exists(DOCS):
        pytest.skip("docs/python.md is not beside the tests (an installed wheel)")
    with open(DOCS, encoding="utf-8") as f:
        return f.read().splitlines()


def test_no_table_is_split_by_a_blank_line(lines):
    # A row after a blank line starts a table of its own, without a header:
    # Markdown shows it as text (the magic's --torch and --mlx fell out so).
    for i, line in enumerate(lines[2:], start=2):
        if line.startswith("|") and not lines[i - 1].strip() and lines[i - 2].startswith("|"):
            header = i + 1 < len(lines) and re.match(r"\|\s*-", lines[i + 1])
            assert header, "docs/python.md:%d: a table row cut off by a blank line: %s" % (i + 1, line)


def test_the_verdicts_the_docs_list_are_the_typed_ones(lines):
    text = "\n".join(lines)
    fit_row = next(l for l in lines if l.startswith("| `swapsight.fit("))
    assert re.findall(r'`"([a-z-]+)"`', fit_row.split("verdict` —", 1)[1])[:3] == list(FIT_VERDICTS)
    report_row = next(l for l in lines if l.startswith("| `swapsight.Report`"))
    assert re.findall(r'`"([a-z-]+)"`', report_row)[:4] == list(VERDICTS)
    assert "fits only by swapping" not in fit_row and "does not fit" not in fit_row
    assert "in the current folder" in text
