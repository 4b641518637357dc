"""Tests of comparisons.runstore: atomic, checksummed, version-keyed run files and cell locks."""

import json
import os
import subprocess
import sys

from comparisons.runstore import RunStore, config_hash, version_key


def test_runstore_resume_corruption_and_atomicity(tmp_path):
    store = RunStore(tmp_path, "x")
    cfg = {"a": 1, "b": [1, 2]}
    assert store.load(cfg) is None
    p = store.save(cfg, {"v": 0.5})
    assert p.name == f"x-{config_hash({'config': cfg, 'key': store.key})}.json" and store.load(cfg) == {"v": 0.5}
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
