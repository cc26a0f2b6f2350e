"""DCWE's graph input and config at their edges: edge lists (empty, out of range by one, the wrong
orientation) and the sizes that must be at least one."""
import pytest
import torch

from tempo_analysis.diffusion.model import DCWEConfig, check_edge_index


def test_edge_index_takes_sources_and_targets_in_range():
    ei = check_edge_index([[0, 1, 2], [1, 2, 0]], 3)
    assert ei.dtype == torch.long and ei.shape == (2, 3)
    for empty in ([], [[], []]):                                 # a graph without edges: a [2, 0] tensor
        assert check_edge_index(empty, 3).shape == (2, 0)
    with pytest.raises(ValueError, match=r"names units \[3\] but there are 3 units"):
        check_edge_index([[0, 1], [1, 3]], 3)                   # 3 is one past the last unit
    with pytest.raises(ValueError, match=r"names units \[-1\]"):
        check_edge_index([[0, -1], [1, 2]], 3)
    with pytest.raises(ValueError, match=r"shape \(3, 2\).*transpose"):
        check_edge_index([[0, 1], [1, 2], [2, 0]], 3)           # (source, target) pairs: refused, not reshaped
    with pytest.raises(ValueError, match=r"shape \(1, 1\)"):
        check_edge_index([[0]], 3)                              # one number is not an edge


@pytest.mark.parametrize("kw", [{"num_slices": 0}, {"num_units": 0}])
def test_a_graph_needs_a_unit_and_a_slice(kw):
    with pytest.raises(ValueError, match="both must be >= 1"):
        DCWEConfig(**kw)


def test_one_unit_and_one_slice_are_enough():
    cfg = DCWEConfig(num_units=1, num_slices=1)
    assert cfg.units == ["0"] and cfg.slices == [0]
