"""The outer steps of DiLoCo and NoLoCo (src/swarm/weight_sync.c) against an independent
numpy implementation of docs/SYNC.md's equations, on random inputs over several outer steps
(tests/reference/tool_weight_sync runs the C code for K nodes in one process):

DiLoCo:  D = mean_i (phi - theta_i);  v <- mu v + D;  phi <- phi - eta (D + mu v)
NoLoCo:  D = mean_{j in G} (phi_j - theta_j);  P = mean_{j in G} phi_j;
         delta_i <- alpha delta_i - beta D - gamma (phi_i - P);  phi_i <- phi_i + delta_i

in float32, to a relative 1e-5 (the C compiler may fuse multiply-adds). NoLoCo's groups are
the tool's (they come from the Philox stream); they must partition the nodes into groups of
sync.group, the last taking the remainder, and change from step to step."""
import os
import subprocess

import numpy as np
import pytest

BUILD = os.environ.get("SAPO_BUILD_DIR", "build")
TOOL = os.path.join(BUILD, "tests", "tool_weight_sync")
K, N, STEPS = 5, 257, 6


def run_tool(tmp_path, method, group, eta, mu, gamma, x):
    src, dst = tmp_path / "in.f32", tmp_path / "out.bin"
    x.astype(np.float32).tofile(src)
    p = subprocess.run([TOOL, method, str(K), str(N), str(STEPS), str(group), repr(eta), repr(mu), repr(gamma), "7",
                        str(src), str(dst)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    raw = dst.read_bytes()
    ng = STEPS * K * (K + 1)
    groups = np.frombuffer(raw[:4 * ng], dtype=np.int32).reshape(STEPS, K, K + 1)
    rest = np.frombuffer(raw[4 * ng:], dtype=np.float32).reshape(2, STEPS, K, N)
    return groups, rest[0], rest[1]


def reference(method, groups, eta, mu, gamma, x):
    f = np.float32
    phi = x[0].astype(f).copy()          # (K, N): each node's outer weights
    mom = np.zeros_like(phi)
    phis, moms = [], []
    for s in range(STEPS):
        theta = phi + x[s + 1]
        contrib = phi - theta
        new_phi, new_mom = phi.copy(), mom.copy()
        for k in range(K):
            g = groups[s, k, 1:1 + groups[s, k, 0]] if method == "noloco" else np.arange(K)
            D = contrib[g].mean(axis=0, dtype=f)
            if method == "diloco":
                new_mom[k] = f(mu) * mom[k] + D
                new_phi[k] = phi[k] - f(eta) * (D + f(mu) * new_mom[k])
            else:
                P = phi[g].mean(axis=0, dtype=f)
                new_mom[k] = f(mu) * mom[k] - f(eta) * D - f(gamma) * (phi[k] - P)
                new_phi[k] = phi[k] + new_mom[k]
        phi, mom = new_phi, new_mom
        phis.append(phi.copy())
        moms.append(mom.copy())
    return np.array(phis), np.array(moms)


@pytest.mark.parametrize("method,group,eta,mu,gamma", [
    ("diloco", K, 0.7, 0.9, 0.0),
    ("diloco", K, 1.0, 0.0, 0.0),
    ("noloco", 2, 0.7, 0.3, 0.5),
    ("noloco", 3, 0.5, 0.0, 0.9),
])
def test_outer_steps_match_numpy(tmp_path, method, group, eta, mu, gamma):
    if not os.path.exists(TOOL):
        pytest.fail(f"{TOOL} is missing (build the project first)")
    rng = np.random.default_rng(38)
    x = np.concatenate([rng.normal(size=(1, K, N)), 0.01 * rng.normal(size=(STEPS, K, N))]).astype(np.float32)
    if method == "diloco":  # DiLoCo's nodes share one outer copy: the same initial weights
        x[0] = x[0, 0]
    groups, phi, mom = run_tool(tmp_path, method, group, eta, mu, gamma, x)
    want_phi, want_mom = reference(method, groups, eta, mu, gamma, x)
    np.testing.assert_allclose(phi, want_phi, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(mom, want_mom, rtol=1e-5, atol=1e-6)
    assert np.abs(want_phi - x[0]).max() > 1e-3, "the outer weights never moved"
    if method == "noloco":
        for s in range(STEPS):
            sizes = sorted(groups[s, :, 0])
            want = sorted([group] * (K // group * group) + [K % group] * (K % group))
            assert sizes == want, (s, groups[s])
            for k in range(K):
                g = groups[s, k, 1:1 + groups[s, k, 0]]
                assert k in g and all((groups[s, j, 1:1 + groups[s, j, 0]] == g).all() for j in g)
        assert len({groups[s, 0, 1:].tobytes() for s in range(STEPS)}) > 1, "the groups never change"
    else:  # one outer copy: every node holds the same phi
        assert (phi == phi[:, :1]).all()
