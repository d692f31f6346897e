"""evalgrid: one run of the Cookie-Frame regime."""

from evaluator import heuristic as _heuristic  # noqa: F401 - registers the default judge
