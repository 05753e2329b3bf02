"""Models built from segflow's ops and kernels: k-means and gradient-boosted trees, with
scikit-learn's estimator API."""
from segflow.models._kmeans import KMeans  # noqa: F401
from segflow.models._trees.estimators import GradientBoostedTreesClassifier  # noqa: F401
from segflow.models._trees.estimators import GradientBoostedTreesRegressor  # noqa: F401
from segflow.models._trees.estimators import load_trees  # noqa: F401
