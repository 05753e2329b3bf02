"""`tf.contrib.factorization`'s k-means names for older code: the same objects as
segflow.ops.clustering_ops.

    from segflow.contrib.factorization import KMeans, KMEANS_PLUS_PLUS_INIT
"""
from segflow._ops.clustering import (
    COSINE_DISTANCE, KMC2_INIT, KMEANS_PLUS_PLUS_INIT, KMeans, RANDOM_INIT, SQUARED_EUCLIDEAN_DISTANCE
)

__all__ = ["COSINE_DISTANCE", "KMC2_INIT", "KMEANS_PLUS_PLUS_INIT", "KMeans", "RANDOM_INIT",
           "SQUARED_EUCLIDEAN_DISTANCE"]
