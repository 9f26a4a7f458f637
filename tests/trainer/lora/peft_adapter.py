#!/usr/bin/python3
"""LoRA adapters in Hugging Face PEFT's format, and the adapted model's losses, in plain
PyTorch (no transformers, no peft), for the LoRA tests: a reference independent of
wireup-train.

The adapted forward is ../hf/hf_llama.py's (Llama, Qwen3, Qwen2.5) with LoRA added to
each adapted projection as PEFT's lora.Linear computes it in eval mode (no dropout),
unmerged: y = x W^T (+ b) + (x A^T) B^T * scale, scale = lora_alpha / r (use_rslora:
lora_alpha / sqrt(r)), in float32 as hf_llama.py computes. Qwen3's q_norm/k_norm then
apply to q_proj's adapted output; Qwen2's Q/K/V bias is the base projection's.
An adapter directory holds adapter_config.json and adapter_model.safetensors with
base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight [r, in] and
...lora_B.weight [out, r] (mlp.gate_proj etc. for the MLP).

  peft_adapter.py make ADAPTER_DIR --base HF_DIR --r R --alpha A [--targets q_proj,v_proj,...]
        [--dropout P] [--seed S] [--b_std X] [--dtype F32|BF16] [--layers L1,L2]
        [--set KEY JSON]... [--wrong_shape TENSOR] [--extra_tensor NAME]
        write an adapter as PEFT saves one, shapes from HF_DIR's config.json: A drawn
        kaiming-uniform as nn.Linear's default (a = sqrt(5)), B drawn normal with std X
        (default 0.1; 0: zeros, PEFT's own initialisation: the base model's outputs).
        --targets: default all seven projections; --layers: only those layers adapted
        (layers_to_transform says so); --set: a config key overridden or added (JSON
        value); --wrong_shape: that tensor (full name or a suffix of it) written
        transposed; --extra_tensor: a further [r, hidden] tensor of that name
  peft_adapter.py loss HF_DIR ADAPTER_DIR --seed S --rows N --context T
        hf_llama.py loss's mean next-token loss (the same synthetic batch), adapted
  peft_adapter.py grad_norm HF_DIR ADAPTER_DIR --seed S --step K --rows N --context T
        the loss of wireup's synthetic batch of step K, adapted, and the norm of its gradient
        with respect to every A and B (autograd), both in float64, and the largest relative
        distance of float32's loss and norm from them over five orders of the batch's rows:
        "LOSS GRAD_NORM LOSS_SPREAD NORM_SPREAD"
  peft_adapter.py sft_loss HF_DIR ADAPTER_DIR DATA_DIR --context T
        hf_llama.py sft_loss's "mean trained" line, adapted
  peft_adapter.py merge HF_DIR ADAPTER_DIR OUT_DIR
        OUT_DIR/model.safetensors: W + scale * B A for each adapted weight (computed in
        float64, stored in W's dtype), every other tensor as it is; HF_DIR's other files
        (config.json, tokenizer, ...; not its weight files) copied
  peft_adapter.py close A_DIR B_DIR --atol X
        the same tensor names and shapes, each element within X; prints the largest
        absolute difference; exit 1 otherwise
  peft_adapter.py read ADAPTER_DIR
        "r R", "lora_alpha A", "target_modules M1,M2,..." (sorted), then one line per
        tensor, sorted by name: "NAME [D0,D1] DTYPE"

The loss, sft_loss and merge commands refuse (exit 2, naming the problem) what this
reference does not implement or what PEFT would not load: peft_type other than LORA,
use_dora, bias other than "none", fan_in_fan_out, modules_to_save, rank_pattern,
alpha_pattern, a tensor whose name or shape does not fit the base, a lora_A without its
lora_B, a tensor of a module target_modules does not name.
"""
import argparse
import json
import math
import os
import re
import shutil
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hf"))
import hf_llama  # noqa: E402

ATTN = ("q_proj", "k_proj", "v_proj", "o_proj")
MLP = ("gate_proj", "up_proj", "down_proj")
PREFIX = "base_model.model."
TENSOR = re.compile(r"base_model\.model\.(model\.layers\.(\d+)\.(self_attn|mlp)\.(\w+))"
                    r"\.lora_([AB])\.weight")


def die(msg):
    print(f"peft_adapter.py: {msg}", file=sys.stderr)
    sys.exit(2)


def shapes(cfg):
    """module name (q_proj, ...) -> (out, in) of its weight."""
    H, nh, kvh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    hd = cfg.get("head_dim") or H // nh
    inter = cfg["intermediate_size"]
    return {"q_proj": (nh * hd, H), "k_proj": (kvh * hd, H), "v_proj": (kvh * hd, H),
            "o_proj": (H, nh * hd), "gate_proj": (inter, H), "up_proj": (inter, H),
            "down_proj": (H, inter)}


def peft_config(base, r, alpha, dropout, targets, layers):
    """adapter_config.json as PEFT's LoraConfig saves it (keys sorted)."""
    return {
        "alpha_pattern": {}, "auto_mapping": None, "base_model_name_or_path": base,
        "bias": "none", "eva_config": None, "exclude_modules": None, "fan_in_fan_out": False,
        "inference_mode": True, "init_lora_weights": True, "layer_replication": None,
        "layers_pattern": None, "layers_to_transform": layers, "loftq_config": {},
        "lora_alpha": alpha, "lora_bias": False, "lora_dropout": dropout,
        "megatron_config": None, "megatron_core": "megatron.core", "modules_to_save": None,
        "peft_type": "LORA", "r": r, "rank_pattern": {}, "revision": None,
        "target_modules": targets, "task_type": "CAUSAL_LM", "use_dora": False,
        "use_rslora": False,
    }


def cmd_make(a):
    with open(os.path.join(a.base, "config.json")) as f:
        cfg = json.load(f)
    dims = shapes(cfg)
    targets = [t for t in a.targets.split(",") if t]
    for t in targets:
        if t not in dims:
            die(f"--targets: {t!r} is none of {', '.join(dims)}")
    n_layers = cfg["num_hidden_layers"]
    layers = [int(i) for i in a.layers.split(",")] if a.layers else None
    g = torch.Generator().manual_seed(a.seed)
    tensors = {}
    for i in range(n_layers):
        if layers is not None and i not in layers:
            continue
        for mod in ATTN + MLP:  # PEFT's module order within a layer
            if mod not in targets:
                continue
            out, inp = dims[mod]
            name = f"{PREFIX}model.layers.{i}.{'self_attn' if mod in ATTN else 'mlp'}.{mod}"
            bound = 1 / math.sqrt(inp)  # kaiming_uniform_(a=sqrt(5)): gain*sqrt(3/fan_in)
            tensors[name + ".lora_A.weight"] = torch.rand(a.r, inp, generator=g) * 2 * bound - bound
            tensors[name + ".lora_B.weight"] = (torch.randn(out, a.r, generator=g) * a.b_std
                                                if a.b_std else torch.zeros(out, a.r))
    if a.wrong_shape:
        hits = [k for k in tensors if k == a.wrong_shape or k.endswith("." + a.wrong_shape)]
        if len(hits) != 1:
            die(f"--wrong_shape {a.wrong_shape}: {len(hits)} tensors match")
        tensors[hits[0]] = tensors[hits[0]].T.contiguous()
        if tensors[hits[0]].shape[0] == tensors[hits[0]].shape[1]:  # square: still wrong
            tensors[hits[0]] = torch.zeros(tensors[hits[0]].shape[0] + 1, tensors[hits[0]].shape[1])
    if a.extra_tensor:
        tensors[a.extra_tensor] = torch.rand(a.r, cfg["hidden_size"], generator=g)
    conf = peft_config(a.base, a.r, a.alpha, a.dropout, targets, layers)
    for k, v in (a.set or []):
        conf[k] = json.loads(v)
    os.makedirs(a.adapter_dir, exist_ok=True)
    dt = hf_llama.DTYPES[a.dtype]
    hf_llama.write_safetensors(os.path.join(a.adapter_dir, "adapter_model.safetensors"),
                               {k: tensors[k].to(dt) for k in sorted(tensors)}, {"format": "pt"})
    with open(os.path.join(a.adapter_dir, "adapter_config.json"), "w") as f:
        json.dump(conf, f, indent=2, sort_keys=True)
        f.write("\n")


def read_adapter(adapter_dir):
    with open(os.path.join(adapter_dir, "adapter_config.json")) as f:
        conf = json.load(f)
    tensors, _ = hf_llama.read_safetensors(os.path.join(adapter_dir, "adapter_model.safetensors"))
    return conf, tensors


def targeted(conf, module):
    """PEFT's check_target_module_exists for a module name such as model.layers.0.mlp.up_proj."""
    t = conf.get("target_modules")
    if isinstance(t, str):
        ok = re.fullmatch(t, module) is not None
    else:
        ok = any(module == m or module.endswith("." + m) for m in (t or []))
    layers = conf.get("layers_to_transform")
    if ok and layers is not None:
        layers = [layers] if isinstance(layers, int) else layers
        ok = int(module.split(".")[2]) in layers
    return ok


def load_lora(adapter_dir, base_weights):
    """module name -> (A, B, scale), float32, every check of the docstring's list made."""
    conf, tensors = read_adapter(adapter_dir)
    for key, want in (("peft_type", "LORA"), ("use_dora", False), ("bias", "none"),
                      ("fan_in_fan_out", False), ("modules_to_save", None),
                      ("rank_pattern", {}), ("alpha_pattern", {})):
        if conf.get(key, want) not in (want, [] if want is None else want):
            die(f"{adapter_dir}: {key}={json.dumps(conf[key])} is not implemented here")
    r, alpha = conf.get("r"), conf.get("lora_alpha")
    if not isinstance(r, int) or r <= 0 or not isinstance(alpha, (int, float)):
        die(f"{adapter_dir}: r={r!r} lora_alpha={alpha!r}")
    scale = alpha / (math.sqrt(r) if conf.get("use_rslora") else r)
    pairs = {}
    for name, t in tensors.items():
        m = TENSOR.fullmatch(name)
        if not m or m.group(4) not in (ATTN if m.group(3) == "self_attn" else MLP):
            die(f"{adapter_dir}: unexpected tensor {name}")
        module = m.group(1)
        if not targeted(conf, module):
            die(f"{adapter_dir}: {name}: {module} is not in target_modules")
        w = base_weights.get(module + ".weight")
        if w is None:
            die(f"{adapter_dir}: {name}: the base has no {module}.weight")
        out, inp = w.shape
        want = [r, inp] if m.group(5) == "A" else [out, r]
        if list(t.shape) != want:
            die(f"{adapter_dir}: {name}: shape {list(t.shape)}, expected {want}")
        pairs.setdefault(module, {})[m.group(5)] = t.float()
    for module, ab in pairs.items():
        if len(ab) != 2:
            die(f"{adapter_dir}: {module} has lora_{''.join(ab)} without its pair")
    return {k: (v["A"], v["B"], scale) for k, v in pairs.items()}, conf


class LoraLlama(hf_llama.HfLlama):
    """hf_llama.py's model with PEFT's unmerged LoRA layers on the adapted projections."""

    def __init__(self, hf_dir, adapter_dir, dtype=torch.float32):
        super().__init__(hf_dir, dtype)
        lora, _ = load_lora(adapter_dir, self.w)
        self.lora = {k: (A.to(dtype), B.to(dtype), s) for k, (A, B, s) in lora.items()}

    def proj(self, x, name):
        y = super().proj(x, name)
        if name not in self.lora:
            return y
        A, B, scale = self.lora[name]
        return y + ((x @ A.T) @ B.T) * scale  # lora_B(lora_A(dropout(x))) * scaling


def cmd_loss(a):
    torch.set_num_threads(1)
    model = LoraLlama(a.hf_dir, a.adapter_dir)
    tokens = hf_llama.synthetic_tokens(a.seed, 1, a.rows, a.context, model.cfg["vocab_size"])
    with torch.no_grad():
        print(f"{model.loss(tokens):.9g}")


def loss_and_grad_norm(a, dtype, rows):
    """The adapted loss of wireup's synthetic batch of step a.step, its rows in the order
    ROWS, and the norm of its gradient with respect to every A and B, in DTYPE."""
    model = LoraLlama(a.hf_dir, a.adapter_dir, dtype)
    leaves = []
    for A, B, _ in model.lora.values():
        leaves += [A.requires_grad_(True), B.requires_grad_(True)]
    tokens = hf_llama.synthetic_tokens(a.seed, a.step, a.rows, a.context, model.cfg["vocab_size"])
    logits = model.logits(tokens[rows, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             tokens[rows, 1:].reshape(-1))
    loss.backward()
    return loss.item(), math.sqrt(sum(float((t.grad.double() ** 2).sum()) for t in leaves))


def cmd_grad_norm(a):
    """The loss and gradient norm in float64, and how far float32 moves them: the largest
    relative distance from them of float32's over five orders of the batch's rows (the
    gradient's sums over tokens taken in other orders, as another CPU's kernels take them)."""
    torch.set_num_threads(1)
    rows = torch.arange(a.rows)
    loss, norm = loss_and_grad_norm(a, torch.float64, rows)
    g = torch.Generator().manual_seed(a.seed)
    orders = [rows, rows.flip(0)] + [torch.randperm(a.rows, generator=g) for _ in range(3)]
    spread_loss = spread_norm = 0.0
    for order in orders:
        l32, n32 = loss_and_grad_norm(a, torch.float32, order)
        spread_loss = max(spread_loss, abs(l32 - loss) / abs(loss))
        spread_norm = max(spread_norm, abs(n32 - norm) / norm)
    print(f"{loss:.12g} {norm:.12g} {spread_loss:.3g} {spread_norm:.3g}")


def cmd_sft_loss(a):
    torch.set_num_threads(1)
    mean, trained = hf_llama.sft_loss(LoraLlama(a.hf_dir, a.adapter_dir), a.data_dir, a.context)
    print(f"{mean:.9g} {trained}")


def weight_files(hf_dir):
    names = {"model.safetensors", "model.safetensors.index.json"}
    index = os.path.join(hf_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            names |= set(json.load(f)["weight_map"].values())
    return names


def cmd_merge(a):
    base = hf_llama.read_weights(a.hf_dir)
    lora, _ = load_lora(a.adapter_dir, base)
    out = {}
    for name, w in base.items():
        module = name[:-len(".weight")] if name.endswith(".weight") else None
        if module in lora:
            A, B, scale = lora[module]
            w = (w.double() + (B.double() @ A.double()) * scale).to(w.dtype)
        out[name] = w
    os.makedirs(a.out_dir, exist_ok=True)
    skip = weight_files(a.hf_dir)
    for f in sorted(os.listdir(a.hf_dir)):
        src = os.path.join(a.hf_dir, f)
        if f not in skip and os.path.isfile(src):
            shutil.copyfile(src, os.path.join(a.out_dir, f))
    hf_llama.write_safetensors(os.path.join(a.out_dir, "model.safetensors"), out,
                               {"format": "pt"})
    print(f"merged {len(lora)} of {len(out)} tensors")


def cmd_close(a):
    ta, tb = hf_llama.read_weights(a.a), hf_llama.read_weights(a.b)
    bad = sorted(set(ta) ^ set(tb))
    worst, worst_name = 0.0, ""
    for name in sorted(set(ta) & set(tb)):
        x, y = ta[name], tb[name]
        if x.shape != y.shape:
            bad.append(f"{name} (shape {list(x.shape)} vs {list(y.shape)})")
            continue
        d = (x.double() - y.double()).abs().max().item() if x.numel() else 0.0
        if not d <= a.atol:  # NaN counts as too far
            bad.append(f"{name} ({d:.3g})")
        if not d <= worst:
            worst, worst_name = d, name
    print(f"max abs diff {worst:.3g} ({worst_name or '-'}) over {len(set(ta) & set(tb))} tensors")
    if bad:
        print(f"not within {a.atol}:", " ".join(bad[:10]), f"({len(bad)} of {len(ta)})")
        sys.exit(1)


def cmd_read(a):
    conf, tensors = read_adapter(a.adapter_dir)
    t = conf.get("target_modules")
    print(f"r {conf.get('r')}")
    print(f"lora_alpha {conf.get('lora_alpha')}")
    print("target_modules", t if isinstance(t, str) else ",".join(sorted(t or [])))
    inv = {v: k for k, v in hf_llama.DTYPES.items()}
    for name in sorted(tensors):
        print(name, json.dumps(list(tensors[name].shape), separators=(",", ":")),
              inv[tensors[name].dtype])


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("adapter_dir")
    m.add_argument("--base", required=True)
    m.add_argument("--r", type=int, required=True)
    m.add_argument("--alpha", type=lambda v: int(v) if v.lstrip("-").isdigit() else float(v),
                   required=True)
    m.add_argument("--targets", default=",".join(ATTN + MLP))
    m.add_argument("--dropout", type=float, default=0.0)
    m.add_argument("--seed", type=int, default=11)
    m.add_argument("--b_std", type=float, default=0.1)
    m.add_argument("--dtype", default="F32", choices=list(hf_llama.DTYPES))
    m.add_argument("--layers", default="")
    m.add_argument("--set", nargs=2, action="append", metavar=("KEY", "JSON"))
    m.add_argument("--wrong_shape", default="")
    m.add_argument("--extra_tensor", default="")
    lo = sub.add_parser("loss")
    lo.add_argument("hf_dir")
    lo.add_argument("adapter_dir")
    lo.add_argument("--seed", type=int, default=1234)
    lo.add_argument("--rows", type=int, required=True)
    lo.add_argument("--context", type=int, required=True)
    gn = sub.add_parser("grad_norm")
    gn.add_argument("hf_dir")
    gn.add_argument("adapter_dir")
    gn.add_argument("--seed", type=int, default=1234)
    gn.add_argument("--step", type=int, required=True)
    gn.add_argument("--rows", type=int, required=True)
    gn.add_argument("--context", type=int, required=True)
    s = sub.add_parser("sft_loss")
    s.add_argument("hf_dir")
    s.add_argument("adapter_dir")
    s.add_argument("data_dir")
    s.add_argument("--context", type=int, required=True)
    g = sub.add_parser("merge")
    g.add_argument("hf_dir")
    g.add_argument("adapter_dir")
    g.add_argument("out_dir")
    c = sub.add_parser("close")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--atol", type=float, required=True)
    r = sub.add_parser("read")
    r.add_argument("adapter_dir")
    a = ap.parse_args()
    {"make": cmd_make, "loss": cmd_loss, "grad_norm": cmd_grad_norm, "sft_loss": cmd_sft_loss,
     "merge": cmd_merge,
     "close": cmd_close, "read": cmd_read}[a.cmd](a)


if __name__ == "__main__":
    main()
