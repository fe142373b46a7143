"""The Space in a real browser (headless Debian chromium via playwright): the leaderboard renders,
sorts and filters, every view opens, a submission uploaded through the page appears rescored with the
figures of Scorer + summarize, a malformed one shows its error, submitter text stays text, and no
response of the whole session carries hidden material."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect

from dataset.leaks import TEXT_KINDS, HiddenIndex, ngrams, tokens
from evaluator.scoring.metrics import summarize
from evaluator.scoring.pipeline import Scorer
from evaluator.traces.io import read_submission
from evaluator.traces.schema import Submission
from loaders.release import open_ground_truth, open_release
from tests.space_browser import chromium_page, local_settings, renamed, running_app, save_shot, write_jsonl

XSS_NAME = "<img src=x onerror=alert(1)>"
LINK_NAME = "[click](http://evil)"
BROWSER_SYSTEM = "gpt-5-6-luna"
RATIONALE_SHINGLE = 8
TIMEOUT_MS = 30_000
BUNDLED = ("/assets/", "/static/")


class Session:
    """What the browser saw: every finished response, read after the session, and any dialog."""

    def __init__(self) -> None:
        self.finished: list[object] = []
        self.dialogs: list[str] = []

    def bodies(self) -> list[tuple[str, bytes]]:
        out = []
        for request in self.finished:
            response = request.response()  # type: ignore[attr-defined]
            if response is None:
                continue
            try:
                out.append((request.url, response.body()))  # type: ignore[attr-defined]
            except Exception:  # redirects and aborted streams have no body to scan
                continue
        return out


@pytest.fixture(scope="module")
def runs(imported_runs: Path) -> dict[str, Submission]:
    names = (BROWSER_SYSTEM, "claude-haiku-4-5", "geommagent")
    return {name: read_submission(imported_runs / name / "submission.jsonl") for name in names}


@pytest.fixture(scope="module")
def browsed(built_release: Path, tmp_path_factory, runs: dict[str, Submission]):
    """One browsing and submitting session over an app holding a rescored system and two hostile names."""
    work = tmp_path_factory.mktemp("browser")
    shots = work / "shots"
    shots.mkdir()
    settings = local_settings(built_release, work / "store", daily_limit=20)
    session = Session()
    with running_app(settings) as app, chromium_page() as page:
        for system_id, name in (
            ("claude-haiku-4-5", "Claude Haiku 4.5 (rescored)"),
            ("geommagent", XSS_NAME),
        ):
            submission = renamed(runs[system_id], f"pre-{system_id}", name)
            path = write_jsonl(work / f"{system_id}.jsonl", submission)
            assert app.services.intake.submit(path, path.name, "tester").status == "queued"
        link = write_jsonl(work / "link.jsonl", renamed(runs["geommagent"], "link", LINK_NAME))
        assert app.services.intake.submit(link, link.name, "tester").status == "queued"
        app.services.rescorer.wait_idle()
        page.on("requestfinished", lambda request: session.finished.append(request))
        page.on("dialog", lambda dialog: (session.dialogs.append(dialog.message), dialog.dismiss()))
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(app.url)
        page.get_by_text("Claude Fable 5").first.wait_for()
        yield {"page": page, "app": app, "shots": shots, "work": work, "session": session}


def cell(page, table: str, row: int, column: int) -> str:
    """The text of a displayed cell (row 0 is the first row under the header, as sorted on screen)."""
    displayed = page.locator(f"#{table} [role=row]").nth(row + 1)
    return displayed.locator("[role=gridcell]").nth(column).inner_text().strip()


def column_of(name: str) -> int:
    from space.leaderboard_view import COLUMNS

    return list(COLUMNS).index(name)


def choose(page, label: str, option: str) -> None:
    field = page.get_by_label(label, exact=True)
    field.click()
    field.fill(option)
    page.get_by_role("option", name=option, exact=True).first.click()


def test_the_leaderboard_renders_paper_and_rescored_rows(browsed) -> None:
    page = browsed["page"]
    assert cell(page, "leaderboard-table", 0, column_of("system")) == "Claude Fable 5"
    assert cell(page, "leaderboard-table", 0, column_of("source")) == "paper-reported"
    page.get_by_text("Claude Haiku 4.5 (rescored)").first.wait_for()
    assert "EarthVerse: Benchmarking Scientific Agents" in page.content()
    save_shot(page, browsed["shots"], "leaderboard", for_lead=True)


def test_sorting_by_a_column_reorders_the_rows(browsed) -> None:
    page = browsed["page"]
    column = column_of("unit accuracy")
    header = page.locator("#leaderboard-table thead th").nth(column)
    header.hover()
    header.locator("button.cell-menu-button").click()
    page.get_by_role("menuitem", name="Sort ascending").click()
    first_row = page.locator("#leaderboard-table [role=row]").nth(1)
    expect(first_row).not_to_contain_text("Claude Fable 5")
    shown = [float(cell(page, "leaderboard-table", row, column)) for row in range(10)]
    assert shown == sorted(shown) and shown[0] < 11.6  # below the paper's lowest U: a rescored row
    save_shot(page, browsed["shots"], "sorted", for_lead=True)
    header.hover()
    header.locator("button.cell-menu-button").click()
    page.get_by_role("menuitem", name="Clear sort").click()
    expect(first_row).to_contain_text("Claude Fable 5")


def test_the_source_filter_keeps_only_rescored_rows(browsed) -> None:
    page = browsed["page"]
    choose(page, "Source", "rescored")
    expect(page.get_by_label("Shown")).to_have_value("3 of 28 systems")
    sources = {cell(page, "leaderboard-table", row, column_of("source")) for row in range(3)}
    assert sources == {"rescored"}
    save_shot(page, browsed["shots"], "filtered", for_lead=True)
    choose(page, "Source", "all")
    expect(page.get_by_label("Shown")).to_have_value("28 of 28 systems")


@pytest.mark.parametrize(
    ("tab", "expected"),
    [
        ("Capabilities", "Capability heatmap"),
        ("Difficulty & hazard", "Hazard-family heatmap"),
        ("Cost", "Unpriced systems"),
        ("About", "How to submit"),
    ],
)
def test_each_view_opens(browsed, tab: str, expected: str) -> None:
    page = browsed["page"]
    page.get_by_role("tab", name=tab).click()
    page.get_by_text(expected).first.wait_for()
    if tab != "About":
        page.locator(".js-plotly-plot:visible").first.wait_for()
    save_shot(
        page, browsed["shots"], tab.replace(" & ", "-").lower(), for_lead=tab in ("Capabilities", "Cost")
    )


def test_the_task_explorer_shows_a_question_scores_and_a_trace(browsed, runs) -> None:
    page = browsed["page"]
    task_id = runs["claude-haiku-4-5"].traces[0].task_id
    page.get_by_role("tab", name="Task explorer").click()
    choose(page, "Task", task_id)
    page.locator("#task-scores [role=gridcell]").first.wait_for()
    choose(page, "Run (a rescored submission of this task)", page_option(page, "Claude Haiku 4.5 (rescored)"))
    page.locator("#trace-steps [role=gridcell]").first.wait_for()
    assert cell(page, "trace-steps", 0, 0) == "1"
    save_shot(page, browsed["shots"], "task-explorer", for_lead=True)


def page_option(page, prefix: str) -> str:
    field = page.get_by_label("Run (a rescored submission of this task)", exact=True)
    field.click()
    option = page.get_by_role("option").filter(has_text=prefix).first
    return option.inner_text().strip()


def submit_in_page(page, path: Path, shown: str) -> dict[str, str]:
    """Upload `path` in the Submit tab and wait until the status names `shown` (the system or file)."""
    page.get_by_role("tab", name="Submit").click()
    page.locator("#submission-file input[type=file]").set_input_files(str(path))
    page.get_by_text(path.name).first.wait_for()
    page.get_by_role("button", name="Submit for rescoring").click()
    expect(page.locator("#submission-status")).to_contain_text(shown)
    return status_in_page(page)


def status_in_page(page) -> dict[str, str]:
    """The status dict as gradio's JSON view shows it (`key: "value"` lines, possibly unquoted keys)."""
    text = page.locator("#submission-status").inner_text()
    found = re.findall(r'"?(receipt|status|message)"?\s*:\s*"((?:[^"\\]|\\.)*)"', text, re.DOTALL)
    return {key: json.loads(f'"{value}"') for key, value in found}


def test_a_submission_through_the_page_appears_rescored_with_the_cli_figures(
    browsed, runs, built_release: Path
) -> None:
    page, app = browsed["page"], browsed["app"]
    path = write_jsonl(browsed["work"] / "luna-upload.jsonl", runs[BROWSER_SYSTEM])
    answer = submit_in_page(page, path, "GPT-5.6 Luna")
    assert answer.get("status") in ("queued", "published"), page.locator("#submission-status").inner_text()
    deadline = time.monotonic() + 60
    while status_in_page(page).get("status") != "published" and time.monotonic() < deadline:
        page.get_by_role("button", name="Look up status").click()
        time.sleep(0.5)
    assert status_in_page(page)["status"] == "published"
    save_shot(page, browsed["shots"], "submitted", for_lead=True)
    release = open_release(built_release)
    expected = summarize(
        Scorer(release, open_ground_truth(built_release)).score(runs[BROWSER_SYSTEM]).scores,
        release.tasks,
        "GPT-5.6 Luna",
    )
    _, results = app.services.board()
    assert next(r.system for r in results if r.system.system_name == "GPT-5.6 Luna") == expected
    page.get_by_role("tab", name="Leaderboard").click()
    page.get_by_label("Search systems").fill("luna")
    expect(page.get_by_label("Shown")).to_have_value("2 of 29 systems")
    rows = {cell(page, "leaderboard-table", row, column_of("source")): row for row in range(2)}
    rescored = rows["rescored"]
    assert (
        float(cell(page, "leaderboard-table", rescored, column_of("unit accuracy"))) == expected.unit_accuracy
    )
    assert float(cell(page, "leaderboard-table", rescored, column_of("Strict@95"))) == expected.strict95
    interval = f"[{expected.unit_accuracy_ci.low:.1f}, {expected.unit_accuracy_ci.high:.1f}]"
    assert cell(page, "leaderboard-table", rescored, column_of("95% interval")) == interval
    save_shot(page, browsed["shots"], "rescored-row", for_lead=True)
    page.get_by_label("Search systems").fill("")


def test_a_malformed_submission_shows_its_error(browsed) -> None:
    page = browsed["page"]
    path = browsed["work"] / "malformed.jsonl"
    path.write_text('{"metadata": {"system_name": "Broken"}}\nnot json\n', encoding="utf-8")
    answer = submit_in_page(page, path, "malformed.jsonl")
    assert answer["status"] == "rejected"
    assert (
        "malformed.jsonl:1: not a valid SubmissionHeader" in page.locator("#submission-status").inner_text()
    )
    save_shot(page, browsed["shots"], "malformed", for_lead=True)


def test_submitter_names_are_text_never_html_or_links(browsed) -> None:
    page = browsed["page"]
    page.get_by_role("tab", name="Leaderboard").click()
    search = page.get_by_label("Search systems")
    for name, query in ((XSS_NAME, "onerror"), (LINK_NAME, "evil")):
        search.fill(query)
        expect(page.locator("#leaderboard-table [role=row]").nth(1)).to_contain_text(name)
        expect(page.get_by_label("Shown")).to_have_value("1 of 29 systems")
        assert cell(page, "leaderboard-table", 0, column_of("system")) == name
    save_shot(page, browsed["shots"], "hostile-name", for_lead=True)
    search.fill("")
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("a[href*='evil']").count() == 0
    page.get_by_role("tab", name="Capabilities").click()
    page.locator(".js-plotly-plot:visible").first.wait_for()
    assert page.locator("img[src='x']").count() == 0 and page.locator("a[href*='evil']").count() == 0
    assert browsed["session"].dialogs == []


def test_no_response_of_the_session_carries_hidden_material(browsed, built_release: Path, runs) -> None:
    bodies = browsed["session"].bodies()
    seen = b"\n".join(body for _, body in bodies)
    # The recorded bodies cover what was shown: the leaderboard, a trace and a task question.
    assert b"Claude Fable 5" in seen and b"GPT-5.6 Luna" in seen
    folder = browsed["work"] / "responses"
    folder.mkdir()
    for number, (url, body) in enumerate(bodies):
        if urlsplit(url).path.startswith(BUNDLED):
            continue  # gradio's own frontend bundle, served verbatim from the installed package
        (folder / f"response-{number:04d}.txt").write_bytes(body)
    findings = [f for f in HiddenIndex.from_layout(built_release).scan_public(folder) if f.kind in TEXT_KINDS]
    urls = dict((f"response-{number:04d}.txt", url) for number, (url, _) in enumerate(bodies))
    assert findings == [], [(urls[f.file], f.kind, f.task_id, f.excerpt) for f in findings]
    rationales = {
        ngram
        for submission in runs.values()
        for trace in submission.traces
        if trace.recorded is not None
        for text in _rationale_texts(trace.recorded.judge_rationale)
        for ngram in ngrams(tokens(text.encode("utf-8")), RATIONALE_SHINGLE).tolist()
    }
    shown = set(ngrams(tokens(seen), RATIONALE_SHINGLE).tolist())
    assert rationales and not rationales & shown


def _rationale_texts(rationale) -> list[str]:
    return [
        *rationale.rationale.values(),
        rationale.one_sentence_rationale,
        *rationale.critical_errors,
        *rationale.missing_answer_elements,
    ]
