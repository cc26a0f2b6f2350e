"""packed_linears: a module's linear layers through oneDNN with prepacked weights, for CPU decoding."""
import pytest
import torch
import torch.nn as nn

from tempo_analysis.cpu_linears import packed_linears, packed_linears_available

pytestmark = pytest.mark.skipif(not packed_linears_available(), reason="this torch build lacks the oneDNN linear ops")


class Block(nn.Module):
    """A linear with a bias, one without, on 3-d input (as a decoder's layers see it)."""

    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(24, 64), nn.Linear(64, 24, bias=False)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)))


def test_packed_layers_compute_the_same_and_are_restored():
    torch.manual_seed(0)
    block, x = Block(), torch.randn(3, 5, 24)
    seen = []
    block.down.register_forward_hook(lambda m, i, o: seen.append(o))   # hooks still run inside the block
    with torch.no_grad():
        want = block(x)
        with packed_linears(block, rows=3) as packed:
            assert packed and "forward" in block.up.__dict__ and "forward" in block.down.__dict__
            got = block(x)
        assert "forward" not in block.up.__dict__ and "forward" not in block.down.__dict__
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
        assert len(seen) == 2
        # weights changed after the block are read afresh by the next block (nothing is kept)
        block.up.weight.mul_(2.0)
        want = block(x)                                      # unpacked, outside the block
        with packed_linears(block) as packed:
            got = block(x)
        assert packed
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_a_no_op_with_gradients_switched_off_or_an_error_inside():
    block, x = Block(), torch.randn(2, 24)
    with packed_linears(block) as packed:             # gradients enabled: the packed product has no backward
        assert not packed and "forward" not in block.up.__dict__
        block(x).sum().backward()
    with torch.no_grad(), pytest.raises(RuntimeError, match="inside"):
        with packed_linears(block):
            raise RuntimeError("an error inside")
    assert "forward" not in block.up.__dict__         # restored after an error too


def test_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv("TEMPO_ANALYSIS_PACKED_LINEARS", "0")
    with torch.no_grad(), packed_linears(Block()) as packed:
        assert not packed


def test_a_small_llama_decodes_the_same_tokens():
    """Greedy decoding of a small random Llama (nn.Linear everywhere, as SmolLM2) gives the same tokens
    with packed layers as without."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    lm = LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 300, (4, 5))
    kw = dict(attention_mask=torch.ones_like(ids), max_new_tokens=12, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = lm.generate(ids, **kw)
        with packed_linears(lm, rows=4) as packed:
            got = lm.generate(ids, **kw)
    assert packed and torch.equal(got, want)
