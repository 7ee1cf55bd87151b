"""The IR diff report (passes/report.py): its page read back with html.parser (contents,
diffs, folding of unchanged passes, escaping, nothing loaded from outside), from Python,
from `ember-opt --ir-diff-report` and from `ConcreteFunction.ir_diff_report`."""

from __future__ import annotations

import dataclasses
import html.parser
import re
from typing import ClassVar

import pytest
from mlir import ir

import ember as em
from ember.dialects.ember.irdl import make_context
from ember.passes.base import Pass
from ember.passes.pipeline import PassFailure, Pipeline
from ember.passes.registry import register_pass
from ember.passes.report import IRDiffRecorder, PassRecord, _diff, write_report
import tool_runner

SOURCE = '''
func.func @f(%x: tensor<4xi32>) -> tensor<4xi32> {
  %z = "ember.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %y = "ember.add"(%x, %z) : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
  %a = "ember.neg"(%y) : (tensor<4xi32>) -> tensor<4xi32>
  %b = "ember.neg"(%y) : (tensor<4xi32>) -> tensor<4xi32>
  %s = "ember.mul"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %s : tensor<4xi32>
}
'''
PIPELINE = "builtin.module(func.func(ember-canonicalize),ember-cse,ember-dce,cse)"


class Page(html.parser.HTMLParser):
    """The page's table of contents, sections, ids, links and text; checks tags nest."""

    VOID = {"meta", "br", "hr", "img", "input", "link", "col"}

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.rows: list[dict] = []  # per table-of-contents row: class, cells
        self.sections: dict[str, dict] = {}  # id -> class, open
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.sources: list[str] = []  # src=, and href= to anything but #fragments
        self.scripts = 0
        self.text: list[str] = []
        self._section = None
        self._table = ""
        self._cell: list[str] | None = None
        self.feed(text)
        self.close()
        assert not self.stack, f"unclosed tags: {self.stack}"

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag not in self.VOID:
            self.stack.append(tag)
        if "id" in attrs:
            assert attrs["id"] not in self.ids, f"id {attrs['id']} twice"
            self.ids.add(attrs["id"])
        if "src" in attrs or tag == "link":
            self.sources.append(f"{tag} {attrs}")
        if "href" in attrs:
            if attrs["href"].startswith("#"):
                self.links.append(attrs["href"][1:])
            else:
                self.sources.append(attrs["href"])
        if tag == "script":
            self.scripts += 1
        if tag == "table":
            self._table = attrs.get("class", "")
        if tag == "tr" and self._table == "toc":
            self.rows.append({"class": attrs.get("class", ""), "cells": []})
        if tag == "td" and self._table == "toc":
            self._cell = []
        if tag == "section" and attrs.get("class", "").startswith("pass"):
            self._section = attrs["id"]
            self.sections[attrs["id"]] = {"class": attrs["class"], "open": None}
        if tag == "details" and attrs.get("class") == "pass":
            self.sections[self._section]["open"] = "open" in attrs

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-3:]}"
        self.stack.pop()
        if tag == "td" and self._cell is not None:
            self.rows[-1]["cells"].append("".join(self._cell).strip())
            self._cell = None
        if tag == "table":
            self._table = ""

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.handle_endtag(tag)

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _module(text: str = SOURCE, unregistered: bool = False) -> ir.Module:
    context = make_context()
    context.allow_unregistered_dialects = unregistered
    with context:
        return ir.Module.parse(text)


def _check_self_contained(page: Page) -> None:
    assert page.sources == [], "the page loads something from outside"
    assert page.scripts == 1
    missing = [link for link in page.links if link not in page.ids]
    assert not missing, f"links to no id: {missing}"


def test_report_lists_each_pass_with_its_change_time_and_statistics(tmp_path):
    path = tmp_path / "report.html"
    module = _module()
    report = write_report(module, PIPELINE, str(path))
    text = path.read_text(encoding="utf-8")
    page = Page(text)
    _check_self_contained(page)
    rows = [r for r in page.rows if r["cells"]]
    assert [r["cells"][1] for r in rows] == ["ember-canonicalize", "ember-cse", "ember-dce",
                                             "cse"]
    assert [r["cells"][2] for r in rows] == ["@f", "module", "module", "module"]
    assert [r["class"] for r in rows] == ["changed", "changed", "unchanged", "unchanged"]
    # add(x, 0) -> x: the constant and the add go, the other 4 lines are renumbered
    assert rows[0]["cells"][4] == "+4 \u22126"
    assert rows[2]["cells"][4] == "no change"
    assert rows[0]["cells"][5] == "add-zero:\xa01"
    assert rows[1]["cells"][5] == "eliminated:\xa01"
    assert rows[3]["cells"][5] == "\u2014"  # upstream: no statistics
    assert all(re.fullmatch(r"\d+\.\d\d\xa0ms", r["cells"][3]) for r in rows)
    assert [s["open"] for s in page.sections.values()] == [True, True, False, False]
    assert [s["class"] for s in page.sections.values()] == [
        "pass changed", "pass changed", "pass unchanged", "pass unchanged"]
    assert report.statistics[0].pass_name == "ember-canonicalize"
    # the IR after every pass, escaped: the final module's text is on the page
    body = "".join(page.text)
    assert str(module).strip() in body
    assert "tensor<4xi32>" not in text and "tensor&lt;4xi32&gt;" in text
    # the side-by-side diff of ember-cse: the second neg is gone
    assert text.count('class="diff"') == 2


ROW = re.compile(r'<tr class="(\w+)"><td class="num">(\d*)</td><td>(.*?)</td>'
                 r'<td class="num">(\d*)</td><td>(.*?)</td></tr>|<tr class="skip">.*?(\d+) unch')


def _rows(table: str) -> list[tuple]:
    return [("skip", m.group(6)) if m.group(6) else m.groups()[:5] for m in ROW.finditer(table)]


def test_diff_pairs_renumbered_lines_and_shows_removed_ones_alone():
    module = _module()
    recorder = IRDiffRecorder(module)
    with module.context:
        Pipeline.parse("func.func(ember-canonicalize)").run(module, instruments=[recorder])
    rows = _rows(_diff(recorder.records[0]))
    changed = [r for r in rows if r[0] != "same"]
    assert [r[0] for r in changed] == ["sub", "sub", "chg", "chg", "chg", "chg"]
    assert "ember.constant" in changed[0][2] and "ember.add" in changed[1][2]
    assert changed[0][3:] == ("", "") and changed[1][3:] == ("", "")
    # %2 = neg(%1) beside %0 = neg(%arg0): the names differ, marked character by character
    line, text = changed[2][1], changed[2][2]
    assert (line, changed[2][3]) == ("5", "3")
    assert text.startswith("    %<del>2</del> = &quot;ember.neg&quot;(%<del>1</del>)")
    assert changed[2][4].startswith("    %<ins>0</ins> = &quot;ember.neg&quot;(%<ins>arg0</ins>)")


def test_diff_folds_unchanged_lines_beyond_three_of_context():
    before = [f"line {k}" for k in range(1, 21)]
    after = list(before)
    after[9] = "line ten"
    rows = _rows(_diff(PassRecord("p", "module", "\n".join(before), "\n".join(after), 0.0,
                                  None)))
    assert rows[0] == ("skip", "6") and rows[-1] == ("skip", "7")
    assert [r[1] for r in rows[1:-1]] == ["7", "8", "9", "10", "11", "12", "13"]
    assert rows[4] == ("chg", "10", "line <del>10</del>", "10", "line <ins>ten</ins>")


def test_report_escapes_ir_that_looks_like_html(tmp_path):
    hostile = "</pre><script>alert(1)</script><a href=&quot;http://x&quot;>"
    module = _module(f'''
    func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {{
      %y = "test.note"(%x) {{note = "{hostile}"}} : (tensor<2xf32>) -> tensor<2xf32>
      %z = "ember.neg"(%y) : (tensor<2xf32>) -> tensor<2xf32>
      %w = "ember.neg"(%y) : (tensor<2xf32>) -> tensor<2xf32>
      %s = "ember.add"(%z, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      return %s : tensor<2xf32>
    }}''', unregistered=True)
    path = tmp_path / "report.html"
    write_report(module, "ember-cse", str(path), title="<b>title</b>")
    text = path.read_text(encoding="utf-8")
    page = Page(text)
    _check_self_contained(page)
    assert "<script>alert" not in text and "&lt;script&gt;alert(1)" in text
    assert "<b>title</b>" not in text and "&lt;b&gt;title&lt;/b&gt;" in text
    assert [r["class"] for r in page.rows if r["cells"]] == ["changed"]


@register_pass
@dataclasses.dataclass(frozen=True)
class PlantedFailurePass(Pass):
    """Always fails: the report must still be written, with this pass marked."""

    name: ClassVar[str] = "test-report-planted-failure"

    def run(self, module, stats) -> None:
        raise PassFailure("planted failure <here>")


def test_report_is_written_when_a_pass_fails_and_marks_it(tmp_path):
    path = tmp_path / "report.html"
    with pytest.raises(PassFailure, match="planted failure"):
        write_report(_module(), "builtin.module(ember-cse,test-report-planted-failure,cse)",
                     str(path))
    page = Page(path.read_text(encoding="utf-8"))
    rows = [r for r in page.rows if r["cells"]]
    assert [r["cells"][1] for r in rows] == ["ember-cse", "test-report-planted-failure"]
    assert rows[1]["class"] == "failed" and rows[1]["cells"][4] == "FAILED"
    assert "PassFailure: planted failure <here>" in "".join(page.text)


def test_ember_opt_writes_the_report_beside_unchanged_output(tmp_path):
    source = tmp_path / "in.mlir"
    source.write_text(SOURCE + "// -----\n" + SOURCE.replace("@f", "@g"))
    path = tmp_path / "report.html"
    plain = tool_runner.run("ember-opt", [str(source), "-p", PIPELINE, "--split-input-file"])
    tool_runner.check(plain, 0)
    result = tool_runner.run("ember-opt", [str(source), "-p", PIPELINE, "--split-input-file",
                                           f"--ir-diff-report={path}"])
    tool_runner.check(result, 0)
    assert result.stdout == plain.stdout
    page = Page(path.read_text(encoding="utf-8"))
    _check_self_contained(page)
    body = "".join(page.text)
    assert f"{source}, chunk 1" in body and f"{source}, chunk 2" in body
    assert [r["cells"][2] for r in page.rows if r["cells"]] == ["@f", "module", "module",
                                                                "module", "@g", "module",
                                                                "module", "module"]


def test_ember_opt_report_needs_a_pipeline_and_a_writable_path(tmp_path):
    source = tmp_path / "in.mlir"
    source.write_text(SOURCE)
    result = tool_runner.run("ember-opt", [str(source), f"--ir-diff-report={tmp_path}/r.html"])
    tool_runner.check(result, 1, "--ir-diff-report shows what the passes of -p did")
    missing = tmp_path / "no" / "r.html"
    result = tool_runner.run("ember-opt", [str(source), "-p", "ember-cse",
                                           f"--ir-diff-report={missing}"])
    tool_runner.check(result, 1, f"cannot write '{missing}'")
    assert not missing.parent.exists()


@em.function(pipeline="builtin.module(func.func(ember-canonicalize),ember-cse,ember-dce)")
def doubled(x):
    return -(x + 0.0) * -(x + 0.0)


def test_concrete_function_report_reruns_its_pipeline_on_a_copy(tmp_path):
    cf = doubled.get_concrete_function(em.TensorSpec([3], em.float32))
    optimized, traced = cf.mlir("optimized"), cf.mlir("traced")
    path = tmp_path / "doubled.html"
    assert cf.ir_diff_report(str(path)) == str(path)
    page = Page(path.read_text(encoding="utf-8"))
    _check_self_contained(page)
    rows = [r for r in page.rows if r["cells"]]
    assert [r["cells"][1] for r in rows] == ["ember-canonicalize", "ember-cse", "ember-dce"]
    assert rows[1]["class"] == "changed"
    body = "".join(page.text)
    assert traced.strip() in body and optimized.strip() in body
    assert (cf.mlir("optimized"), cf.mlir("traced")) == (optimized, traced)
    assert float(cf(em.constant([1.0, 2.0, 3.0]))[2]) == 9.0
