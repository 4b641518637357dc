"""A resumable store of finished runs: one JSON file per run, named by the hash of what made it.

A run file holds the config, the result, package versions, machine, and a checksum of the
result. It is written atomically (temporary file + rename), so an interrupted grid loses nothing
and leaves no half-written file under the final name; a file that does not parse, lacks the
completeness mark, fails its checksum or holds another config is reported and redone.

A cell is keyed on everything that made it, so a result is reused only when recomputing it
would give the same numbers:

* the config;
* the versions of this package, numba, numpy and the engines (:func:`version_key`);
* the code that computes a cell (:func:`code_hash`: the source of ``lambda_objectives``,
  ``reference`` and the module of the function a grid runs), because the package's version
  string does not change with every edit;
* the data files (:func:`data_fingerprint`): the SHA-256 of every file of the config's
  ``data`` folder (of its ``fold`` sub-folder when there is one), computed once per file and
  process and recomputed when a file's size or modification time changes, because the path
  alone says nothing about what the files held.

A cell being computed holds a lock file (``claim``/``release``) recording the holder's host,
pid, process start time and boot id, refreshed while the cell runs (``refresh``), so two runs
into one folder never compute it twice. A lock is stale, and taken over with a message naming
its file, when its process has died, when its pid now belongs to another process (another start
time, or another boot), or, for a lock of another host (whose processes cannot be checked from
here), when it has not been refreshed for ``stale_seconds``. A lock in the format before start
times were recorded (``"host pid"``, never refreshed by its writer) is stale when its pid has
exited, when the process now holding the pid started after the lock was written, or after
``stale_seconds``: it is never waited on for ever.

Taking a stale lock over is atomic: exactly one of the runs that judge it stale at once wins. A
lock is created only where none exists (a hard link, or ``O_EXCL``), and removed by anyone but
its holder only by the one run that creates the *takeover token* named after that lock file's
identity (its content and inode, ``<lock>.takeover-<digest>-0``, ``O_EXCL``). The token holder
reads the lock again, and only if it is still the very file judged stale (same inode, same
content, still stale) replaces it with its own in one rename; then it removes the token. A run
that finds the token taken has lost (the other run is taking the lock over); a token left by a
run that died mid-takeover (older than a minute: a takeover takes milliseconds) is passed over
to the next generation (``-1``, ``-2``...), itself created exclusively.

Failures of the store's folder (not creatable, read-only, full) raise :class:`RunError`: one line
naming the path and what to do, which the commands print without a traceback.
"""

import hashlib
import importlib.util
import json
import os
import socket
import time
from pathlib import Path

#: seconds without a refresh after which another host's lock is stale (holders refresh every minute)
STALE_SECONDS = 600.0
#: seconds after which a lock file that cannot be read (its writer died mid-write) is stale
_UNREADABLE_GRACE = 60.0
#: seconds after which a takeover token is taken to be left by a run that died mid-takeover
_TAKEOVER_GRACE = 60.0


class RunError(RuntimeError):
    """A failure of the run store, the output folder or a worker process; the message is one line
    naming the path (or the cells) and what to do. The commands print it without a traceback."""


def _why(exc):
    return exc.strerror or type(exc).__name__


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


def _sources(module):
    """``(folder, .py files)`` of ``module`` (every file of a package); no files when it is not importable."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None, []
    if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
        return None, []
    origin = Path(spec.origin)
    if spec.submodule_search_locations:  # a package: all of it
        return origin.parent, sorted(p for p in origin.parent.rglob("*.py") if "__pycache__" not in p.parts)
    return origin.parent, [origin]


def code_hash(modules=("lambda_objectives", "reference")):
    """SHA-256 (16 hex digits) of the source files of ``modules`` (packages: every ``.py`` file)."""
    h = hashlib.sha256()
    for module in sorted(set(modules)):
        h.update(module.encode() + b"\0")
        root, files = _sources(module)
        for f in files:
            h.update(str(f.relative_to(root)).encode() + b"\0")
            h.update(f.read_bytes())
    return h.hexdigest()[:16]


_DIGESTS = {}


def file_digest(path):
    """SHA-256 of a file's bytes, computed again only when its size or modification time changed."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _DIGESTS:
        h = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
        _DIGESTS[key] = h.hexdigest()
    return _DIGESTS[key]


def data_fingerprint(config):
    """``{file: sha256}`` of the data a config reads, or ``None`` when it names no existing file or
    folder (synthetic data: the code that generates it is in :func:`code_hash`).

    ``config["data"]`` a file: that file; a folder with ``config["fold"]`` as a sub-folder (any
    case): that sub-folder's files; any other folder: every file under it. Hidden files are skipped.
    """
    data = config.get("data") if isinstance(config, dict) else None
    if not isinstance(data, str) or data.startswith("synthetic:"):
        return None
    if data.startswith("pooled:"):  # "pooled:SEED:FOLDER" (quality's data sets shipped without folds)
        data = data.split(":", 2)[2]
    root = Path(data)
    if root.is_file():
        return {root.name: file_digest(root)}
    if not root.is_dir():
        return None
    where = root
    fold = config.get("fold")
    if isinstance(fold, str):
        sub = [p for p in root.iterdir() if p.is_dir() and p.name.lower() == fold.lower()]
        where = sub[0] if sub else root
    files = sorted(p for p in where.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))
    return {str(p.relative_to(root)): file_digest(p) for p in files}


def _boot_id():
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def _start_time(pid):
    """The start time of process ``pid`` (clock ticks after boot, Linux ``/proc``), or ``None``."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # the command name (field 2) may hold spaces and parentheses: fields after its last ")"
    return stat.rsplit(")", 1)[1].split()[19]


def _started_at(pid):
    """When process ``pid`` started (``time.time()`` scale, to about a second), or ``None``."""
    ticks = _start_time(pid)
    try:
        btime = next(int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines()
                     if line.startswith("btime "))
        return btime + int(ticks) / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, ValueError, TypeError):
        return None


def _read_lock(lock):
    """``(text, identity, mtime)`` of the lock file (read through one descriptor, so the content and
    the inode belong together), or ``None`` when there is none."""
    try:
        with open(lock, "rb") as fh:
            st = os.fstat(fh.fileno())
            text = fh.read()
    except FileNotFoundError:
        return None
    return text, (st.st_dev, st.st_ino), st.st_mtime


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OverflowError:
        return False
    return True


def _me():
    return {"host": socket.gethostname(), "pid": os.getpid(), "start": _start_time(os.getpid()),
            "boot": _boot_id()}


class RunStore:
    """Runs under ``folder``; ``prefix`` names the experiment.

    Parameters
    ----------
    key : dict, optional
        The versions a result depends on (default :func:`version_key`).
    code : iterable of str
        Modules whose source a result depends on (hashed by :func:`code_hash`);
        :func:`comparisons._runner.run_grid` adds the module of the function it runs.
    stale_seconds : float
        Seconds without a refresh after which another host's lock is taken over.
    """

    def __init__(self, folder, prefix="run", key=None, code=("lambda_objectives", "reference"),
                 stale_seconds=STALE_SECONDS):
        self.folder = Path(folder)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            blocker = next((p for p in (self.folder, *self.folder.parents) if p.exists() and not p.is_dir()), None)
            if blocker is not None:
                raise RunError(f"cannot create the run store {self.folder}: {blocker} is a file, not a folder; "
                               "choose an output folder (--out) that is a folder or does not exist yet") from None
            raise RunError(f"cannot create the run store {self.folder} ({_why(exc)}); choose an output folder "
                           "(--out) you can write to") from None
        self.prefix = prefix
        self.key = version_key() if key is None else key
        self.modules = tuple(sorted(set(code)))
        self.code = code_hash(self.modules)
        self.stale_seconds = float(stale_seconds)
        self.redone = []
        self.messages = []

    def use_code(self, *modules):
        """Add ``modules`` to the code a result depends on (before any cell is looked up)."""
        self.modules = tuple(sorted(set(self.modules) | set(modules)))
        self.code = code_hash(self.modules)

    def _ident(self, config):
        return {"config": config, "key": self.key, "code": self.code, "data": data_fingerprint(config)}

    def path(self, config):
        return self.folder / f"{self.prefix}-{config_hash(self._ident(config))}.json"

    def lock_path(self, config):
        return self.path(config).with_suffix(".lock")

    def _say(self, message):
        from ._machine import log

        self.messages.append(message)
        log(message)

    def _stale(self, lock):
        """Why the lock file ``lock`` is stale, or ``None`` while its holder may still be running."""
        seen = _read_lock(lock)
        return "gone" if seen is None else self._judge(seen[0], seen[2])

    def _judge(self, raw, mtime):
        """Why a lock file holding ``raw`` (bytes) last modified at ``mtime`` is stale, or ``None``."""
        text = raw.decode("utf-8", "replace")
        age = time.time() - mtime
        legacy = False
        try:
            info = json.loads(text)
            host, pid = info["host"], int(info["pid"])
        except (ValueError, KeyError, TypeError):
            try:  # the format before process start times were recorded: "host pid", never refreshed
                host, pid = text.split()
                info, pid, legacy = {}, int(pid), True
            except ValueError:
                return (f"unreadable for {age:.0f} s" if age > _UNREADABLE_GRACE else None)
        me = _me()
        if host != me["host"]:
            # another host's processes cannot be checked from here: its holder refreshes the lock
            if age > self.stale_seconds:
                return f"held by pid {pid} on host {host}, not refreshed for {age:.0f} s (> {self.stale_seconds:.0f} s)"
            return None
        if info.get("boot") and me["boot"] and info["boot"] != me["boot"]:
            return f"held by pid {pid} before this host rebooted"
        if not _alive(pid):
            return f"held by pid {pid}, which has exited"
        if info.get("start") and info["start"] != _start_time(pid):
            return f"held by pid {pid} of an earlier process (pid reused since)"
        if legacy:
            started = _started_at(pid)
            if started is not None and started > mtime + 2.0:  # 2 s: the boot time is whole seconds
                return f"held by pid {pid} (old format) of an earlier process: pid {pid} started after the lock was written"
            if age > self.stale_seconds:
                # its writer never refreshed it: a live pid alone cannot tell a holder from a reused pid
                return f"held by pid {pid} (old format, never refreshed), {age:.0f} s old (> {self.stale_seconds:.0f} s)"
        return None

    def _write_new(self, path, text):
        """Write ``text`` to a new file ``path``; :class:`RunError` when the store cannot be written."""
        try:
            path.write_text(text)
        except OSError as exc:
            try:  # a partial file (a full disk) is not left behind
                path.unlink(missing_ok=True)
            except OSError:
                pass
            raise RunError(f"cannot write to the run store {self.folder} ({_why(exc)}: {path.name}); cells to compute "
                           "need a writable store: make it writable, free space, or choose another output folder "
                           "(--out)") from None

    def claim(self, config):
        """Take the lock of ``config``'s cell; ``False`` while another live process holds it.

        A stale lock (see the module docstring) is taken over, with a message naming its file; when
        several runs judge it stale at once, exactly one of them gets it.
        """
        lock = self.lock_path(config)
        nonce = os.urandom(6).hex()
        mine = json.dumps({**_me(), "time": time.time(), "nonce": nonce})
        tmp = lock.with_name(f"{lock.name}-tmp{os.getpid()}-{nonce}")
        self._write_new(tmp, mine)
        try:
            for _ in range(5):
                try:
                    os.link(tmp, lock)  # atomic, and the lock is never seen empty
                    return True
                except FileExistsError:
                    pass
                except OSError:  # a file system without hard links
                    try:
                        fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
                    except FileExistsError:
                        pass
                    else:
                        with os.fdopen(fd, "w") as f:
                            f.write(mine)
                        return True
                seen = _read_lock(lock)
                if seen is None:
                    continue  # released meanwhile: try again
                why = self._judge(seen[0], seen[2])
                if why is None:
                    return False
                taken = self._take_over(lock, tmp, seen, why)
                if taken is not None:
                    return taken
            return False
        finally:
            tmp.unlink(missing_ok=True)

    def _take_over(self, lock, tmp, seen, why):
        """Replace the stale lock ``seen`` (``_read_lock``'s record) by ``tmp``: ``True`` when this run
        took it, ``False`` when another run is taking it over, ``None`` when the lock changed (look again)."""
        raw, ident, _ = seen
        digest = hashlib.sha256(raw + repr(ident).encode()).hexdigest()[:16]
        stem = f"{lock.name}.takeover-{digest}-"
        token = None
        for gen in range(1000):
            cand = lock.with_name(f"{stem}{gen}")
            try:
                os.close(os.open(cand, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
                token = cand
                break
            except FileExistsError:
                try:
                    age = time.time() - cand.stat().st_mtime
                except FileNotFoundError:
                    return None  # its holder has just finished: look at the lock again
                if age < _TAKEOVER_GRACE:
                    return False  # another run is taking this lock over right now
                # left by a run that died mid-takeover: the next generation
            except OSError as exc:
                raise RunError(f"cannot take over the stale lock {lock} ({_why(exc)}): make the run store {self.folder} "
                               "writable or choose another output folder (--out)") from None
        if token is None:
            return False
        try:
            now = _read_lock(lock)
            # only the very file judged stale is replaced: a lock taken meanwhile is another run's
            if now is None or now[:2] != (raw, ident) or self._judge(now[0], now[2]) is None:
                return None
            os.replace(tmp, lock)
            self._say(f"stale lock {lock} ({why}): taking it over")
            for left in lock.parent.glob(f"{stem}*"):  # tokens of runs that died taking this lock over
                left.unlink(missing_ok=True)
            return True
        finally:
            token.unlink(missing_ok=True)

    def holder(self, config):
        """What the lock file of ``config`` says (for messages), or ``None``."""
        try:
            text = self.lock_path(config).read_text()
        except OSError:
            return None
        try:
            info = json.loads(text)
            return f"pid {info['pid']} on host {info['host']}"
        except (ValueError, KeyError, TypeError):
            return text.strip() or "unknown"

    def refresh(self, config):
        """Mark the lock of ``config`` as still held (its modification time): run every minute or so."""
        try:
            os.utime(self.lock_path(config))
        except OSError:  # gone, or the store turned read-only: the cell's own write will say so
            pass

    def release(self, config):
        try:
            self.lock_path(config).unlink(missing_ok=True)
        except OSError:  # left behind: judged stale once this process has exited
            pass

    def load(self, config, newer_than=None):
        """The stored result of ``config``, or ``None`` (missing, or corrupt and to be redone).

        ``newer_than``: a ``time.time()`` value; an older file counts as missing.
        """
        p = self.path(config)
        try:
            if not p.exists() or (newer_than is not None and p.stat().st_mtime < newer_than):
                return None
        except FileNotFoundError:
            return None
        try:
            doc = json.loads(p.read_text())
            ok = (doc.get("complete") is True
                  and {k: doc.get(k) for k in ("config", "key", "code", "data")}
                  == json.loads(json.dumps(self._ident(config), default=str))
                  and doc.get("checksum") == _checksum(doc.get("result")))
        except (ValueError, AttributeError, OSError):
            ok = False
        if not ok:
            self.redone.append(str(p))
            return None
        return doc["result"]

    def outdated(self, configs):
        """``{reason: count}`` for ``configs`` whose stored result was computed from other data files,
        other code or other versions (so it is recomputed, and the user is told why)."""
        wanted = {config_hash(json.loads(json.dumps(c, default=str))): c for c in configs}
        reasons = {}
        for p in self.folder.glob(f"{self.prefix}-*.json"):
            try:
                doc = json.loads(p.read_text())
                cfg = wanted.get(config_hash(doc["config"]))
            except (ValueError, KeyError, TypeError, OSError):
                continue
            if cfg is None:
                continue
            now = json.loads(json.dumps(self._ident(cfg), default=str))
            for field, why in (("data", "other data files"), ("code", "other code"), ("key", "other versions")):
                if doc.get(field) != now[field]:
                    reasons[why] = reasons.get(why, 0) + 1
        return reasons

    def save(self, config, result, meta=None):
        p = self.path(config)
        doc = {**self._ident(config), "result": result, "meta": meta or {}, "checksum": _checksum(result),
               "complete": True}
        tmp = p.with_suffix(f".tmp{os.getpid()}")
        text = json.dumps(doc, default=float)
        self._write_new(tmp, text)
        try:
            os.replace(tmp, p)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise RunError(f"cannot write {p} ({_why(exc)}): make the run store writable or choose another output "
                           "folder (--out)") from None
        return p
