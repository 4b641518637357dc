"""``python -m comparisons <command>``: the project's experiments and benchmarks.

One argparse parser with a subcommand per module. A command module exposes
``add_arguments(parser)`` and ``run(args) -> int``, and may expose
``check_args(parser, args, argv)`` for checks across options (it calls ``parser.error``).
"""

import argparse
import importlib
import re
import sys

COMMANDS = {
    "demo": ("comparisons.demo", "the whole pipeline on the built-in synthetic data (the README's main job)"),
    "bench": ("comparisons.bench", "all benchmarks in one report (ratios against peers timed in the same run)"),
    "engines": ("comparisons.engines", "one objective: reference SE/OLE vs LightGBM/XGBoost (ours and native)"),
    "scale": ("comparisons.scale", "the paper's grid at MSLR-WEB10K scale: timed rounds, extrapolated"),
    "validate": ("comparisons.validate_cmd", "engines' native gradients (probed) vs our preset kernels"),
    "quality": ("comparisons.quality", "which objective trains the best ranker: engines × objectives × data sets, "
                                       "with paired tests"),
    "paper": ("comparisons.paper", "SE vs OLE after Xia, Zhai & Wang (tables, Figure 2) on a LETOR folder"),
    "long-lists": ("comparisons.long_lists", "what full-list, truncated and sampled pairs reach on long queries "
                                             "(paired over test queries)"),
    "clicks": ("comparisons.clicks", "rankers trained on simulated clicks: naive, the engines' debiasing, ours, "
                                     "the true-label skyline (and LightGBM's own position-bias test)"),
}


def build_parser():
    """The parser of every command (modules are imported lazily, only the one that runs)."""
    parser = argparse.ArgumentParser(prog="python -m comparisons", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", metavar="command", required=True,
                                help=", ".join(COMMANDS))
    for name, (module, doc) in COMMANDS.items():
        sub.add_parser(name, help=doc, description=doc, add_help=False)
    return parser, sub


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    parser, sub = build_parser()
    try:
        if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
            parser.parse_args(argv)  # prints help, or the usage and "invalid choice" / "required", and exits
        name = argv[0]
        module = importlib.import_module(COMMANDS[name][0])
        p = argparse.ArgumentParser(prog=f"python -m comparisons {name}", description=plain(module.__doc__),
                                    formatter_class=_Formatter)
        module.add_arguments(p)
        args = p.parse_args(argv[1:])
        if hasattr(module, "check_args"):
            args = module.check_args(p, args, argv[1:]) or args
    except SystemExit as exc:  # argparse's errors and --help: an exit code, not an exception
        return exc.code if isinstance(exc.code, int) else 2
    from ._cli import run_command

    return run_command(module, args)  # the store's, --out's or a worker's failure: one line, exit 1


_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")


def plain(text):
    """A module docstring as terminal text: Sphinx roles and RST literals lose their markup."""
    return _LITERAL.sub(r"\1", _ROLE.sub(r"\1", text or ""))


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Module docstrings kept as laid out; an option's default shown once, unless its help already
    says what the default is (or there is none to show: no value, a flag)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if ("default" in text.lower() or default is None or default is argparse.SUPPRESS
                or isinstance(default, bool) or not action.option_strings):
            return text
        if isinstance(default, (list, tuple)):
            default = ",".join(str(v) for v in default)
        return f"{text} (default: {str(default).replace('%', '%%')})"


if __name__ == "__main__":
    sys.exit(main())
