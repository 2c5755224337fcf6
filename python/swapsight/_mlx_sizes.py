"""mlx_sizes(): what an MLX model's weights and its prompt cache hold,
written into the running recording as the counters ``mlx.weights`` and
``mlx.kv``, which ``swapsight fit`` holds the need's weights and KV cache
lines against (docs/fit.md, "Estimate, run, compare").

Nothing here imports MLX: the sizes are the ``nbytes`` of the arrays the
program's own objects hold (an ``mx.array``'s is its size × item size,
known without evaluating it), so a lazy model costs nothing to size.
"""

from typing import Any, Dict, Iterator, List, Optional

from ._counter import counter

#: The counters, as fit reads them (LINE_COUNTERS in
#: crates/core/src/judge/fit/verify.rs).
WEIGHTS_COUNTER = "mlx.weights"
KV_COUNTER = "mlx.kv"

#: How deep a tree of arrays is walked: a model's parameters nest a few
#: levels per module; past this it is a cycle or not a model.
_MAX_DEPTH = 64


def _own_nbytes(obj: Any) -> Optional[int]:
    """``obj.nbytes`` where it is an int (an ``mx.array``; an mlx-lm cache,
    which counts what it allocated ahead too); None where there is none,
    or it raises (mlx-lm's base cache class raises NotImplementedError)."""
    try:
        n = getattr(obj, "nbytes", None)
    except Exception:
        return None
    if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        return n
    return None


def _children(obj: Any) -> Iterator[Any]:
    if isinstance(obj, dict):
        yield from obj.values()
    elif isinstance(obj, (list, tuple)):
        yield from obj
    else:
        # A cache without nbytes of its own: the arrays it hands to
        # save_prompt_cache.
        try:
            state = getattr(obj, "state", None)
        except Exception:
            return
        if state is not None:
            yield state


def _nbytes(obj: Any, seen: Dict[int, Any], depth: int = 0) -> int:
    """Σ nbytes of the arrays in ``obj``, each counted once (tied weights
    are one array under two names). ``seen`` holds each object it names:
    a ``state`` made afresh and dropped could otherwise hand its id to the
    next layer's, which would then count as seen."""
    if obj is None or depth > _MAX_DEPTH or id(obj) in seen:
        return 0
    seen[id(obj)] = obj
    own = _own_nbytes(obj)
    if own is not None:
        return own
    return sum(_nbytes(child, seen, depth + 1) for child in _children(obj))


def mlx_sizes(model: Any = None, cache: Any = None) -> Dict[str, int]:
    """Writes what ``model``'s weights and ``cache`` hold into the running
    recording now, as ``mlx.weights`` (Σ nbytes of ``model.parameters()``)
    and ``mlx.kv`` (Σ of the prompt cache's ``nbytes``: a list of mlx-lm
    layer caches as ``make_prompt_cache`` gives it, one cache, or arrays);
    returns the bytes written, by counter name, for those given. Call it
    once the model is loaded and again once the cache is at its longest:
    ``swapsight fit`` takes each counter's largest value. Without a
    recording it writes nothing and still returns the sizes. Raises
    TypeError for a ``model`` with no ``parameters()``."""
    out: Dict[str, int] = {}
    if model is not None:
        parameters = getattr(model, "parameters", None)
        if not callable(parameters):
            raise TypeError(
                "swapsight.mlx_sizes: model has no parameters(): an mlx.nn.Module, "
                "not %s" % type(model).__name__
            )
        out[WEIGHTS_COUNTER] = _nbytes(parameters(), {})
    if cache is not None:
        out[KV_COUNTER] = _nbytes(cache, {})
    for name, value in out.items():
        counter(name, value)
    return out


__all__: List[str] = ["mlx_sizes"]
