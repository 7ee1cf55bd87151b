"""The IR diff report: one self-contained HTML page of what each pass of a pipeline did.

    write_report(module, "builtin.module(ember-inline,func.func(ember-cse),canonicalize)",
                 "report.html")
    ember-opt f.mlir -p PIPELINE --ir-diff-report=report.html

The page has a table of contents (each pass: what it ran on, its time, the lines it changed
and its statistics), the input IR, and per pass a side-by-side diff of the module before and
after it (difflib) with the whole IR after it folded below; a pass that changed nothing is
folded and marked "no change", a pass that failed is marked with its error and the IR it
left. Everything is HTML-escaped and the page loads nothing: its CSS and its one script
(expand or fold every pass) are inline, so it opens offline and can be attached to a bug.

`IRDiffRecorder` is the PassInstrumentation (instrument.py) that records it: the module's
text after every pass, as MLIR's `--mlir-print-ir-after-all --mlir-print-ir-module-scope`
prints it. An ember pass nested under `func.func(...)` is one entry per function; an upstream
`func.func(...)` element is one entry. There is no upstream equivalent of the page: MLIR
prints the IR dumps, which this puts side by side.
"""

from __future__ import annotations

import dataclasses
import difflib
import html
import re
from typing import Optional

from mlir import ir

from ember.passes.base import Statistics
from ember.passes.instrument import PassInstrumentation
from ember.passes.pipeline import Pipeline, PipelineReport

__all__ = ["IRDiffRecorder", "PassRecord", "render_html", "write_html", "write_report"]

_SSA = re.compile(r"%[\w.$-]+(#\d+)?")  # an SSA value name (`%12`, `%arg0`, `%1#2`)
MAX_INTRALINE_CHARS = 1000  # longer changed lines are marked whole, not character by character


@dataclasses.dataclass
class PassRecord:
    """One pass run: what it ran on, the module text before and after, time, statistics."""
    name: str
    target: str  # "module" or "@function"
    before: str
    after: str
    seconds: Optional[float]
    statistics: Optional[dict]  # an ember pass's counters; None for upstream passes
    error: Optional[str] = None  # why the pass failed

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def counts(self) -> tuple[int, int]:
        """(lines added, lines removed)."""
        added = removed = 0
        for line in difflib.unified_diff(self.before.splitlines(), self.after.splitlines(),
                                         lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed


class IRDiffRecorder(PassInstrumentation):
    """Records the text of `module` after every pass (pass it to Pipeline.run's
    `instruments`); `label` heads its part of the page, `pipeline` is shown with it."""

    def __init__(self, module: ir.Module, label: str = "", pipeline: str = "",
                 print_options: Optional[dict] = None):
        self.module = module
        self.label, self.pipeline = label, pipeline
        self.print_options = dict(print_options or {})
        self.input = self._text()
        self.records: list[PassRecord] = []

    def _text(self) -> str:
        try:
            return self.module.operation.get_asm(**self.print_options)
        except Exception as e:  # noqa: BLE001 (a pass may leave IR the printer refuses)
            return f"// the IR could not be printed: {e}"

    def _last(self) -> str:
        return self.records[-1].after if self.records else self.input

    def run_after_pass(self, name: str, op: ir.Operation, seconds: float,
                       stats: Optional[Statistics]) -> None:
        self.records.append(PassRecord(name, _target(op), self._last(), self._text(), seconds,
                                       None if stats is None else stats.as_dict()))

    def run_after_pass_failed(self, name: str, op: ir.Operation,
                              error: BaseException) -> None:
        self.records.append(PassRecord(name, _target(op), self._last(), self._text(), None,
                                       None, f"{type(error).__name__}: {error}"))

    @property
    def seconds(self) -> float:
        return sum(r.seconds or 0.0 for r in self.records)


def _target(op: ir.Operation) -> str:
    if op.name == "func.func" and "sym_name" in op.attributes:
        return "@" + ir.StringAttr(op.attributes["sym_name"]).value
    return "module" if op.name == "builtin.module" else op.name


def write_report(module: ir.Module, pipeline, path: str, *, title: str = "",
                 verify_each: bool = True) -> PipelineReport:
    """Runs `pipeline` (text or a Pipeline) on `module` in place and writes the IR diff
    report to `path`, also when a pass fails (the page then ends at the failed pass, and
    the pipeline's error propagates once it is written).

    Returns:
      the pipeline's PipelineReport.
    """
    if not isinstance(pipeline, Pipeline):
        pipeline = Pipeline.parse(pipeline)
    recorder = IRDiffRecorder(module, pipeline=str(pipeline))
    try:
        return pipeline.run(module, verify_each=verify_each, instruments=[recorder])
    finally:
        write_html(path, [recorder], title)


def write_html(path: str, recorders: list[IRDiffRecorder], title: str = "") -> None:
    """Writes the page of `recorders` (one part each) to `path` (UTF-8)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(render_html(recorders, title))


def _e(text) -> str:
    return html.escape(str(text), quote=True)


def _ms(seconds: Optional[float]) -> str:
    return "&mdash;" if seconds is None else f"{seconds * 1e3:.2f}&nbsp;ms"


def _stats_text(stats: Optional[dict]) -> str:
    if not stats:
        return "&mdash;" if stats is None else "none"
    return ", ".join(f"{_e(k)}:&nbsp;{v}" for k, v in sorted(stats.items()))


def _status(record: PassRecord) -> tuple[str, str]:
    """(CSS class, what the table of contents says)."""
    if record.error is not None:
        return "failed", "FAILED"
    if not record.changed:
        return "unchanged", "no change"
    added, removed = record.counts()
    return "changed", f"+{added} &minus;{removed}"


def render_html(recorders: list[IRDiffRecorder], title: str = "") -> str:
    """The whole page, as text."""
    title = title or "IR diff report"
    parts = [f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
             f"<title>{_e(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
             f"<h1>{_e(title)}</h1>\n"
             "<p class=\"tools\"><button type=\"button\" onclick=\"foldAll(true)\">expand all"
             "</button> <button type=\"button\" onclick=\"foldAll(false)\">fold all</button>"
             "</p>\n"]
    for k, recorder in enumerate(recorders):
        parts.append(_contents(k, recorder, len(recorders) > 1))
    for k, recorder in enumerate(recorders):
        parts.append(_sections(k, recorder))
    parts.append(f"<script>{_JS}</script>\n</body>\n</html>\n")
    return "".join(parts)


def _contents(k: int, recorder: IRDiffRecorder, several: bool) -> str:
    records = recorder.records
    changed = sum(r.changed for r in records)
    head = f"<h2>{_e(recorder.label)}</h2>\n" if several or recorder.label else ""
    rows = []
    for i, r in enumerate(records, 1):
        css, status = _status(r)
        rows.append(f"<tr class=\"{css}\"><td>{i}</td><td class=\"name\"><a href=\"#r{k}-p{i}\">"
                    f"{_e(r.name)}</a></td><td>{_e(r.target)}</td><td class=\"num\">"
                    f"{_ms(r.seconds)}</td><td>{status}</td><td>{_stats_text(r.statistics)}"
                    "</td></tr>\n")
    if not rows:
        rows.append("<tr><td colspan=\"6\">no passes ran</td></tr>\n")
    return (f"<nav class=\"contents\" id=\"r{k}\">\n{head}<p class=\"meta\">pipeline: <code>"
            f"{_e(recorder.pipeline or '(none)')}</code> &middot; {len(records)} passes, "
            f"{changed} changed the IR &middot; {_ms(recorder.seconds)} in passes</p>\n"
            "<table class=\"toc\">\n<tr><th>#</th><th>pass</th><th>on</th><th>time</th>"
            f"<th>change</th><th>statistics</th></tr>\n{''.join(rows)}</table>\n</nav>\n")


def _sections(k: int, recorder: IRDiffRecorder) -> str:
    lines = recorder.input.count("\n") + 1
    parts = [f"<section class=\"input\" id=\"r{k}-input\"><details><summary><h3>Input IR"
             f"{' of ' + _e(recorder.label) if recorder.label else ''} ({lines} lines)</h3>"
             f"</summary>\n<pre>{_e(recorder.input)}</pre></details></section>\n"]
    for i, r in enumerate(recorder.records, 1):
        css, status = _status(r)
        heading = (f"<h3>{i}. {_e(r.name)} <span class=\"meta\">on {_e(r.target)} &middot; "
                   f"{_ms(r.seconds)} &middot; {status}</span></h3>")
        body = []
        if r.error is not None:
            body.append(f"<pre class=\"error\">{_e(r.error)}</pre>\n")
        if r.statistics:
            body.append("<table class=\"stats\">" + "".join(
                f"<tr><td>{_e(name)}</td><td class=\"num\">{value}</td></tr>"
                for name, value in sorted(r.statistics.items())) + "</table>\n")
        if r.changed:
            body.append(_diff(r))
        body.append(f"<details class=\"ir\"><summary>IR after {_e(r.name)}</summary>\n"
                    f"<pre>{_e(r.after)}</pre></details>\n")
        is_open = "" if css == "unchanged" else " open"
        parts.append(f"<section class=\"pass {css}\" id=\"r{k}-p{i}\"><details class=\"pass\""
                     f"{is_open}><summary>{heading}</summary>\n{''.join(body)}</details>"
                     "</section>\n")
    return "".join(parts)


def _diff(record: PassRecord, context: int = 3) -> str:
    """The side-by-side diff of a pass: changed lines with `context` lines around them, runs
    of unchanged lines folded into one row. Lines are matched by difflib's SequenceMatcher
    and paired lines highlighted character by character (difflib's HtmlDiff compares every
    line of a changed block with every other: minutes for a renumbered module)."""
    before, after = record.before.splitlines(), record.after.splitlines()
    rows = [f"<tr><th></th><th>before</th><th></th><th>{_e('after ' + record.name)}</th></tr>"]
    shown = 0  # lines of `before` up to here are in the table or folded
    for group in difflib.SequenceMatcher(None, before, after).get_grouped_opcodes(context):
        if group[0][1] > shown:
            rows.append(_skipped(group[0][1] - shown))
        for tag, i1, i2, j1, j2 in group:
            for tag, i, j in _aligned(tag, before, i1, i2, after, j1, j2):
                rows.append(_row(tag, i, before[i] if i is not None else None,
                                 j, after[j] if j is not None else None))
        shown = group[-1][2]
    if len(before) > shown:
        rows.append(_skipped(len(before) - shown))
    return f"<table class=\"diff\">{''.join(rows)}</table>\n"


def _aligned(tag: str, before: list, i1: int, i2: int, after: list, j1: int, j2: int):
    """(tag, i or None, j or None) per row of one opcode. A replaced block is matched again
    with SSA names ignored, so a line that a pass only renumbered sits beside its old self
    (what difflib's HtmlDiff finds by comparing every pair of lines, at quadratic cost)."""
    if tag != "replace":
        for k in range(max(i2 - i1, j2 - j1)):
            yield tag, (i1 + k if i1 + k < i2 else None), (j1 + k if j1 + k < j2 else None)
        return
    inner = difflib.SequenceMatcher(None, [_SSA.sub("%", line) for line in before[i1:i2]],
                                    [_SSA.sub("%", line) for line in after[j1:j2]],
                                    autojunk=False)
    for op, a1, a2, b1, b2 in inner.get_opcodes():
        for k in range(max(a2 - a1, b2 - b1)):
            i = i1 + a1 + k if a1 + k < a2 else None
            j = j1 + b1 + k if b1 + k < b2 else None
            yield "replace", i, j


def _skipped(count: int) -> str:
    return (f"<tr class=\"skip\"><td colspan=\"4\">&#8942; {count} unchanged "
            f"line{'s' if count > 1 else ''}</td></tr>")


def _row(tag: str, i: int, left: str | None, j: int, right: str | None) -> str:
    """One row: line i+1 of before (or none) beside line j+1 of after (or none)."""
    if tag == "replace" and left is not None and right is not None \
            and len(left) + len(right) <= MAX_INTRALINE_CHARS:
        left_html, right_html = _intraline(left, right)
    else:
        left_html = "" if left is None else _e(left)
        right_html = "" if right is None else _e(right)
    css = "same" if tag == "equal" else "chg" if left is not None and right is not None \
        else "sub" if left is not None else "add"
    i_text = "" if left is None else str(i + 1)
    j_text = "" if right is None else str(j + 1)
    return (f"<tr class=\"{css}\"><td class=\"num\">{i_text}</td><td>{left_html}</td>"
            f"<td class=\"num\">{j_text}</td><td>{right_html}</td></tr>")


def _intraline(left: str, right: str) -> tuple[str, str]:
    """Both lines escaped, with the characters that differ marked."""
    out_left, out_right = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, left, right,
                                                       autojunk=False).get_opcodes():
        a, b = _e(left[i1:i2]), _e(right[j1:j2])
        if tag == "equal":
            out_left.append(a)
            out_right.append(b)
        else:
            out_left.append(f"<del>{a}</del>" if a else "")
            out_right.append(f"<ins>{b}</ins>" if b else "")
    return "".join(out_left), "".join(out_right)


_CSS = """
body { font-family: Helvetica, Arial, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.6em; margin: 0 0 .3em; }
code, pre, table.diff { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; }
pre { font-size: 12px; background: #f7f7f7; padding: .6em; overflow-x: auto; }
.meta { color: #555; font-weight: normal; font-size: .9em; }
table.toc { border-collapse: collapse; font-size: 16px; margin-bottom: 1.5em; }
table.toc td, table.toc th { border: 1px solid #ccc; padding: 4px 10px; text-align: left; }
table.toc a { color: #0b4ea2; text-decoration: none; }
td.num { text-align: right; }
tr.unchanged { color: #777; }
tr.failed, pre.error { background: #fde2e2; color: #900; }
section.pass { border-left: 4px solid #4a90d9; margin: .6em 0; padding-left: .6em; }
section.unchanged { border-left-color: #ccc; }
section.failed { border-left-color: #d33; }
summary h3 { display: inline; font-size: 1.1em; }
summary { cursor: pointer; }
table.stats { border-collapse: collapse; margin: .4em 0; font-size: 13px; }
table.stats td { border: 1px solid #ddd; padding: 2px 8px; }
table.diff { border-collapse: collapse; font-size: 12px; margin: .4em 0; width: 100%;
  table-layout: fixed; }
table.diff th { background: #eee; color: #666; text-align: left; font-weight: normal; }
table.diff th:nth-child(odd), table.diff td.num { width: 3.5em; }
table.diff td { padding: 0 4px; vertical-align: top; white-space: pre-wrap;
  word-break: break-all; }
table.diff td.num { background: #f3f3f3; color: #888; text-align: right; }
tr.sub td:nth-child(2) { background: #fbd7d7; }
tr.add td:nth-child(4) { background: #d7f5d7; }
tr.chg td:nth-child(2), tr.chg td:nth-child(4) { background: #fff6d0; }
tr.chg del { background: #f5b5b5; text-decoration: none; }
tr.chg ins { background: #a8e6a8; text-decoration: none; }
tr.skip td { background: #f3f3f3; color: #888; text-align: center; }
"""

_JS = """
function foldAll(open) {
  document.querySelectorAll("details.pass").forEach(function (d) { d.open = open; });
}
"""
