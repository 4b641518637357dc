"""Learning from clicks: a seeded click simulator (:func:`simulate_clicks`) and its presets.

The position-debiased objectives themselves are options of the adapters (``bias=``); this package
holds what produces and describes click logs.
"""

from .simulate import CLICK_MODELS, CLICK_PRESETS, ClickLog, simulate_clicks

__all__ = ["CLICK_MODELS", "CLICK_PRESETS", "ClickLog", "simulate_clicks"]
