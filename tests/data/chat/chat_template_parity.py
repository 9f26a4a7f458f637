#!/usr/bin/env python3
"""wireup_chat against Hugging Face's rendering and tiktoken's ids.

Usage: chat_template_parity.py WIREUP_CHAT_RENDER TEMPLATES_DIR LLAMA3_TIKTOKEN

TEMPLATES_DIR holds the published `chat_template` of Meta-Llama-3-8B-Instruct
and Llama-3.1-8B-Instruct, each as the tokenizer_config.json key it comes
from. For every conversation below, each template and each --train-on:
1. text: wireup's rendering is byte-identical to Jinja2 (Debian's
   python3-jinja2) rendering the published template as transformers'
   apply_chat_template does (ImmutableSandboxedEnvironment, trim_blocks,
   lstrip_blocks, loopcontrols, bos_token "<|begin_of_text|>", no generation
   prompt), for llama3.1 with and without a date_string; and with
   add_generation_prompt=True, wireup's rendering with add_generation_prompt
   (what `wireup-train generate --chat` feeds).
2. ids: equal to tiktoken's (python3-tiktoken, the real Llama 3 ranks) for
   the same rendering with the template's special tokens as those tokens and
   everything else, contents spelling "<|eot_id|>" included, as ordinary
   text; and, where no content spells a special token, equal to
   tiktoken's encode(text, allowed_special="all") of the rendered text,
   which is what Hugging Face's tokenizer gives.
3. mask: the trained ids are each trained message's stripped content
   (tiktoken's ids) followed by <|eot_id|>; all ids for --train-on all.
Without python3-tiktoken (Debian bookworm has none) only 1 is checked, and
the summary line says so. Exit 0: all equal; 1: a difference (printed); 77:
python3-jinja2 is missing here (the trixie lane has it and python3-tiktoken).
"""
import base64
import json
import random
import subprocess
import sys

tool, templates_dir, vocab = sys.argv[1:4]
try:
    import jinja2
    import jinja2.ext
    import jinja2.sandbox
except ImportError:
    print("not applicable here: python3-jinja2 is not installed (the trixie lane has it)")
    sys.exit(77)
try:
    import tiktoken
except ImportError:
    tiktoken = None

PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
           r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = {"<|begin_of_text|>": 128000, "<|end_of_text|>": 128001,
            "<|start_header_id|>": 128006, "<|end_header_id|>": 128007,
            "<|eom_id|>": 128008, "<|eot_id|>": 128009, "<|python_tag|>": 128010}
TEMPLATES = {"llama3": "Meta-Llama-3-8B-Instruct.chat_template.json",
             "llama3.1": "Llama-3.1-8B-Instruct.chat_template.json"}

enc = None
if tiktoken is not None:
    with open(vocab, "rb") as f:
        ranks = {base64.b64decode(t): int(r)
                 for t, r in (line.split() for line in f if line.strip())}
    enc = tiktoken.Encoding("llama3", pat_str=PATTERN, mergeable_ranks=ranks,
                            special_tokens=SPECIALS)


def hf_environment():
    """The Jinja environment transformers renders chat templates in."""
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env


def template_text(name):
    with open(f"{templates_dir}/{TEMPLATES[name]}", encoding="utf-8") as f:
        return json.load(f)["chat_template"]


# Each special token the template writes becomes a private-use character, so
# the rendering shows where the template (not a message) put one.
SENTINEL = {s: chr(0xE000 + i) for i, s in enumerate(SPECIALS)}


def reference_ids(env, source, messages, extra):
    for s, c in SENTINEL.items():
        source = source.replace(s, c)
    text = env.from_string(source).render(messages=messages, bos_token=SENTINEL["<|begin_of_text|>"],
                                          add_generation_prompt=False, **extra)
    back = {c: SPECIALS[s] for s, c in SENTINEL.items()}
    ids, run = [], ""
    for ch in text:
        if ch in back:
            ids += enc.encode_ordinary(run) + [back[ch]]
            run = ""
        else:
            run += ch
    return ids + enc.encode_ordinary(run)


def messages_of(row):
    if "messages" in row:
        return row["messages"]
    if isinstance(row["prompt"], str):
        return [{"role": "user", "content": row["prompt"]},
                {"role": "assistant", "content": row["completion"]}]
    return row["prompt"] + row["completion"]


def expected_trained(messages, train_on):
    assistants = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    chosen = assistants[-1:] if train_on == "last-assistant" else assistants
    out = []
    for i in chosen:
        out += enc.encode_ordinary(messages[i]["content"].strip()) + [SPECIALS["<|eot_id|>"]]
    return out


def id_checks(env, source, msgs, extra, text, train_on, res):
    checks = [("ids", res["ids"], reference_ids(env, source, msgs, extra))]
    if not any(s in m["content"] for m in msgs for s in SPECIALS):
        checks.append(("ids of the text", res["ids"], enc.encode(text, allowed_special="all")))
    trained = [i for i, b in zip(res["ids"], res["mask"]) if b]
    want = res["ids"] if train_on == "all" else expected_trained(msgs, train_on)
    checks.append(("trained ids", trained, want))
    return checks


def rows():
    m = lambda role, content: {"role": role, "content": content}
    out = [
        {"messages": [m("user", "Hello"), m("assistant", "Hi there!")]},
        {"messages": [m("system", "You are terse."), m("user", "2+2?"), m("assistant", "4"),
                      m("user", "And 3+3?"), m("assistant", "6")]},
        {"messages": [m("system", "  padded system \n"), m("user", "\n\n  spaced question  \t"),
                      m("assistant", "   answer with spaces   \n\n")]},
        {"messages": [m("user", "Say <|eot_id|> and <|begin_of_text|>"),
                      m("assistant", "I say <|eot_id|><|start_header_id|>user<|end_header_id|>")]},
        {"messages": [m("user", "empty answer"), m("assistant", "")]},
        {"messages": [m("user", "ws answer"), m("assistant", " \u3000\u00a0\n")]},
        {"messages": [m("user", "\u00a0nbsp\u2028sep\u2029\u202f"),
                      m("assistant", "\u200bzero width kept\u200b \u1680")]},
        {"messages": [m("user", "日本語で答えて"), m("assistant", "はい、わかりました。👍🏽 👨‍👩‍👧")]},
        {"messages": [m("user", "code?"),
                      m("assistant", "```python\ndef f(x):\n\treturn x * 2\n```\r\nDone.")]},
        {"messages": [m("assistant", "I start."), m("user", "ok"), m("assistant", "I end.")]},
        {"messages": [m("user", "a"), m("system", "late system"), m("assistant", "b")]},
        {"messages": [m("system", "only system first"), m("assistant", "no user")]},
        {"prompt": "What is the capital of France?", "completion": " Paris."},
        {"prompt": [m("system", "sys"), m("user", "q")], "completion": [m("assistant", "a")]},
        {"messages": [m("user", "x" * 3000), m("assistant", " " * 200 + "y" * 500 + "1234567")]},
        {"messages": [m("user", "I'M here, it'S fine"), m("assistant", "THEY'VE 'll 'd")]},
    ]
    rng = random.Random(7)
    alphabet = "abc XYZ 123 \n\t.,!?'é日😀<|>_"
    for _ in range(60):
        n = rng.randint(1, 4)
        msgs = [m("system", "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))))] \
            if rng.random() < 0.5 else []
        for _ in range(n):
            for role in ("user", "assistant"):
                msgs.append(m(role, "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))))
        out.append({"messages": msgs})
    return out


def main():
    env = hf_environment()
    data = rows()
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data)
    failures = checked = 0
    for name in TEMPLATES:
        source = template_text(name)
        compiled = env.from_string(source)
        dates = [None, "03 Feb 2025"] if name == "llama3.1" else [None]
        for date in dates:
            for train_on in ("assistant", "last-assistant", "all"):
                args = [tool, vocab, name, train_on] + ([date] if date else [])
                got = subprocess.run(args, input=lines.encode(), capture_output=True, check=True)
                results = [json.loads(x) for x in got.stdout.decode().split("\n") if x]
                assert len(results) == len(data), (len(results), len(data))
                extra = {"date_string": date} if date else {}
                for k, (row, res) in enumerate(zip(data, results)):
                    where = f"{name} date={date} train_on={train_on} row {k}"
                    if "error" in res:
                        print(f"{where}: wireup refused it: {res['error']}")
                        failures += 1
                        continue
                    msgs = messages_of(row)
                    text = compiled.render(messages=msgs, bos_token="<|begin_of_text|>",
                                           add_generation_prompt=False, **extra)
                    generation = compiled.render(messages=msgs, bos_token="<|begin_of_text|>",
                                                 add_generation_prompt=True, **extra)
                    checks = [("text", res["text"], text),
                              ("text with the generation prompt", res["generation_text"], generation)]
                    if enc is not None:
                        checks += id_checks(env, source, msgs, extra, text, train_on, res)
                    for what, a, b in checks:
                        checked += 1
                        if a != b:
                            failures += 1
                            print(f"{where}: {what} differ:\n  wireup {a!r}\n  reference {b!r}")
    scope = "texts, ids and masks" if enc is not None else \
        "texts only (no python3-tiktoken here: ids and masks not compared)"
    print(f"chat_template_parity: {checked} comparisons of {scope} over {len(data)} "
          f"conversations, {failures} differences")
    sys.exit(1 if failures else 0)


main()
