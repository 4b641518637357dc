"""dev.py, the newcomer's entry point: the suite's command line and the reader that streams its progress."""

import io
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import dev  # noqa: E402


class _Proc:
    def __init__(self, chunks):
        self.stdout = io.BufferedReader(io.BytesIO(b"".join(chunks)))


def _read(text, capsys):
    log = io.BytesIO()
    reader = dev._Suite(_Proc([text.encode()]), log)
    reader.start()
    reader.join()
    shown = capsys.readouterr().out
    reader.finish()
    return shown, capsys.readouterr().out, log.getvalue().decode()


def test_progress_is_echoed_as_it_comes_and_the_summary_is_held_for_last(capsys):
    text = ("bringing up nodes...\nbringing up nodes...\n\n"
            "....s...x. [ 50%]\n.....F.... [100%]\n"
            "=== FAILURES ===\nE  assert 1 == 2\n1 failed, 18 passed in 3.2s\n")
    shown, last, log = _read(text, capsys)
    assert log == text  # every byte goes to the log
    # xdist's start-up lines and the progress lines are shown at once...
    assert shown == "bringing up nodes...\nbringing up nodes...\n\n....s...x. [ 50%]\n.....F.... [100%]\n"
    # ...everything from the first other line is held back and printed by finish(), the summary last
    assert last == "=== FAILURES ===\nE  assert 1 == 2\n1 failed, 18 passed in 3.2s\n"


def test_a_line_that_only_starts_like_progress_is_held(capsys):
    shown, last, _ = _read("... [ 5%]\nbringing up the rear\n", capsys)
    assert shown.startswith("... [ 5%]\n") and "rear" not in shown
    assert last.endswith("bringing up the rear\n")


@pytest.mark.parametrize("cores, workers", [(0, "1"), (1, "1"), (2, "2"), (64, "4")])  # 0: os.cpu_count() unknown
def test_the_suite_runs_one_worker_a_core_and_the_users_arguments_come_last(cores, workers):
    cmd = [str(c) for c in dev.suite_command(["-k", "x", "-n", "0"], cores=cores)]
    assert cmd[1:3] == ["-m", "pytest"] and cmd[cmd.index("-n") + 1] == workers
    assert cmd[cmd.index("--dist") + 1] == "loadfile" and cmd[-4:] == ["-k", "x", "-n", "0"]


def test_xdist_is_installed_with_the_test_extra():
    # the suite's command needs it: it must come with `pip install .[test]`, which dev.py runs
    text = (ROOT / "pyproject.toml").read_text()
    test_extra = text[text.index("\ntest = ["):]
    assert '"pytest-xdist' in test_extra[:test_extra.index("\n]")]
    assert subprocess.run([sys.executable, "-c", "import xdist"]).returncode == 0
