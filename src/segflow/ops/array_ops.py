"""TensorFlow's `array_ops` module name: a face over the array op families."""
from segflow._ops.shape import (
    placeholder, placeholder_with_default, identity, stop_gradient, zeros, ones, zeros_like,
    ones_like, fill, shape, shape_n, size, rank, reshape, broadcast_to, prevent_gradient,
    identity_n, check_output_shape, newaxis
)
from segflow._ops.transpose import transpose, expand_dims, squeeze, reverse, reverse_v2
from segflow._ops.join import concat, stack, unstack, split, tile
from segflow._ops.slicing import slice, strided_slice, split_by_shapes, pad
from segflow._ops.one_hot import one_hot
from segflow._ops.gather import gather, gather_v2, gather_nd, batch_gather, take_rows, as_indexed_slices
from segflow._ops.stitch import dynamic_partition, dynamic_stitch, parallel_dynamic_stitch, stitch, partition
from segflow._ops.unique import (
    unique, unique_with_counts, unique_v2, unique_with_counts_v2, UniqueOutput,
    UniqueWithCountsOutput, unique_first_appearance
)
from segflow._ops.scatter import (
    scatter_nd, tensor_scatter_nd_update, tensor_scatter_nd_add, tensor_scatter_nd_sub,
    tensor_scatter_update, tensor_scatter_add, tensor_scatter_sub, scatter_nd_kernel
)
from segflow._ops.sort import top_k, sort, argsort, boolean_mask, TopKV2Output, top_k_kernel
from segflow._ops.random import (
    random_normal, random_uniform, truncated_normal, random_shuffle, multinomial, set_random_seed,
    get_seed, DEFAULT_GRAPH_SEED, set_seed, categorical
)
from segflow._ops.elementwise import where, where_v2
from segflow._ops.constant import constant
from segflow._ops.linalg import diag, diag_part

__all__ = [
    'placeholder', 'placeholder_with_default', 'identity', 'stop_gradient', 'zeros', 'ones',
    'zeros_like', 'ones_like', 'fill', 'shape', 'shape_n', 'size', 'rank', 'reshape',
    'broadcast_to', 'prevent_gradient', 'identity_n', 'check_output_shape', 'newaxis', 'transpose',
    'expand_dims', 'squeeze', 'reverse', 'reverse_v2', 'concat', 'stack', 'unstack', 'split',
    'tile', 'slice', 'strided_slice', 'split_by_shapes', 'pad', 'one_hot', 'gather', 'gather_v2',
    'gather_nd', 'batch_gather', 'take_rows', 'as_indexed_slices', 'dynamic_partition',
    'dynamic_stitch', 'parallel_dynamic_stitch', 'stitch', 'partition', 'unique',
    'unique_with_counts', 'unique_v2', 'unique_with_counts_v2', 'UniqueOutput',
    'UniqueWithCountsOutput', 'unique_first_appearance', 'scatter_nd', 'tensor_scatter_nd_update',
    'tensor_scatter_nd_add', 'tensor_scatter_nd_sub', 'tensor_scatter_update', 'tensor_scatter_add',
    'tensor_scatter_sub', 'scatter_nd_kernel', 'top_k', 'sort', 'argsort', 'boolean_mask',
    'TopKV2Output', 'top_k_kernel', 'random_normal', 'random_uniform', 'truncated_normal',
    'random_shuffle', 'multinomial', 'set_random_seed', 'get_seed', 'DEFAULT_GRAPH_SEED',
    'set_seed', 'categorical', 'where', 'where_v2', 'constant', 'diag', 'diag_part'
]
