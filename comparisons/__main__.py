"""``python -m comparisons <command>``: the project's experiments and benchmarks."""

import sys

COMMANDS = {
    "demo": ("comparisons.demo", "the whole pipeline on the built-in synthetic data (the README's main job)"),
    "bench": ("comparisons.bench", "all benchmarks in one report (ratios against peers timed in the same run)"),
    "engines": ("comparisons.engines", "one objective: reference SE/OLE vs LightGBM/XGBoost (ours and native)"),
    "scale": ("comparisons.scale", "the paper's grid at MSLR-WEB10K scale: timed rounds, extrapolated"),
    "validate": ("comparisons.validate_cmd", "engines' native gradients (probed) vs our preset kernels"),
    "paper": ("comparisons.paper", "SE vs OLE after Xia, Zhai & Wang (tables, Figure 2) on a LETOR folder"),
}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help") or argv[0] not in COMMANDS:
        lines = [f"  {name:8s} {doc}" for name, (_, doc) in COMMANDS.items()]
        print("usage: python -m comparisons <command> [options]\n\ncommands:\n" + "\n".join(lines))
        return 0 if argv and argv[0] in ("-h", "--help") else 2
    module = __import__(COMMANDS[argv[0]][0], fromlist=["main"])
    return module.main(argv[1:]) or 0


if __name__ == "__main__":
    sys.exit(main())
