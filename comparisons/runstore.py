"""A resumable store of finished runs: one JSON file per run, named by its config hash.

A run file holds the config, the result, package versions, machine, and a checksum of the
result. It is written atomically (temporary file + rename), so an interrupted grid loses nothing
and leaves no half-written file under the final name; a file that does not parse, lacks the
completeness mark, fails its checksum or holds another config is reported and redone.
"""

import hashlib
import json
import os
from pathlib import Path


def config_hash(config):
    """A stable 16-hex-digit hash of a JSON-serialisable config."""
    return hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _checksum(result):
    return hashlib.sha256(json.dumps(result, sort_keys=True, default=float).encode()).hexdigest()


class RunStore:
    """Runs under ``folder``; ``prefix`` names the experiment."""

    def __init__(self, folder, prefix="run"):
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.prefix = prefix
        self.redone = []

    def path(self, config):
        return self.folder / f"{self.prefix}-{config_hash(config)}.json"

    def load(self, config):
        """The stored result of ``config``, or ``None`` (missing, or corrupt and to be redone)."""
        p = self.path(config)
        if not p.exists():
            return None
        try:
            doc = json.loads(p.read_text())
            ok = (doc.get("complete") is True and doc.get("config") == json.loads(json.dumps(config, default=str))
                  and doc.get("checksum") == _checksum(doc.get("result")))
        except (ValueError, AttributeError):
            ok = False
        if not ok:
            self.redone.append(str(p))
            return None
        return doc["result"]

    def save(self, config, result, meta=None):
        p = self.path(config)
        doc = {"config": config, "result": result, "meta": meta or {}, "checksum": _checksum(result), "complete": True}
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(doc, default=float))
        os.replace(tmp, p)
        return p
