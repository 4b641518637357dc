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


# --- failures of a worker, the store and the output folder (issue #31 item 8) ---


def die_on_one(cfg, marks):
    if cfg["x"] == 1:
        os.kill(os.getpid(), 9)  # as the kernel's OOM killer does
    return square(cfg, marks)


@pytest.mark.parametrize("jobs, isolate", [(2, False), (1, True)])
def test_a_killed_worker_is_one_error_naming_the_store(tmp_path, jobs, isolate):
    from comparisons.runstore import RunError

    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    with pytest.raises(RunError, match=rf"grid: a worker process died \(killed by a signal, e.g. out of memory\) with "
                                       rf"\d of 3 cells unfinished; .* stored in {tmp_path / 'runs'}: run the command "
                                       r"again to resume"):  # 0.1: a raw BrokenProcessPool traceback
        run_grid([{"x": i} for i in range(3)], die_on_one, store, args=(str(marks),), jobs=jobs, isolate=isolate,
                 desc="grid")
    assert not list((tmp_path / "runs").glob("*.lock"))  # the unfinished cells' locks are released


def die_on_two(cfg, marks):
    if cfg["x"] == 2:
        os.kill(os.getpid(), 9)
    return square(cfg, marks)


@pytest.mark.parametrize("jobs, isolate", [(2, False), (1, True), (2, True)])
def test_a_batch_stopped_part_way_keeps_the_cells_it_finished(tmp_path, jobs, isolate):
    """A batch is one process computing its cells in turn (an hour of a quality run); a kill
    part-way through (a stop, the OOM killer) must not lose the cells finished before it."""
    from comparisons.runstore import RunError

    marks = tmp_path / "marks"
    marks.mkdir()
    store = RunStore(tmp_path / "runs", "t")
    grid = [{"x": i} for i in range(4)]
    with pytest.raises(RunError, match=r"with 2 of 4 cells unfinished; the 2 finished are stored"):
        run_grid(grid, die_on_two, store, args=(str(marks),), jobs=jobs, isolate=isolate, batch_by=lambda c: 0)
    assert [store.load(c) for c in grid] == [{"y": 0}, {"y": 1}, None, None]
    assert not list((tmp_path / "runs").glob("*.lock"))
    again = run_grid(grid, square, store, args=(str(marks),))  # the resumed run computes only what is missing
    assert [r["y"] for _, r in again] == [0, 1, 4, 9] and _computed(marks) == [0, 1, 2, 3]


def _read_only(folder, argv):
    """Run ``argv`` with ``folder`` read-only: its modes for a user; root ignores modes, so a read-only
    bind mount in a mount namespace of its own (skipped where that is not allowed)."""
    import shutil
    import subprocess

    if os.geteuid() != 0:
        paths = [folder, *folder.rglob("*")]
        for p in paths:
            p.chmod(p.stat().st_mode & ~0o222)
        try:
            return subprocess.run(argv, capture_output=True, text=True)
        finally:
            for p in paths:
                p.chmod(p.stat().st_mode | 0o200)
    if shutil.which("unshare") is None:
        pytest.skip("root without unshare: no read-only folder to test with")
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    res = subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *argv], capture_output=True, text=True)
    if "mount:" in res.stderr or "unshare:" in res.stderr:
        pytest.skip(f"no read-only bind mount here: {res.stderr.strip()[:200]}")
    return res


def test_a_read_only_or_misnamed_output_folder_is_one_line_and_a_stored_table_is_still_printed(letor_folder, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "eng"
    cmd = [sys.executable, "-m", "comparisons", "engines", "--data", str(letor_folder), "--folds", "1", "--rounds", "2",
           "--leaves", "4", "--min-data", "5", "--systems", "reference-ole"]
    first = subprocess.run(cmd + ["--out", str(out)], capture_output=True, text=True, cwd=os.getcwd())
    assert first.returncode == 0, first.stderr[-2000:]
    # every cell stored: the table is printed, then the unwritable outputs are one line (0.1: a traceback, no table)
    res = _read_only(out, cmd + ["--out", str(out)])
    assert res.returncode == 1 and "| reference-ole |" in res.stdout
    last = res.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot write {out / 'engines.md'} (") and "choose an output folder (--out)" in last
    assert "Traceback" not in res.stderr
    # cells to compute need the store: one line naming it
    res = _read_only(out, cmd + ["--out", str(out), "--seed", "7"])
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.strip().splitlines()[-1].startswith(f"error: cannot write to the run store {out / 'runs'} (")
    (tmp_path / "table.md").write_text("a file")
    res = subprocess.run(cmd + ["--out", str(tmp_path / "table.md")], capture_output=True, text=True)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert f"{tmp_path / 'table.md'} is a file, not a folder" in res.stderr.strip().splitlines()[-1]


@pytest.mark.parametrize("command,extra,table_line", [
    ("paper", ["--quick", "--iterations", "3", "--systems", "lambdamart", "--criteria", "se,ole"], "| LambdaMART | 10 |"),
    ("quality", ["--quick", "--seeds", "1", "--engines", "lightgbm", "--objectives", "native lambdarank,ours ndcg@10"],
     "| lightgbm | ours ndcg@10 |"),
])
def test_paper_and_quality_print_their_stored_table_before_a_read_only_output_fails(letor_folder, tmp_path, command,
                                                                                   extra, table_line):
    import subprocess
    import sys

    out = tmp_path / "o"
    cmd = [sys.executable, "-m", "comparisons", command, "--data", str(letor_folder), *extra, "--out", str(out)]
    first = subprocess.run(cmd, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr[-2000:]
    res = _read_only(out, cmd)  # every cell stored; only the output files cannot be written
    assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert table_line in res.stdout  # before: written first, so a read-only --out printed no table
    assert res.stderr.strip().splitlines()[-1].startswith("error: cannot write")
