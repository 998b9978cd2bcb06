"""A test run as text (terminal), Markdown (the PR comment), JSON and JUnit XML (what CI
systems read). Pure functions of the TestRun."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

from reconciler.viewtests.compare import Difference
from reconciler.viewtests.result import Status, TestResult, TestRun

_MARK = {Status.PASSED: "✅", Status.FAILED: "❌", Status.ERROR: "⚠️"}


def summary(run: TestRun) -> str:
    c = run.counts()
    if not c["tests"]:
        return "No tests selected."
    return (f"{c['tests']} test(s): {c['passed']} passed, {c['failed']} failed, {c['error']} error(s)"
            f" in {run.seconds:.1f} s")


def _table(columns: list[str], rows: list[list[str]], indent: str) -> list[str]:
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    line = [indent + "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip()]
    return line + [indent + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]


def _difference_lines(d: Difference, indent: str = "    ") -> list[str]:
    out: list[str] = []
    for label, rows, total in (("expected, missing", d.missing, d.missing_count),
                               ("produced, unexpected", d.unexpected, d.unexpected_count)):
        if total:
            more = f", first {len(rows)} shown" if total > len(rows) else ""
            out.append(f"{indent[:-2]}{label} ({total}{more}):")
            out += _table(d.columns, rows, indent)
    return out


def text(run: TestRun, verbose: bool = False) -> str:
    lines: list[str] = []
    for r in run.results:
        if r.status is Status.PASSED:
            if verbose:
                lines.append(f"PASS  {r.engine:<6} {r.view}: {r.name}")
            continue
        label = "FAIL " if r.status is Status.FAILED else "ERROR"
        lines.append(f"{label} {r.engine:<6} {r.where}: {r.view}: {r.name}: {r.message}")
        if r.difference is not None:
            lines += _difference_lines(r.difference)
    if not run.results:
        lines.append(summary(run))
    else:
        lines.append(("Tests passed: " if run.ok else "Tests failed: ") + summary(run))
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_lines(run: TestRun) -> list[str]:
    """The tests section of a PR comment."""
    c = run.counts()
    head = "✅" if run.ok else "❌"
    lines = [f"### {head} View tests: {c['passed']} passed, {c['failed']} failed, {c['error']} error(s)", ""]
    if not run.results:
        return [*lines, "No tests for the views in this plan.", ""]
    lines += ["| | engine | view | test | result |", "|---|---|---|---|---|"]
    for r in run.results:
        lines.append(f"| {_MARK[r.status]} | {r.engine} | `{r.view}` | `{_md_cell(r.name)}` | "
                     f"{_md_cell(r.message) if r.status is not Status.PASSED else 'passed'} |")
    for r in run.failures():
        lines += ["", f"<details><summary>{_md_cell(str(r.view))}: {_md_cell(r.name)} on {r.engine} "
                      f"(<code>{r.where}</code>)</summary>", "", "```text", f"{r.message}"]
        if r.difference is not None:
            lines += _difference_lines(r.difference, "  ")
        lines += ["```", "", "</details>"]
    lines.append("")
    return lines


def markdown(run: TestRun) -> str:
    return "\n".join(markdown_lines(run)) + "\n"


def as_json(run: TestRun) -> str:
    return json.dumps(run.to_json(), indent=2, ensure_ascii=False) + "\n"


def _details(r: TestResult) -> str:
    lines = [f"{r.where}: on {r.engine}: {r.message}"]
    if r.difference is not None:
        lines += _difference_lines(r.difference)
    return "\n".join(lines)


def junit(run: TestRun) -> str:
    """JUnit XML: one <testsuite> per view and engine (named `view [engine]`, the engine also a
    suite property), one <testcase> per test (file and line attributes)."""
    c = run.counts()
    root = ET.Element("testsuites", name="viewsync", tests=str(c["tests"]), failures=str(c["failed"]),
                      errors=str(c["error"]), time=f"{run.seconds:.3f}")
    suites: dict[tuple[str, str], list[TestResult]] = {}
    for r in run.results:
        suites.setdefault((str(r.view), r.engine), []).append(r)
    for (view, engine), results in suites.items():
        failures = sum(r.status is Status.FAILED for r in results)
        errors = sum(r.status is Status.ERROR for r in results)
        name = f"{view} [{engine}]"
        suite = ET.SubElement(root, "testsuite", name=name, tests=str(len(results)), failures=str(failures),
                              errors=str(errors), skipped="0", time=f"{sum(r.seconds for r in results):.3f}")
        ET.SubElement(ET.SubElement(suite, "properties"), "property", name="engine", value=engine)
        for r in results:
            case = ET.SubElement(suite, "testcase", name=r.name, classname=name, file=r.file,
                                 line=str(r.line), time=f"{r.seconds:.3f}")
            if r.status is Status.FAILED:
                ET.SubElement(case, "failure", message=r.message, type="test_failed").text = _details(r)
            elif r.status is Status.ERROR:
                ET.SubElement(case, "error", message=r.message, type="test_error").text = _details(r)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


_STATE_MARK = {"passed": "✅ ", "failed": "❌ "}


def _matrix_engines(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r if k != "view"))


def _view_name(v: dict[str, str]) -> str:
    return f"{v['catalog']}.{v['schema']}.{v['name']}"


def matrix_text(rows: list[dict[str, Any]]) -> list[str]:
    """The plan's engine matrix (viewtests.proof.matrix) as a text table."""
    if not rows:
        return []
    engines = _matrix_engines(rows)
    body = [[_view_name(r["view"]), *(str(r.get(e, "")) for e in engines)] for r in rows]
    return ["Engines (a representation is proven on an engine where all its view's tests pass there):",
            *_table(["view", *engines], body, "  ")]


def matrix_markdown(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    engines = _matrix_engines(rows)
    lines = ["#### Engines", "", "| view | " + " | ".join(engines) + " |", "|---" * (len(engines) + 1) + "|"]
    for r in rows:
        cells = [_STATE_MARK.get(str(r.get(e)), "") + str(r.get(e, "")) for e in engines]
        lines.append(f"| `{_view_name(r['view'])}` | " + " | ".join(cells) + " |")
    return [*lines, ""]
