"""Tests of comparisons._runner.run_grid: serial, pool and Dask runs fill one store exactly once."""

import os
from pathlib import Path

import pytest

from comparisons._runner import run_grid
from comparisons.runstore import RunStore


def square(cfg, marks):
    """A cell whose every computation leaves a marker file, so double work is visible."""
    Path(marks, f"{cfg['x']}-{os.getpid()}-{os.urandom(4).hex()}").touch()
    return {"y": cfg["x"] ** 2}


def _computed(marks):
    return sorted(int(p.name.split("-")[0]) for p in Path(marks).iterdir())


def test_serial_pool_and_resume_compute_each_cell_once(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    grid = [{"x": i} for i in range(6)]
    first = run_grid(grid[:3], square, store, args=(str(marks),))
    assert [r["y"] for _, r in first] == [0, 1, 4]
    both = run_grid(grid, square, store, args=(str(marks),), jobs=2)
    assert [r["y"] for _, r in both] == [i * i for i in range(6)]
    assert _computed(marks) == list(range(6))
    again = run_grid(grid, square, store, args=(str(marks),))
    assert [r["y"] for _, r in again] == [i * i for i in range(6)] and _computed(marks) == list(range(6))
    run_grid(grid[:2], square, store, args=(str(marks),), force=True)
    assert _computed(marks) == [0, 0, 1, 1, 2, 3, 4, 5]


def fail_on_three(cfg, marks):
    if cfg["x"] == 3:
        raise RuntimeError("cell 3 failed")
    return square(cfg, marks)


def test_batches_share_a_process_store_cells_singly_and_keep_results_before_a_failure(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    grid = [{"x": i} for i in range(6)]
    got = run_grid(grid, square, store, args=(str(marks),), jobs=2, isolate=True, batch_by=lambda c: c["x"] % 2)
    assert [r["y"] for _, r in got] == [i * i for i in range(6)]
    pids = {}
    for p in Path(marks).iterdir():
        x, pid = p.name.split("-")[:2]
        pids.setdefault(int(x) % 2, set()).add(pid)
    assert all(len(v) == 1 for v in pids.values()) and pids[0] != pids[1]  # one process per batch
    assert all(store.load(c) == {"y": c["x"] ** 2} for c in grid)  # each cell stored on its own
    store2 = RunStore(tmp_path / "runs2", "t")
    with pytest.raises(RuntimeError, match="cell 3 failed"):
        run_grid(grid, fail_on_three, store2, args=(str(marks),), isolate=True, batch_by=lambda c: 0)
    assert [store2.load(c) is not None for c in grid] == [True, True, True, False, False, False]
    again = run_grid(grid[:3], fail_on_three, store2, args=(str(marks),))
    assert [r["y"] for _, r in again] == [0, 1, 4]


def test_reuse_is_reported(tmp_path, capsys):
    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    run_grid([{"x": 1}], square, store, args=(str(marks),))
    capsys.readouterr()
    run_grid([{"x": 1}, {"x": 2}], square, store, args=(str(marks),))
    said = "".join(capsys.readouterr())
    assert "2 cells, 1 reused" in said and "1 to compute" in said


def test_cell_claimed_by_another_run_is_waited_for_not_recomputed(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    other = RunStore(tmp_path / "runs", "t")
    other.use_code(square.__module__)  # the other run computes the same cells with the same code
    assert other.claim({"x": 3})  # a concurrent run is computing x=3

    import threading

    def the_other_run():
        other.save({"x": 3}, {"y": 9})
        other.release({"x": 3})

    timer = threading.Timer(0.5, the_other_run)
    timer.start()
    got = run_grid([{"x": 2}, {"x": 3}], square, store, args=(str(marks),), poll_seconds=0.1)
    timer.join()
    assert [r["y"] for _, r in got] == [4, 9] and _computed(marks) == [2]


def test_dask_local_cluster_fills_the_same_store_once(tmp_path):
    distributed = pytest.importorskip("distributed")
    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    grid = [{"x": i} for i in range(5)]
    run_grid(grid[:2], square, store, args=(str(marks),))  # a local run first
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        got = run_grid(grid, square, store, args=(str(marks),), scheduler=cl.scheduler_address)
    assert [r["y"] for _, r in got] == [i * i for i in range(5)]
    assert _computed(marks) == list(range(5))  # the cluster computed only what the store lacked
    run_grid(grid, square, store, args=(str(marks),))  # a resumed local run computes nothing
    assert _computed(marks) == list(range(5))
