"""mlx_sizes(): what a model's weights and its prompt cache hold, as the
counters fit compares the need's lines with — on stand-ins that hold
``nbytes`` as MLX's arrays and mlx-lm's caches do, and on a real mlx-lm
model and prompt cache where MLX imports."""

import pytest

import swapsight
from conftest import pinned_import


class Array:
    """An array as MLX's: its nbytes known without evaluating it."""

    def __init__(self, nbytes):
        self.nbytes = nbytes


class Model:
    def __init__(self, tree):
        self.tree = tree

    def parameters(self):
        return self.tree


class StateOnlyCache:
    """A cache whose class leaves nbytes to its subclasses (mlx-lm's
    _BaseCache raises): its state's arrays count, made afresh each time."""

    def __init__(self, *sizes):
        self.sizes = sizes

    @property
    def nbytes(self):
        raise NotImplementedError("Cache sub-class must implement nbytes")

    @property
    def state(self):
        return tuple(Array(n) for n in self.sizes)


def test_the_sizes_are_written_as_the_counters_fit_reads(mark_file):
    tied = Array(1000)
    model = Model({"embed": tied, "layers": [{"w": Array(200)}, {"w": Array(300)}], "head": tied})
    cache = [Array(64), StateOnlyCache(16, 16), StateOnlyCache(8, 8)]
    sizes = swapsight.mlx_sizes(model, cache)
    # The tied array once; each layer's fresh state counted, none taken
    # for another's.
    assert sizes == {"mlx.weights": 1500, "mlx.kv": 112}
    assert mark_file.read_lines() == [
        "#counter 1500 bytes mlx.weights",
        "#counter 112 bytes mlx.kv",
    ]
    assert swapsight.mlx_sizes(cache=[]) == {"mlx.kv": 0}
    assert mark_file.read_lines()[-1] == "#counter 0 bytes mlx.kv"


def test_a_model_without_parameters_is_a_type_error(mark_file):
    with pytest.raises(TypeError, match="model has no parameters\\(\\)"):
        swapsight.mlx_sizes(model=[Array(1)])
    assert mark_file.read_lines() == []


def test_without_a_recording_the_sizes_are_returned_and_nothing_written(no_recorder, tmp_path):
    assert swapsight.mlx_sizes(Model([Array(5)])) == {"mlx.weights": 5}
    assert swapsight.mlx_sizes() == {}
    assert list(tmp_path.iterdir()) == []


def test_a_real_mlx_lm_model_and_prompt_cache(mark_file):
    mx = pinned_import("mlx.core", "mlx and mlx-cpu", "'mlx[cpu]'")
    pinned_import("mlx_lm", "mlx-lm", "mlx-lm")
    from mlx.utils import tree_flatten
    from mlx_lm.models import llama
    from mlx_lm.models.cache import make_prompt_cache

    args = llama.ModelArgs(
        model_type="llama", hidden_size=64, num_hidden_layers=2, intermediate_size=128,
        num_attention_heads=2, num_key_value_heads=1, rms_norm_eps=1e-5, vocab_size=500,
        tie_word_embeddings=False,
    )
    model = llama.Model(args)
    cache = make_prompt_cache(model)
    model(mx.zeros((1, 300), dtype=mx.int32), cache=cache)
    mx.eval([c.state for c in cache])
    sizes = swapsight.mlx_sizes(model, cache)
    assert sizes["mlx.weights"] == sum(a.nbytes for _, a in tree_flatten(model.parameters()))
    # What the cache allocated (in steps of 256 tokens), as mlx-lm says it.
    assert sizes["mlx.kv"] == sum(c.nbytes for c in cache)
    assert sizes["mlx.kv"] == 2 * 2 * 512 * 32 * 4  # layers × K,V × slots × head dim × f32
