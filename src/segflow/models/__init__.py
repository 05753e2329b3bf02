
from segflow.models._kmeans import KMeans  # noqa: F401
