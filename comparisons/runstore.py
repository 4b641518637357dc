"""A resumable store of finished runs: one JSON file per run, named by its config hash.

A run file holds the config, the result, package versions, machine, and a checksum of the
result. It is written atomically (temporary file + rename), so an interrupted grid loses nothing
and leaves no half-written file under the final name; a file that does not parse, lacks the
completeness mark, fails its checksum or holds another config is reported and redone.

The store key is the config plus ``key`` (by default the versions of this package, numba,
numpy and the engines: a result computed by other code is never reused). A cell being computed
holds a lock file (``claim``/``release``), so two runs into one folder never compute it twice; a
lock left by a dead process on this host is taken over.
"""

import hashlib
import json
import os
import socket
from pathlib import Path


def version_key():
    """Versions that decide a result: this package, numba, numpy, the engines (when installed)."""
    import numba
    import numpy

    import lambda_objectives

    from ._machine import engine_versions

    return {"lambda_objectives": lambda_objectives.__version__, "numba": numba.__version__,
            "numpy": numpy.__version__, **engine_versions()}


def config_hash(config):
    """A stable 16-hex-digit hash of a JSON-serialisable config."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _checksum(result):
    return hashlib.sha256(json.dumps(result, sort_keys=True, default=float).encode()).hexdigest()


class RunStore:
    """Runs under ``folder``; ``prefix`` names the experiment."""

    def __init__(self, folder, prefix="run", key=None):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.key = version_key() if key is None else key
        self.redone = []

    def path(self, config):
        return self.folder / f"{self.prefix}-{config_hash({'config': config, 'key': self.key})}.json"

    def _lock(self, config):
        return self.path(config).with_suffix(".lock")

    def claim(self, config):
        """Take the lock of ``config``'s cell; ``False`` when another live process holds it."""
        lock = self._lock(config)
        me = f"{socket.gethostname()} {os.getpid()}"
        for _ in range(2):
            try:
                fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                try:
                    host, pid = lock.read_text().split()
                except (OSError, ValueError):
                    return False  # being written right now, or not ours to judge
                if host != socket.gethostname() or _alive(int(pid)):
                    return False
                lock.unlink(missing_ok=True)  # its process died: take it over
                continue
            with os.fdopen(fd, "w") as f:
                f.write(me)
            return True
        return False

    def release(self, config):
        self._lock(config).unlink(missing_ok=True)

    def load(self, config):
        """The stored result of ``config``, or ``None`` (missing, or corrupt and to be redone)."""
        p = self.path(config)
        if not p.exists():
            return None
        try:
            doc = json.loads(p.read_text())
            ok = (doc.get("complete") is True and doc.get("config") == json.loads(json.dumps(config, default=str))
                  and doc.get("key") == json.loads(json.dumps(self.key, default=str))
                  and doc.get("checksum") == _checksum(doc.get("result")))
        except (ValueError, AttributeError):
            ok = False
        if not ok:
            self.redone.append(str(p))
            return None
        return doc["result"]

    def save(self, config, result, meta=None):
        p = self.path(config)
        doc = {"config": config, "key": self.key, "result": result, "meta": meta or {}, "checksum": _checksum(result), "complete": True}
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(doc, default=float))
        os.replace(tmp, p)
        return p


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
