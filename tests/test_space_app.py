from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from loaders.release import open_release

APP = Path(__file__).resolve().parents[1] / "space" / "app.py"


@pytest.fixture(scope="module")
def app_module():
    spec = importlib.util.spec_from_file_location("earthverse_space_app", APP)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def public_release(built_release):
    return open_release(built_release / "hub" / "public")


def test_task_table_searches_and_filters_public_rows(app_module, public_release):
    table = app_module.task_table(public_release)
    assert len(table) == 405 and "solution" not in table.columns
    heat = app_module.task_table(public_release, hazard_family="heat_wave_urban_heat")
    assert 0 < len(heat) < 405 and set(heat["hazard_family"]) == {"heat_wave_urban_heat"}
    found = app_module.task_table(public_release, query="pacific northwest")
    assert "CSX-001_Q1" in set(found["task_id"])


def test_task_view_shows_the_question_and_the_file_list(app_module, public_release):
    question, files = app_module.task_view(public_release, "CSX-001_Q1")
    assert question.startswith("# Heat-Source Arbitration Audit")
    assert len(files) == 36 and "relative_path" in files.columns


def test_the_app_has_the_explorer_controls(app_module, public_release):
    app = app_module.build_app(public_release)
    labels = {getattr(block, "label", None) for block in app.blocks.values()}
    assert {"Search", "Hazard family", "Task"} <= labels
