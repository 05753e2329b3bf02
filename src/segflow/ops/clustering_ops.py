"""TensorFlow's `clustering_ops` module name: k-means as a graph of ops (a face over
segflow._ops.clustering and clustering_kernels).

    from segflow.ops import clustering_ops
    km = clustering_ops.KMeans(x, 8, initial_clusters=clustering_ops.KMEANS_PLUS_PLUS_INIT)
"""
from segflow._ops.clustering import (
    CLUSTERS_VAR_NAME, COSINE_DISTANCE, KMC2_INIT, KMEANS_PLUS_PLUS_INIT, KMeans, RANDOM_INIT,
    SQUARED_EUCLIDEAN_DISTANCE
)
from segflow._ops.clustering_kernels import (kmc2_chain_initialization, kmeans_plus_plus_initialization,
                                             nearest_neighbors)

__all__ = ["CLUSTERS_VAR_NAME", "COSINE_DISTANCE", "KMC2_INIT", "KMEANS_PLUS_PLUS_INIT", "KMeans", "RANDOM_INIT",
           "SQUARED_EUCLIDEAN_DISTANCE", "kmc2_chain_initialization", "kmeans_plus_plus_initialization",
           "nearest_neighbors"]
