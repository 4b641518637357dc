"""comparisons._progress: a line per finished cell and a heartbeat inside a long one (issue #48)."""

import io
import time

import pytest

from comparisons import _progress
from comparisons._progress import Cells, Heartbeat, elapsed, progress_seconds


def test_elapsed_reads_as_a_person_reads_it():
    assert [elapsed(s) for s in (0, 42.4, 65, 3599, 3600, 7445)] == ["0 s", "42 s", "1 m 05 s", "59 m 59 s",
                                                                     "1 h 00 m", "2 h 04 m"]


def test_cells_count_done_over_total(capsys):
    cells = Cells("quality", 3)
    cells.done("MQ2008 Fold1 lightgbm ndcg seed 0")
    cells.done()
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("quality: 1/3 cells (0 s): MQ2008 Fold1")
    assert out[1] == "quality: 2/3 cells (0 s)"


def test_heartbeat_reports_rounds_and_keeps_beating_without_them(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    with Heartbeat("cell A", total=4, every=0.0) as beat:  # every round says so
        beat.round(1)
        beat.round(2)
    said = out.getvalue()
    assert "  cell A: round 1 of 4 (25 %), 0 s\n" in said and "  cell A: round 2 of 4 (50 %), 0 s\n" in said
    out.truncate(0)
    with Heartbeat("cell A", total=4, every=0.05) as beat:
        beat.round(1)
        time.sleep(0.3)  # no round ends: the thread still says the cell is alive, at the round reached
    assert out.getvalue().count("  cell A: round 1 of 4 (25 %)") >= 2


def test_a_silent_cell_says_running(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    with Heartbeat("cell B", every=0.05):
        time.sleep(0.25)
    assert "  cell B: running, 0 s" in out.getvalue()


def test_an_inner_heartbeat_speaks_for_the_outer(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    with Heartbeat("outer", every=0.05):
        with Heartbeat("inner", total=2, every=0.05) as inner:
            inner.round(1)
            time.sleep(0.3)
        said = out.getvalue()
    assert "inner" in said and "outer" not in said


def test_heartbeat_lines_survive_a_redirected_stdout(monkeypatch):
    import contextlib

    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    with Heartbeat("cell C", total=3, every=0.0) as beat, contextlib.redirect_stdout(io.StringIO()):
        beat.round(3)
    assert "cell C: round 3 of 3 (100 %)" in out.getvalue()


def test_progress_seconds_from_the_environment(monkeypatch):
    monkeypatch.delenv("COMPARISONS_PROGRESS_SECONDS", raising=False)
    assert progress_seconds() == 30.0
    monkeypatch.setenv("COMPARISONS_PROGRESS_SECONDS", "5")
    assert progress_seconds() == 5.0 and Heartbeat("x").every == 5.0
    for bad in ("0", "-1", "nan", "inf", "soon", ""):
        monkeypatch.setenv("COMPARISONS_PROGRESS_SECONDS", bad)
        with pytest.raises(ValueError, match="COMPARISONS_PROGRESS_SECONDS must be a number of seconds > 0"):
            progress_seconds()


def test_run_grid_prints_a_line_per_cell(tmp_path, capsys):
    from comparisons._runner import run_grid
    from comparisons.runstore import RunStore

    store = RunStore(tmp_path / "runs", "progress-test")
    configs = [{"x": i} for i in range(3)]
    results = run_grid(configs, _square, store, desc="squares", name=lambda c: f"x={c['x']}")
    assert [r for _, r in results] == [0, 1, 4]
    out = capsys.readouterr().out
    for i in range(3):
        assert f"squares: {i + 1}/3 cells (" in out
    assert "x=2" in out
    _progress  # the module under test


def _square(cfg):
    return cfg["x"] ** 2
