"""TensorFlow's `framework.ops` module name: a face over the core (graph, tensor, indexed_slices,
registry, convert)."""
from segflow._core.registry import (  # noqa: F401
    RegisterGradient, NotDifferentiable, NoGradient, no_gradient, get_gradient_function,
    Registry, _gradient_registry,
)
from segflow._core.tensor import (  # noqa: F401
    Tensor, EagerTensor, is_dense_tensor_like, _Reference,
)
from segflow._core.indexed_slices import (  # noqa: F401
    IndexedSlices, IndexedSlicesValue,
)
from segflow._core.graph import (  # noqa: F401
    Graph, get_default_graph, reset_default_graph, name_scope, device, colocate_with,
    control_dependencies, executing_eagerly_outside_functions, add_to_collection,
    get_collection, get_collection_ref, GraphKeys, op_scope, inside_function,
    enable_eager_execution, disable_eager_execution, add_to_collections,
)
from segflow._core.operation import Operation  # noqa: F401
from segflow._core.convert import (  # noqa: F401
    convert_to_tensor, convert_n_to_tensor, convert_to_tensor_or_indexed_slices,
    register_tensor_conversion_function, internal_convert_to_tensor,
    internal_convert_n_to_tensor,
)
from segflow._core.mode import (  # noqa: F401
    get_default_session,
)

__all__ = [
    'Graph', 'Operation', 'Tensor', 'EagerTensor', 'IndexedSlices', 'IndexedSlicesValue',
    'RegisterGradient', 'NotDifferentiable', 'NoGradient', 'no_gradient',
    'get_gradient_function', 'get_default_graph', 'reset_default_graph', 'name_scope', 'device',
    'colocate_with', 'control_dependencies', 'convert_to_tensor', 'convert_n_to_tensor',
    'convert_to_tensor_or_indexed_slices', 'get_default_session',
    'executing_eagerly_outside_functions', 'add_to_collection', 'get_collection',
    'get_collection_ref', 'GraphKeys', 'is_dense_tensor_like', 'Registry', 'op_scope',
    'inside_function', 'enable_eager_execution', 'disable_eager_execution',
    'add_to_collections', 'register_tensor_conversion_function', 'internal_convert_to_tensor',
    'internal_convert_n_to_tensor',
]
