"""TensorFlow 1's `tf.contrib` names that older code imports (aliases of segflow's modules)."""
