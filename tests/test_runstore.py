"""Tests of comparisons.runstore: atomic, checksummed run files keyed on what made them, and cell locks."""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from comparisons._runner import run_grid
from comparisons.runstore import RunStore, _start_time, config_hash, version_key


def test_runstore_resume_corruption_and_atomicity(tmp_path):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1, "b": [1, 2]}
    assert store.load(cfg) is None
    p = store.save(cfg, {"v": 0.5})
    assert p.name == f"x-{config_hash(store._ident(cfg))}.json" and store.load(cfg) == {"v": 0.5}
    assert not list(tmp_path.glob("*.tmp*"))
    p.write_text(p.read_text()[:20])  # truncated by a crash
    assert store.load(cfg) is None and store.redone == [str(p)]
    store.save(cfg, {"v": 0.5})
    doc = json.loads(p.read_text())
    doc["result"]["v"] = 0.7  # edited or bit-flipped: checksum mismatch
    p.write_text(json.dumps(doc))
    assert store.load(cfg) is None
    assert config_hash({"b": [1, 2], "a": 1}) == config_hash(cfg)


def test_store_key_holds_package_and_engine_versions(tmp_path):
    key = version_key()
    assert {"lambda_objectives", "numba", "numpy", "lightgbm", "xgboost"} <= set(key)
    cfg = {"a": 1}
    RunStore(tmp_path, "x").save(cfg, {"v": 1})
    assert RunStore(tmp_path, "x").load(cfg) == {"v": 1}
    older = RunStore(tmp_path, "x", key=dict(key, lambda_objectives="0.0.1"))
    assert older.load(cfg) is None  # a result of other code is never reused


def test_claim_is_exclusive_and_a_dead_owner_is_taken_over(tmp_path):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1}
    assert store.claim(cfg) and not store.claim(cfg)
    other = subprocess.run([sys.executable, "-c", (
        "import sys; sys.path.insert(0, %r); from comparisons.runstore import RunStore; "
        "print(RunStore(%r, 'x').claim({'a': 1}))") % (os.getcwd(), str(tmp_path))], capture_output=True, text=True)
    assert other.stdout.strip() == "False"  # a live holder in another process keeps it
    store.release(cfg)
    lock = store.path(cfg).with_suffix(".lock")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    import socket

    lock.write_text(f"{socket.gethostname()} {int(dead.stdout)}")
    assert store.claim(cfg)  # its process has exited


def cell(cfg):
    """A cell that reads its data file: the data's first line, as a number."""
    with open(os.path.join(cfg["data"], cfg["fold"], "train.txt")) as fh:
        return {"v": float(fh.readline().split()[0])}


def _folder(tmp_path, first):
    (tmp_path / "data" / "Fold1").mkdir(parents=True)
    (tmp_path / "data" / "Fold1" / "train.txt").write_text(f"{first} qid:1 1:0.5\n")
    return str(tmp_path / "data")


def test_changed_data_files_are_recomputed_unchanged_ones_reused_with_a_message(tmp_path, capsys):
    data = _folder(tmp_path, 1)
    store = RunStore(tmp_path / "runs", "t")
    grid = [{"data": data, "fold": "Fold1"}]
    assert run_grid(grid, cell, store)[0][1] == {"v": 1.0}
    capsys.readouterr()
    assert run_grid(grid, cell, RunStore(tmp_path / "runs", "t"))[0][1] == {"v": 1.0}
    said = capsys.readouterr().out
    assert "1 reused" in said and "same configuration, data files" in said and "--force" in said
    # the same path, the same size, new content (the case a path- or size-only key would miss)
    (tmp_path / "data" / "Fold1" / "train.txt").write_text("2 qid:1 1:0.5\n")
    assert run_grid(grid, cell, RunStore(tmp_path / "runs", "t"))[0][1] == {"v": 2.0}
    said = capsys.readouterr().out
    assert "0 reused" in said and "computed from other data files (1) are not reused" in said
    # a file of another fold does not invalidate this fold's cells
    (tmp_path / "data" / "Fold2").mkdir()
    (tmp_path / "data" / "Fold2" / "train.txt").write_text("5 qid:1 1:0.5\n")
    assert run_grid(grid, cell, RunStore(tmp_path / "runs", "t"))[0][1] == {"v": 2.0}
    assert "1 reused" in capsys.readouterr().out


def test_changed_code_of_the_cell_is_recomputed(tmp_path, monkeypatch, capsys):
    import importlib

    (tmp_path / "mod").mkdir()
    src = tmp_path / "mod" / "cellcode_for_test.py"
    src.write_text("def f(cfg):\n    return {'v': 1}\n")
    monkeypatch.syspath_prepend(str(tmp_path / "mod"))
    mod = importlib.import_module("cellcode_for_test")
    store_dir = tmp_path / "runs"
    assert run_grid([{"x": 1}], mod.f, RunStore(store_dir, "t"))[0][1] == {"v": 1}
    assert run_grid([{"x": 1}], mod.f, RunStore(store_dir, "t"))[0][1] == {"v": 1}
    assert "1 reused" in capsys.readouterr().out
    src.write_text("def f(cfg):\n    return {'v': 2}  # fixed\n")
    mod = importlib.reload(mod)
    assert run_grid([{"x": 1}], mod.f, RunStore(store_dir, "t"))[0][1] == {"v": 2}
    assert "computed from other code (1)" in capsys.readouterr().out
    store = RunStore(store_dir, "t", code=("lambda_objectives",))  # another package's code: another key
    assert store.load({"x": 1}) is None


def _lock(store, cfg, **info):
    lock = store.lock_path(cfg)
    lock.write_text(json.dumps({"host": socket.gethostname(), "pid": os.getpid(), "start": _start_time(os.getpid()),
                                "boot": None, **info}))
    return lock


def test_lock_of_a_live_process_is_kept_a_reused_pid_or_reboot_is_stale(tmp_path, capsys):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1}
    _lock(store, cfg)
    assert not store.claim(cfg)  # this very process holds it
    lock = _lock(store, cfg, start="1")  # this pid, but another process's start time: the pid was reused
    assert store.claim(cfg)
    assert f"stale lock {lock}" in capsys.readouterr().out
    store.release(cfg)
    _lock(store, cfg, pid=1, start="0")  # pid 1 of an earlier container
    assert store.claim(cfg)
    store.release(cfg)
    _lock(store, cfg, boot="another-boot")
    assert store.claim(cfg) and "rebooted" in capsys.readouterr().out


def test_another_hosts_lock_waits_until_not_refreshed_then_is_taken_over_naming_the_file(tmp_path, capsys):
    store = RunStore(tmp_path, "x", stale_seconds=600)
    cfg = {"a": 1}
    lock = _lock(store, cfg, host="elsewhere.example", pid=12345)
    assert not store.claim(cfg)  # cannot be checked from here: trusted while refreshed
    old = time.time() - 700
    os.utime(lock, (old, old))
    assert store.claim(cfg)
    said = capsys.readouterr().out
    assert str(lock) in said and "not refreshed for 7" in said and "elsewhere.example" in said


def test_unreadable_lock_is_stale_after_a_grace_period(tmp_path):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1}
    lock = store.lock_path(cfg)
    lock.write_text("")
    assert not store.claim(cfg)  # being written right now, perhaps
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert store.claim(cfg)


def check_own_lock_refreshed(cfg, lock):
    before = os.stat(lock).st_mtime_ns
    deadline = time.time() + 60
    while os.stat(lock).st_mtime_ns == before:  # the run refreshes it every 0.05 s
        assert time.time() < deadline, "the lock was never refreshed"
        time.sleep(0.05)
    return {"refreshed": True}


def test_locks_are_refreshed_while_a_cell_runs(tmp_path):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1}
    store.use_code(check_own_lock_refreshed.__module__)  # as run_grid does: the lock's name follows the code
    got = run_grid([cfg], check_own_lock_refreshed, store, args=(str(store.lock_path(cfg)),), refresh_seconds=0.05)
    assert got[0][1] == {"refreshed": True} and not store.lock_path(cfg).exists()


def value(cfg):
    return {"v": 2}


@pytest.mark.parametrize("force", [False, True])
def test_a_run_waiting_on_a_lock_that_is_never_refreshed_ends(tmp_path, force, capsys):
    store = RunStore(tmp_path, "x", stale_seconds=0.5)
    cfg = {"a": 1}
    store.use_code(value.__module__)
    store.save(cfg, {"v": 1})  # an older result: --force must not take it for the one being waited for
    _lock(store, cfg, host="elsewhere.example", pid=12345)  # a holder that never refreshes
    got = run_grid([cfg], value, store, force=force, poll_seconds=0.05)
    assert got[0][1] == ({"v": 2} if force else {"v": 1})
    if force:
        said = capsys.readouterr().out
        assert "waiting for a cell locked by pid 12345 on host elsewhere.example" in said
        assert str(store.lock_path(cfg)) in said and "taking it over" in said


def test_a_pooled_folder_is_fingerprinted_by_its_files(tmp_path):
    from comparisons.runstore import data_fingerprint

    folder = tmp_path / "nofolds"
    folder.mkdir()
    (folder / "rank.train").write_text("1 1:0.5\n")
    (folder / "rank.train.query").write_text("1\n")
    cfg = {"data": f"pooled:0:{folder}", "fold": "Fold1"}
    before = data_fingerprint(cfg)
    assert set(before) == {"rank.train", "rank.train.query"}
    (folder / "rank.train").write_text("2 1:0.5\n")
    assert data_fingerprint(cfg) != before


# --- atomic takeover, the old lock format, an unusable store (issue #31 item 8) ---


def _contend(folder, barrier, results, trials):
    """One run: at each trial, claim the stale lock of that trial's store at the barrier's release."""
    for t in range(trials):
        store = RunStore(os.path.join(folder, str(t)), "x", key={}, code=())
        barrier.wait()
        results.put((t, store.claim({"a": 1})))


def _dead_pid():
    return int(subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True).stdout)


@pytest.mark.parametrize("n_runs", [2, 4])
def test_a_stale_lock_judged_stale_by_several_runs_at_once_has_exactly_one_winner(tmp_path, n_runs):
    # 0.1: each run read the lock, judged it stale and unlinked whatever was there, the winner's new lock
    # included: 145/150 trials with 2 processes, 150/150 with 4 had several winners
    import multiprocessing

    trials, dead = 150, _dead_pid()
    stale = [json.dumps({"host": socket.gethostname(), "pid": dead, "start": "1", "boot": None}),
             f"{socket.gethostname()} {dead}"]  # the format before start times, too
    for t in range(trials):
        store = RunStore(tmp_path / str(t), "x", key={}, code=())
        store.lock_path({"a": 1}).write_text(stale[t % 2])
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(n_runs), ctx.Queue()
    runs = [ctx.Process(target=_contend, args=(str(tmp_path), barrier, results, trials)) for _ in range(n_runs)]
    for p in runs:
        p.start()
    wins = {}
    for _ in range(trials * n_runs):
        t, won = results.get(timeout=120)
        wins[t] = wins.get(t, 0) + won
    for p in runs:
        p.join(timeout=60)
    assert all(p.exitcode == 0 for p in runs)
    assert sorted(wins.values()) == [1] * trials, {t: w for t, w in wins.items() if w != 1}
    leftovers = [p.name for p in tmp_path.rglob("*") if p.is_file() and not p.name.endswith(".lock")]
    assert leftovers == []  # no takeover token or temporary file is left behind


def test_an_old_format_lock_of_a_live_pid_is_never_waited_on_for_ever(tmp_path, capsys):
    store = RunStore(tmp_path, "x", stale_seconds=3600)
    cfg = {"a": 1}
    lock = store.lock_path(cfg)
    lock.write_text(f"{socket.gethostname()} {os.getpid()}")  # this process, alive and older than the lock
    assert not store.claim(cfg)  # it may be the holder: kept while younger than stale_seconds
    old = time.time() - 30
    os.utime(lock, (old, old))
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(0.2)
        lock.write_text(f"{socket.gethostname()} {sleeper.pid}")
        os.utime(lock, (old, old))  # written 30 s before its pid's process started: the pid was reused
        assert store.claim(cfg)
        assert "started after the lock was written" in capsys.readouterr().out
    finally:
        sleeper.kill()
        sleeper.wait()
    store.release(cfg)
    from comparisons.runstore import _started_at

    born = _started_at(1)  # pid 1: alive, and older than a lock written after it started
    if born is None or born > time.time() - 10:
        pytest.skip("no start time of pid 1 to date the lock after")
    lock.write_text(f"{socket.gethostname()} 1")
    os.utime(lock, (born + 5, born + 5))
    assert RunStore(tmp_path, "x", stale_seconds=1).claim(cfg)  # never refreshed: stale after stale_seconds
    assert "held by pid 1 (old format, never refreshed)" in capsys.readouterr().out


def test_a_store_under_a_file_is_one_error_naming_the_file(tmp_path):
    from comparisons.runstore import RunError

    (tmp_path / "results.md").write_text("not a folder")
    for folder in (tmp_path / "results.md" / "runs", tmp_path / "results.md" / "a" / "runs"):
        with pytest.raises(RunError, match=rf"cannot create the run store .*: {tmp_path / 'results.md'} is a file, "
                                           r"not a folder; choose an output folder \(--out\)"):
            RunStore(folder, "x")
