"""Tests of comparisons.scale: it estimates the grid ``paper`` runs, every criterion included."""

from comparisons import scale


def test_the_estimated_grid_is_the_one_paper_runs_exact_ole_included():
    args, grid = scale.paper_grid(10000)
    assert args.k is None and args.threads == 1 and len(grid) == 30  # full-list lambdas, one thread per cell
    kinds = {(c["system"], c["criterion"]) for c in grid}
    assert kinds == {("mcrank", "se"), ("mcrank", "ole"), ("lambdamart", "se"), ("lambdamart", "ole"),
                     ("lambdamart", "ole_exact")}
    assert {c["iterations"] for c in grid if c["system"] == "mcrank"} == {2500}
    assert {c["iterations"] for c in grid if c["system"] == "lambdamart"} == {1000}


def test_wall_hours_schedule_the_cells_in_order_on_the_free_worker():
    assert scale.wall_hours([3.0, 1.0, 1.0, 1.0], 1) == 6.0
    assert scale.wall_hours([3.0, 1.0, 1.0, 1.0], 2) == 3.0  # the long cell alone, the short ones beside it
    assert scale.wall_hours([3.0, 1.0], 8) == 3.0  # never below the longest cell
