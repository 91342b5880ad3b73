"""The sapo policy model written in PyTorch: the reference for tests/reference and the
competitor in `sapo bench model`. Same layout and numerics as src/model (pre-LayerNorm
blocks, learned positions, tanh-GELU MLP, output tied to the token embedding, eps 1e-5).
Parameters are a dict of tensors named as GPT_TENSOR_NAMES in src/model/gpt.c."""
import torch
import torch.nn.functional as F

TOK_BOS, TOK_EOS, TOK_PAD, VOCAB = 256, 257, 258, 259
NAMES = ["wte", "wpe", "ln1w", "ln1b", "qkvw", "qkvb", "attprojw", "attprojb",
         "ln2w", "ln2b", "fcw", "fcb", "fcprojw", "fcprojb", "lnfw", "lnfb"]


def shapes(L, C, T, V=VOCAB):
    return {"wte": (V, C), "wpe": (T, C), "ln1w": (L, C), "ln1b": (L, C), "qkvw": (L, 3 * C, C),
            "qkvb": (L, 3 * C), "attprojw": (L, C, C), "attprojb": (L, C), "ln2w": (L, C), "ln2b": (L, C),
            "fcw": (L, 4 * C, C), "fcb": (L, 4 * C), "fcprojw": (L, C, 4 * C), "fcprojb": (L, C),
            "lnfw": (C,), "lnfb": (C,)}


def init_params(L, C, T, seed=0):
    """GPT-2 style initialisation (normal 0.02, residual projections scaled, LN at 1/0)."""
    g = torch.Generator().manual_seed(seed)
    p = {}
    for name, shp in shapes(L, C, T).items():
        if name in ("ln1w", "ln2w", "lnfw"):
            t = torch.ones(shp)
        elif name.endswith("b"):
            t = torch.zeros(shp)
        else:
            std = 0.02 / (2 * L) ** 0.5 if name in ("attprojw", "fcprojw") else 0.02
            t = torch.randn(shp, generator=g) * std
        p[name] = t.requires_grad_(True)
    return p


def forward(p, idx, pos, NH, bias=None, cache=None):
    """Logits (B, T, V) of tokens idx (B, T) at position ids pos (T,) or (B, T). bias, when
    given, is added to the attention scores (0 or a large negative, broadcast to (B, NH, T,
    Tk)); None means no mask. With a cache (a list of per-layer [k, v] or None entries) the new
    keys and values are appended to it and attended to."""
    B, T = idx.shape
    C = p["wte"].shape[1]
    x = p["wte"][idx] + p["wpe"][pos]
    for l in range(p["qkvw"].shape[0]):
        h = F.layer_norm(x, (C,), p["ln1w"][l], p["ln1b"][l], eps=1e-5)
        qkv = h @ p["qkvw"][l].T + p["qkvb"][l]
        q, k, v = (t.view(B, T, NH, C // NH).transpose(1, 2) for t in qkv.split(C, dim=2))
        if cache is not None:
            if cache[l] is not None:
                k = torch.cat([cache[l][0], k], dim=2)
                v = torch.cat([cache[l][1], v], dim=2)
            cache[l] = [k, v]
        att = (q @ k.transpose(-2, -1)) * (1.0 / (C // NH) ** 0.5)
        if bias is not None:
            att = att + bias
        y = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, C)
        x = x + y @ p["attprojw"][l].T + p["attprojb"][l]
        h = F.layer_norm(x, (C,), p["ln2w"][l], p["ln2b"][l], eps=1e-5)
        h = F.gelu(h @ p["fcw"][l].T + p["fcb"][l], approximate="tanh")
        x = x + h @ p["fcprojw"][l].T + p["fcprojb"][l]
    x = F.layer_norm(x, (C,), p["lnfw"], p["lnfb"], eps=1e-5)
    return x @ p["wte"].T


def logits(p, inputs, L, NH, cache=None, start=0):
    """Logits (B, T, V) for inputs (B, T) at positions start..start+T-1, causal within them
    (L layers: the parameters' own count, checked). With a cache, as forward."""
    assert p["qkvw"].shape[0] == L, (p["qkvw"].shape, L)
    T = inputs.shape[1]
    pos = torch.arange(start, start + T, device=inputs.device)
    bias = None
    if cache is None or start == 0:
        causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=inputs.device))
        bias = torch.zeros(T, T, device=inputs.device).masked_fill(~causal, float("-inf"))
    return forward(p, inputs, pos, NH, bias, cache)


def masked_logprobs(lgts, targets):
    """log p(target) per position, 0 where the target is TOK_PAD; and the mask."""
    mask = targets != TOK_PAD
    safe = torch.where(mask, targets, torch.zeros_like(targets))
    lp = lgts.log_softmax(-1).gather(-1, safe.unsqueeze(-1)).squeeze(-1)
    return torch.where(mask, lp, torch.zeros_like(lp)), mask
