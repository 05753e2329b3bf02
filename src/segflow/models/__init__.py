"""Models built from segflow's ops and kernels: gradient-boosted trees."""
from segflow.models._trees.estimators import GradientBoostedTreesClassifier  # noqa: F401
from segflow.models._trees.estimators import GradientBoostedTreesRegressor  # noqa: F401
from segflow.models._trees.estimators import load_trees  # noqa: F401
