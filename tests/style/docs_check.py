#!/usr/bin/env python3
"""The docs stay readable and linked: every docs/*.md is at most 300 lines, and every
relative Markdown link in docs/, README.md and sbatch-templates/README.md names a file
that exists and, with #anchor, a heading of that file (GitHub's anchor rules).
Usage: docs_check.py SOURCE_DIR"""
import glob
import os
import re
import sys

MAX_LINES = 300


def anchors(path):
    found, fence, seen = set(), False, {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
                continue
            m = None if fence else re.match(r"^(#{1,6})\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            a = re.sub(r"[^\w\- ]", "", m.group(2).strip().lower()).replace(" ", "-")
            n = seen.get(a, 0)
            seen[a] = n + 1
            found.add(a if n == 0 else f"{a}-{n}")
    return found


def bad_links(path, root):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    for m in re.finditer(r"\]\(([^)\s]+)\)", text):
        target = m.group(1)
        if re.match(r"^[a-z]+:", target):
            continue
        name, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
        where = os.path.relpath(path, root)
        if not os.path.exists(full):
            yield f"{where}: link to a missing file: {target}"
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            yield f"{where}: link to a missing heading: {target}"


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    docs = sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    if len(docs) < 10:
        print(f"found only {len(docs)} docs under {root}/docs", file=sys.stderr)
        return 1
    problems = []
    for d in docs:
        with open(d, encoding="utf-8") as f:
            n = sum(1 for _ in f)
        if n > MAX_LINES:
            problems.append(f"{os.path.relpath(d, root)}: {n} lines, more than {MAX_LINES}: split it by topic")
    pages = docs + [os.path.join(root, "README.md"), os.path.join(root, "sbatch-templates", "README.md")]
    for p in pages:
        problems.extend(bad_links(p, root))
    for p in problems:
        print(p)
    print(f"{len(docs)} docs, {len(pages)} pages checked: {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
